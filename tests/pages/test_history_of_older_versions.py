"""The history of a report across versions published by earlier sitegen releases: their
recorded headlines lack fields later releases add (the verdict), and are shown as the
figures those versions printed."""

from __future__ import annotations

import json

from sitegen.pages.i18n import load_catalogs
from sitegen.publish.archive import PublishedVersion
from sitegen.publish.history import history_files

OLDER_HEADLINE = {
    "input": "short",
    "baseline": "off",
    "treatment": "on",
    "ratio": 1.2345,
    "low": 1.1,
    "high": 1.3,
    "baseline_median": 50.0,
    "treatment_median": 61.7,
    "acceptance": None,
}
"""A headline as versions recorded it before verdicts (no ``inconclusive``, no ``n``)."""


def version(label: str, epoch: int, headline: dict) -> PublishedVersion:
    figures = {"unit-abc": {"address": "unit", "title": {"ja": "単体", "en": "Unit"}}}
    figures["unit-abc"]["headline"] = headline
    return PublishedVersion(label, epoch, figures)


def test_a_headline_recorded_before_verdicts_is_shown_as_its_figure() -> None:
    newer = {**OLDER_HEADLINE, "ratio": 1.02, "low": 0.9, "high": 1.1, "inconclusive": True}
    files = history_files(
        [version("old", 1_000, OLDER_HEADLINE), version("new", 2_000, newer)], load_catalogs()
    )
    table = json.loads(files["history/unit/en.json"])["html"]
    assert "1.23×" in table  # the older version's figure, as it printed it
    assert 'data-verdict="inconclusive"' in table  # the newer one's verdict
    assert table.count("data-verdict") == 1
