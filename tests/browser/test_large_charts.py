"""Charts of large campaigns: a chart spec over the inline limit is a file the page loads.
Every chart must draw with every trial, at about 1,500 speed trials and at ten times the
seed scale (4,000), in both languages."""

from __future__ import annotations

import pytest
from harness import serve_directory

from sitegen.commands.build import build_site
from sitegen.pages.directives import CHART_INLINE_BYTES
from sitegen.plan.plan_models import InputSpec
from tests.builtsites import published_folder
from tests.conftest import make_plan
from tests.sitefixtures import PROJECT, publishable_campaign, report_address

SPEED_TRIALS = {"about-1500": 190, "seed-x10": 500}
"""Repetitions per condition and input (2 conditions × 4 inputs): 1,520 and 4,000 trials."""


def large_plan(name: str, repetitions: int):
    """The unit plan's two conditions (off, n-gram) on four short inputs."""
    inputs = [InputSpec(id=f"speed-{i}", text=f"input {i}", max_output_tokens=8) for i in range(4)]
    return make_plan(name=name, inputs=inputs, repetitions=repetitions, warmups=1)


@pytest.mark.slow
@pytest.mark.parametrize("size", SPEED_TRIALS)
def test_every_chart_of_a_large_campaign_draws_every_trial(browser, tmp_path, screenshot_dir, size):
    repetitions = SPEED_TRIALS[size]
    records = publishable_campaign(tmp_path / "data", plan=large_plan(size, repetitions))
    slug = report_address(records.parent)
    build_site(tmp_path / "data", tmp_path / "site", PROJECT, version="v1")
    speed_dir = tmp_path / "site" / "v" / "v1" / "reports" / slug / "speed"
    page_html = (speed_dir / "index.html").read_text(encoding="utf-8")
    assert "data-spec=" in page_html, "the test needs charts over the inline limit"
    charts = published_folder(tmp_path / "site" / "v" / "v1", f"reports/{slug}/charts").values()
    assert charts and all(c.stat().st_size > CHART_INLINE_BYTES for c in charts)
    trials = 2 * 4 * repetitions
    with serve_directory(tmp_path / "site") as base_url:
        for prefix in ("", "en/"):
            with browser.new_page() as page:
                page.goto(f"{base_url}v/v1/{prefix}reports/{slug}/speed/")
                page.raw.wait_for_load_state("networkidle")
                # The trial charts (the latency CDF, a few hundred points, stays inline).
                plots = page.evaluate(
                    """() => [...document.querySelectorAll('div.sg-plot')]
                        .filter(p => !p.getAttribute('data-chart').includes('-cdf-')).map(p => ({
                        spec: p.getAttribute('data-spec'),
                        drawn: p.getAttribute('data-drawn') === '1',
                        points: (p.data || []).filter(t => t.name && t.name.includes(' · '))
                            .reduce((n, t) => n + t.y.length, 0) }))"""
                )
                assert len(plots) >= 2
                assert all(p["spec"] for p in plots), plots
                assert all(p["drawn"] for p in plots), plots
                # Per chart: every trial as a point plus one median per condition and input.
                assert all(p["points"] == trials + 2 * 4 for p in plots), plots
                if size == "seed-x10" and not prefix:
                    page.screenshot(screenshot_dir / "ja-speed-x10.png")
                page.report.assert_clean()
    if size == "seed-x10":
        _answer_pager_reaches_every_page(browser, tmp_path / "site", slug, records)


def _answer_pager_reaches_every_page(browser, site, slug: str, records) -> None:
    """The data page stays small at thousands of answers: a fixed pager, no button or
    link per page, and every page reachable from it."""
    data_page = site / "v" / "v1" / "reports" / slug / "data" / "index.html"
    assert data_page.stat().st_size < 300_000
    count = sum(1 for line in records.read_bytes().splitlines() if line.strip())
    pages = -(-count // 50)
    with serve_directory(site) as base_url, browser.new_page() as page:
        page.goto(f"{base_url}v/v1/en/reports/{slug}/data/")
        page.wait_for(".sg-answers-list details", state="attached")
        assert page.evaluate("() => document.querySelectorAll('[data-page]').length") == 0
        assert page.evaluate("() => document.querySelector('[data-step=previous]').disabled")
        page.raw.click("[data-step=next]")
        page.raw.wait_for_function(
            "() => document.querySelector('.sg-answers-status').textContent === "
            f"'Page 2 of {pages}'"
        )
        assert page.evaluate("() => document.querySelector('.sg-answers-list details').id") == "t50"
        page.raw.fill(".sg-answers-goto", str(pages))
        page.raw.dispatch_event(".sg-answers-goto", "change")
        page.raw.wait_for_function(
            "() => document.querySelector('.sg-answers-status').textContent === "
            f"'Page {pages} of {pages}'"
        )
        shown = page.evaluate("() => document.querySelectorAll('.sg-answers-list details').length")
        assert shown == count - (pages - 1) * 50
        assert page.evaluate("() => document.querySelector('[data-step=next]').disabled")
        page.report.assert_clean()
