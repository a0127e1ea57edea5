"""Writing the site: the rendered docs tree goes through mkdocs into a staging
directory, which replaces the previous site only when the build is complete.

The renderer (mkdocs-material, end of life announced for 2027) stays behind this
module, so moving to another renderer touches this file only.
"""

from __future__ import annotations

import logging
import os
import shutil
from importlib import resources
from pathlib import Path

import yaml

from sitegen.errors import SitegenError
from sitegen.pages.i18n import LANGUAGES, Catalog
from sitegen.pages.render import REPORT_PAGES
from sitegen.pages.report import Report


class BuildError(SitegenError):
    """The renderer failed; the previous site is untouched."""


def plotly_bundle() -> bytes:
    """plotly.js as shipped inside the plotly package (served from the site, no CDN)."""
    return resources.files("plotly").joinpath("package_data/plotly.min.js").read_bytes()


def site_config(
    project_dir: Path,
    docs_dir: Path,
    site_dir: Path,
    reports: list[Report],
    catalogs: dict[str, Catalog],
) -> dict:
    """The project's ``mkdocs.yml`` with paths and the navigation filled in."""
    config = yaml.safe_load((project_dir / "mkdocs.yml").read_text(encoding="utf-8"))
    config["docs_dir"] = str(docs_dir)
    config["site_dir"] = str(site_dir)
    config["theme"]["custom_dir"] = str(project_dir / "theme" / "overrides")
    config["site_name"] = catalogs[LANGUAGES[0]].t("site.name")
    nav: list = ["index.md"]
    translations: dict[str, dict[str, str]] = {lang: {} for lang in LANGUAGES}
    for report in reports:
        nav.append({report.slug: [f"reports/{report.slug}/{p}.md" for p in REPORT_PAGES]})
        for lang in LANGUAGES:
            translations[lang][report.slug] = report.plan.title[lang]
    config["nav"] = nav
    for plugin in config["plugins"]:
        if isinstance(plugin, dict) and "i18n" in plugin:
            for language in plugin["i18n"]["languages"]:
                lang = language["locale"]
                language["nav_translations"] = translations[lang]
                language["site_name"] = catalogs[lang].t("site.name")
    return config


def write_site(
    docs: dict[str, bytes],
    reports: list[Report],
    catalogs: dict[str, Catalog],
    project_dir: Path,
    site_dir: Path,
    build_epoch: int,
) -> None:
    """Render ``docs`` with mkdocs (strict) and swap the result in atomically."""
    from mkdocs.commands.build import build
    from mkdocs.config import load_config
    from mkdocs.exceptions import MkDocsException

    site_dir = site_dir.resolve()
    site_dir.parent.mkdir(parents=True, exist_ok=True)
    staging = site_dir.parent / f".{site_dir.name}.staging-{os.getpid()}"
    shutil.rmtree(staging, ignore_errors=True)
    try:
        docs_dir = staging / "docs"
        for relative, data in sorted(docs.items()):
            path = docs_dir / relative
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
        assets = project_dir / "theme" / "assets"
        shutil.copytree(assets, docs_dir / "assets", dirs_exist_ok=True)
        (docs_dir / "assets" / "js" / "plotly.min.js").write_bytes(plotly_bundle())
        config_path = staging / "mkdocs.yml"
        config = site_config(project_dir, docs_dir, staging / "site", reports, catalogs)
        config_path.write_text(yaml.safe_dump(config, allow_unicode=True), encoding="utf-8")
        # Dates in sitemaps come from SOURCE_DATE_EPOCH: same data, same bytes.
        previous_epoch = os.environ.get("SOURCE_DATE_EPOCH")
        os.environ["SOURCE_DATE_EPOCH"] = str(build_epoch)
        try:
            logging.getLogger("mkdocs").setLevel(logging.WARNING)
            build(load_config(config_file=str(config_path), strict=True))
        except (MkDocsException, SystemExit) as exc:
            raise BuildError(f"mkdocs build failed: {exc}") from exc
        finally:
            if previous_epoch is None:
                os.environ.pop("SOURCE_DATE_EPOCH", None)
            else:
                os.environ["SOURCE_DATE_EPOCH"] = previous_epoch
        _swap_in(staging / "site", site_dir)
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _swap_in(new_site: Path, site_dir: Path) -> None:
    retired = site_dir.with_name(f".{site_dir.name}.old-{os.getpid()}")
    if site_dir.exists():
        site_dir.rename(retired)
    new_site.rename(site_dir)
    shutil.rmtree(retired, ignore_errors=True)
