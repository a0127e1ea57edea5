"""The hostile corpus in every text field, every page in Chromium with the CSP bypassed.

One campaign holds the whole corpus (``tests/hostilecorpus.py``: ``HOSTILE_PAYLOADS``,
79 payloads) in every text field a plan author, an annotator or a model can fill
(``HOSTILE_FIELDS``, 42 fields), each payload tagged ``<field>.<payload>``. One site is
built from it, and every page of it, in both languages, is opened with the
Content-Security-Policy bypassed, so what is checked is what escaping alone prevents:

* no payload ran (``window.__pwned`` stays empty, no dialog opened, no ``/pwn/`` URL was
  requested, no template was evaluated);
* no payload element exists (``INJECTED_SELECTOR``), no inline event handler and no
  ``javascript:`` / ``vbscript:`` / active ``data:`` URL is on the page;
* every ``data-caveat`` element is visible (``checkVisibility`` with opacity and
  visibility, a size, a readable font and colour) and none was swallowed;
* every chart draws (a plotly ``.main-svg`` in each ``div.sg-plot``), the speed page
  has charts, and no page script threw;
* no raw NUL or other control character is in any HTML file of the site.

The counts (payloads × fields placed, pages, the payload × field × page exposures seen)
and every finding go to ``test-artifacts/hostile-summary.json`` and the test's output.
Markdown formatting of a payload (an element holding only ``PWNMD-<tag>``) is recorded
there as information, not a failure: author text may be Markdown, as long as it cannot
inject HTML, links with scripts or hide a caveat.

Fields that refuse payloads (found by ``hostile_site_data``; the live table is the
summary's ``refused``). As of this writing:

======================  ============================  ========================================
field                   refuses                       by
======================  ============================  ========================================
title-ja, title-en      nul_and_controls,             ``Bilingual`` (sitegen/core/text.py): control
curated-reason-ja/en,   nul_in_markup                 characters (U+0000 …) are refused
posthoc-reason-ja/en
plan-name, input-id,    every payload                 id pattern ``^[a-z0-9][a-z0-9_.-]*$``
condition-id,
posthoc-label
posthoc-added-at        every payload                 a date (``added_at`` is parsed)
curated-trial-id        every payload (any free       C-EXAMPLE: must name a record's trial
                        text)
posthoc-template        every payload (any free       C-POSTHOC: must name a template of the
                        text)                         suite
directory               ``/`` and NUL (file names)    the file system; ``"``, ``'``, ``<``,
                                                      ``]``, ``[`` and a whole ``<img
                                                      onerror>`` are taken
title-ja, title-en,     payloads that show a figure   C-FIGURE: author text states no figure
condition-id, reviewer  (``1ms``, ``99999`` …)        (``sitegen/validation/figures.py``)
curated-reason-ja/en,
posthoc-reason-ja/en,
posthoc-label
======================  ============================  ========================================

Every other field takes all 79 payloads: input text, model name / quantization / source,
template kwargs, filler, answer and reasoning texts, failure reasons, every provenance
string (engine version / build / api, model name / file / quantization, host name,
platform, Python version, device name, driver, interconnect, flag and env keys and
values, template kwargs, sitegen version).
"""

from __future__ import annotations

import contextlib
import json
import re
from collections import defaultdict
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import quote, unquote, urlsplit

import pytest
from harness import ARTIFACTS_DIR, serve_directory

from sitegen.commands.build import build_site
from sitegen.core.site_layout import SHARED_ASSETS
from sitegen.publish.archive import REDIRECT_SCRIPT
from tests.hostilecampaign import HostileData, hostile_site_data
from tests.hostilecorpus import (
    HOSTILE_FIELDS,
    HOSTILE_PAYLOADS,
    INJECTED_SELECTOR,
    MARKDOWN_MARK,
    PWN_URL_MARK,
    TAG_PATTERN,
    TEMPLATE_MARK,
    field_payload_names,
)
from tests.sitefixtures import PROJECT

pytestmark = pytest.mark.slow

SUMMARY_PATH = ARTIFACTS_DIR / "hostile-summary.json"
VERSION = "v1"
CONTROL_CHARACTERS = re.compile("[\x00-\x08\x0b\x0e-\x1f\x7f\x80-\x9f]")
"""Characters no HTML file may hold raw (parse errors; ASCII whitespace is allowed)."""
TAG = re.compile(TAG_PATTERN)
FIELD_NAMES = {f.name for f in HOSTILE_FIELDS}
PAYLOAD_NAMES = set(HOSTILE_PAYLOADS) | set(field_payload_names("directory"))

