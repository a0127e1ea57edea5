"""mkdocs hooks of every build (``hooks`` in ``BUILD_CONFIG``)."""

from __future__ import annotations

import jinja2
from mkdocs.structure.nav import Navigation, Section
from mkdocs.structure.pages import Page

from sitegen.pages import template_cache

REPORTS_FOLDER = "reports/"
"""Where each report's pages live in the docs (``reports/<name>/…``)."""


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
            item.sitegen_report = True
            report_of.update({id(child): index for child in item.children})
    for page in nav.pages:
        mine = report_of.get(id(page))
        if page.previous_page and report_of.get(id(page.previous_page)) != mine:
            page.previous_page = None
        if page.next_page and report_of.get(id(page.next_page)) != mine:
            page.next_page = None
    return nav
