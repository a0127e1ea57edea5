"""Rendering one version's docs tree into HTML with mkdocs (strict).

The renderer (mkdocs-material, end of life announced for 2027) stays behind this
module, so moving to another renderer touches this file only.
"""

from __future__ import annotations

import copy
import html
import logging
import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from sitegen.core.errors import BuildError, DataError, Issue
from sitegen.core.project import packaged_theme
from sitegen.core.site_layout import (
    CHANGELOG_PAGE,
    LATEST_ALIAS,
    SHARED_ASSETS,
    VERSION_TO_ROOT,
    VERSIONS_DIR,
)
from sitegen.core.site_settings import SiteSettings, read_site_settings
from sitegen.core.text import LANGUAGES
from sitegen.pages.i18n import Catalog
from sitegen.pages.render import overview_page, report_pages
from sitegen.pages.search_index import write_search_parts
from sitegen.statistics.report import Report

CONTENT_SECURITY_POLICY = "; ".join(
    [
        "default-src 'none'",
        # Every script is a file of the site; material's inline scripts are replaced by
        # files in theme/overrides and theme/assets.
        "script-src 'self'",
        # plotly.js and material set style attributes and inject <style> elements.
        "style-src 'self' 'unsafe-inline'",
        # material's icons are data: SVGs; plotly's image export draws into blob: URLs.
        "img-src 'self' data: blob:",
        "font-src 'self'",
        "connect-src 'self'",
        "worker-src 'self'",
        "manifest-src 'self'",
        "form-action 'self'",
        "base-uri 'none'",
        "object-src 'none'",
    ]
)
"""The site's Content-Security-Policy (a meta tag on every page)."""

PLOTLY_BUNDLE = "js/plotly-basic-4.1.1.min.js"
"""plotly.js partial bundle (scatter, bar, pie) under the packaged ``theme/assets/shared/``; served once
at the site root. Its name carries the version: published versions keep the one they use."""

SEARCH_LANGUAGES = ("ja", "en")
"""The languages of the search index (material's ``search.lang``)."""
LUNR_FOLDER = "assets/javascripts/lunr/"
"""Where material keeps the lunr scripts its search worker may load."""


def search_scripts(languages: tuple[str, ...]) -> frozenset[str]:
    """The lunr scripts material's search worker loads for ``languages`` (as its worker
    decides): a segmenter for Japanese (``tinyseg.js``) and for Thai and Hindi
    (``wordcut.js``), one script per language but English, the glue for more than one
    language, and the stemmer support whenever it loads any of those."""
    names = []
    for language in languages:
        if language == "ja":
            names.append("tinyseg.js")
        if language in ("th", "hi"):
            names.append("wordcut.js")
        if language != "en":
            names.append(f"min/lunr.{language}.min.js")
    if len(languages) > 1:
        names.append("min/lunr.multi.min.js")
    if names:
        names.append("min/lunr.stemmer.support.min.js")
    return frozenset(LUNR_FOLDER + name for name in names)


BUILD_CONFIG: dict[str, Any] = {
    "use_directory_urls": True,
    "theme": {
        "name": "material",
        "language": "ja",
        "font": False,  # no Google Fonts: the site works offline
        "features": [
            "navigation.sections",
            "navigation.indexes",
            "navigation.top",
            # The page's headings in the navigation, not in a second sidebar: at 1280 px
            # the content gets that column's width (the speed summary fits without scrolling).
            "toc.integrate",
            "content.code.copy",
        ],
    },
    "plugins": [
        # English words with stems are not found without the pipeline (checked in Chromium).
        # The languages and separator are what material would look up in its Japanese
        # translation and i18n would add, set here: the look-up compiles templates twice
        # per build.
        {
            "search": {
                "lang": list(SEARCH_LANGUAGES),
                "separator": "[\\s\\-\u3000、。，．]+",
                "pipeline": ["stopWordFilter"],
            }
        },
        {
            "i18n": {
                "docs_structure": "suffix",
                "reconfigure_material": True,
                "languages": [
                    {"locale": "ja", "name": "日本語", "default": True, "build": True},
                    {"locale": "en", "name": "English", "build": True},
                ],
            }
        },
    ],
    # Pages reach mkdocs as heading lines and HTML the build rendered: no extension is
    # needed, and none may turn author text into markup.
    "markdown_extensions": [],
    "hooks": [str(Path(__file__).with_name("mkdocs_hooks.py"))],
    # Reads versions.json (mike's format) written by `sitegen build`; no mike needed.
    "extra": {"version": {"provider": "mike", "default": "latest", "alias": True}},
    "extra_css": ["assets/css/sitegen.css"],
}
"""Every mkdocs setting the build owns (theme, plugins, Markdown extensions …); the
project's ``mkdocs.yml`` may only set ``SiteSettings``."""


