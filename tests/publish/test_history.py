"""History across versions: each report's history page lists the headline of every
archived version holding it, linking to that version; the changelog says what each moved
figure changed with."""

from __future__ import annotations

import re

from sitegen.build import build_site
from tests.links import broken_internal_links
from tests.sitefixtures import (
    PROJECT,
    publishable_campaign,
    read_records,
    report_address,
    write_records,
)


def text(path) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", path.read_text()))


def test_history_lists_every_version_and_the_changelog_names_the_cause(tmp_path):
    records = publishable_campaign(tmp_path / "data")
    slug = report_address(records.parent)
    build_site(tmp_path / "data", tmp_path / "site", PROJECT, version="v1")
    # The same campaign with faster "on" trials: the headline moves with the records.
    changed = read_records(records)
    for record in changed:
        if record["condition_id"] == "on" and record["metrics"] and record["metrics"]["gen_tps"]:
            record["metrics"]["gen_tps"] *= 1.5
            record["metrics"]["generation_s"] /= 1.5
    write_records(records, changed)
    build_site(tmp_path / "data", tmp_path / "site", PROJECT, version="v2")
    v2 = tmp_path / "site" / "v" / "v2"
    for prefix in ("", "en/"):
        history = v2 / prefix / "reports" / slug / "history" / "index.html"
        html = history.read_text()
        assert html.count('data-observation="published-headline"') == 2
        assert f'href="../../../../{"../" if prefix else ""}v1/{prefix}reports/{slug}/"' in html
    page = text(v2 / "en" / "reports" / slug / "history" / "index.html")
    ratios = re.findall(r"(\d+\.\d\d)× \(", page)
    assert len(ratios) == 2 and ratios[0] != ratios[1]
    assert "(this version)" in page
    changelog = text(v2 / "en" / "changelog" / "index.html")
    assert "new or changed records" in changelog
    assert broken_internal_links(tmp_path / "site") == []
