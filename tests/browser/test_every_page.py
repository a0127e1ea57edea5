"""Every page of a two-version site, in both languages, at a desktop width (1280 px), a
720 px column and a phone (390 px): no console error, no page error, no failed request
(a 404 for a sitemap.xml included) and no page that scrolls sideways, with plan titles
too long for any line. Wide tables scroll inside a region named by their caption, which
says so, with the condition and the input first and the condition column in view. The
same holds with ``site_url`` set, the site served under its path.

Each page is loaded once, at the three widths in turn from page to page (so every width
loads pages), and laid out at the other two by resizing the window: a page's loads cost
most of this module's time, and a reader's window changes size too."""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, fields
from pathlib import Path

import pytest
import yaml
from harness import serve_directory

from sitegen.commands.build import build_site
from sitegen.pages.i18n import load_catalogs
from tests.conftest import make_plan
from tests.seriesfixtures import series_build
from tests.sitefixtures import PROJECT, hostile_plan, publishable_campaign, sweep_plan

pytestmark = pytest.mark.slow

WIDTHS = (1280, 720, 390)
LONG_TITLE = {
    "ja": "非常に長い題名の計測" * 7 + "x" * 120,
    "en": "A very long title for a measurement campaign " * 1 + "y" * 120,
}
"""Titles no line can hold: a long sentence, then one word of 120 letters."""

READY = """() =>
    [...document.querySelectorAll('div.sg-plot')].every(p => p.querySelector('.main-svg')) &&
    [...document.querySelectorAll('.sg-answers-browser')].every(
        b => b.querySelector('.sg-answers-list details')) &&
    [...document.querySelectorAll('.md-search-result__meta')].every(
        m => !['検索を初期化', 'Initializing search'].includes(m.textContent.trim()))"""
"""Charts drawn, on the data page the answers loaded, and the search ready: material's
"search.result.initializer" (ja, en) is replaced once its worker has loaded lunr, one
script after another (leaving earlier aborts those loads, a failed request)."""

LAYOUT = """() => ({
    sideways: [document.documentElement.scrollWidth, window.innerWidth],
    regions: [...document.querySelectorAll('.sg-wide')].map(r => {
        const caption = document.getElementById(r.getAttribute('aria-labelledby'));
        const hint = r.querySelector('.sg-wide__hint');
        const heads = [...r.querySelectorAll('thead th')].map(th => th.textContent.trim());
        return {id: r.getAttribute('aria-labelledby'),
                role: r.getAttribute('role'), tabindex: r.getAttribute('tabindex'),
                caption: caption && caption.closest('table') === r.querySelector('table')
                    ? caption.textContent.trim() : null,
                overflows: r.scrollWidth > r.clientWidth + 1,
                right: r.getBoundingClientRect().right,
                hint: !!hint && hint.getClientRects().length > 0,
                heads};
    }),
})"""


@dataclass(frozen=True)
class Served:
    base_url: str
    pages: tuple[str, ...]
    """Paths of the pages under ``base_url``, both languages."""

    @property
    def report(self) -> str:
        """``reports/<slug>/`` of the campaign published in both versions (not the sweep's
        nor the series' builds', which v2 adds)."""
        added = ("/reports/sweep/", "/reports/builds-")
        speed = next(
            p for p in self.pages if p.endswith("/speed/") and not any(a in p for a in added)
        )
        return "reports/" + speed.split("/reports/")[1].removesuffix("speed/")


def _pages(site: Path) -> tuple[str, ...]:
    """Every page of the latest version (``v/v2``) and the home page of ``v/v1`` (which
    says that it is not the latest)."""
    latest = site / "v" / "v2"
    paths = [
        (index.parent.relative_to(site).as_posix() + "/")
        for index in sorted(latest.rglob("index.html"))
    ]
    return (*paths, "v/v1/")


def _build(root: Path, project: Path = PROJECT) -> Path:
    base = hostile_plan()
    plan = make_plan(inputs=base.inputs, conditions=base.conditions, title=LONG_TITLE)
    publishable_campaign(root / "early", plan=plan)  # v1: the same report, plain answers
    publishable_campaign(root / "data", plan=plan, hostile=True)
    publishable_campaign(root / "data", plan=sweep_plan(concurrency=True))
    # A series of two builds, the later slower: its page, with a regression listed first.
    series_build(root / "data", "xllamacpp 2026.4.8672", "a", 100.0)
    series_build(root / "data", "xllamacpp 2026.10.11549", "b", 70.0)
    build_site(root / "early", root / "site", project, version="v1")
    build_site(root / "data", root / "site", project, version="v2")
    return root / "site"


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Served:
    root = tmp_path_factory.mktemp("every-page")
    built = _build(root)
    with serve_directory(built) as base_url:
        yield Served(base_url, _pages(built))


