"""Reading built sites: a rendering's pages and reports, a published version's files,
objects and search index, and reusing a rendering of the same inputs (``reusing_renders``).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace
from typing import Any
from unittest import mock


def unmarked(html: str) -> str:
    """``html`` without the marks the audit reads (``<span data-figure>``), their text
    kept: a figure and the sign its text adds (``45.0%``) read as one again."""
    return re.sub(r'<span data-figure="[^"]*">([^<]*)</span>', r"\1", html)


def tree_bytes(root: Path) -> dict[str, bytes]:
    """Every file below ``root`` by relative path."""
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def rendered_page(rendered: Any, path: str) -> str:
    """A page of a rendering (``RenderedSite``), ``path`` as in its docs tree
    (``reports/<name>/speed.en.md``): what mkdocs would publish at
    ``[en/]reports/<name>/speed/index.html``."""
    body = rendered.docs[path]
    return body.decode("utf-8") if isinstance(body, bytes) else body.read_text(encoding="utf-8")


def rendered_reports(rendered: Any) -> set[str]:
    """The report folders of a rendering: the names its site would publish under
    ``reports/``."""
    return {path.split("/")[1] for path in rendered.docs if path.startswith("reports/")}


def published_file(version: Path, path: str) -> Path:
    """A file of a published version (``path`` as mkdocs rendered it) where a reader finds
    it: the object the version's ``objects.json`` names, else under the version."""
    moved = published_objects(version)
    return version.parents[1] / moved[path] if path in moved else version / path


def search_entries(version: Path) -> list[dict]:
    """Every entry of a version's search index, its parts joined as the site's script
    joins them (``search-parts.js``)."""
    index_path = published_file(version, "search/search_index.json")
    index = json.loads(index_path.read_text(encoding="utf-8"))
    parts = [json.loads((index_path.parent / part).read_text()) for part in index["parts"]]
    return index["docs"] + [entry for part in parts for entry in part["docs"]]


def published_objects(version: Path) -> dict[str, str]:
    """The version's ``objects.json``: rendered path → object path from the site root."""
    return json.loads((version / "objects.json").read_text(encoding="utf-8"))


def published_folder(version: Path, folder: str) -> dict[str, Path]:
    """Every file a version rendered directly in ``folder``, by name, where it lies now."""
    moved = published_objects(version)
    names = {p.rsplit("/", 1)[1] for p in moved if p.rsplit("/", 1)[0] == folder}
    here = version / folder
    names |= {p.name for p in here.iterdir() if p.is_file()} if here.is_dir() else set()
    return {name: published_file(version, f"{folder}/{name}") for name in sorted(names)}


_RENDERED: dict[str, Any] = {}
"""``reusing_renders``' renderings (``sitegen.commands.build.RenderedSite``) by their inputs' digest."""


def _render_inputs_digest(data_dir: Path, project_dir: Path, skip: Iterable[str]) -> str:
    """SHA-256 over the bytes of every file ``render_site`` reads (the campaigns, the
    project's ``mkdocs.yml``, ``content/`` and ``theme/``) and the skip list."""
    digest = hashlib.sha256(repr(sorted(skip)).encode())
    files = [("project", project_dir / "mkdocs.yml")]
    files += [("project", p) for f in ("content", "theme") for p in (project_dir / f).rglob("*")]
    files += [("data", p) for p in (data_dir / "campaigns").rglob("*")]
    for root, path in sorted(files):
        if path.is_file() and not path.is_symlink():
            relative = path.relative_to(project_dir if root == "project" else data_dir)
            digest.update(f"{root}/{relative.as_posix()}\0".encode())
            digest.update(hashlib.sha256(path.read_bytes()).digest())
        elif path.is_symlink():  # refused by the build: never reused
            digest.update(os.urandom(16))
    return digest.hexdigest()


def rendering_once(render_site: Callable[..., Any]) -> Callable[..., Any]:
    """``render_site`` that renders given inputs once (see ``reusing_renders``)."""

    def rendered_once(
        data_dir: Path, project_dir: Path, skip: Iterable[str] = (), signer: Any = None
    ) -> Any:
        key = _render_inputs_digest(Path(data_dir), Path(project_dir), skip)
        key += signer.fingerprint if signer is not None else ""
        if key not in _RENDERED:
            _RENDERED[key] = render_site(data_dir, project_dir, skip, signer)
        # A build removes its rendering's scratch folder once published: this one is kept.
        scratch = SimpleNamespace(name=_RENDERED[key].scratch.name, cleanup=lambda: None)
        return replace(_RENDERED[key], scratch=scratch)

    return rendered_once


@contextmanager
def reusing_renders() -> Iterator[None]:
    """While the block runs, a build from inputs byte for byte those of an earlier build of
    this test process (another folder's copy included) reuses that build's rendering
    (``render_site``: read, validate, compute and render every page) instead of rendering
    again; a rendering that fails is not kept. For tests of what a build does after
    rendering (publishing, the archive, locks, faults while writing): a test of what the
    build reads or renders must not use it."""
    import sitegen.commands.build

    with mock.patch.object(
        sitegen.commands.build, "render_site", rendering_once(sitegen.commands.build.render_site)
    ):
        yield
