"""No page links to or names a page the site does not have: every internal link of a
built site resolves, and the summary of a report without a quality evaluation never
sends readers to a Quality page."""

from __future__ import annotations

import pytest

from sitegen.commands.build import build_site
from tests.conftest import make_plan
from tests.hostilecampaign import hostile_base_plan
from tests.links import broken_internal_links
from tests.sitefixtures import PROJECT, publishable_campaign, report_address


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """Two versions: a speed-only report, then the same beside a report with quality."""
    root = tmp_path_factory.mktemp("links")
    speed_only = publishable_campaign(root / "data", plan=make_plan(name="speed-only")).parent
    build_site(root / "data", root / "site", PROJECT, version="v1")
    with_quality = publishable_campaign(root / "data", plan=hostile_base_plan()).parent
    build_site(root / "data", root / "site", PROJECT, version="v2")
    return root / "site", report_address(speed_only), report_address(with_quality)


def test_every_internal_link_of_the_site_resolves(site):
    site_dir, _, _ = site
    assert list(site_dir.rglob("*.html"))
    assert broken_internal_links(site_dir) == []


def test_a_broken_link_is_found(site, tmp_path):
    site_dir, slug, _ = site
    page = tmp_path / "index.html"
    page.write_text('<a href="reports/quality/">x</a> <img src="missing.png">', encoding="utf-8")
    assert broken_internal_links(tmp_path) == [
        "index.html → reports/quality/",
        "index.html → missing.png",
    ]


@pytest.mark.parametrize("lang", ["ja", "en"])
def test_the_summary_links_only_to_the_pages_the_report_has(site, lang):
    site_dir, speed_only, with_quality = site
    prefix = "" if lang == "ja" else "en/"
    page = (site_dir / "v" / "v2" / prefix / "reports" / speed_only / "index.html").read_text()
    summary = page[page.index("<article") : page.index("</article>")]  # not the navigation
    assert f"reports/{speed_only}/speed/" in summary
    assert f"reports/{speed_only}/quality/" not in summary
    see_also = summary[summary.index('class="sg-see-also"') :].split("</p>", 1)[0]
    assert ("Speed" if lang == "en" else "速度") in see_also
    assert ("Quality" if lang == "en" else "品質") not in see_also
    summary = (site_dir / "v" / "v2" / prefix / "reports" / with_quality / "index.html").read_text()
    assert f"reports/{with_quality}/quality/" in summary