def asset_files(project_dir: Path) -> dict[str, Path]:
    """The files of ``docs/assets/``: the packaged theme's (but the site-root shared ones)
    and those the project adds; raises ``DataError`` naming a project file that would
    replace a packaged one (a changed script or style could hide a caveat)."""
    packaged, own = packaged_theme() / "assets", project_dir / "theme" / "assets"
    files = {
        p.relative_to(packaged).as_posix(): p
        for p in sorted(packaged.rglob("*"))
        if p.is_file() and p.relative_to(packaged).parts[0] != "shared"
    }
    added = {p.relative_to(own).as_posix(): p for p in sorted(own.rglob("*")) if p.is_file()}
    taken = sorted(name for name in added if name in files or name.startswith("shared/"))
    if taken:
        raise DataError(
            [
                Issue(
                    str(own / name), "sitegen's own asset has this name; choose another", "config"
                )
                for name in taken
            ]
        )
    return files | added


PLACEHOLDER_SITE_URL = "https://sitegen.invalid/"
"""Used when ``mkdocs.yml`` sets no ``site_url``: mkdocs only writes absolute URLs into
the sitemaps (which the version selector reads to stay on the same page) when it has one.
The pages leave out their canonical link then (it would name this host)."""


def version_url(settings: SiteSettings, label: str) -> str:
    """The address of version ``label``'s root (mkdocs' ``site_url`` for it)."""
    site_url = str(settings.site_url or PLACEHOLDER_SITE_URL).rstrip("/") + "/"
    return f"{site_url}{VERSIONS_DIR}/{label}/"


@dataclass(frozen=True)
class ReportNav:
    """What the navigation shows of a report: its folder, title and pages. A version is
    published from these, not from the reports, so their tables (large for a large
    campaign) are freed before mkdocs runs."""

    slug: str
    title: dict[str, str]
    """The report's title per language."""
    pages: tuple[str, ...]
    """Its pages in navigation order (``report_pages``)."""

    @classmethod
    def of(cls, report: Report, build: str | None = None) -> ReportNav:
        """``build``: the factor's value of a campaign of a series (``SeriesBuild``), shown
        after the title, which every build of the series shares."""
        title = report.plan.title.model_dump()
        if build is not None:
            title = {lang: f"{text} · {build}" for lang, text in title.items()}
        return cls(report.slug, title, report_pages(report))


@dataclass(frozen=True)
class VersionBuild:
    """One version, rendered in memory and ready to publish."""

    label: str
    data_epoch: int
    """Start time of the latest record (Unix seconds): dates in sitemaps, version order."""
    docs: dict[str, bytes | Path]
    reports: tuple[ReportNav, ...]
    catalogs: dict[str, Catalog]
    figures: dict[str, Any]
    comparisons: tuple[str, ...] = ()
    """Ids of the comparison pages (``compare/<id>/``)."""
    imported: tuple[tuple[str, dict[str, str]], ...] = ()
    """Each imported campaign's report folder name and title per language."""
    series: tuple[tuple[str, dict[str, str]], ...] = ()
    """Each series page's folder name (``series/<name>/``) and title per language."""


