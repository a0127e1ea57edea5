"""Caveats are visible, not just present: on every page of a built site (a speed report
with a quality evaluation and a sweep, both languages), every ``data-caveat`` element the
HTML holds is in the rendered document with a box, shown (not ``display:none``,
``visibility:hidden`` or transparent), outside a closed ``<details>`` and a ``<template>``,
not clipped away by an ancestor, and inside a claim that is itself visible. Content that
would hide caveats (``<style>``, ``<template>``, ``hidden``, ``<details>``) never reaches
a page: the build refuses it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from harness import serve_directory

from sitegen.commands.build import build_site
from sitegen.core.errors import DataError
from tests.sitefixtures import PROJECT, copy_project, project_page, publishable_campaign, sweep_plan
from tests.statistics.test_quality_records import quality_plan

pytestmark = pytest.mark.slow

CAVEAT_MARKER = re.compile(r"""<[a-z][^>]*\sdata-caveat=["']""")
"""A caveat element in a page's HTML as published."""

VISIBILITY = """() => {
  const found = [];
  for (const e of document.querySelectorAll('[data-caveat]')) {
    const problems = [], r = e.getBoundingClientRect(), s = getComputedStyle(e);
    if (!e.checkVisibility({opacityProperty: true, visibilityProperty: true,
                            contentVisibilityAuto: true}))
      problems.push('not rendered (display, visibility, opacity or content-visibility)');
    if (r.width < 1 || r.height < 1) problems.push(`box ${r.width}x${r.height}`);
    const closed = e.closest('details:not([open])');
    if (closed && !e.closest('summary')) problems.push('inside a closed <details>');
    if (e.closest('template, [hidden]')) problems.push('inside <template> or [hidden]');
    if (parseFloat(s.fontSize) < 6) problems.push(`font-size ${s.fontSize}`);
    // <html> and <body> clip to the scrolling viewport: an element below the fold is shown.
    for (let a = e.parentElement; a && a !== document.body; a = a.parentElement) {
      const o = getComputedStyle(a);
      if (!['hidden', 'clip'].includes(o.overflowX) && !['hidden', 'clip'].includes(o.overflowY))
        continue;
      const box = a.getBoundingClientRect();
      if (r.right <= box.left || r.left >= box.right || r.bottom <= box.top || r.top >= box.bottom)
        problems.push(`clipped by <${a.tagName.toLowerCase()} class="${a.className}">`);
    }
    const claim = e.closest('[data-claim]');
    if (claim && !claim.checkVisibility({opacityProperty: true, visibilityProperty: true}))
      problems.push(`its claim '${claim.getAttribute('data-claim')}' is not visible`);
    found.push({caveat: e.getAttribute('data-caveat'), problems});
  }
  return found;
}"""


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> tuple[str, list[Path], Path]:
    root = tmp_path_factory.mktemp("caveats-visible")
    publishable_campaign(root / "data", quality_plan())
    publishable_campaign(root / "data", sweep_plan())
    build_site(root / "data", root / "site", PROJECT, version="v1")
    pages = sorted((root / "site" / "v" / "v1").rglob("index.html"))
    with serve_directory(root / "site") as base_url:
        yield base_url, pages, root / "site"


def caveat_problems(browser, base_url: str, root: Path, pages: list[Path]) -> tuple[int, list]:
    """(caveats seen, problems) over ``pages`` (files under ``root``, served at ``base_url``)."""
    problems, seen = [], 0
    with browser.new_page(viewport=(1280, 900)) as page:
        for path in pages:
            # A page's directory URL; another file (404.html) at its own address.
            relative = path.relative_to(root)
            url = base_url + (
                relative.parent.as_posix() + "/"
                if path.name == "index.html"
                else relative.as_posix()
            )
            page.goto(url)
            found = page.evaluate(VISIBILITY)
            in_html = len(CAVEAT_MARKER.findall(path.read_text(encoding="utf-8")))
            if len(found) != in_html:
                problems.append(f"{url}: {in_html} caveats in the HTML, {len(found)} rendered")
            problems += [f"{url}: {c['caveat']}: {p}" for c in found for p in c["problems"]]
            seen += len(found)
    return seen, problems


def test_every_caveat_is_visible_next_to_its_claim(browser, site):
    base_url, pages, root = site
    seen, problems = caveat_problems(browser, base_url, root, pages)
    assert seen > 100, f"only {seen} caveats seen: the site is not the one this test means"
    assert not problems, "\n".join(problems[:20])


@pytest.mark.parametrize(
    "hiding",
    [
        "<style>[data-caveat]{display:none}</style>",
        "<template>\n\n{{ excluded() }}\n\n</template>",
        "<div hidden>\n\n{{ excluded() }}\n\n</div>",
        "<details><summary>more</summary>\n\n{{ excluded() }}\n\n</details>",
    ],
    ids=["style", "template", "hidden", "details"],
)
def test_content_that_hides_caveats_is_refused_at_build_time(tmp_path, hiding):
    project = copy_project(tmp_path / "project")
    for lang in ("ja", "en"):
        page = project_page(project, f"{lang}/report/index.md")
        page.write_text(page.read_text() + "\n" + hiding + "\n")
    publishable_campaign(tmp_path / "data")
    with pytest.raises(DataError) as caught:
        build_site(tmp_path / "data", tmp_path / "site", project)
    assert "content/ja/report/index.md: raw HTML" in str(caught.value)
    assert not (tmp_path / "site").exists() or not any((tmp_path / "site").rglob("index.html"))
