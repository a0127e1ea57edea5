"""The reader's view at 1280, 768 and 390 px (issues 22 and 37), on every page kind of a
built site in both languages (home, overview, a report's summary, speed, sweep, quality,
examples, method and data pages, its history, a comparison, an imported report, the
changelog and the 404 page): the page never scrolls sideways; every chart lies in the
window, as wide as the content, with each axis title and its legend inside the chart's box,
apart from each other and from plotly's toolbar; every table lies in the window or scrolls
inside its own box (the page does not: a reader keeps the page's text in place and
scrolls only what is wider); the site's name whole in the header. At 1280 px the home
overview and the speed summary fit without scrolling, and a comparison's rows are a few
lines high with the fields that block its ratio in view; its capacities are grouped by
thousands. The home page's overview sorts by any column, and no page has a console error
or a failed request (the root redirect included). Screenshots of every page kind, both
languages, at every width go to ``test-artifacts/screenshots/layout/``.

Each page is loaded once and laid out at the other widths by resizing the window, the
first width taking turns from page to page (so every width loads pages): a reader's window
changes size too, and loads were most of this module's time."""

from __future__ import annotations

import gzip
import shutil
from dataclasses import dataclass

import pytest
import yaml
from harness import serve_directory

from sitegen.cli import main
from sitegen.commands.build import build_site
from sitegen.plan.plan_models import ConditionSpec, SpeculativeSpec
from tests.conftest import make_plan
from tests.hostilecampaign import hostile_base_plan
from tests.importers.sources import FIXTURES
from tests.pages.test_comparison import on_gpus
from tests.sitefixtures import (
    copy_project,
    hostile_plan,
    publishable_campaign,
    report_address,
    sweep_plan,
)

pytestmark = pytest.mark.slow

WIDTHS = (1280, 768, 390)
LANGUAGES = ("ja", "en")
CAPACITY = 40960
"""The context capacity of the compared campaigns: a figure of five digits, grouped."""

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

COMPARED_TITLE = {
    "ja": "複数の加速器で推測的デコードを試した計測、会話の入力すべてについて",
    "en": "Speculative decoding on several accelerators over every chat input of the plan",
}
"""A title as long as a real campaign's: the comparison's first column holds it."""

COMPARISON = {
    "id": "gpus",
    "title": {"ja": "加速器の比較", "en": "Accelerators compared"},
    "campaigns": ["h100x2", "b200x2", "g"],
    "factor": "devices",
}
"""Two measured campaigns that differ in their devices, one not recording its driver,
interconnect and GPU runtime (which block the ratio), and the imported run beside them."""

LAYOUT = """() => {
    const rect = e => { const r = e.getBoundingClientRect();
        return {left: r.left, right: r.right, top: r.top, bottom: r.bottom}; };
    const shown = e => e.getClientRects().length > 0 && !e.closest('details:not([open])');
    const scroller = e => {  // what the boxes that scroll or clip e leave in view
        let view = null;
        for (let p = e.parentElement; p && p !== document.body; p = p.parentElement) {
            if (getComputedStyle(p).overflowX === 'visible') continue;
            const r = rect(p);
            view = view ? {left: Math.max(view.left, r.left), right: Math.min(view.right, r.right),
                           top: Math.max(view.top, r.top), bottom: Math.min(view.bottom, r.bottom)}
                        : r;
        }
        return view;
    };
    const content = document.querySelector('.md-content__inner');
    const name = document.querySelector('.md-header__topic:first-child > .md-ellipsis');
    const header = document.querySelector('.md-header');
    return {
        window: window.innerWidth,
        sideways: document.scrollingElement.scrollWidth,
        content: content ? content.getBoundingClientRect().width : null,
        header: name && {text: name.textContent.trim(), shown: shown(name),
            scroll: [name.scrollWidth, name.scrollHeight],
            client: [name.clientWidth, name.clientHeight],
            box: rect(name), header: rect(header)},
        charts: [...document.querySelectorAll('div.sg-plot')].filter(shown).map(plot => {
            const bar = plot.querySelector('.modebar');
            return {chart: plot.getAttribute('data-chart'),
                width: plot.getBoundingClientRect().width, box: rect(plot),
                titles: [...plot.querySelectorAll('.g-xtitle text, .g-ytitle text')].map(
                    t => ({text: t.textContent, box: rect(t)})),
                legend: plot.querySelector('.legend') ? rect(plot.querySelector('.legend'))
                    : null,
                modebar: bar && shown(bar) ? rect(bar) : null};
        }),
        tables: [...document.querySelectorAll('article table')].filter(shown).map(table => {
            const box = scroller(table);
            const caption = table.querySelector('caption');
            const head = table.querySelector('th');
            return {name: (caption || head || table).textContent.trim().slice(0, 40),
                box: rect(table), scroller: box};
        }),
    };
}"""
"""What a width shows of a page: how wide the document is, the header's name, each drawn
chart with its axis titles, legend and toolbar, each table shown (not in a closed
``details``) with what the boxes that scroll or clip it leave in view."""