def site_config(
    project_dir: Path, docs_dir: Path, version_dir: Path, build: VersionBuild
) -> dict[str, Any]:
    """The project's ``mkdocs.yml`` with paths, navigation and version settings filled in."""
    settings = read_site_settings(project_dir)
    # The branding and redaction settings are the build's input, not mkdocs's.
    config = copy.deepcopy(BUILD_CONFIG) | settings.model_dump(
        mode="json",
        exclude_none=True,
        exclude={"extra", "title", "logo", "palette", "indexing", "redact", "signing_key"},
    )
    config["extra"] |= settings.extra.model_dump(mode="json")
    if settings.logo:
        config["theme"]["logo"] = f"assets/{settings.logo}"
    if settings.palette:
        config["theme"]["palette"] = settings.palette.model_dump(exclude_none=True)
    config["extra"]["generator"] = False  # no "Made with Material for MkDocs" footer
    config["extra"]["sitegen_noindex"] = settings.noindex
    config["extra"]["sitegen_canonical"] = settings.site_url is not None
    catalogs = build.catalogs
    config["docs_dir"] = str(docs_dir)
    config["site_dir"] = str(version_dir)
    config["site_url"] = version_url(settings, build.label)
    # The theme's templates are sitegen's own (a project cannot have any).
    config["theme"]["custom_dir"] = str(packaged_theme() / "overrides")
    config["site_name"] = catalogs[LANGUAGES[0]].t("site.name")
    config["extra"]["sitegen_csp"] = CONTENT_SECURITY_POLICY
    config["extra"]["sitegen_plotly"] = f"{VERSION_TO_ROOT}{SHARED_ASSETS}/{PLOTLY_BUNDLE}"
    config["extra"]["sitegen_latest"] = f"{VERSION_TO_ROOT}{LATEST_ALIAS}/"
    nav: list = ["index.md", overview_page(LANGUAGES[0])]
    translations: dict[str, dict[str, str]] = {lang: {} for lang in LANGUAGES}
    for report in build.reports:
        pages = [f"reports/{report.slug}/{p}.md" for p in report.pages]
        # The history page is made at publish time, from the archive (publish.history).
        history = {HISTORY_ENTRY: f"reports/{report.slug}/history.md"}
        nav.append({report.slug: [*pages, history]})
        for lang in LANGUAGES:
            # Navigation titles reach the theme's HTML unescaped: escape them here.
            translations[lang][report.slug] = html.escape(report.title[lang])
            translations[lang][HISTORY_ENTRY] = html.escape(catalogs[lang].t("page.history"))
    for slug, title in build.imported:
        nav.append({slug: [f"reports/{slug}/index.md"]})
        for lang in LANGUAGES:
            translations[lang][slug] = html.escape(title[lang])
    if build.comparisons:
        nav.append({COMPARE_SECTION: [f"compare/{c}/index.md" for c in build.comparisons]})
        for lang in LANGUAGES:
            translations[lang][COMPARE_SECTION] = html.escape(catalogs[lang].t("compare.title"))
    if build.series:
        nav.append({SERIES_SECTION: [f"series/{name}/index.md" for name, _ in build.series]})
        for lang in LANGUAGES:
            translations[lang][SERIES_SECTION] = html.escape(catalogs[lang].t("series.section"))
    nav.append(f"{CHANGELOG_PAGE}.md")
    config["nav"] = nav
    for plugin in config["plugins"]:
        if isinstance(plugin, dict) and "i18n" in plugin:
            for language in plugin["i18n"]["languages"]:
                lang = language["locale"]
                language["nav_translations"] = translations[lang]
                language["site_name"] = catalogs[lang].t("site.name")
                language["extra"] = {
                    "sitegen_strings": {
                        "outdated": catalogs[lang].t("version.outdated"),
                        "to_latest": catalogs[lang].t("version.to_latest"),
                    }
                }
    return config


COMPARE_SECTION = "compare"
"""Navigation section of the comparison pages (its title is translated)."""
SERIES_SECTION = "series:"
"""Navigation section of the series pages (its title is translated; a colon no series'
plan name has)."""
HISTORY_ENTRY = "history:"
"""Navigation key of a report's history entry (a colon no campaign slug has), shown as
the short "History" beside the report's other pages rather than the page's full title."""


class _WarningCollector(logging.Handler):
    """Keeps mkdocs' warnings, so a strict-mode abort says what it aborted on."""

    def __init__(self) -> None:
        super().__init__(level=logging.WARNING)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(" ".join(record.getMessage().split()))


_THEME_FILES: dict[tuple, list[tuple[str, str | None]]] = {}
"""``_theme_files``' findings: (theme file, theme folder) by theme and filter settings."""


