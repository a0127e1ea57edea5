"""The generated site in a real Chromium: charts draw with no errors and nothing from
outside, the language and version selectors keep the reader on the same page, every
download resolves, hostile model output stays inert text, pages stay light."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from harness import serve_directory

from sitegen.commands.build import build_site
from tests.builtsites import published_objects
from tests.sitefixtures import (
    HOSTILE_TEXTS,
    PROJECT,
    hostile_plan,
    publishable_campaign,
    report_address,
)

ALLOWED_404: list[str] = []
"""Nothing may 404: material's fetches of a sitemap.xml next to every <link rel=alternate>
are gone (theme/overrides/main.html leaves those links out)."""

CSP_LISTENER = (
    "window.__cspViolations = [];"
    "document.addEventListener('securitypolicyviolation',"
    " e => window.__cspViolations.push(e.violatedDirective + ' ' + e.blockedURI));"
)
PAGE_WEIGHT_LIMIT = 300_000
"""Bytes one report page may fetch for itself. The data page's answers come in pages of
JSON on demand; benchmarks/build_time.py reports their size at seed scale."""


@dataclass(frozen=True)
class Site:
    base_url: str
    slug: str
    theme: str
    """The object folder of the theme's assets (``objects/<sha256>``)."""

    def page(self, version: str, lang: str, page: str = "") -> str:
        prefix = "" if lang == "ja" else f"{lang}/"
        suffix = f"{page}/" if page else ""
        return f"{self.base_url}v/{version}/{prefix}reports/{self.slug}/{suffix}"


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Site:
    """Two versions of a campaign whose input is the hostile corpus: v1 with the fake
    engine's own answers, v2 with the hostile corpus in its texts and failure reasons (a
    campaign is published complete: half of one is refused, C-PLANNED)."""
    root = tmp_path_factory.mktemp("browser-site")
    publishable_campaign(root / "early", plan=hostile_plan())
    records_path = publishable_campaign(root / "data", hostile=True)
    campaign = records_path.parent
    build_site(root / "early", root / "site", PROJECT, version="v1")
    build_site(root / "data", root / "site", PROJECT, version="v2")
    moved = published_objects(root / "site" / "v" / "v2")
    theme = "/".join(moved["assets/css/sitegen.css"].split("/")[:2])
    with serve_directory(root / "site") as base_url:
        yield Site(base_url, report_address(campaign), theme)


def _visit(page, url: str) -> None:
    page.raw.add_init_script(CSP_LISTENER)
    page.goto(url)


def _assert_clean(page) -> None:
    page.report.assert_clean(allow_404=ALLOWED_404)
    assert page.evaluate("() => window.__cspViolations") == []


def _own_bytes(page, site: Site) -> dict[str, int]:
    """What a page fetched for itself, beyond what every page of the version shares (the
    theme's assets, the search index) and the site-wide plotly.js."""
    page.raw.wait_for_load_state("networkidle")
    sizes = page.evaluate(
        """() => [performance.getEntriesByType('navigation')[0],
                  ...performance.getEntriesByType('resource')]
                 .map(e => [new URL(e.name).pathname, e.encodedBodySize])"""
    )
    shared = (f"/{site.theme}/", "/v/v2/search/", "/assets/")
    return {path: size for path, size in sizes if not path.startswith(shared)}


@pytest.mark.parametrize("lang", ["ja", "en"])
def test_speed_page_draws_its_charts_cleanly_and_stays_light(browser, site, screenshot_dir, lang):
    with browser.new_page() as page:
        _visit(page, site.page("v2", lang, "speed"))
        page.raw.wait_for_function(
            "() => document.querySelectorAll('div.sg-plot').length > 0 && "
            "[...document.querySelectorAll('div.sg-plot')].every(p => p.querySelector('.main-svg'))"
        )
        assert page.evaluate("() => document.querySelectorAll('div.sg-plot .main-svg').length") >= 2
        # plotly.js's "send to cloud" button must not be offered.
        assert page.evaluate("() => document.querySelector('[data-title*=\"Cloud\"]')") is None
        if lang == "en":
            page.screenshot(screenshot_dir / "en-speed.png")
        own = _own_bytes(page, site)
        assert sum(own.values()) <= PAGE_WEIGHT_LIMIT, own
        _assert_clean(page)


def test_plotly_waits_until_a_chart_comes_near_the_window(browser, site):
    """On a phone the summary's chart is below the first screen: the page loads neither
    plotly.js nor draws it until the reader scrolls towards the chart, then it draws."""
    with browser.new_page(viewport=(390, 700), charts_in_view=False) as page:
        _visit(page, site.page("v2", "ja"))
        page.raw.wait_for_load_state("networkidle")
        below = page.evaluate(
            "() => document.querySelector('div.sg-plot').getBoundingClientRect().top - innerHeight"
        )
        assert below > 400, "the test needs a chart well below the first screen"
        loaded = (
            "() => performance.getEntriesByType('resource').some(e => e.name.includes('plotly'))"
        )
        assert not page.evaluate(loaded)
        assert page.evaluate("() => document.querySelector('div.sg-plot .main-svg')") is None
        page.evaluate("() => document.querySelector('div.sg-plot').scrollIntoView()")
        page.wait_for("div.sg-plot .main-svg")
        assert page.evaluate(loaded)
        assert page.evaluate("() => document.querySelector('div.sg-plot').dataset.drawn") == "1"
        _assert_clean(page)