COMPARISON_ROWS = """() => [...document.querySelectorAll('.sg-comparison-row table')].map(t => {
    const box = t.closest('.md-typeset__scrollwrap, .md-typeset__table, .sg-wide')
        || t.parentElement;
    const view = box.getBoundingClientRect();
    const line = parseFloat(getComputedStyle(t.querySelector('td')).lineHeight)
        || 1.6 * parseFloat(getComputedStyle(t.querySelector('td')).fontSize);
    return {rows: [...t.tBodies[0].rows].map(r => r.getBoundingClientRect().height), line,
        blocking: [...t.querySelectorAll('td[data-unrecorded]')].map(c => {
            const r = c.getBoundingClientRect();
            return r.left >= view.left - 1 && r.right <= Math.min(view.right, innerWidth) + 1;
        })};
})"""
"""Each comparison table's row heights, its line height and whether each cell of a field
that blocks the ratio (not recorded) is in view without scrolling."""


@dataclass(frozen=True)
class Site:
    base_url: str
    slug: str

    def url(self, lang: str, page: str = "") -> str:
        if lang == "root":
            return f"{self.base_url}{page}"
        prefix = "" if lang == "ja" else "en/"
        return f"{self.base_url}v/v1/{prefix}{page}"

    def page_kinds(self) -> dict[str, str]:
        """Every kind of page, by name: its path under a language's home."""
        report = f"reports/{self.slug}/"
        return {
            "home": "",
            "overview": "overview/",
            "summary": report,
            "speed": report + "speed/",
            "examples": report + "examples/",
            "method": report + "method/",
            "data": report + "data/",
            "history": report + "history/",
            "sweep-summary": "reports/sweep/",
            "sweep-speed": "reports/sweep/speed/",
            "sweep": "reports/sweep/sweep/",
            "quality": "reports/quality/quality/",
            "comparison": "compare/gpus/",
            "imported": "reports/g/",
            "changelog": "changelog/",
        }

    def pages(self) -> list[tuple[str, str, str]]:
        """``(kind, lang, url)`` of every page kind in both languages, and the 404 page
        (one for the site, served at its root)."""
        pages = [
            (kind, lang, self.url(lang, path))
            for lang in LANGUAGES
            for kind, path in self.page_kinds().items()
        ]
        return [*pages, ("404", "root", self.url("root", "404.html"))]


def _compared(data, name: str, recorded: bool) -> None:
    conditions = [
        ConditionSpec(id="off", context_capacity=CAPACITY),
        ConditionSpec(
            id="on",
            speculative=SpeculativeSpec(mode="ngram-simple", draft_max=4),
            context_capacity=CAPACITY,
        ),
    ]
    plan = make_plan(name=name, title=COMPARED_TITLE, conditions=conditions)
    gpus = (
        on_gpus("NVIDIA H100 80GB HBM3", "550.54.15", "NVLink (NV18)", "CUDA 12.4")
        if recorded
        else on_gpus("NVIDIA B200", None, None, None)
    )
    publishable_campaign(data, plan=plan, mutate=gpus)


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Site:
    """Three measured campaigns (two with a comparison, a sweep), one with a quality
    evaluation, two compared across campaigns with an imported GuideLLM run beside them."""
    root = tmp_path_factory.mktemp("layout")
    data = root / "data"
    records = publishable_campaign(data, plan=hostile_plan())
    publishable_campaign(data, plan=make_plan(name="second"))
    publishable_campaign(data, plan=sweep_plan(concurrency=True))
    publishable_campaign(data, plan=hostile_base_plan().model_copy(update={"name": "quality"}))
    _compared(data, "h100x2", recorded=True)
    _compared(data, "b200x2", recorded=False)
    shutil.copytree(FIXTURES / "guidellm", root / "guidellm")
    source = root / "guidellm" / "benchmarks.json"
    source.write_bytes(gzip.decompress((root / "guidellm" / "benchmarks.json.gz").read_bytes()))
    (root / "d.yaml").write_text(DECLARATION)
    project = copy_project(root / "project")
    (project / "content" / "comparisons").mkdir()
    (project / "content" / "comparisons" / "gpus.yaml").write_text(
        yaml.safe_dump(COMPARISON, allow_unicode=True)
    )
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


def _across(inner: dict, width: float, slack: float = 1) -> bool:
    """``inner`` lies in a window ``width`` wide, left to right."""
    return inner["left"] >= -slack and inner["right"] <= width + slack


def _overlap(a: dict, b: dict) -> bool:
    return not (
        a["right"] <= b["left"]
        or b["right"] <= a["left"]
        or a["bottom"] <= b["top"]
        or b["bottom"] <= a["top"]
    )


