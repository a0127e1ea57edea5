"""Where a build finds its files: the project's own, then the defaults sitegen ships.

A project is a directory with a ``mkdocs.yml`` (``sitegen init DIR`` makes one). It holds
only what its authors change: page templates in ``content/<lang>/`` replace the packaged
ones of the same name, ``theme/i18n/<lang>.yml`` renames interface labels of the packaged
catalog (``pages.i18n.OVERRIDABLE``: caveats and disclaimers are the package's),
``theme/assets/`` adds files (a logo, a CSS file), ``content/sources.yaml``,
``content/prices.yaml`` and ``content/comparisons/`` declare its sources, device prices
and comparisons, ``plans/`` its plans. The
theme's templates and the directives' partials are the package's only: a changed template
could hide a caveat.
"""

from __future__ import annotations

from pathlib import Path

from sitegen.core.errors import ConfigError

DEFAULTS = Path(__file__).resolve().parent.parent / "defaults"
"""The packaged theme (``theme/``) and page templates (``content/<lang>/``)."""

CONFIG_FILE = "mkdocs.yml"
PLAN_SUFFIXES = (".yaml", ".yml", ".toml", ".json")
"""The files of ``plans/`` that ``sitegen measure`` reads as plans."""

BUILD_OWNED = ("theme/overrides", "theme/partials")
"""Theme folders only the package has."""


def packaged_theme() -> Path:
    """The theme as sitegen ships it: assets, catalogs, overrides, partials."""
    return DEFAULTS / "theme"


def packaged_content() -> Path:
    """The page templates as sitegen ships them (``<lang>/…md``)."""
    return DEFAULTS / "content"


def require_project(project_dir: Path) -> Path:
    """The project's ``mkdocs.yml``; raises ``ConfigError`` (one line, how to make one)
    when there is none, or when the project carries a folder the build owns."""
    config = project_dir / CONFIG_FILE
    if not config.is_file():
        raise ConfigError(
            f"{project_dir.resolve()} is not a sitegen project (no {CONFIG_FILE}); "
            "create one with `sitegen init DIR`, or pass --project DIR"
        )
    for owned in BUILD_OWNED:
        if (project_dir / owned).exists():
            raise ConfigError(
                f"{project_dir / owned}: the theme's templates and partials are sitegen's "
                "own (a changed template could hide a caveat); remove this folder"
            )
    return config


def content_search_path(project_dir: Path) -> list[str]:
    """Page template folders, the project's first: its pages replace the packaged ones."""
    return [str(project_dir / "content"), str(packaged_content())]


def project_plans(project_dir: Path) -> list[Path]:
    """The plan files of a project's ``plans/`` (none outside a project)."""
    plans = project_dir / "plans"
    if not (project_dir / CONFIG_FILE).is_file() or not plans.is_dir():
        return []
    return sorted(p for p in plans.iterdir() if p.is_file() and p.suffix in PLAN_SUFFIXES)
