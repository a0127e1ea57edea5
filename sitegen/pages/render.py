"""Rendering every page of the site in memory: ``docs path → bytes`` (gather, then write)."""

from __future__ import annotations

import gc
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import cache, partial
from pathlib import Path

import jinja2

from sitegen.core.errors import DataError, Issue
from sitegen.core.forked import ForkedCall
from sitegen.core.project import content_search_path, packaged_content, packaged_theme
from sitegen.core.signing import PUBLIC_KEY_FILE, Signer, project_key, public_key_line
from sitegen.core.text import LANGUAGES
from sitegen.pages.content import (
    DirectiveCalls,
    content_environment,
    refuse_symlinks,
    render_prose,
)
from sitegen.pages.directives import PageContext, Quote, directive_functions, html_environment
from sitegen.pages.downloads import (
    DownloadFile,
    ReportFiles,
    checksums,
    table_downloads,
    write_report_files,
)
from sitegen.pages.i18n import Catalog
from sitegen.pages.schema import schema_files
from sitegen.pages.sources import load_sources
from sitegen.records.layout import IMPORT_FILE, RECORDS_FILE
from sitegen.records.table import release_freed_memory
from sitegen.statistics.build_series import BuildSeries
from sitegen.statistics.comparison import CrossCampaign
from sitegen.statistics.imported_report import ImportedReport
from sitegen.statistics.report import Report
from sitegen.validation import (
    check_language_parity,
    check_page,
    check_prose,
    check_report_pages,
)
from sitegen.validation.figure_checks import markup_text_issues
from sitegen.validation.page_facts import read_page

REPORT_PAGES: dict[str, Callable[[Report], bool]] = {
    "index": lambda report: True,
    "speed": lambda report: bool(report.plan.inputs),
    "sweep": lambda report: bool(report.plan.inputs) and report.sweep is not None,
    "quality": lambda report: report.quality is not None,
    "examples": lambda report: True,
    "method": lambda report: True,
    "data": lambda report: True,
}
"""Each report page (``content/<lang>/report/<page>.md``) in navigation order, with
whether a report has it."""


def report_pages(report: Report) -> tuple[str, ...]:
    """The pages of ``report`` in navigation order."""
    return tuple(page for page, shown in REPORT_PAGES.items() if shown(report))


IMPORTED_TEMPLATE = "imported.md"
"""The content template of every imported campaign's page (``content/<lang>/imported.md``)."""


def imported_page(report: ImportedReport, lang: str) -> str:
    """Docs path of an imported campaign's page: ``reports/<name>/index[.<lang>].md``."""
    return f"reports/{report.slug}/{page_name('index', lang)}"


IMPORTED_TABLES = ("imported_records", "imported_summary", "run_figures", "latency_percentiles")
"""The tables of an imported campaign offered as CSV and Parquet, in this order."""


def make_imported_downloads(
    report: ImportedReport, signer: Signer | None = None
) -> list[DownloadFile]:
    """An imported campaign's records and registration as published (redacted), CSV and
    Parquet of its records table (no texts), figures, run-level figures and latency
    percentiles (``IMPORTED_TABLES``), and ``SHA256SUMS`` (signed by ``signer``). The
    source files themselves are not published: a tool's file may hold request headers or
    addresses that only the publisher should see."""
    campaign = report.campaign
    records = b"".join(record.model_dump_json().encode() + b"\n" for record in campaign.records)
    files = [
        DownloadFile.from_bytes(RECORDS_FILE, "jsonl", "records", records),
        DownloadFile.from_bytes(
            IMPORT_FILE, "json", "import", campaign.registration.model_dump_json().encode() + b"\n"
        ),
    ]
    frames = (report.frame, report.summary_table(), report.run_table(), report.latency)
    files += table_downloads(zip(IMPORTED_TABLES, frames, strict=True))
    return files + checksums(files, signer, campaign.latest_time)


OVERVIEW_TEMPLATE = "overview.md"
"""The content template of the overview page (``content/<lang>/overview.md``): the
packaged one shows every campaign; a project's own may name campaigns and columns."""


def overview_page(lang: str) -> str:
    """Docs path of the overview page: ``overview/index[.<lang>].md``."""
    return f"overview/{page_name('index', lang)}"


def _overview_root(lang: str) -> str:
    return to_version_root(1, lang)


COMPARISON_TEMPLATE = "compare.md"
"""The content template of every comparison page (``content/<lang>/compare.md``)."""


def comparison_page(comparison: CrossCampaign, lang: str) -> str:
    """Docs path of a comparison page: ``compare/<id>/index[.<lang>].md``."""
    return f"compare/{comparison.spec.id}/{page_name('index', lang)}"