SITE_URL_PATH = "reports/benchmarks/"


@pytest.fixture(scope="module")
def site_with_url(tmp_path_factory) -> Served:
    """The same site built with ``site_url`` set, served under that URL's path."""
    root = tmp_path_factory.mktemp("every-page-site-url")
    project = root / "project"
    project.mkdir()
    config = yaml.safe_load((PROJECT / "mkdocs.yml").read_text(encoding="utf-8"))
    config["site_url"] = f"https://sitegen.example.org/{SITE_URL_PATH}"
    (project / "mkdocs.yml").write_text(yaml.safe_dump(config, allow_unicode=True))
    os.symlink(PROJECT / "content", project / "content")
    os.symlink(PROJECT / "theme", project / "theme")
    built = _build(root, project)
    served = root / "served"
    (served / SITE_URL_PATH).parent.mkdir(parents=True)
    os.symlink(built, served / SITE_URL_PATH.rstrip("/"))
    with serve_directory(served) as base_url:
        yield Served(base_url, _pages(built))


def _clear(report) -> None:
    for f in fields(report):
        getattr(report, f.name).clear()


def _visit_all(browser, served: Served, shots: dict[tuple[str, int], Path]):
    """Each page in one tab, one after the other, loaded at one width (the widths in turn)
    and resized to the others: per width, each page's problems and layout."""
    results: dict[int, dict[str, tuple[list[str], dict]]] = {width: {} for width in WIDTHS}
    with browser.new_page(viewport=(WIDTHS[0], 900)) as page:
        pending = _in_flight(page)
        for index, path in enumerate(served.pages):
            first = index % len(WIDTHS)
            for turn, width in enumerate(WIDTHS[first:] + WIDTHS[:first]):
                _clear(page.report)
                if turn == 0:
                    page.raw.set_viewport_size({"width": width, "height": 900})
                    page.goto(served.base_url + path)
                    _ready(page, pending)
                else:
                    page.resize(width, 900)
                    _settle(page, pending)
                results[width][path] = (page.report.problems(), page.evaluate(LAYOUT))
                if (path, width) in shots:
                    page.screenshot(shots[path, width])
    return results


def _in_flight(page) -> set:
    """The page's requests still in flight (kept up to date)."""
    pending: set = set()
    page.context.on("request", lambda r: pending.add(r))
    page.context.on("requestfinished", lambda r: pending.discard(r))
    page.context.on("requestfailed", lambda r: pending.discard(r))
    return pending


def _ready(page, pending: set) -> None:
    page.raw.wait_for_function(READY)
    _settle(page, pending)


def _settle(page, pending: set, quiet_s: float = 0.1, limit_s: float = 10) -> None:
    """Until no request has been in flight for ``quiet_s`` (networkidle waits 0.5 s, which
    made this module twice as slow)."""
    deadline = time.monotonic() + limit_s
    quiet_since = time.monotonic()
    while time.monotonic() < deadline:
        page.raw.wait_for_timeout(50)
        if pending:
            quiet_since = time.monotonic()
        elif time.monotonic() - quiet_since >= quiet_s:
            return
    raise AssertionError(f"requests still in flight: {[r.url for r in pending]}")


def _check(results, width: int, where: str = "") -> list[str]:
    catalogs = load_catalogs(PROJECT)
    out: list[str] = []
    for path, (problems, layout) in results.items():
        out += [f"{width} px {where}{path}: {p}" for p in problems]
        scroll, inner = layout["sideways"]
        if scroll > inner + 2:
            out.append(f"{width} px {where}{path}: the page scrolls sideways ({scroll} > {inner})")
        lang = "en" if "/en/" in path else "ja"
        condition, input_ = catalogs[lang].t("col.condition"), catalogs[lang].t("col.input")
        for region in layout["regions"]:
            label = f"{width} px {where}{path}: wide table {region['caption']!r}"
            if region["role"] != "region" or region["tabindex"] != "0" or not region["caption"]:
                out.append(f"{label}: not a named, focusable region: {region}")
            if region["right"] > inner + 1:
                out.append(f"{label}: reaches past the window ({region['right']} > {inner})")
            if region["overflows"] and not region["hint"]:
                out.append(f"{label}: overflows with no visible scroll hint")
            heads = region["heads"]
            key_columns = [condition, input_] if input_ in heads else [condition]
            if region["id"].startswith("sg-sweep-table"):  # rows are speculative levels
                key_columns = [catalogs[lang].t("sweep.level")]
            if region["id"] == "sg-overview-table":  # rows are campaigns (the home page)
                key_columns = [catalogs[lang].t("col.report")]
            if heads[: len(key_columns)] != key_columns:
                out.append(f"{label}: starts with {heads[:2]}, not {key_columns}")
    return out