PROBE = """({selector, fields, payloads, mdMark, tplMark, tagPattern}) => {
  const describe = e => e.outerHTML.slice(0, 400);
  const known = t => { const [f, p] = t.split('.'); return fields.includes(f) && payloads.includes(p); };
  const tags = s => [...new Set((s.match(new RegExp(tagPattern, 'g')) || []).filter(known))];
  const out = {};
  out.pwned = [...(window.__pwned || [])];
  out.injected = [...document.querySelectorAll(selector)].map(e => ({
    tags: tags(e.getAttribute('data-pwn') || e.id || String(e.className) || describe(e)),
    html: describe(e)}));
  const urlAttrs = new Set(['href', 'src', 'action', 'formaction', 'data', 'xlink:href',
                            'poster', 'background', 'srcset', 'ping', 'srcdoc']);
  const active = /^(javascript|vbscript):|^data:(text\\/html|image\\/svg|text\\/css|text\\/xml|application)/;
  out.handlers = []; out.urls = [];
  for (const e of document.querySelectorAll('*')) {
    for (const a of e.attributes) {
      const name = a.name.toLowerCase();
      if (name.startsWith('on')) out.handlers.push({tags: tags(describe(e)), html: describe(e)});
      else if (urlAttrs.has(name)) {
        const v = a.value.replace(/[\\u0000-\\u0020\\u007f-\\u009f\\u200b-\\u200d\\u2060\\ufeff]/g, '')
                         .toLowerCase();
        if (name === 'srcdoc' || active.test(v)) out.urls.push({tags: tags(a.value + describe(e)), html: describe(e)});
      }
    }
  }
  out.base = document.querySelector('base') ? describe(document.querySelector('base')) : null;
  out.templates = []; out.formatted = [];
  const walker = document.createTreeWalker(document.documentElement, NodeFilter.SHOW_TEXT);
  for (let n = walker.nextNode(); n; n = walker.nextNode()) {
    const i = n.data.indexOf(tplMark);
    if (i >= 0) out.templates.push({tags: tags(n.data.slice(i, i + 120)),
                                    html: (n.parentElement ? describe(n.parentElement) : n.data.slice(0, 400))});
  }
  const formatted = new RegExp('^' + mdMark + '-[a-z0-9-]+\\\\.[a-z0-9_]+\\\\s*¶?$');
  for (const e of document.body.querySelectorAll('*')) {
    if (formatted.test(e.textContent.trim()))
      out.formatted.push({tags: tags(e.textContent), element: e.tagName.toLowerCase()});
  }
  const caveats = [...document.querySelectorAll('[data-caveat]')].filter(e => !e.hasAttribute('data-pwn'));
  out.caveats = caveats.length;
  out.hidden = [];
  for (const e of caveats) {
    const s = getComputedStyle(e), r = e.getBoundingClientRect(), problems = [];
    if (!e.checkVisibility({opacityProperty: true, visibilityProperty: true, contentVisibilityAuto: true}))
      problems.push('not visible (display/visibility/opacity/content-visibility)');
    if (r.width < 1 || r.height < 1) problems.push(`size ${r.width}x${r.height}`);
    if (parseFloat(s.fontSize) < 6) problems.push(`font-size ${s.fontSize}`);
    const alpha = /rgba\\(.*,\\s*([\\d.]+)\\)/.exec(s.color);
    if (alpha && parseFloat(alpha[1]) < 0.2) problems.push(`color ${s.color}`);
    if (s.clipPath !== 'none') problems.push(`clip-path ${s.clipPath}`);
    if (r.right + scrollX < 0 || r.bottom + scrollY < 0) problems.push('off the page');
    if (problems.length) out.hidden.push({caveat: e.getAttribute('data-caveat'), problems, html: describe(e)});
  }
  out.plots = [...document.querySelectorAll('div.sg-plot')].map(p => ({
    key: p.getAttribute('data-chart'), drawn: !!p.querySelector('.main-svg')}));
  out.specs = document.querySelectorAll('script.sg-chart-spec').length;
  out.present = tags(document.documentElement.outerHTML);
  out.frames = window.frames.length;
  out.sideways = document.documentElement.scrollWidth > window.innerWidth + 2;
  out.href = location.href;
  return out;
}"""