def _comparison_root(lang: str) -> str:
    return to_version_root(2, lang)


SERIES_TEMPLATE = "series.md"
"""The content template of every series page (``content/<lang>/series.md``)."""


def series_page(series: BuildSeries, lang: str) -> str:
    """Docs path of a series page: ``series/<address>/index[.<lang>].md``."""
    return f"series/{series.address}/{page_name('index', lang)}"


def page_name(stem: str, lang: str) -> str:
    """A docs file's name in ``lang`` (mkdocs-static-i18n's "suffix" structure: the
    default language has no suffix)."""
    return f"{stem}.md" if lang == LANGUAGES[0] else f"{stem}.{lang}.md"


def to_version_root(depth: int, lang: str) -> str:
    """From a page ``depth`` folders below a version's root to that root (pages of a
    language other than the default live one folder deeper, under ``<lang>/``)."""
    return "../" * (depth + (lang != LANGUAGES[0]))


def _site_root(page: str, lang: str) -> str:
    """Relative path from a report page's URL to the site root (directory URLs;
    non-default languages live under ``/<lang>/``)."""
    return to_version_root(2 + (page != "index"), lang)


Docs = dict[str, bytes | Path]
"""The mkdocs ``docs`` tree: path → bytes, or a file of the scratch directory to copy."""


COLLECT_EACH_PAGE_RECORDS = 100_000
"""From this many records on, each page's garbage is collected as soon as it is rendered:
it matters to the peak of memory only for large reports, and a full collection per page
costs small builds much time for little memory, the more so in a process holding much
else (the test suite)."""


def render_docs(
    reports: Sequence[Report],
    catalogs: dict[str, Catalog],
    project_dir: Path,
    scratch: Path,
    comparisons: Sequence[CrossCampaign] = (),
    imported: Sequence[ImportedReport] = (),
    signer: Signer | None = None,
    series: Sequence[BuildSeries] = (),
) -> Docs:
    """Every file of the mkdocs ``docs`` tree for both languages; files that grow with
    the records are written into ``scratch``; ``signer`` signs each report's
    ``SHA256SUMS``; a page per series of builds (``series``)."""
    content_dir = project_dir / "content"
    refuse_symlinks(content_dir)
    sources = load_sources(content_dir)
    content = content_environment(content_search_path(project_dir))
    partials = html_environment(str(packaged_theme() / "partials"))
    records = sum(len(report.campaign) for report in reports)
    issues = check_content_languages(content_dir)
    with ForkedCall(
        partial(_write_reports_files, reports, scratch, signer),
        fork=records < WRITE_BESIDE_BELOW_RECORDS,
        name="the process writing the downloads",
    ) as writing:
        report_files = cache(writing.result)
        pages = _PageRenderer(
            content,
            # What every page shares (the figures as printed, once a report for the pages
            # of both languages); each page's context replaces what differs.
            PageContext(
                partials,
                catalogs[LANGUAGES[0]],
                reports=reports,
                sources=sources,
                every_series=series,
            ),
            catalogs,
            report_files,
            {report.slug: make_imported_downloads(report, signer) for report in imported},
            collect_each_page=records >= COLLECT_EACH_PAGE_RECORDS,
            issues=issues,
        )
        for lang in LANGUAGES:
            pages.render_language(lang, comparisons, imported)
        # The pages that list the downloads wait for them (the other pages of both
        # languages were rendered while they were written); the method page lists every
        # literal of its report's pages, so it comes after them all.
        pages.render_last_pages()
        issues.extend(check_rendered(pages.docs, reports, comparisons, imported, series))
        if issues:
            raise DataError(issues)
        docs = pages.docs
        docs.update(_report_files_docs(report_files()))
    for slug, downloads in pages.imported_downloads.items():
        docs.update(_downloads_docs(slug, downloads))
    for name, data in schema_files().items():
        docs[f"schema/{name}"] = data
    key = project_key(project_dir)
    if key is not None:
        docs[PUBLIC_KEY_FILE] = public_key_line(key).encode()
    return docs


