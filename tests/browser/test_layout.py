"""The reader's view at 1280, 720 and 390 px (issue 22): every chart as wide as the content
with each axis title and its legend inside the chart's box and apart from each other, the
site's name whole in the header, the speed summary without sideways scrolling at 1280 px,
the home page's overview sortable by any column, and no console error or failed request on
any of these pages or the root redirect. Screenshots of the summary, speed and overview
pages in both languages at 1280 and 390 px go to ``test-artifacts/screenshots/``.

Each page is loaded once and laid out at the other widths by resizing the window, the
first width taking turns from page to page (so every width loads pages): a reader's window
changes size too, and loads were most of this module's time."""

from __future__ import annotations

import gzip
import shutil
from dataclasses import dataclass

import pytest
from harness import serve_directory

from sitegen.build import build_site
from sitegen.cli import main
from tests.conftest import make_plan
from tests.importers.sources import FIXTURES
from tests.sitefixtures import (
    copy_project,
    hostile_plan,
    publishable_campaign,
    report_address,
    sweep_plan,
)

pytestmark = pytest.mark.slow

WIDTHS = (1280, 720, 390)

DECLARATION = """\
hardware:
  devices: [{kind: cpu, name: "Test CPU", count: 1}]
engine: {name: llama.cpp, version: "xllamacpp 2026.10.11549"}
model: {name: SmolLM2-135M-Instruct, quantization: GGUF Q4_1}
conditions:
  - id: c1
    label: {ja: '単一ストリーム', en: 'single stream'}
    sources: [{file: guidellm/benchmarks.json, group: 'benchmarks[0]'}]
    speculative: {mode: off}
  - id: c2
    label: {ja: '並列ストリーム', en: 'parallel streams'}
    sources: [{file: guidellm/benchmarks.json, group: 'benchmarks[1]'}]
    speculative: {mode: off}
baseline: c1
"""

CHARTS = """() => [...document.querySelectorAll('div.sg-plot')].map(plot => {
    const box = plot.getBoundingClientRect();
    const content = document.querySelector('.md-content__inner').getBoundingClientRect();
    const rect = e => { const r = e.getBoundingClientRect();
        return {left: r.left, right: r.right, top: r.top, bottom: r.bottom}; };
    return {chart: plot.getAttribute('data-chart'), width: box.width, content: content.width,
        box: rect(plot),
        titles: [...plot.querySelectorAll('.g-xtitle text, .g-ytitle text')].map(t => ({
            text: t.textContent, box: rect(t)})),
        legend: plot.querySelector('.legend') ? rect(plot.querySelector('.legend')) : null};
})"""

HEADER = """() => {
    const name = document.querySelector('.md-header__topic:first-child > .md-ellipsis');
    const header = document.querySelector('.md-header').getBoundingClientRect();
    const r = name.getBoundingClientRect();
    return {text: name.textContent.trim(), scroll: [name.scrollWidth, name.scrollHeight],
            client: [name.clientWidth, name.clientHeight],
            inside: r.top >= header.top - 1 && r.bottom <= header.bottom + 1};
}"""


@dataclass(frozen=True)
class Site:
    base_url: str
    slug: str

    def url(self, lang: str, page: str = "") -> str:
        prefix = "" if lang == "ja" else "en/"
        return f"{self.base_url}v/v1/{prefix}{page}"


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Site:
    """Three measured campaigns (two with a comparison, a sweep) and an imported GuideLLM
    run, in one version."""
    root = tmp_path_factory.mktemp("layout")
    data = root / "data"
    records = publishable_campaign(data, plan=hostile_plan())
    publishable_campaign(data, plan=make_plan(name="second"))
    publishable_campaign(data, plan=sweep_plan(concurrency=True))
    shutil.copytree(FIXTURES / "guidellm", root / "guidellm")
    source = root / "guidellm" / "benchmarks.json"
    source.write_bytes(gzip.decompress((root / "guidellm" / "benchmarks.json.gz").read_bytes()))
    (root / "d.yaml").write_text(DECLARATION)
    project = copy_project(root / "project")
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(root)
        command = ["import", "guidellm", "guidellm/benchmarks.json", "--declare", "d.yaml"]
        assert main([*command, "--campaign", "g", "--data", str(data)]) == 0
    build_site(data, root / "site", project, version="v1")
    with serve_directory(root / "site") as base_url:
        yield Site(base_url, report_address(records.parent))


def _ready(page) -> None:
    page.raw.wait_for_load_state("networkidle")
    page.raw.wait_for_function(
        "() => [...document.querySelectorAll('div.sg-plot')].every(p => p.querySelector('.main-svg'))"
    )


def _at_widths(browser, url: str, widths: tuple[int, ...], first: int = 0):
    """One page of ``url``, loaded at ``widths[first]`` and resized to each other width
    in turn: yields each width with the page laid out at it."""
    order = widths[first % len(widths) :] + widths[: first % len(widths)]
    with browser.new_page(viewport=(order[0], 900)) as page:
        page.goto(url)
        _ready(page)
        for index, width in enumerate(order):
            if index:
                page.resize(width, 900)
            assert page.evaluate("() => window.innerWidth") == width
            yield width, page