@dataclass
class HostileSite:
    root: Path
    base_url: str
    data: HostileData
    pages: list[str]
    """Paths (relative to the site) of the pages to open."""
    redirects: list[str]
    """Paths of the site's own redirect stubs (``latest/`` and the root), checked on disk."""

    def url(self, path: str) -> str:
        return self.base_url + quote(path.removesuffix("index.html"), safe="/")


@pytest.fixture(scope="module")
def hostile_site(tmp_path_factory) -> HostileSite:
    root = tmp_path_factory.mktemp("hostile-site")
    data = hostile_site_data(root / "data")
    build_site(root / "data", root / "site", PROJECT, version=VERSION)
    site = root / "site"
    pages, redirects = [], []
    for path in sorted(site.rglob("*.html")):
        relative = path.relative_to(site).as_posix()
        head = path.read_bytes()[:4096]
        stub = path.stat().st_size < 4096 and b'http-equiv="refresh"' in head
        (redirects if stub else pages).append(relative)
    with serve_directory(site) as base_url:
        yield HostileSite(root, base_url, data, pages, redirects)


@dataclass
class Findings:
    items: list[dict] = field(default_factory=list)
    informational: list[dict] = field(default_factory=list)

    def add(
        self,
        page: str,
        kind: str,
        tags: list[str],
        detail: str,
        raw: tuple[int, str] | None = None,
    ) -> None:
        item = {"page": page, "kind": kind, "tags": sorted(tags), "detail": detail[:400]}
        if raw:
            item["raw_offset"], item["raw"] = raw
        self.items.append(item)


def _raw_snippet(source: str, tags: list[str]) -> tuple[int, str] | None:
    """The first place the page's HTML file holds one of ``tags`` inside raw markup (a
    ``<`` that is not ``&lt;``, then no ``>`` before the tag): its offset and context."""
    found = [
        match
        for tag in tags
        if (match := re.search(r"<[a-zA-Z!?/][^<>]{0,400}?" + re.escape(tag), source))
    ]
    if not found:
        return None
    first = min(found, key=lambda m: m.start())
    return first.start(), source[max(0, first.start() - 200) : first.end() + 120]


def _tags_in_url(url: str) -> list[str]:
    return [m.group(0) for m in TAG.finditer(unquote(url)) if _known(m.group(0))]


def _known(tag: str) -> bool:
    field_name, _, payload = tag.partition(".")
    return field_name in FIELD_NAMES and payload in PAYLOAD_NAMES


class _CaveatCounter(HTMLParser):
    """Counts the elements of the served HTML that carry a caveat marker (escaped text
    that merely reads ``data-caveat="C-…"`` is not an element)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.count = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.count += any(k == "data-caveat" and (v or "").startswith("C-") for k, v in attrs)


def _caveat_elements(source: str) -> int:
    counter = _CaveatCounter()
    counter.feed(source)
    counter.close()
    return counter.count


SEARCH_READY = """() => [...document.querySelectorAll('.md-search-result__meta')].every(
    m => !['検索を初期化', 'Initializing search'].includes(m.textContent.trim()))"""
"""material's search worker has loaded the index ("search.result.initializer" replaced)."""