@dataclass
class _PageRenderer:
    """Renders the pages of one build into ``docs``, gathering the issues of each: every
    page's context is ``site`` (what the pages share) with what differs replaced."""

    content: jinja2.Environment
    """The content pages' environment (``content_environment``)."""
    site: PageContext
    catalogs: dict[str, Catalog]
    report_files: Callable[[], dict[str, ReportFiles]]
    """Every report's downloads by folder name (waiting for them while they are written)."""
    imported_downloads: dict[str, list[DownloadFile]]
    """Every imported campaign's downloads by folder name."""
    collect_each_page: bool
    """Whether each page's garbage is collected once it is rendered
    (``COLLECT_EACH_PAGE_RECORDS``)."""
    issues: list[Issue]
    docs: Docs = field(default_factory=dict)
    quoted: dict[tuple[str, str], list[Quote]] = field(default_factory=dict)
    """The literals of each report's pages by language and report folder name (a report's
    method page lists them)."""

    def render_language(
        self,
        lang: str,
        comparisons: Sequence[CrossCampaign],
        imported: Sequence[ImportedReport],
    ) -> None:
        """Every page in ``lang`` but the report pages rendered last (``RENDERED_LAST``)."""
        catalog = self.catalogs[lang]
        home = replace(self.site, catalog=catalog, imported_reports=imported)
        self.render_to(page_name("index", lang), f"{lang}/index.md", home)
        self.render_to(
            overview_page(lang),
            f"{lang}/{OVERVIEW_TEMPLATE}",
            replace(home, site_root=_overview_root(lang), language_home="../"),
        )
        for comparison in comparisons:
            ctx = replace(
                self.site, catalog=catalog, site_root=_comparison_root(lang), comparison=comparison
            )
            self.render_to(comparison_page(comparison, lang), f"{lang}/{COMPARISON_TEMPLATE}", ctx)
        for series in self.site.every_series:
            ctx = replace(
                self.site, catalog=catalog, site_root=to_version_root(2, lang), series=series
            )
            self.render_to(series_page(series, lang), f"{lang}/{SERIES_TEMPLATE}", ctx)
        for report in self.site.reports:
            for page in report_pages(report):
                if page not in RENDERED_LAST:
                    self.render_report_page(report, page, lang)
        for imported_report in imported:
            ctx = replace(
                self.site,
                catalog=catalog,
                downloads=self.imported_downloads[imported_report.slug],
                site_root=_site_root("index", lang),
                imported=imported_report,
            )
            self.render_to(imported_page(imported_report, lang), f"{lang}/{IMPORTED_TEMPLATE}", ctx)

    def render_last_pages(self) -> None:
        """The report pages of every language rendered last (``RENDERED_LAST``)."""
        for lang in LANGUAGES:
            for report in self.site.reports:
                for page in RENDERED_LAST:
                    if page in report_pages(report):
                        self.render_report_page(report, page, lang)

    def render_report_page(self, report: Report, page: str, lang: str) -> None:
        ctx = replace(
            self.site,
            catalog=self.catalogs[lang],
            report=report,
            downloads=lambda: self.report_files()[report.slug].downloads,
            site_root=_site_root(page, lang),
            report_pages=report_pages(report),
            quoted=self.quoted.setdefault((lang, report.slug), []),
            page=page,
        )
        self.render_to(
            f"reports/{report.slug}/{page_name(page, lang)}", f"{lang}/report/{page}.md", ctx
        )

    def render_to(self, path: str, template_name: str, ctx: PageContext) -> None:
        """The page ``template_name`` as ``path`` of the docs, and the files its directives
        need beside it (none where it cannot render: its issues say why)."""
        ctx = replace(ctx, extra_files={})
        text, found = render_page(self.content, template_name, directive_functions(ctx))
        self.issues.extend(found)
        if self.collect_each_page:
            # A page's template context and directives are garbage in reference cycles
            # that hold what the page computed: freed page by page, not left to pile up
            # into the build's peak of memory.
            gc.collect()
            release_freed_memory()
        if text is not None:
            self.docs[path] = text.encode("utf-8")
            self.docs.update(ctx.extra_files)


def _report_files_docs(report_files: Mapping[str, ReportFiles]) -> Docs:
    """The downloads and answer pages of every report, by docs path."""
    docs = {}
    for slug, files in report_files.items():
        docs.update(_downloads_docs(slug, files.downloads))
        for index, shard in enumerate(files.answer_shards):
            docs[f"reports/{slug}/answers/{index}.json"] = shard
    return docs


def _downloads_docs(slug: str, downloads: Sequence[DownloadFile]) -> Docs:
    """The downloads of the report in folder ``slug``, by docs path."""
    return {f"reports/{slug}/downloads/{file.name}": file.content for file in downloads}


RENDERED_LAST = ("data", "method")
"""Report pages rendered after every other page: the data page lists the downloads, which
are written meanwhile; the method page lists every literal of its report's pages."""

WRITE_BESIDE_BELOW_RECORDS = 10_000
"""Campaigns with fewer records in all have their downloads written in a forked process
while the pages render (their time then overlaps the rendering's). Larger ones write
them in the build's own process: there memory, not time, is the limit, and a child doing
the writing would add its working memory to the build's."""


