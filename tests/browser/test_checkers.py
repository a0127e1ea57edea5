"""Independent checkers over one built site (the two-version site of test_every_page, with
hostile titles): the W3C Nu HTML validator finds no error on any page, ja and en, and
axe-core finds no serious or critical violation on a page of each kind once its charts
are drawn.

The checkers are pinned in ``tests/browser/checkers/package-lock.json`` and installed by
``scripts/install-checkers.sh`` (Java from Debian); a missing one FAILS these tests."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from harness import serve_directory
from test_every_page import _build, _pages

pytestmark = pytest.mark.slow

CHECKERS = Path(__file__).resolve().parent / "checkers" / "node_modules"
VNU_JAR = CHECKERS / "vnu-jar" / "build" / "dist" / "vnu.jar"
AXE = CHECKERS / "axe-core" / "axe.min.js"
INSTALL = "run `bash scripts/install-checkers.sh`"

DRAWN = """() =>
    [...document.querySelectorAll('div.sg-plot')].every(p => p.querySelector('.main-svg')) &&
    [...document.querySelectorAll('.sg-answers-browser')].every(
        b => b.querySelector('.sg-answers-list details')) &&
    !!document.querySelector('.md-version__current')"""
"""What the scripts draw: the charts, the answers of the data page and material's version
selector (from versions.json)."""

AXE_RUN = """async () => {
    const result = await axe.run(document, {resultTypes: ['violations']});
    return result.violations
        .filter(v => v.impact === 'serious' || v.impact === 'critical')
        .map(v => ({id: v.id, impact: v.impact, help: v.help,
                    nodes: v.nodes.slice(0, 3).map(n => n.target.join(' ') + ': '
                        + n.failureSummary.replace(/\\s+/g, ' ').slice(0, 200))}));
}"""


def page_kinds(pages: tuple[str, ...]) -> list[str]:
    """One page of each kind in each language and version (``reports/<any>/speed/`` is one
    kind): the hostile campaign's pages first, then what only the sweep's report has."""
    kinds: dict[str, str] = {}
    for path in sorted(pages, key=lambda p: "/reports/sweep/" in p):
        kinds.setdefault(re.sub(r"reports/[^/]+/", "reports/*/", path), path)
    return list(kinds.values())


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    return _build(tmp_path_factory.mktemp("checkers"))


def test_every_page_is_valid_html(built):
    java = shutil.which("java")
    assert java and VNU_JAR.is_file(), f"Java or the Nu validator is missing: {INSTALL}"
    pages = [built / path / "index.html" for path in _pages(built)]
    assert len(pages) >= 29 and all(p.is_file() for p in pages)
    # One validator run over every page (the JVM's start is most of its time).
    run = subprocess.run(
        [java, "-jar", str(VNU_JAR), "--format", "json", "--errors-only", "--exit-zero-always",
         *map(str, pages), str(built / "404.html")],
        capture_output=True, text=True, timeout=300, check=True,
    )  # fmt: skip
    errors = [
        f"{Path(m.get('url', '?')).parent.name}/…:{m.get('lastLine')}: {m['message']}"
        f" [{m.get('extract', '').strip()[:120]}]"
        for m in json.loads(run.stderr)["messages"]
        if m.get("type") == "error" or m.get("subType") == "fatal"
    ]
    assert not errors, f"{len(errors)} error(s):\n" + "\n".join(errors)


def test_no_page_has_serious_accessibility_violations(browser, built):
    assert AXE.is_file(), f"axe-core is missing: {INSTALL}"
    axe = AXE.read_text(encoding="utf-8")
    found = []
    with serve_directory(built) as base_url, browser.new_page(viewport=(1280, 900)) as page:
        pages = page_kinds(_pages(built))
        assert len(pages) >= 21, pages  # ja and en: 10 kinds each, and v1's home page
        for path in pages:
            page.goto(base_url + path)
            page.raw.wait_for_function(DRAWN)
            # Evaluated through the DevTools protocol: the pages' CSP does not apply.
            page.raw.evaluate(axe)
            for v in page.raw.evaluate(AXE_RUN):
                found.append(f"{path}: {v['impact']} {v['id']} ({v['help']}): {v['nodes']}")
    assert not found, f"{len(found)} violation(s):\n" + "\n".join(found)
