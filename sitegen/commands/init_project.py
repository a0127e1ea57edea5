"""``sitegen init DIR``: a new project holding only what its authors change."""

from __future__ import annotations

from pathlib import Path

from sitegen.core.errors import ConfigError, StorageError
from sitegen.core.project import DEFAULTS

FILES = {
    "mkdocs.yml": "mkdocs.yml",
    "example.yaml": "plans/example.yaml",
    "gitignore": ".gitignore",
    "pages.yml": ".github/workflows/pages.yml",
    "measure-engine-build.yml": ".github/workflows/measure-engine-build.yml",
    "README.md": "README.md",
}
"""Packaged file (``defaults/init/``) → its place in the new project (package data keeps
no dot files, so ``.gitignore`` ships as ``gitignore``)."""


def init_project(directory: Path) -> list[Path]:
    """Write a new project into ``directory`` (made if missing); raises ``ConfigError``
    when it is not empty, so nothing of an existing project is overwritten."""
    if directory.exists() and (not directory.is_dir() or any(directory.iterdir())):
        raise ConfigError(f"{directory} is not an empty directory; give a new one")
    written = []
    try:
        for source, target in FILES.items():
            path = directory / target
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes((DEFAULTS / "init" / source).read_bytes())
            written.append(path)
    except OSError as exc:
        raise StorageError.from_os_error(exc, "write") from None
    return written