def _theme_files(files: Any, env: Any, config: Any) -> None:
    """mkdocs' ``Files.add_files_from_theme`` with the theme's files listed once per
    process: mkdocs walks every theme folder (material's holds its whole icon set) for
    each language of every build, and the packaged theme does not change while sitegen
    runs. The same files are added as mkdocs adds them (those the docs tree has no file
    for), but for the lunr scripts the search never loads: they would be a large share of
    a small site's bytes."""
    from mkdocs import utils
    from mkdocs.structure.files import File, Files

    key = (
        tuple(config.theme.dirs),
        tuple(config.theme.static_templates),
        tuple(utils.markdown_extensions),
    )
    found = _THEME_FILES.get(key)
    if found is None:
        listed = Files([])
        _ADD_FILES_FROM_THEME(listed, _WithoutDotFolders.of(env), config)
        found = _THEME_FILES[key] = [(f.src_uri, f.src_dir) for f in listed]
    loaded = search_scripts(SEARCH_LANGUAGES)
    for path, directory in found:
        if path.startswith(LUNR_FOLDER) and path not in loaded:
            continue
        if files.get_file_from_path(path) is None:
            files.append(File(path, directory, config.site_dir, config.use_directory_urls))


@dataclass(frozen=True)
class _WithoutDotFolders:
    """A theme environment's template names as jinja's ``FileSystemLoader`` lists them, but
    never looking inside a folder whose name starts with a dot, nor at such a file:
    mkdocs' filter of theme files drops every such path (``.*`` and ``*/.*``), and walking
    material's ``.icons`` (its whole icon set) would be the bulk of the listing."""

    folders: tuple[str, ...]

    @classmethod
    def of(cls, env: Any) -> Any:
        """The listing of ``env``'s theme folders (``env`` itself for another loader)."""
        import jinja2

        loader = env.loader
        if type(loader) is not jinja2.FileSystemLoader or loader.followlinks:
            return env
        return cls(tuple(loader.searchpath))

    def list_templates(self, filter_func: Any) -> list[str]:
        names = set()
        for folder in self.folders:
            for root, subfolders, files in os.walk(folder):
                subfolders[:] = [name for name in subfolders if not name.startswith(".")]
                for name in files:
                    if not name.startswith("."):
                        path = os.path.join(root, name)[len(folder) :].strip(os.sep)
                        names.add(path.replace(os.sep, "/"))
        return [name for name in sorted(names) if filter_func(name)]


_ADD_FILES_FROM_THEME: Any = None
"""mkdocs' own ``Files.add_files_from_theme``, once ``_theme_files`` replaces it."""


def _list_theme_files_once() -> None:
    global _ADD_FILES_FROM_THEME
    from mkdocs.structure.files import Files

    if _ADD_FILES_FROM_THEME is None:
        _ADD_FILES_FROM_THEME = Files.add_files_from_theme
        setattr(Files, "add_files_from_theme", _theme_files)  # noqa: B010  (a method, replaced)


def render_version(
    build: VersionBuild, project_dir: Path, staging: Path, version_dir: Path
) -> None:
    """Run mkdocs (strict) on the version's docs tree, writing into ``version_dir``; its
    search index is then split into parts (``search_index``)."""
    from mkdocs.commands.build import build as mkdocs_build
    from mkdocs.config import load_config
    from mkdocs.exceptions import MkDocsException

    _list_theme_files_once()
    docs_dir = staging / "docs"
    for relative, content in sorted(build.docs.items()):
        path = docs_dir / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, Path):
            shutil.copyfile(content, path)
        else:
            path.write_bytes(content)
    for relative, source in asset_files(project_dir).items():
        (docs_dir / "assets" / relative).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, docs_dir / "assets" / relative)
    config_path = staging / "mkdocs.yml"
    config = site_config(project_dir, docs_dir, version_dir, build)
    config_path.write_text(yaml.safe_dump(config, allow_unicode=True), encoding="utf-8")
    # Dates in sitemaps come from SOURCE_DATE_EPOCH: same data, same bytes.
    previous_epoch = os.environ.get("SOURCE_DATE_EPOCH")
    os.environ["SOURCE_DATE_EPOCH"] = str(build.data_epoch)
    warnings = _WarningCollector()
    mkdocs_log = logging.getLogger("mkdocs")
    mkdocs_log.addHandler(warnings)
    try:
        mkdocs_log.setLevel(logging.WARNING)
        mkdocs_build(load_config(config_file=str(config_path), strict=True))
    except (MkDocsException, SystemExit) as exc:
        shown = "; ".join(warnings.messages[:5]) or str(exc)
        raise BuildError(f"mkdocs build failed: {shown}") from exc
    finally:
        mkdocs_log.removeHandler(warnings)
        if previous_epoch is None:
            os.environ.pop("SOURCE_DATE_EPOCH", None)
        else:
            os.environ["SOURCE_DATE_EPOCH"] = previous_epoch
    write_search_parts(version_dir)