def _layout_problems(layout: dict, where: str) -> tuple[list[str], int]:
    """What ``LAYOUT`` found wrong at one width, and how many axis titles it measured."""
    problems, titles = [], 0
    width = layout["window"]
    if layout["sideways"] > width + 1:
        problems.append(f"{where}: the page scrolls sideways ({layout['sideways']} > {width})")
    header = layout["header"]
    if header is None or not header["text"] or not header["shown"]:
        problems.append(f"{where}: no site name in the header: {header}")
    else:
        (scroll_w, scroll_h), (client_w, client_h) = header["scroll"], header["client"]
        if scroll_w > client_w + 1 or scroll_h > client_h + 2:
            problems.append(f"{where}: the site name {header['text']!r} is cut: {header}")
        if not _inside(header["box"], header["header"], 1) or not _across(header["box"], width):
            problems.append(f"{where}: the site name lies outside the header: {header}")
    for chart in layout["charts"]:
        name = f"{where} chart {chart['chart']}"
        if not _across(chart["box"], width):
            problems.append(f"{name}: reaches past the window: {chart['box']}")
        if layout["content"] and abs(chart["width"] - layout["content"]) > 2:
            problems.append(f"{name}: {chart['width']} px of {layout['content']}")
        parts = [(f"axis title {t['text']!r}", t["box"]) for t in chart["titles"]]
        titles += len(chart["titles"])
        if chart["legend"]:
            parts.append(("the legend", chart["legend"]))
        for label, box in parts:
            if not _inside(box, chart["box"]):
                problems.append(f"{name}: {label} is clipped: {box} in {chart['box']}")
            if chart["modebar"] and _overlap(box, chart["modebar"]):
                problems.append(f"{name}: the toolbar covers {label}")
        for title in chart["titles"]:
            if chart["legend"] and _overlap(title["box"], chart["legend"]):
                problems.append(f"{name}: {title['text']!r} overlaps the legend")
    for table in layout["tables"]:
        box = table["scroller"] or table["box"]
        if not _across(box, width):
            which = "its scrolling box" if table["scroller"] else "it"
            problems.append(f"{where} table {table['name']!r}: {which} reaches past the window")
    return problems, titles


def test_every_page_kind_fits_every_width(browser, site, screenshot_dir):
    """Every page kind, both languages, at every width; a screenshot of each."""
    shots = screenshot_dir / "layout"
    problems, titles, seen = [], 0, set()
    for turn, (kind, lang, url) in enumerate(site.pages()):
        for width, page in _at_widths(browser, url, WIDTHS, turn):
            layout = page.evaluate(LAYOUT)
            found, measured = _layout_problems(layout, f"{width} px {lang} {kind}")
            problems += found
            titles += measured
            seen.add((kind, width, bool(layout["charts"]), bool(layout["tables"])))
            page.screenshot(shots / f"{kind}-{lang}-{width}.png")
            page.report.assert_clean(allow_404=[url] if kind == "404" else ())
    assert not problems, "\n".join(problems)
    # Every kind at every width, with charts and tables to measure.
    assert {(kind, width) for kind, width, *_ in seen} == {
        (kind, width) for kind in [*site.page_kinds(), "404"] for width in WIDTHS
    }
    assert sum(charts for *_, charts, _ in seen) >= 6 * len(WIDTHS), seen
    assert titles >= len(WIDTHS) * 2 * 2 * (2 + 4 + 4), titles  # x and y of every chart


def test_the_home_overview_and_the_speed_summary_fit_1280_px(browser, site):
    """Neither scrolls by itself at a desktop width: every column in view."""
    for lang in LANGUAGES:
        for path, table in (
            ("", "[aria-labelledby=sg-overview-table]"),
            (f"reports/{site.slug}/speed/", "[aria-labelledby=sg-speed-table]"),
        ):
            with browser.new_page(viewport=(1280, 900)) as page:
                page.goto(site.url(lang, path))
                width = page.evaluate(
                    f"() => {{ const r = document.querySelector({table!r});"
                    " return [r.scrollWidth, r.clientWidth]; }"
                )
                assert width[0] <= width[1] + 1, (lang, path, width)


def test_a_comparison_shows_its_rows_whole_at_1280_px(browser, site):
    """A few lines a row, the fields that block the ratio in view without scrolling, the
    capacities grouped by thousands."""
    for lang in LANGUAGES:
        with browser.new_page(viewport=(1280, 900)) as page:
            page.goto(site.url(lang, "compare/gpus/"))
            page.wait_for(".sg-comparison-row")
            tables = page.evaluate(COMPARISON_ROWS)
            assert tables and any(t["blocking"] for t in tables), tables
            for table in tables:
                assert max(table["rows"]) <= 6 * table["line"] + 2, (lang, table)
                assert all(table["blocking"]), (lang, table)
            text = page.evaluate("() => document.querySelector('.sg-comparison').innerText")
            assert f"{CAPACITY:,}" in text and str(CAPACITY) not in text, text
            page.report.assert_clean()


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


def test_the_root_redirect_is_clean(browser, site):
    """The root page redirects without a request that fails."""
    with browser.new_page() as page:
        page.goto(site.base_url)
        page.wait_for_url(f"{site.base_url}v/v1/")
        page.raw.wait_for_load_state("networkidle")
        page.report.assert_clean()
