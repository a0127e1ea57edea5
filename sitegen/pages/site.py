"""Writing the site: the rendered docs tree of one version goes through mkdocs into a
staging directory, next to the archived versions carried over from the current site;
the staging site replaces the previous one only when it is complete.

The renderer (mkdocs-material, end of life announced for 2027) stays behind this
module, so moving to another renderer touches this file only.
"""

from __future__ import annotations

import logging
import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import yaml

from sitegen.errors import SitegenError
from sitegen.pages.archive import (
    CHANGELOG_PAGE,
    LATEST_ALIAS,
    SHARED_ASSETS,
    VERSION_MANIFEST,
    VERSIONS_DIR,
    ArchiveError,
    PublishedVersion,
    hash_tree,
    link_file,
    link_tree,
    sha256_bytes,
    write_build_marker,
    write_root,
)
from sitegen.pages.i18n import LANGUAGES, Catalog
from sitegen.pages.report import Report

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
"""plotly.js partial bundle (scatter, bar, pie) under ``theme/assets/shared/``; served once
at the site root. Its name carries the version: published versions keep the one they use."""

PLACEHOLDER_SITE_URL = "https://sitegen.invalid/"
"""Used when ``mkdocs.yml`` sets no ``site_url``: mkdocs only writes absolute URLs into
the sitemaps (which the version selector reads to stay on the same page) when it has one."""

VERSION_TO_ROOT = "../../"
"""From a version's root (``v/<label>/``) to the site root."""

Outcome = Literal["published", "unchanged"]


class BuildError(SitegenError):
    """The renderer failed; the previous site is untouched."""


@dataclass(frozen=True)
class VersionBuild:
    """One version, rendered in memory and ready to publish."""

    label: str
    data_epoch: int
    """Start time of the latest record (Unix seconds): dates in sitemaps, version order."""
    docs: dict[str, bytes]
    reports: list[Report]
    catalogs: dict[str, Catalog]
    figures: dict[str, Any]


def shared_assets(project_dir: Path) -> dict[str, bytes]:
    """Files of ``theme/assets/shared/`` by their path from the site root."""
    shared_dir = project_dir / "theme" / "assets" / "shared"
    return {
        f"{SHARED_ASSETS}/{path.relative_to(shared_dir).as_posix()}": path.read_bytes()
        for path in sorted(shared_dir.rglob("*"))
        if path.is_file()
    }


def site_config(
    project_dir: Path, docs_dir: Path, version_dir: Path, build: VersionBuild
) -> dict[str, Any]:
    """The project's ``mkdocs.yml`` with paths, navigation and version settings filled in."""
    config = yaml.safe_load((project_dir / "mkdocs.yml").read_text(encoding="utf-8"))
    catalogs = build.catalogs
    config["docs_dir"] = str(docs_dir)
    config["site_dir"] = str(version_dir)
    config["site_url"] = (
        f"{config.get('site_url') or PLACEHOLDER_SITE_URL}{VERSIONS_DIR}/{build.label}/"
    )
    config["theme"]["custom_dir"] = str(project_dir / "theme" / "overrides")
    config["site_name"] = catalogs[LANGUAGES[0]].t("site.name")
    config.setdefault("extra", {})
    config["extra"]["sitegen_csp"] = CONTENT_SECURITY_POLICY
    config["extra"]["sitegen_plotly"] = f"{VERSION_TO_ROOT}{SHARED_ASSETS}/{PLOTLY_BUNDLE}"
    config["extra"]["sitegen_latest"] = f"{VERSION_TO_ROOT}{LATEST_ALIAS}/"
    nav: list = ["index.md"]
    translations: dict[str, dict[str, str]] = {lang: {} for lang in LANGUAGES}
    for report in build.reports:
        nav.append({report.slug: [f"reports/{report.slug}/{p}.md" for p in report.pages]})
        for lang in LANGUAGES:
            translations[lang][report.slug] = report.plan.title[lang]
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