def _inside(inner: dict, outer: dict, slack: float = 0.5) -> bool:
    return (
        inner["left"] >= outer["left"] - slack
        and inner["right"] <= outer["right"] + slack
        and inner["top"] >= outer["top"] - slack
        and inner["bottom"] <= outer["bottom"] + slack
    )


def _overlap(a: dict, b: dict) -> bool:
    return not (
        a["right"] <= b["left"]
        or b["right"] <= a["left"]
        or a["bottom"] <= b["top"]
        or b["bottom"] <= a["top"]
    )


def test_charts_fill_the_content_and_keep_their_titles_inside(browser, site):
    problems, measured = [], 0
    pages = [(lang, path) for lang in ("ja", "en") for path in ("speed/", "sweep/")]
    for turn, (lang, path) in enumerate(pages):
        report = f"reports/{site.slug}/" if path == "speed/" else "reports/sweep/"
        for width, page in _at_widths(browser, site.url(lang, report + path), WIDTHS, turn):
            for chart in page.evaluate(CHARTS):
                where = f"{width} px {lang} {report + path} {chart['chart']}"
                if abs(chart["width"] - chart["content"]) > 2:
                    problems.append(f"{where}: {chart['width']} px of {chart['content']}")
                for title in chart["titles"]:
                    measured += 1
                    if not _inside(title["box"], chart["box"]):
                        problems.append(f"{where}: axis title {title['text']!r} is clipped")
                    if chart["legend"] and _overlap(title["box"], chart["legend"]):
                        problems.append(f"{where}: {title['text']!r} overlaps the legend")
            page.report.assert_clean()
    assert measured >= len(WIDTHS) * 2 * 2 * (2 + 4), measured  # x and y of every chart
    assert not problems, "\n".join(problems)


def test_the_site_name_is_whole_in_the_header(browser, site):
    for turn, lang in enumerate(("ja", "en")):
        url = site.url(lang, f"reports/{site.slug}/")
        for width, page in _at_widths(browser, url, WIDTHS, turn):
            header = page.evaluate(HEADER)
            assert header["text"] and header["inside"], (width, header)
            (scroll_w, scroll_h), (client_w, client_h) = header["scroll"], header["client"]
            assert scroll_w <= client_w + 1 and scroll_h <= client_h + 2, (width, header)
            page.report.assert_clean()


def test_the_speed_summary_fits_1280_px(browser, site):
    for lang in ("ja", "en"):
        with browser.new_page(viewport=(1280, 900)) as page:
            page.goto(site.url(lang, f"reports/{site.slug}/speed/"))
            width = page.evaluate(
                "() => { const r = document.querySelector('[aria-labelledby=sg-speed-table]');"
                " return [r.scrollWidth, r.clientWidth]; }"
            )
            assert width[0] <= width[1] + 1, width


def test_the_overview_lists_every_campaign_and_sorts(browser, site):
    with browser.new_page(viewport=(1280, 900)) as page:
        page.goto(site.url("en"))
        page.wait_for(".sg-overview tbody tr")
        reports = page.evaluate(
            "() => [...document.querySelectorAll('.sg-overview tbody tr')]"
            ".map(r => r.getAttribute('data-report'))"
        )
        assert {site.slug, "second", "sweep", "g"} <= set(reports), reports
        claims = page.evaluate(
            "() => [...document.querySelectorAll('.sg-overview tbody tr')]"
            ".map(r => r.getAttribute('data-claim') || r.getAttribute('data-observation'))"
        )
        assert "speed-ratio" in claims and "imported-figure" in claims, claims

        def column(index: int) -> list[str]:
            return page.evaluate(
                f"() => [...document.querySelectorAll('.sg-overview tbody tr')]"
                f".map(r => r.cells[{index}].getAttribute('data-sort'))"
            )

        for index, numeric in ((0, False), (2, True)):
            button = page.raw.locator(".sg-overview thead th button").nth(index)
            button.click()
            up = [v for v in column(index) if v]
            button.click()
            down = [v for v in column(index) if v]
            key = float if numeric else str.casefold
            assert up == sorted(up, key=key) and down == sorted(down, key=key, reverse=True)
            assert (
                page.evaluate(
                    f"() => document.querySelectorAll('.sg-overview thead th')[{index}]"
                    ".getAttribute('aria-sort')"
                )
                == "descending"
            )
        page.report.assert_clean()


def test_root_redirect_and_every_shot_page_is_clean(browser, site, screenshot_dir):
    """The root page redirects without a request that fails; the summary, speed and
    overview pages at 1280 and 390 px in both languages, with their screenshots."""
    with browser.new_page() as page:
        page.goto(site.base_url)
        page.wait_for_url(f"{site.base_url}v/v1/")
        page.raw.wait_for_load_state("networkidle")
        page.report.assert_clean()
    shots = {
        "overview": "",
        "summary": f"reports/{site.slug}/",
        "speed": f"reports/{site.slug}/speed/",
    }
    pages = [(lang, name) for lang in ("ja", "en") for name in shots]
    for turn, (lang, name) in enumerate(pages):
        for width, page in _at_widths(browser, site.url(lang, shots[name]), (1280, 390), turn):
            page.screenshot(screenshot_dir / f"{name}-{lang}-{width}.png")
            page.report.assert_clean()