def test_every_page_is_clean_and_fits_every_width(browser, site, screenshot_dir):
    speed = next(p for p in site.pages if p.endswith("/speed/") and "/en/" in p and "/unit/" in p)
    shots = {(speed, width): screenshot_dir / f"speed-{width}.png" for width in WIDTHS[1:]}
    series = next(p for p in site.pages if p.endswith("/en/series/builds/"))
    (screenshot_dir / "series").mkdir(exist_ok=True)
    shots |= {(series, width): screenshot_dir / "series" / f"en-{width}.png" for width in WIDTHS}
    by_width = _visit_all(browser, site, shots)
    problems = []
    for width, results in by_width.items():
        pages = set(results)
        assert any(p.endswith("/data/") for p in pages) and any("changelog" in p for p in pages)
        assert len(pages) >= 14, sorted(pages)
        # Laid out at this width, the resized pages too.
        assert {layout["sideways"][1] for _, layout in results.values()} == {width}
        problems += _check(results, width)
        # The speed summary (14 columns) overflows a 720 px column and a phone: it scrolls.
        regions = {r["id"]: r for r in results[speed][1]["regions"]}
        assert {"sg-speed-table", "sg-latency-table", "sg-memory-table"} <= regions.keys()
        if width < 1280:
            assert regions["sg-speed-table"]["overflows"], (width, regions)
    assert not problems, "\n".join(problems)


def test_wide_table_keeps_its_first_column_and_caption_in_view(browser, site):
    speed = next(p for p in site.pages if p.endswith("/speed/") and "/en/" not in p)
    with browser.new_page(viewport=(390, 844)) as page:
        page.goto(site.base_url + speed)
        page.wait_for(".sg-wide")
        moved = page.evaluate(
            """() => {
                const r = document.querySelector('.sg-wide');
                const cell = r.querySelector('tbody td'), caption = r.querySelector('caption span');
                r.scrollLeft = 400;
                const left = r.getBoundingClientRect().left;
                return [r.scrollLeft, cell.getBoundingClientRect().left - left,
                        caption.getBoundingClientRect().left - left];
            }"""
        )
        assert moved[0] >= 300, moved  # it did scroll ...
        assert abs(moved[1]) <= 1 and abs(moved[2]) <= 1, moved  # ... and these stayed


def test_with_site_url_the_pages_and_selectors_are_clean(browser, site_with_url):
    """Home pages (absolute language links), a report page and the version selector (it
    reads the other version's sitemap), under site_url's path."""
    base = site_with_url.base_url + SITE_URL_PATH
    speed = f"{base}v/v2/{site_with_url.report}speed/"
    with browser.new_page() as page:
        pending = _in_flight(page)
        page.goto(base + "v/v2/")
        _ready(page, pending)
        page.raw.hover(".md-header__option .md-select")
        page.click('.md-select__link[hreflang="en"]')
        page.wait_for_url(base + "v/v2/en/")
        _ready(page, pending)
        page.goto(speed)
        _ready(page, pending)
        page.raw.hover(".md-version")
        page.click('.md-version__link:has-text("v1")')
        page.wait_for_url(speed.replace("/v2/", "/v1/"))
        _ready(page, pending)
        page.report.assert_clean()


def test_sweep_and_pareto_charts_draw_every_trial(browser, site, screenshot_dir):
    sweep = next(p for p in site.pages if p.endswith("/reports/sweep/sweep/") and "/en/" in p)
    with browser.new_page(viewport=(1280, 900)) as page:
        pending = _in_flight(page)
        page.goto(site.base_url + sweep)
        _ready(page, pending)
        charts = page.raw.eval_on_selector_all(
            "figure.sg-chart",
            """figures => figures.map(f => ({claim: f.dataset.claim,
                points: f.querySelectorAll('.scatterlayer .point').length}))""",
        )
        claims = [c["claim"] for c in charts]
        assert claims == ["sweep-chart"] * 3 + ["pareto-chart"], claims
        # Every trial is a point: 6 conditions × 4 trials + the medians' line markers.
        assert charts[0]["points"] >= 6 * 4, charts
        page.raw.locator('figure[data-claim="sweep-chart"]').first.screenshot(
            path=str(screenshot_dir / "sweep-chart.png")
        )
        page.raw.locator('figure[data-claim="pareto-chart"]').screenshot(
            path=str(screenshot_dir / "pareto-chart.png")
        )
        table = page.raw.locator('[aria-labelledby^="sg-sweep-table"]')
        assert table.locator('[data-claim="sweep-ratio"]').count() == 6  # 2 levels × 3 series
        page.report.assert_clean()
