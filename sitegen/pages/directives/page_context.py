"""The context a page's directives share and the registry of directives by name.

A directive is a function ``(ctx, …) -> Markup`` of a ``PageContext``, registered with
``@directive("name")`` in the module of its topic; ``directive_functions`` binds every
registered directive to one page's context. Apart from the package so that the topic
modules, which the package imports to register their directives, import these names from
a module that imports none of them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING, Any, TypeVar

import jinja2
from markupsafe import Markup

from sitegen.pages.downloads import DownloadFile
from sitegen.pages.i18n import Catalog
from sitegen.pages.sources import Source

if TYPE_CHECKING:
    from sitegen.plan.plan_models import HeadlineSpec
    from sitegen.statistics.build_series import BuildSeries
    from sitegen.statistics.comparison import CrossCampaign
    from sitegen.statistics.imported_report import ImportedReport
    from sitegen.statistics.overview import MeasuredRow
    from sitegen.statistics.report import Report

Directive = Callable[..., Markup | str | bool]
"""A directive: ``(ctx: PageContext, *arguments from the template) -> Markup`` (``str``
for ``t``, ``bool`` for the questions content branches on, such as ``has_speed``)."""

F = TypeVar("F", bound=Directive)

DIRECTIVES: dict[str, Directive] = {}
"""Every directive by the name content templates call it by (``@directive``)."""


def directive(name: str) -> Callable[[F], F]:
    """Registers the decorated function as the directive ``name`` (one function a name)."""

    def register(function: F) -> F:
        if name in DIRECTIVES and DIRECTIVES[name] is not function:
            raise ValueError(f"directive {name!r} registered twice")
        DIRECTIVES[name] = function
        return function

    return register


@dataclass(frozen=True)
class Quote:
    """A figure a page quotes with ``literal``, and its source."""

    value: str
    source: Source


@dataclass(frozen=True, eq=False)
class PageContext:
    """What the directives of one page need: the page (its language, where it lies, which
    report, comparison or imported campaign it shows) and what the pages share (every
    report, the sources, the literals quoted, the figures as printed). One a page: the
    build makes the pages of a kind with ``dataclasses.replace``."""

    env: jinja2.Environment
    """The partials' environment (``html_environment``)."""
    catalog: Catalog
    report: Report | None = None
    """The report the page belongs to (``None``: the home, overview, comparison and
    imported campaigns' pages)."""
    reports: Sequence[Report] = ()
    """Every measured campaign's report (the overview lists them)."""
    downloads: Sequence[DownloadFile] | Callable[[], Sequence[DownloadFile]] = ()
    """The report's downloads; a function where they are being written while the pages
    render (the first page that lists them waits for them)."""
    site_root: str = ""
    """Relative path from the page to the site root, e.g. ``../../../``."""
    comparison: CrossCampaign | None = None
    """The comparison of several campaigns a comparison page shows."""
    report_pages: tuple[str, ...] = ()
    """The pages the report has, in navigation order (links only to these)."""
    sources: Mapping[str, Source] = field(default_factory=dict)
    """The sources ``literal`` may cite (``content/sources.yaml``)."""
    quoted: list[Quote] = field(default_factory=list)
    """Every literal of the report's pages in this language, for ``literals()`` (shared by
    the pages of one report)."""
    imported: ImportedReport | None = None
    """The imported campaign an imported report page shows."""
    imported_reports: Sequence[ImportedReport] = ()
    """Every imported campaign's report (the overview lists them)."""
    series: BuildSeries | None = None
    """The series of builds a series page shows."""
    every_series: Sequence[BuildSeries] = ()
    """Every series of builds (the home and overview pages list them)."""
    page: str = ""
    """The report page being rendered (``index``, ``speed`` …), for links between pages."""
    language_home: str = ""
    """Relative path from the page to its language's home page (``../`` from the overview
    page), for links to the reports."""
    printed_figures: dict[str, dict[str, str]] = field(default_factory=dict)
    """Each report's figures as printed (``report_figures``) by its name, made on first
    use (shared by the pages of every report and language: figures print alike)."""
    overview_rows: dict[tuple[str, HeadlineSpec | None], list[MeasuredRow]] = field(
        default_factory=dict
    )
    """Each measured campaign's overview rows (``measured_rows``) by its name and the
    headline chosen, made on first use (shared by the home and overview pages of every
    language: the rows are the same in each)."""
    extra_files: dict[str, bytes] = field(default_factory=dict)
    """Files the rendered directives need beside the page (docs path → bytes): give each
    page its own (``replace(ctx, extra_files={})``)."""

    @property
    def lang(self) -> str:
        return self.catalog.lang

    def download_files(self) -> list[DownloadFile]:
        """The report's downloads (waiting for them where they are being written)."""
        files = self.downloads
        return list(files() if callable(files) else files)

    def require_report(self) -> Report:
        if self.report is None:
            raise jinja2.TemplateRuntimeError("this directive is only available on report pages")
        return self.report

    def require_comparison(self) -> CrossCampaign:
        if self.comparison is None:
            raise jinja2.TemplateRuntimeError(
                "this directive is only available on comparison pages"
            )
        return self.comparison

    def require_series(self) -> BuildSeries:
        if self.series is None:
            raise jinja2.TemplateRuntimeError("this directive is only available on series pages")
        return self.series

    def require_imported(self) -> ImportedReport:
        if self.imported is None:
            raise jinja2.TemplateRuntimeError(
                "this directive is only available on an imported campaign's page"
            )
        return self.imported

    def labels(self, report: Report | ImportedReport | None = None) -> dict[str, str]:
        """What readers call each condition of ``report`` (the page's report when not
        given) in this page's language."""
        labels = (report or self.require_report()).condition_labels
        return {cid: label[self.lang] for cid, label in labels.items()}


def directive_functions(ctx: PageContext) -> dict[str, Callable[..., Any]]:
    """Every registered directive bound to ``ctx``, by name: the globals of a content page.
    A ``partial`` each, with no name of its own: its key is its name (a page binds them
    all, and copying each function's attributes onto its partial cost every page)."""
    return {name: partial(function, ctx) for name, function in DIRECTIVES.items()}
