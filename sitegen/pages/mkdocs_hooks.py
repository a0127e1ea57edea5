"""mkdocs hooks of every build (``hooks`` in ``BUILD_CONFIG``).

Pages reach mkdocs as heading lines and blocks of HTML the build rendered. The HTML
blocks pass through Python-Markdown as short marks: parsing the page's HTML again (its
raw-HTML preprocessor) would cost time and change nothing. A partial's
part between ``<!--sitegen:unindexed-->`` and ``<!--/sitegen:unindexed-->`` (every
trial's numbers, say) is put back only once the search plugin has indexed the page: its
numbers would only fill the index, and parsing them would only slow it down. A
page's navigation keeps to its own report (``on_nav``).
"""

from __future__ import annotations

import html as htmllib
import re
from typing import Any

import jinja2
from mkdocs.plugins import event_priority
from mkdocs.structure.nav import Navigation, Section
from mkdocs.structure.pages import Page

from sitegen.pages import template_cache

REPORTS_FOLDER = "reports/"
"""Where each report's pages live in the docs (``reports/<name>/…``)."""

_UNINDEXED = re.compile(r"<!--sitegen:unindexed-->(.*?)<!--/sitegen:unindexed-->", re.DOTALL)
_HTML_MARK = "<!--sitegen-html-{index}-->"
_HTML_MARKS = re.compile(r"<!--sitegen-html-(\d+)-->")
_UNINDEXED_MARK = "<!--sitegen-unindexed-{index}-->"
_UNINDEXED_MARKS = re.compile(r"<!--sitegen-unindexed-(\d+)-->")
_HEADING = re.compile(r"#{1,6} [^\n]*")
"""A heading line as ``render_prose`` writes it (with a blank line before and after)."""

_html_blocks: dict[str, list[str]] = {}
"""Each page's HTML blocks (by source path) from ``on_page_markdown`` to
``on_page_content``."""
_unindexed: dict[str, list[str]] = {}
"""Each page's unindexed parts (by source path) from ``on_page_markdown`` to
``on_page_context``."""


def on_env(env: jinja2.Environment, config: object, files: object) -> jinja2.Environment:
    """The theme's templates compiled once, not at every build (``template_cache``)."""
    env.bytecode_cache = template_cache.bytecode_cache()
    return env


def on_nav(nav: Navigation, config: object, files: object) -> Navigation:
    """Keep each report's pages to themselves: its section is marked ``sitegen_report``,
    and a page's navigation lists only its own report's section (theme
    ``partials/nav.html``); ``prev``/``next`` links never cross into or out of a report.
    So adding a report changes the pages that list every report (home, overview), not
    every page of the others, and an archived version re-stores only what it changed."""
    report_of: dict[int, int] = {}
    for index, item in enumerate(nav.items):
        if isinstance(item, Section) and all(
            isinstance(child, Page) and child.file.src_uri.startswith(REPORTS_FOLDER)
            for child in item.children
        ):
            item.sitegen_report = True  # type: ignore[attr-defined]  # for the theme's nav
            report_of.update({id(child): index for child in item.children})
    for page in nav.pages:
        mine = report_of.get(id(page))
        if page.previous_page and report_of.get(id(page.previous_page)) != mine:
            page.previous_page = None
        if page.next_page and report_of.get(id(page.next_page)) != mine:
            page.next_page = None
    return nav


@event_priority(100)  # before mkdocs-static-i18n's (50), which re-splits every line
def on_page_markdown(markdown: str, page: Any, config: object, files: object) -> str:
    """Each unindexed part, then everything between heading lines becomes a mark; the
    heading lines stay, for the title, the table of contents and the anchors.

    The page is as the build wrote it (``render_prose``): one-line headings and blocks of
    HTML between blank lines. Whatever lies between two headings is HTML, passed on
    whole: none of it may reach Python-Markdown as Markdown (model text is escaped there,
    not made inert to Markdown). Running before the i18n plugin matters: it splits lines
    on U+2028 and the like too, which could put a blank line inside a block."""
    unindexed: list[str] = []

    def set_aside(part: re.Match[str]) -> str:
        unindexed.append(part.group(1))
        return _UNINDEXED_MARK.format(index=len(unindexed) - 1)

    lines = _UNINDEXED.sub(set_aside, markdown).split("\n")
    html: list[str] = []
    kept: list[str] = []
    between: list[str] = []

    def pass_on_between() -> None:
        # Blank lines around the HTML stay, so the mark is a block of its own.
        start, end = 0, len(between)
        while start < end and not between[start].strip():
            start += 1
        while end > start and not between[end - 1].strip():
            end -= 1
        kept.extend(between[:start])
        if start < end:
            kept.append(_HTML_MARK.format(index=len(html)))
            html.append("\n".join(between[start:end]))
        kept.extend(between[end:])
        between.clear()

    for number, line in enumerate(lines):
        if _HEADING.fullmatch(line) and all(
            not lines[near].strip() for near in (number - 1, number + 1) if 0 <= near < len(lines)
        ):
            pass_on_between()
            kept.append(line)
        else:
            between.append(line)
    pass_on_between()
    _html_blocks[page.file.src_uri] = html
    _unindexed[page.file.src_uri] = unindexed
    return "\n".join(kept)