def render_version(
    build: VersionBuild, project_dir: Path, staging: Path, version_dir: Path
) -> None:
    """Run mkdocs (strict) on the version's docs tree, writing into ``version_dir``."""
    from mkdocs.commands.build import build as mkdocs_build
    from mkdocs.config import load_config
    from mkdocs.exceptions import MkDocsException

    docs_dir = staging / "docs"
    for relative, data in sorted(build.docs.items()):
        path = docs_dir / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    shutil.copytree(
        project_dir / "theme" / "assets",
        docs_dir / "assets",
        ignore=shutil.ignore_patterns("shared"),
        dirs_exist_ok=True,
    )
    config_path = staging / "mkdocs.yml"
    config = site_config(project_dir, docs_dir, version_dir, build)
    config_path.write_text(yaml.safe_dump(config, allow_unicode=True), encoding="utf-8")
    # Dates in sitemaps come from SOURCE_DATE_EPOCH: same data, same bytes.
    previous_epoch = os.environ.get("SOURCE_DATE_EPOCH")
    os.environ["SOURCE_DATE_EPOCH"] = str(build.data_epoch)
    try:
        logging.getLogger("mkdocs").setLevel(logging.WARNING)
        mkdocs_build(load_config(config_file=str(config_path), strict=True))
    except (MkDocsException, SystemExit) as exc:
        raise BuildError(f"mkdocs build failed: {exc}") from exc
    finally:
        if previous_epoch is None:
            os.environ.pop("SOURCE_DATE_EPOCH", None)
        else:
            os.environ["SOURCE_DATE_EPOCH"] = previous_epoch


def publish_version(
    build: VersionBuild,
    project_dir: Path,
    site_dir: Path,
    published: list[PublishedVersion],
    inputs_sha256: str,
    counts: dict[str, int],
) -> Outcome:
    """Render ``build`` and publish it next to the ``published`` versions of ``site_dir``.

    An already published label with the same bytes is left as it is; with other bytes it
    is refused before anything is written.
    """
    site_dir = site_dir.resolve()
    site_dir.parent.mkdir(parents=True, exist_ok=True)
    staging = site_dir.parent / f".{site_dir.name}.staging-{os.getpid()}"
    shutil.rmtree(staging, ignore_errors=True)
    try:
        site = staging / "site"
        version_dir = site / VERSIONS_DIR / build.label
        render_version(build, project_dir, staging, version_dir)
        shared = shared_assets(project_dir)
        version = PublishedVersion(
            build.label,
            build.data_epoch,
            build.figures,
            hash_tree(version_dir),
            {path: sha256_bytes(data) for path, data in shared.items()},
        )
        existing = next((v for v in published if v.label == build.label), None)
        if existing is not None:
            _require_identical(existing, version)
            write_build_marker(site_dir, inputs_sha256, build.label, counts)
            return "unchanged"
        (version_dir / VERSION_MANIFEST).write_bytes(version.manifest_bytes())
        for other in published:
            link_tree(site_dir / VERSIONS_DIR / other.label, site / VERSIONS_DIR / other.label)
        _write_shared(site_dir, site, published, shared)
        write_root(site, [*published, version], CONTENT_SECURITY_POLICY)
        write_build_marker(site, inputs_sha256, build.label, counts)
        _swap_in(site, site_dir)
        return "published"
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _require_identical(existing: PublishedVersion, version: PublishedVersion) -> None:
    differing = sorted(
        path
        for path in existing.files.keys() | version.files.keys()
        if existing.files.get(path) != version.files.get(path)
    )
    differing += sorted(set(existing.shared.items()) ^ set(version.shared.items()))
    if differing:
        shown = ", ".join(str(d) for d in differing[:5])
        more = f" and {len(differing) - 5} more" if len(differing) > 5 else ""
        raise ArchiveError(
            f"version '{version.label}' is already published with different content "
            f"({shown}{more}); a published version never changes: publish this build under "
            "a new label with --version LABEL. Nothing was written."
        )


def _write_shared(
    site_dir: Path, site: Path, published: list[PublishedVersion], shared: dict[str, bytes]
) -> None:
    """Shared files the archived versions use (carried over) and the new version's."""
    for version in published:
        for path in version.shared:
            target = site / path
            if not target.exists():
                target.parent.mkdir(parents=True, exist_ok=True)
                link_file(site_dir / path, target)
    for path, data in shared.items():
        target = site / path
        if target.exists():
            if sha256_bytes(target.read_bytes()) != sha256_bytes(data):
                raise ArchiveError(
                    f"{path} differs from the file of the same name that published versions "
                    "use; give the new file a new name (shared files are never replaced)"
                )
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)


def _swap_in(new_site: Path, site_dir: Path) -> None:
    retired = site_dir.with_name(f".{site_dir.name}.old-{os.getpid()}")
    if site_dir.exists():
        site_dir.rename(retired)
    new_site.rename(site_dir)
    shutil.rmtree(retired, ignore_errors=True)