def _visit(browser, site: HostileSite, path: str, findings: Findings, search: bool) -> dict:
    """Open one page with the CSP bypassed and record everything a payload did on it."""
    source = (site.root / "site" / path).read_text(encoding="utf-8", errors="replace")
    raw_caveats = _caveat_elements(source)
    result: dict = {}
    with browser.new_page(bypass_csp=True, viewport=(1280, 900), timeout_ms=8_000) as page:
        try:
            page.goto(site.url(path))
            if "sg-plot" in source:
                # A chart that never draws is reported below.
                with contextlib.suppress(Exception):
                    page.raw.wait_for_function(
                        "() => !window.Plotly || [...document.querySelectorAll('div.sg-plot')]"
                        ".every(p => p.querySelector('.main-svg'))",
                        timeout=5_000,
                    )
            if "sg-answers-browser" in source:
                page.wait_for(".sg-answers-list details", state="attached", timeout_ms=5_000)
            page.evaluate("() => document.querySelectorAll('details').forEach(d => d.open = true)")
            page.raw.wait_for_timeout(150)  # ontoggle, onfocus, animations, frames
            args = {
                "selector": INJECTED_SELECTOR,
                "fields": sorted(FIELD_NAMES),
                "payloads": sorted(PAYLOAD_NAMES),
                "mdMark": MARKDOWN_MARK,
                "tplMark": TEMPLATE_MARK,
                "tagPattern": TAG_PATTERN,
            }
            result = page.evaluate(PROBE, args)
            if search:
                page.raw.keyboard.press("s")
                page.raw.keyboard.type("pwn", delay=20)
                try:
                    # The hostile index is some MB: on a busy machine the worker takes a
                    # while to load it (material shows its initializer text until then).
                    page.raw.wait_for_function(SEARCH_READY, timeout=30_000)
                    page.wait_for(".md-search-result__item", state="attached", timeout_ms=10_000)
                    page.raw.wait_for_timeout(300)
                    searched = page.evaluate(PROBE, args)
                    result["search_results"] = page.evaluate(
                        "() => document.querySelectorAll('.md-search-result__item').length"
                    )
                    for key in ("pwned", "injected", "handlers", "urls", "templates"):
                        result[key] += searched[key]
                except Exception:  # noqa: BLE001
                    result["search_results"] = 0
        except Exception as exc:  # noqa: BLE001 - a page that navigates away or breaks
            findings.add(path, "page broke", [], f"{type(exc).__name__}: {exc}")
        report = page.report
    for tag in result.get("pwned", []):
        findings.add(path, "payload ran", [tag], tag, _raw_snippet(source, [tag]))
    for dialog in report.dialogs:
        tags = _tags_in_url(dialog.message) or [dialog.message]
        findings.add(
            path, f"dialog ({dialog.type})", tags, dialog.message, _raw_snippet(source, tags)
        )
    for kind, key in (
        ("injected element", "injected"),
        ("inline event handler", "handlers"),
        ("script URL", "urls"),
        ("template evaluated", "templates"),
    ):
        for item in result.get(key, []):
            findings.add(path, kind, item["tags"], item["html"], _raw_snippet(source, item["tags"]))
    if result.get("base"):
        findings.add(path, "base element", _tags_in_url(result["base"]), result["base"])
    for url in report.requests:
        url_path = unquote(urlsplit(url).path)
        if PWN_URL_MARK in url_path:
            tags = _tags_in_url(url_path.rsplit(PWN_URL_MARK, 1)[1])
            findings.add(path, "payload URL requested", tags, url_path)
    for url in report.external_requests:
        findings.add(path, "external request", _tags_in_url(url), url)
    for error in report.page_errors:
        findings.add(path, "script error", [], error)
    for hidden in result.get("hidden", []):
        detail = f"{hidden['caveat']}: {', '.join(hidden['problems'])} — {hidden['html']}"
        findings.add(path, "caveat hidden", [], detail)
    if result and result["caveats"] < raw_caveats:
        findings.add(
            path,
            "caveat swallowed",
            [],
            f"{raw_caveats} data-caveat elements in the file, {result['caveats']} on the page",
        )
    for plot in result.get("plots", []):
        if not plot["drawn"]:
            findings.add(path, "chart not drawn", [], f"div.sg-plot[data-chart={plot['key']!r}]")
    if "/speed/" in path and result and not (result["plots"] and result["specs"]):
        findings.add(path, "chart not drawn", [], "the speed page has no chart")
    for item in result.get("formatted", []):
        findings.informational.append({"page": path, "kind": "markdown formatted", **item})
    if result.get("sideways"):
        findings.informational.append({"page": path, "kind": "page scrolls sideways"})
    return result


