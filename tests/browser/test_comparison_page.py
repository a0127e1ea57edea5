"""Reports over several campaigns in Chromium: the comparison table lists what differs and
what is not recorded, shows no ratio, and the page is clean (no errors, nothing from
outside)."""

from __future__ import annotations

from harness import serve_directory

from sitegen.commands.build import build_site
from tests.pages.test_comparison import (
    GPUS,
    TITLE,
    gpu_campaigns,
    project_with,
    three_campaigns,
)
from tests.sitefixtures import PROJECT


def test_three_campaign_comparison_page(browser, tmp_path, screenshot_dir):
    data = three_campaigns(tmp_path)
    project = project_with(
        tmp_path, hosts={"id": "hosts", "title": TITLE, "campaigns": ["b200", "h100x2", "http"]}
    )
    (project / "mkdocs.yml").write_text((PROJECT / "mkdocs.yml").read_text())
    build_site(data, tmp_path / "site", project, version="v1")
    with (
        serve_directory(tmp_path / "site") as base_url,
        browser.new_page(viewport=(1280, 900)) as page,
    ):
        page.goto(f"{base_url}v/v1/en/compare/hosts/")
        page.wait_for(".sg-comparison-row")
        rows = page.evaluate(
            "() => [...document.querySelectorAll('.sg-comparison-row')].map(r => "
            "[r.getAttribute('data-claim'), r.querySelectorAll('tbody tr').length])"
        )
        assert rows and all(kind == "configuration-comparison" and n == 3 for kind, n in rows)
        headers = page.evaluate(
            "() => [...document.querySelector('.sg-comparison-row thead').children[0]"
            ".children].map(th => th.textContent)"
        )
        assert "engine" in headers and "interface (HTTP or in-process)" in headers
        page.screenshot(screenshot_dir / "en-comparison-three-campaigns.png", full_page=False)
        page.report.assert_clean(allow_404=[])


def test_a_comparison_that_refuses_factor_alone_names_the_unrecorded_fields(
    browser, tmp_path, screenshot_dir
):
    """H100×2 against B200×2 declared ``factor: devices``, the B200 host's driver,
    interconnect and GPU runtime not recorded: no ratio, and the page names them."""
    data = gpu_campaigns(tmp_path, b200_driver=None, b200_recorded=False)
    project = project_with(tmp_path, gpus=GPUS)
    (project / "mkdocs.yml").write_text((PROJECT / "mkdocs.yml").read_text())
    build_site(data, tmp_path / "site", project, version="v1")
    with serve_directory(tmp_path / "site") as base_url:
        for lang, prefix, not_recorded in (
            ("ja", "", "記録なし"),
            ("en", "en/", "not recorded"),
        ):
            with browser.new_page(viewport=(1280, 900)) as page:
                assert page.goto(f"{base_url}v/v1/{prefix}compare/gpus/") == 200
                page.wait_for(".sg-comparison-row")
                rows = page.evaluate(
                    "() => [...document.querySelectorAll('.sg-comparison-row')].map(r => "
                    "[r.getAttribute('data-claim'), r.getAttribute('data-unrecorded'), "
                    "r.querySelectorAll('td[data-unrecorded]').length])"
                )
                assert (
                    rows == [["configuration-comparison", "driver,gpu_runtime,interconnect", 3]] * 4
                )
                text = page.evaluate("() => document.querySelector('.sg-comparison').innerText")
                assert not_recorded in text and "×" not in text.split("\n", 3)[-1]
                page.screenshot(screenshot_dir / f"comparison-refused-{lang}.png", full_page=True)
                page.report.assert_clean(allow_404=[])
