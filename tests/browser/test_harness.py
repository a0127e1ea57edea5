"""Tests of the headless-Chromium harness itself, against tiny static pages."""

from __future__ import annotations

import struct
from pathlib import Path

import pytest
from harness import Browser, is_local_url

HEAD = '<!doctype html><html lang="ja"><head><meta charset="utf-8"><title>t</title>'
# A data: favicon stops Chromium from requesting /favicon.ico (a 404 here).
HEAD += '<link rel="icon" href="data:,"></head><body>'


def write_page(root: Path, name: str, body: str) -> str:
    (root / name).write_text(HEAD + body + "</body></html>", encoding="utf-8")
    return name


def test_click_changes_text(browser: Browser, served_site, tmp_path: Path) -> None:
    write_page(
        tmp_path,
        "index.html",
        '<button id="b" onclick="this.textContent=\'clicked\';'
        "location.hash='done'\">click me</button>",
    )
    base = served_site(tmp_path)
    with browser.new_page() as page:
        assert page.goto(base) == 200
        page.wait_for("#b")
        assert page.text("#b") == "click me"
        page.click("#b")
        assert page.text("#b") == "clicked"
        assert page.href == base + "#done"
        page.report.assert_clean()
        assert page.report.requests == [base]


def test_uncaught_error_is_reported(browser: Browser, served_site, tmp_path: Path) -> None:
    write_page(tmp_path, "boom.html", '<script>throw new Error("boom-42")</script><p>x</p>')
    base = served_site(tmp_path)
    with browser.new_page() as page:
        page.goto(base + "boom.html")
        page.wait_for("p")
        assert any("boom-42" in e for e in page.report.page_errors)
        with pytest.raises(AssertionError, match="boom-42"):
            page.report.assert_clean()


def test_console_error_is_reported(browser: Browser, served_site, tmp_path: Path) -> None:
    write_page(tmp_path, "c.html", '<script>console.error("bad-thing")</script><p>x</p>')
    base = served_site(tmp_path)
    with browser.new_page() as page:
        page.goto(base + "c.html")
        assert page.report.console_errors == ["bad-thing"]
        with pytest.raises(AssertionError, match="bad-thing"):
            page.report.assert_clean()


@pytest.mark.parametrize(
    ("body", "expected_dialogs"),
    [
        # Escaped: must render as text and never execute.
        ("<p id='t'>&lt;script&gt;alert(1)&lt;/script&gt;</p>", 0),
        # Real script: proves the dialog counter can fail a test.
        ("<p id='t'>x</p><script>alert(1)</script>", 1),
    ],
    ids=["escaped", "live-script"],
)
def test_dialog_counter(
    browser: Browser, served_site, tmp_path: Path, body: str, expected_dialogs: int
) -> None:
    write_page(tmp_path, "x.html", body)
    base = served_site(tmp_path)
    with browser.new_page() as page:
        page.goto(base + "x.html")
        page.wait_for("#t")
        assert page.report.dialog_count == expected_dialogs
        if expected_dialogs:
            assert page.report.dialogs[0].type == "alert"
            assert page.report.dialogs[0].message == "1"
            with pytest.raises(AssertionError, match="JS dialog"):
                page.report.assert_clean()
        else:
            assert page.text("#t") == "<script>alert(1)</script>"
            page.report.assert_clean()


def test_404_and_external_requests(browser: Browser, served_site, tmp_path: Path) -> None:
    write_page(
        tmp_path,
        "n.html",
        '<img src="missing.png"><img src="https://example.com/x.png">'
        '<script src="http://cdn.example.org/lib.js"></script><p>x</p>',
    )
    base = served_site(tmp_path)
    with browser.new_page() as page:
        page.goto(base + "n.html")
        report = page.report
        assert report.not_found == [base + "missing.png"]
        assert sorted(report.external_requests) == [
            "http://cdn.example.org/lib.js",
            "https://example.com/x.png",
        ]
        # Blocked before leaving the machine.
        assert {f.url for f in report.failed_requests} >= set(report.external_requests)
        problems = report.problems(allow_404=["/missing.png"])
        assert len(problems) == 2 and all("external request" in p for p in problems)
        with pytest.raises(AssertionError, match=r"HTTP 404: .*missing\.png"):
            report.assert_clean()


def test_full_page_screenshot_is_png(
    browser: Browser, served_site, tmp_path: Path, screenshot_dir: Path
) -> None:
    write_page(
        tmp_path,
        "tall.html",
        '<h1 style="height:2000px">日本語 / English</h1><p id="end">end</p>',
    )
    base = served_site(tmp_path)
    out = screenshot_dir / "harness-full-page.png"
    out.unlink(missing_ok=True)
    with browser.new_page(viewport=(800, 600)) as page:
        page.goto(base + "tall.html")
        page.wait_for("#end")
        assert page.screenshot(out) == out
    data = out.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", data[16:24])  # IHDR
    assert width == 800
    assert height > 2000  # full page, not just the 600px viewport


def test_is_local_url() -> None:
    assert is_local_url("http://127.0.0.1:8000/a")
    assert is_local_url("http://localhost/a")
    assert is_local_url("data:text/plain,x")
    assert not is_local_url("https://fonts.googleapis.com/css")
    assert not is_local_url("http://127.0.0.1.evil.test/")


def test_bypass_csp_lets_what_the_policy_blocks_run(
    browser: Browser, served_site, tmp_path: Path
) -> None:
    policy = '<meta http-equiv="Content-Security-Policy" content="script-src \'none\'">'
    page_html = HEAD.replace("</head>", policy + "</head>") + "<script>window.__ran = 1</script>"
    (tmp_path / "csp.html").write_text(page_html + "</body></html>", encoding="utf-8")
    base = served_site(tmp_path)
    for bypass, ran in ((False, None), (True, 1)):
        with browser.new_page(bypass_csp=bypass) as page:
            page.goto(base + "csp.html")
            assert page.evaluate("() => window.__ran") == ran