class _StubParser(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.marked: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        names = {name for name, _ in attrs}
        values = dict(attrs)
        # The stubs' own script: the site's redirect file, given the target as data.
        own_script = names == {"src", "data-target"} and (values["src"] or "").endswith(
            f"{SHARED_ASSETS}/{REDIRECT_SCRIPT}"
        )
        if (
            (tag == "script" and not own_script)
            or "data-pwn" in names
            or any(n.startswith("on") for n in names)
        ):
            self.marked.append(f"<{tag} {' '.join(sorted(names))}>")


def _check_files(site: HostileSite, findings: Findings) -> None:
    """Redirect stubs hold no markup from data; no file holds raw control characters."""
    root = site.root / "site"
    for path in site.redirects:
        parser = _StubParser()
        parser.feed((root / path).read_text(encoding="utf-8", errors="replace"))
        for element in parser.marked:
            findings.add(path, "injected element (redirect stub)", _tags_in_url(element), element)
    for path in sorted(root.rglob("*")):
        if path.suffix not in {".html", ".xml", ".js"} or not path.is_file():
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        found: dict[str, int] = {}
        tags: set[str] = set()
        for match in CONTROL_CHARACTERS.finditer(text):
            found.setdefault(f"U+{ord(match.group(0)):04X}", match.start())
            before = text[max(0, match.start() - 300) : match.start()]
            tags.update([m.group(0) for m in TAG.finditer(before) if _known(m.group(0))][-1:])
        if found:
            first = min(found.values())
            context = text[max(0, first - 120) : first + 40]
            findings.add(
                path.relative_to(root).as_posix(),
                "raw control character",
                sorted(tags),
                f"{', '.join(sorted(found))}: …{context!r}",
            )


def _summary(site: HostileSite, findings: Findings, results: dict[str, dict]) -> dict:
    campaign = site.data.directory.name

    def short(path: str) -> str:
        return path.replace(campaign, "<campaign>")

    exposures = defaultdict(set)  # tag → pages
    for path, result in results.items():
        for tag in result.get("present", []):
            exposures[tag].add(short(path))
    fields_shown = defaultdict(set)
    for tag, pages in exposures.items():
        fields_shown[tag.partition(".")[0]] |= pages
    placed = site.data.placed
    groups: dict[tuple[str, str], dict] = {}
    for item in findings.items:
        fields = sorted({t.partition(".")[0] for t in item["tags"] if _known(t)}) or ["?"]
        for field_name in fields:
            group = groups.setdefault(
                (item["kind"], field_name),
                {"kind": item["kind"], "field": field_name, "payloads": set(), "pages": set()},
            )
            group["payloads"] |= {
                t.partition(".")[2] for t in item["tags"] if t.startswith(field_name + ".")
            }
            group["pages"].add(short(item["page"]))
            group.setdefault("detail", item["detail"])
            if item.get("raw") and item["raw_offset"] < group.get("raw_offset", float("inf")):
                group["raw_offset"], group["raw"] = item["raw_offset"], item["raw"]
    return {
        "payloads": len(HOSTILE_PAYLOADS),
        "fields": len(HOSTILE_FIELDS),
        "fields_holding_payloads": sum(1 for names in placed.values() if names),
        "placements": site.data.placements,
        "refused": {f: len(r) for f, r in site.data.refused.items()},
        "refused_detail": site.data.refused,
        "pages_opened": len(results),
        "pages_in_both_languages": sorted(short(p) for p in results),
        "campaign_directory": campaign,
        "redirect_stubs_checked": len(site.redirects),
        "placements_x_pages": site.data.placements * len(results),
        "exposures": sum(len(pages) for pages in exposures.values()),
        "exposures_note": "payload × field × page triples whose tag is in the page's DOM",
        "fields_shown_on": {f: sorted(fields_shown.get(f, ())) for f in sorted(placed)},
        "fields_on_no_page": sorted(f for f in placed if placed[f] and f not in fields_shown),
        "search_results": {
            short(p): r["search_results"] for p, r in results.items() if "search_results" in r
        },
        "findings": len(findings.items),
        "finding_groups": [
            {**g, "payloads": sorted(g["payloads"]), "pages": sorted(g["pages"])}
            for g in groups.values()
        ],
        "informational": [{**i, "page": short(i["page"])} for i in findings.informational],
    }


def test_hostile_corpus_stays_inert_on_every_page(browser, hostile_site):
    findings = Findings()
    results = {}
    homes = {f"v/{VERSION}/index.html", f"v/{VERSION}/en/index.html"}
    for path in hostile_site.pages:
        results[path] = _visit(browser, hostile_site, path, findings, search=path in homes)
    for path in homes:
        if not results[path].get("search_results"):  # else the search was not checked
            findings.add(path, "search found nothing", [], "no .md-search-result__item for 'pwn'")
    _check_files(hostile_site, findings)
    summary = _summary(hostile_site, findings, results)
    SUMMARY_PATH.parent.mkdir(parents=True, exist_ok=True)
    SUMMARY_PATH.write_text(
        json.dumps(summary, indent=1, ensure_ascii=False, default=sorted), encoding="utf-8"
    )
    print(
        f"\nhostile corpus: {summary['payloads']} payloads × {summary['fields']} fields → "
        f"{summary['placements']} placements in {summary['fields_holding_payloads']} fields "
        f"({sum(summary['refused'].values())} refused); {summary['pages_opened']} pages opened "
        f"(+{summary['redirect_stubs_checked']} redirect stubs checked on disk) → "
        f"{summary['placements_x_pages']} payload × field × page combinations, "
        f"{summary['exposures']} of them on a page; {summary['findings']} findings "
        f"({len(summary['finding_groups'])} kind × field groups); "
        f"fields on no page: {', '.join(summary['fields_on_no_page']) or '-'}; "
        f"summary: {SUMMARY_PATH}"
    )
    if findings.items:
        lines = []
        for group in summary["finding_groups"]:
            lines.append(
                f"- {group['kind']} from {group['field']}: {', '.join(group['payloads']) or '-'}"
                f" on {len(group['pages'])} page(s), e.g. {group['pages'][0]}\n"
                f"    DOM: {group['detail'][:300]!r}"
                + (f"\n    HTML: {group['raw'][:300]!r}" if group.get("raw") else "")
            )
        pytest.fail(
            f"{summary['findings']} findings on the hostile site:\n" + "\n".join(lines),
            pytrace=False,
        )


def test_the_checks_see_each_kind_of_finding(browser, tmp_path):
    """A positive control: a page doing on purpose what each check looks for."""
    hook = "(window.__pwned=window.__pwned||[]).push('answer-text.img_onerror')"
    body = (
        '<p data-caveat="C-UNITS">shown</p>'
        '<p data-caveat="C-TRUNC" style="display:none">display</p>'
        '<p data-caveat="C-LENGTH" style="opacity:0">opacity</p>'
        '<p data-caveat="C-ORDER" style="font-size:0">font</p>'
        '<p data-caveat="C-REVIEW" style="position:absolute;left:-9999px">off</p>'
        f'<img data-pwn="answer-text.img_onerror" src="/pwn/answer-text.img_onerror.png" onerror="{hook}">'
        "<script>alert('answer-text.script')</script>"
        '<a href=" javascript:void(0)">answer-text.javascript_href</a>'
        '<div class="sg-plot" data-chart="k"></div>'
        "<p>PWNTPL-answer-text.jinja_expression</p>"
        "<strong>PWNMD-answer-text.markdown_emphasis</strong>"
        "<!-- \x00 -->"
    )
    site_dir = tmp_path / "site"
    site_dir.mkdir()
    (site_dir / "index.html").write_text(
        f'<!doctype html><html><head><meta charset="utf-8"><link rel="icon" href="data:,">'
        f"</head><body>{body}</body></html>",
        encoding="utf-8",
    )
    findings = Findings()
    with serve_directory(site_dir) as base_url:
        site = HostileSite(tmp_path, base_url, None, ["index.html"], [])
        _visit(browser, site, "index.html", findings, search=False)
    _check_files(site, findings)
    kinds = defaultdict(list)
    for item in findings.items:
        kinds[item["kind"]].append(item)
    assert {
        "payload ran",
        "dialog (alert)",
        "injected element",
        "inline event handler",
        "script URL",
        "template evaluated",
        "payload URL requested",
        "caveat hidden",
        "chart not drawn",
        "raw control character",
    } <= set(kinds), sorted(kinds)
    hidden = {item["detail"].split(":")[0] for item in kinds["caveat hidden"]}
    assert hidden == {"C-TRUNC", "C-LENGTH", "C-ORDER", "C-REVIEW"}
    assert kinds["payload ran"][0]["tags"] == ["answer-text.img_onerror"]
    assert kinds["payload URL requested"][0]["tags"] == ["answer-text.img_onerror"]
    assert [i["tags"] for i in findings.informational] == [["answer-text.markdown_emphasis"]]


def test_every_caveat_of_the_hostile_site_is_visible(browser, hostile_site):
    """The hostile corpus in every field hides no caveat (see test_caveats_visible)."""
    from test_caveats_visible import caveat_problems

    root = hostile_site.root / "site"
    pages = [root / path for path in hostile_site.pages]
    seen, problems = caveat_problems(browser, hostile_site.base_url, root, pages)
    assert seen > 50 and not problems, "\n".join(problems[:20])