def test_summary_page_is_clean_and_light(browser, site, screenshot_dir):
    with browser.new_page() as page:
        _visit(page, site.page("v2", "ja"))
        page.wait_for("article h1")
        page.screenshot(screenshot_dir / "ja-summary.png")
        own = _own_bytes(page, site)
        assert sum(own.values()) <= PAGE_WEIGHT_LIMIT, own
        _assert_clean(page)


def test_language_switch_keeps_the_page(browser, site):
    with browser.new_page() as page:
        _visit(page, site.page("v2", "ja", "speed"))
        for lang, target in (
            ("en", site.page("v2", "en", "speed")),
            ("ja", site.page("v2", "ja", "speed")),
        ):
            page.raw.wait_for_load_state("networkidle")  # leaving earlier aborts the search's loads
            page.raw.hover(".md-header__option .md-select")
            page.click(f'.md-select__link[hreflang="{lang}"]')
            page.wait_for_url(target)
            page.wait_for("div.sg-plot .main-svg")
        _assert_clean(page)


def test_version_selector_keeps_the_page_and_marks_old_versions(browser, site, screenshot_dir):
    with browser.new_page() as page:
        _visit(page, site.page("v2", "en", "speed"))
        page.raw.hover(".md-version")
        page.wait_for('.md-version__link:has-text("v1")')
        assert page.text(".md-version__current .md-version__alias") == "latest"
        assert page.evaluate("() => document.querySelector('[data-md-component=outdated]').hidden")
        page.screenshot(screenshot_dir / "version-selector.png", full_page=False)
        page.click('.md-version__link:has-text("v1")')
        page.wait_for_url(site.page("v1", "en", "speed"))
        page.wait_for("[data-md-component=outdated]")  # v1 is not the latest: a banner says so
        assert "latest version" in page.text("[data-md-component=outdated]")
        page.raw.wait_for_load_state("networkidle")  # leaving earlier aborts the search's loads
        page.click("[data-md-component=outdated] a")
        page.wait_for_url(f"{site.base_url}v/v2/")
        _assert_clean(page)


def test_an_old_versions_history_and_changelog_show_every_version(browser, site):
    """v1's pages were published before v2 and never change: they name no version, and
    fetch every version's entries from the site-level files the newest build wrote."""
    with browser.new_page() as page:
        _visit(page, site.page("v1", "en", "history"))
        page.wait_for('.sg-all-versions a:has-text("v2")')
        rows = page.evaluate(
            "() => [...document.querySelectorAll('.sg-all-versions tbody tr')]"
            ".map(row => row.cells[0].textContent)"
        )
        assert rows == ["v1 (this version)", "v2"]
        _assert_clean(page)
    with browser.new_page() as page:
        _visit(page, f"{site.base_url}v/v1/en/changelog/")
        page.wait_for('.sg-all-versions h2 a:has-text("v2")')
        headings = page.evaluate(
            "() => [...document.querySelectorAll('.sg-all-versions h2')].map(h => h.textContent)"
        )
        assert headings == ["v2", "v1 (this version)"]
        assert "Changes since the previous version, v1" in page.text(".sg-all-versions")
        _assert_clean(page)


def test_every_download_resolves(browser, site, screenshot_dir):
    with browser.new_page() as page:
        _visit(page, site.page("v2", "ja", "data"))
        links = page.evaluate(
            "() => [...document.querySelectorAll('a[download]')].map(a => a.href)"
        )
        assert len(links) >= 6
        for link in links:
            response = page.raw.request.get(link)
            assert response.status == 200 and response.body(), link
        page.screenshot(screenshot_dir / "data.png", full_page=False)
        _assert_clean(page)


@pytest.mark.parametrize(
    ("lang", "page_name"), [("ja", "data"), ("en", "data"), ("ja", "examples")]
)
def test_hostile_model_output_stays_inert_text(browser, site, lang, page_name):
    with browser.new_page(viewport=(1024, 768)) as page:
        _visit(page, site.page("v2", lang, page_name))
        if page_name == "data":
            page.wait_for(".sg-answers-list details", state="attached")
        page.evaluate("() => document.querySelectorAll('details').forEach(d => { d.open = true; })")
        if page_name == "data":  # every answer is there, as text
            # textContent: innerText would lay out 100,000-character words once more.
            shown = page.evaluate("() => document.querySelector('.sg-answers-list').textContent")
            for text in HOSTILE_TEXTS.values():
                assert text.replace("\x00", "\ufffd")[:60] in shown.replace("\x00", "\ufffd")
        live = page.evaluate(
            """() => [...document.querySelectorAll('.md-content *')].filter(e =>
                   [...e.attributes].some(a => a.name.startsWith('on')) ||
                   String(e.getAttribute('href') || '').trim().startsWith('javascript:') ||
                   ['IMG', 'SVG', 'SCRIPT', 'IFRAME', 'OBJECT', 'EMBED'].includes(
                       e.tagName.toUpperCase()) && e.closest('.sg-answers-list, .sg-text')
               ).map(e => e.outerHTML.slice(0, 80))"""
        )
        assert live == []
        width = page.evaluate("() => [document.documentElement.scrollWidth, window.innerWidth]")
        assert width[0] <= width[1] + 2, f"the page scrolls sideways: {width}"
        assert page.report.dialog_count == 0
        _assert_clean(page)
