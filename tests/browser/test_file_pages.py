"""The site opened from the file system (no server): the root page reaches the latest
version's summary, and its links and the navigation lead to pages, never to a directory
listing."""

from __future__ import annotations

from sitegen.commands.build import build_site
from tests.sitefixtures import PROJECT, publishable_campaign, report_address


def test_the_site_opens_and_navigates_from_files(browser, tmp_path, screenshot_dir):
    slug = report_address(publishable_campaign(tmp_path / "data").parent)
    build_site(tmp_path / "data", tmp_path / "site", PROJECT, version="v1")
    site = (tmp_path / "site").absolute()
    with browser.new_page() as page:
        page.goto(site.joinpath("index.html").as_uri())
        page.raw.wait_for_url(site.joinpath("v", "v1", "index.html").as_uri())
        page.wait_for("article h1")
        # The home page lists the reports; a report's pages are in its own navigation.
        page.raw.locator(f'article a[href*="reports/{slug}/"]').first.click()
        page.raw.wait_for_url(site.joinpath("v", "v1", "reports", slug, "index.html").as_uri())
        link = page.raw.locator('nav a[href^="speed/"]').first
        assert link.get_attribute("href") == "speed/index.html"
        link.click()
        speed = site.joinpath("v", "v1", "reports", slug, "speed", "index.html").as_uri()
        page.raw.wait_for_url(speed)
        page.wait_for("article h1")
        assert page.evaluate("() => document.title").startswith(page.text("article h1"))
        page.screenshot(screenshot_dir / "file-speed.png")
        english = page.raw.locator('.md-select__link[hreflang="en"]').first
        assert english.get_attribute("href").endswith("/index.html")