def _write_reports_files(
    reports: Sequence[Report], scratch: Path, signer: Signer | None
) -> dict[str, ReportFiles]:
    """Every report's downloads and answer pages, by report folder name."""
    return {
        report.slug: write_report_files(report, scratch / report.slug, signer) for report in reports
    }


def render_page(
    content: jinja2.Environment,
    template_name: str,
    directives: Mapping[str, Callable[..., object]],
) -> tuple[str | None, list[Issue]]:
    """One content page (``<lang>/…md`` of ``content``, a ``content_environment``) with
    ``directives`` (by name, bound to the page: ``directive_functions``): its Markdown
    (``None`` when the template cannot render) and the issues of its prose (C-FIGURE, raw
    HTML …) or template, each naming the page."""
    calls = DirectiveCalls()
    functions = {name: calls.wrap(name, f) for name, f in directives.items()}
    try:
        text = content.get_template(template_name).render(**functions)
    except jinja2.TemplateNotFound as exc:
        return None, [Issue(f"content/{exc.name}", "missing content page", "content")]
    except (jinja2.TemplateError, TypeError) as exc:
        return None, [Issue(f"content/{template_name}", str(exc), "directive")]
    except RecursionError:
        why = "a macro or include calls itself without end"
        return None, [Issue(f"content/{template_name}", why, "directive")]
    prose = render_prose(text)
    issues = [Issue(f"content/{template_name}", p, "content") for p in prose.problems]
    issues.extend(check_prose(template_name, prose.text))
    issues.extend(markup_text_issues(template_name, prose.attributes))
    return calls.substitute(prose.markdown), issues


def check_content_languages(content_dir: Path) -> list[Issue]:
    """Every content page exists in every language (a project's own or a packaged one)."""
    by_lang = {
        lang: {
            p.relative_to(root / lang).as_posix()
            for root in (content_dir, packaged_content())
            for p in (root / lang).rglob("*.md")
        }
        for lang in LANGUAGES
    }
    every = set().union(*by_lang.values())
    return [
        Issue(
            str(content_dir / lang / page),
            "missing: the page exists in another language; every page exists in ja and en",
            "i18n",
        )
        for lang in LANGUAGES
        for page in sorted(every - by_lang[lang])
    ]


def check_rendered(
    docs: Docs,
    reports: Sequence[Report],
    comparisons: Sequence[CrossCampaign] = (),
    imported: Sequence[ImportedReport] = (),
    series: Sequence[BuildSeries] = (),
) -> list[Issue]:
    """Caveat rules over every rendered page (the home, comparison, series and imported
    campaigns' pages included), and ja/en figure parity."""
    issues = []
    single_pages = [
        {lang: comparison_page(comparison, lang) for lang in LANGUAGES}
        for comparison in comparisons
    ]
    single_pages += [{lang: series_page(found, lang) for lang in LANGUAGES} for found in series]
    single_pages += [{lang: page_name("index", lang) for lang in LANGUAGES}]
    single_pages += [{lang: overview_page(lang) for lang in LANGUAGES}]
    single_pages += [
        {lang: imported_page(report, lang) for lang in LANGUAGES} for report in imported
    ]
    for paths in single_pages:
        found = {
            lang: (path, read_page(_page_text(docs[path])))
            for lang, path in paths.items()
            if path in docs
        }
        issues += [issue for path, facts in found.values() for issue in check_page(path, facts)]
        if set(LANGUAGES) <= found.keys():
            issues += check_language_parity(found["ja"][0], found["ja"][1], found["en"][1])
    for report in reports:
        # page → language → (docs path, parsed facts); each page is parsed once.
        pages = {
            page: {
                lang: (path, read_page(_page_text(docs[path])))
                for lang in LANGUAGES
                if (path := f"reports/{report.slug}/{page_name(page, lang)}") in docs
            }
            for page in report_pages(report)
        }
        for lang in LANGUAGES:
            facts = {page: found[lang][1] for page, found in pages.items() if lang in found}
            where = {
                page: f"{found[lang][0]} ({report.slug})"
                for page, found in pages.items()
                if lang in found
            }
            issues.extend(check_report_pages(facts, where, report))
        for found in pages.values():
            if set(LANGUAGES) <= found.keys():
                (ja_path, ja), (_, en) = found["ja"], found["en"]
                issues.extend(check_language_parity(ja_path, ja, en))
    return issues


def _page_text(page: bytes | Path) -> str:
    """A rendered page's text (``render_docs`` gives bytes; a ``Docs`` entry may be a
    file)."""
    return (page.read_bytes() if isinstance(page, Path) else page).decode("utf-8")
