"""The speed page's cost section: with declared prices, each condition and input's cost
per million output tokens beside the price and the definition (C-COST); without a price
list, a sentence that no price is declared and no cost; a device without a price, no cost
and the reason."""

from __future__ import annotations

import json
import re

import pytest

from sitegen.cli import main
from sitegen.commands.build import build_site, render_site
from sitegen.core.price_list import PRICES_DOWNLOAD, PRICES_FILE
from sitegen.pages.render import check_rendered
from sitegen.statistics.token_cost import TOKENS_PER_UNIT
from tests.sitefixtures import PROJECT, copy_project, publishable_campaign, report_address

FAKE_DEVICE = "fake cpu"
"""The device the fake engine's records name."""


def prices_yaml(device: str) -> str:
    return (
        "schema_version: 1\ncurrency: USD\nprices:\n"
        f"  - device: {device}\n    per_hour: 1.8\n"
        "    source: {ja: チームの価格表, en: the team price list}\n"
        "    as_of: 2026-01-15\n"
    )


def site(tmp_path, device: str | None):
    """A speed campaign rendered with a price for ``device`` (``None``: no price list)."""
    slug = report_address(publishable_campaign(tmp_path / "data").parent)
    project = PROJECT
    if device is not None:
        project = copy_project(tmp_path / "project")
        (project / PRICES_FILE).write_text(prices_yaml(device))
    return render_site(tmp_path / "data", project), slug


def page(rendered, slug: str, lang: str) -> str:
    suffix = "" if lang == "ja" else ".en"
    return rendered.docs[f"reports/{slug}/speed{suffix}.md"].decode()


@pytest.fixture(scope="module")
def declared(tmp_path_factory):
    return site(tmp_path_factory.mktemp("cost"), FAKE_DEVICE)


def test_costs_with_their_price_and_definition(declared):
    rendered, slug = declared
    report = next(r for r in rendered.reports if r.slug == slug)
    rows = report.token_costs.rows
    assert rows and all(row.refused is None for row in rows)
    for lang, source, words in (
        ("ja", "チームの価格表", "秒とスループットで割り"),
        ("en", "the team price list", "divided by"),
    ):
        html = page(rendered, slug, lang)
        assert 'data-claim="cost"' in html and 'data-caveat="C-COST"' in html
        assert source in html and "2026-01-15" in html and "USD" in html
        assert f"{TOKENS_PER_UNIT:,}" in html and words in html
        for row in rows:
            key = f"cost/{row.condition_id}/{row.input_id}"
            shown = re.search(rf'data-figure="{key}/cost">([^<]+)<', html)
            assert shown is not None
            # 1.8 an hour for one device over the measured throughput, per million.
            expected = 1.8 / 3600 / row.throughput_tps * TOKENS_PER_UNIT
            assert row.cost_per_million == pytest.approx(expected)
            assert f'data-figure="{key}/throughput"' in html
            assert f'data-figure="{key}/per_hour">1.80<' in html


def test_the_price_list_is_published_with_the_report(declared):
    rendered, slug = declared
    report = next(r for r in rendered.reports if r.slug == slug)
    assert report.token_costs.prices is not None
    published = [path for path in rendered.docs if path.endswith(f"/{PRICES_DOWNLOAD}")]
    assert published and slug in published[0]
    assert json.loads(rendered.docs[published[0]])["prices"][0]["device"] == FAKE_DEVICE


def test_a_cost_without_its_caveat_is_refused(declared):
    rendered, slug = declared
    path = f"reports/{slug}/speed.en.md"
    broken = dict(rendered.docs)
    broken[path] = page(rendered, slug, "en").replace('data-caveat="C-COST"', "").encode()
    found = check_rendered(broken, rendered.reports, imported=rendered.imported)
    assert any(issue.rule == "C-COST" and path in issue.location for issue in found)


def test_no_price_list_no_cost(tmp_path):
    rendered, slug = site(tmp_path, None)
    for lang, words in (("ja", "価格を仮定することはありません"), ("en", "never assumes a price")):
        html = page(rendered, slug, lang)
        assert 'data-costs="none"' in html and words in html
        assert 'data-claim="cost"' not in html and 'data-figure="cost/' not in html
    assert not any(path.endswith(f"/{PRICES_DOWNLOAD}") for path in rendered.docs)


def test_a_device_without_a_price_is_refused(tmp_path):
    rendered, slug = site(tmp_path, "NVIDIA H200")
    html = page(rendered, slug, "en")
    assert 'data-refused="not-priced"' in html
    assert f"No price is declared for {FAKE_DEVICE}: no cost." in html
    assert 'data-figure="cost/' not in html


@pytest.mark.slow
def test_the_audit_recomputes_the_costs(tmp_path, capsys):
    """The published price list lets ``sitegen audit`` recompute every cost the page
    marks: a published version audits clean."""
    publishable_campaign(tmp_path / "data")
    project = copy_project(tmp_path / "project")
    (project / PRICES_FILE).write_text(prices_yaml(FAKE_DEVICE))
    build_site(tmp_path / "data", tmp_path / "site", project, version="a")
    code = main(["audit", str(tmp_path / "site")])
    out = capsys.readouterr().out
    assert code == 0, out