def on_page_content(content: str, page: Any, config: object, files: object) -> str:
    """The page's HTML blocks back in place of their marks (for the search index)."""
    html = _html_blocks.pop(page.file.src_uri)
    return _HTML_MARKS.sub(lambda mark: html[int(mark.group(1))], content)


@event_priority(-100)  # after the search plugin's (priority 0) has indexed the page
def on_page_context(context: Any, page: Any, config: object, nav: object) -> Any:
    """The unindexed parts back in place of their marks, before the page is written."""
    unindexed = _unindexed.pop(page.file.src_uri)
    page.content = _UNINDEXED_MARKS.sub(lambda mark: unindexed[int(mark.group(1))], page.content)
    page.meta["description"] = description(page.title, page.content, page.meta.get("description"))
    return context


_PLAIN_PARAGRAPH = re.compile(r"<p>((?:[^<]|<(?!/?p\b)(?:(?!data-)[^>])*>)*?)</p>")
"""A paragraph of prose: no attributes, no marked figure (``data-…``) inside."""
_TAG = re.compile(r"<[^>]*>")
DESCRIPTION_LENGTH = 160


def _text(html: str) -> str:
    return " ".join(htmllib.unescape(_TAG.sub("", html)).split())


def description(title: str | None, content: str | None, given: object = None) -> str:
    """The page's ``<meta name="description">``, escaped (material writes it as it is):
    the description its front matter gives, else its title and its first paragraph of
    prose, both already on the page in its language (a marked figure is never copied
    here, where the audit could not check it), cut to about 160 characters."""
    if isinstance(given, str) and given.strip():
        text = _text(given)
    else:
        first = _PLAIN_PARAGRAPH.search(content or "")
        text = " — ".join(
            t for t in (_text(title or ""), _text(first.group(1)) if first else "") if t
        )
    if len(text) > DESCRIPTION_LENGTH:
        text = text[: DESCRIPTION_LENGTH - 1].rstrip() + "…"
    return htmllib.escape(text)


_CHECKBOX_AUTOCOMPLETE = re.compile(
    r'(<input class="md-toggle"[^>]*type="checkbox"[^>]*?) autocomplete="off">'
)
_EMPTY_TABINDEX = re.compile(r'(<label class="md-nav__link[^"]*"[^>]*?) tabindex="">')


_SEARCH_DIALOG = '<div class="md-search" data-md-component="search" role="dialog">'
_SEARCH_LABEL = re.compile(
    r'<input type="text" class="md-search__input" name="query" aria-label="([^"]*)"'
)


def valid_html(output: str) -> str:
    """material's markup the HTML standard refuses, made valid: ``autocomplete`` on its
    checkbox toggles (allowed on text-like inputs only) and ``tabindex=""`` on a
    section's label (not an integer: left out, as a label is not focusable anyway); and
    its search dialog named as its search field is (axe: aria-dialog-name)."""
    output = _CHECKBOX_AUTOCOMPLETE.sub(r"\1>", output)
    output = _EMPTY_TABINDEX.sub(r"\1>", output)
    if label := _SEARCH_LABEL.search(output):
        named = _SEARCH_DIALOG.replace(">", f' aria-label="{label.group(1)}">')
        output = output.replace(_SEARCH_DIALOG, named, 1)
    return output


def on_post_page(output: str, page: Any, config: object) -> str:
    return valid_html(output)


def on_post_template(output_content: str, template_name: str, config: object) -> str:
    return valid_html(output_content)
