"""Content-addressed objects: a version's files that other versions may share, stored once
at the site root (``objects/<sha256>/…``) and named from the version's pages.

After mkdocs has rendered a version, its non-HTML files that a page names (downloads,
chart specs, schemas), the theme's ``assets/`` folder and every folder a page script reads
by a computed name (``data-base``, e.g. the answer shards) move to objects, and the pages'
references are rewritten to them. An object is a folder named by a SHA-256 that holds
either one file under its own name (the digest of its bytes: a download keeps the name the
browser saves it under and that ``SHA256SUMS`` lists) or a whole folder (the digest of its
listing, ``sha256sum`` lines: relative references inside CSS and JS keep working, nothing
in them is rewritten). What stays in ``v/<label>/``: the pages, ``objects.json``, and the
files material's scripts fetch by a name they build from the version's address
(``search/search_index.json`` and its parts, ``sitemap.xml``).

Everything here is pure except ``move_to_objects`` and ``drop_source_maps``.
"""

from __future__ import annotations

import hashlib
import html
import posixpath
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote, unquote, urlsplit

from sitegen.core.site_layout import OBJECTS_DIR, THEME_ASSETS, VERSION_TO_ROOT

NOT_FOUND_PAGE = "404.html"
"""mkdocs writes it with links from the site root: it is served at any address."""

_ATTRIBUTE = re.compile(r'(\s(?:href|src|data-[\w-]+)=")([^"]*)(")')
_DATA_BASE = re.compile(r'\sdata-base="([^"]*)"')
# material's worker script is named in the page's JSON settings, relative to the page.
_SEARCH_WORKER = re.compile(
    r'(<script id="__config" type="application/json">[^<]*?"search": ")([^"]+)(")'
)
_SOURCE_MAP_COMMENT = re.compile(
    rb"\n?(?://# sourceMappingURL=[^\n]*|/\*# sourceMappingURL=[^\n]*?\*/)\s*$"
)


@dataclass(frozen=True)
class Placement:
    """Where a version's shared files go."""

    moved: dict[str, str]
    """Version-relative path (as mkdocs wrote it) → site-root-relative object path: the
    version's ``objects.json``."""
    folders: dict[str, str]
    """Version-relative folder moved whole → its object folder (site-root-relative)."""


def folder_digest(files: dict[str, str]) -> str:
    """A folder's SHA-256: that of its listing in ``sha256sum`` form (``<sha256>  <path>``
    lines, sorted by path), so any change to a name or a byte changes it."""
    listing = "".join(f"{files[path]}  {path}\n" for path in sorted(files))
    return hashlib.sha256(listing.encode()).hexdigest()


def place_objects(files: dict[str, str], pages: dict[str, str]) -> Placement:
    """Which files of a version become objects, and their object paths. ``files``: every
    file of the version (relative path → sha256); ``pages``: its HTML pages' text."""
    named = {target for page, text in pages.items() for target in _named_files(page, text)}
    folders = {THEME_ASSETS} | {
        folder
        for page, text in pages.items()
        for value in _DATA_BASE.findall(text)
        if (folder := _resolve(page, html.unescape(value)).rstrip("/"))
        and not any(p.startswith(f"{folder}/") and p.endswith(".html") for p in files)
    }
    moved: dict[str, str] = {}
    placed_folders: dict[str, str] = {}
    for folder in sorted(folders):
        inside = {p[len(folder) + 1 :]: d for p, d in files.items() if p.startswith(f"{folder}/")}
        if not inside:
            continue
        object_folder = f"{OBJECTS_DIR}/{folder_digest(inside)}"
        placed_folders[folder] = object_folder
        moved |= {f"{folder}/{p}": f"{object_folder}/{p}" for p in inside}
    for path in sorted(named & files.keys()):
        if path not in moved and not path.endswith(".html"):
            moved[path] = f"{OBJECTS_DIR}/{files[path]}/{posixpath.basename(path)}"
    return Placement(moved, placed_folders)


def _named_files(page: str, text: str) -> Iterable[str]:
    for _, value, _ in _ATTRIBUTE.findall(text):
        if not _is_outside(value):
            yield _resolve(page, html.unescape(value))


def _is_outside(url: str) -> bool:
    """Another site, a ``data:`` or ``mailto:`` URL, a fragment, or a root-absolute URL
    (the 404 page's, the home pages' language links: ``rewrite_page`` reads those with
    the version's address)."""
    parts = urlsplit(url)
    return bool(parts.scheme or parts.netloc or not parts.path or parts.path.startswith("/"))


def _resolve(page: str, url: str) -> str:
    """The version-relative path a relative ``url`` of ``page`` names (a folder ends in
    ``/``; outside the version it starts with ``../``)."""
    path = unquote(urlsplit(url).path)
    resolved = posixpath.normpath(posixpath.join(posixpath.dirname(page), path))
    resolved = "" if resolved == "." else resolved
    return f"{resolved}/" if path.endswith("/") and resolved else resolved


def rewrite_page(page: str, text: str, placement: Placement, version_url: str) -> str:
    """``text`` of the version's page ``page`` with every reference to a moved file or
    folder pointing at its object. ``version_url``: the address of the version's root
    (``<site_url>v/<label>/``).

    Other pages' links into the version by its address (mkdocs writes the language links
    of the home pages from the host's root, and the canonical link in full) become
    relative, and the 404 page's links are normalised: with the objects, a version whose
    data did not change gets pages byte for byte those of the version before it."""
    version_path = urlsplit(version_url).path
    site_path = _site_path(version_path)
    to_root = "../" * (page.count("/") + VERSION_TO_ROOT.count("../"))

    def object_url(target: str) -> str | None:
        if target in placement.moved:
            return quote(placement.moved[target])
        folder = placement.folders.get(target.rstrip("/"))
        return f"{folder}/" if folder and target.endswith("/") else None

    def rewritten(value: str) -> str:
        url = html.unescape(value)
        if url.startswith(version_url) and page != NOT_FOUND_PAGE:
            url = version_path + url[len(version_url) :]
        parts = urlsplit(url)
        if parts.scheme or parts.netloc or not parts.path:
            return value
        suffix = url[len(parts.path) :]  # the query and fragment
        if parts.path.startswith("/"):
            if not parts.path.startswith(version_path):
                return value
            target = _resolve("index.html", parts.path[len(version_path) :])
            found = object_url(target)
            if page == NOT_FOUND_PAGE:
                root_absolute = f"{site_path}{found}" if found else _normalised(parts.path)
                return html.escape(root_absolute + suffix)
            if found:
                return html.escape(f"{to_root}{found}{suffix}")
            inside = not target.startswith(("/", "../"))
            return html.escape(_relative(page, target) + suffix) if inside else value
        found = object_url(_resolve(page, parts.path))
        return html.escape(f"{to_root}{found}{suffix}") if found else value

    text = _ATTRIBUTE.sub(lambda m: m[1] + rewritten(m[2]) + m[3], text)
    return _SEARCH_WORKER.sub(lambda m: m[1] + rewritten(m[2]) + m[3], text)


def _site_path(version_path: str) -> str:
    """The site root's URL path from a version's (``/docs/v/x/`` → ``/docs/``)."""
    return posixpath.normpath(version_path + VERSION_TO_ROOT.removesuffix("/")).rstrip("/") + "/"


def _normalised(path: str) -> str:
    """``path`` without ``.``, ``..`` and doubled slashes (the 404 page's link to the latest
    version is the version's path followed by ``/../../latest/``)."""
    trailing = "/" if path.endswith("/") else ""
    return posixpath.normpath("/" + path.lstrip("/")).rstrip("/") + trailing


def _relative(page: str, target: str) -> str:
    """A relative URL from ``page`` to the version-relative ``target``."""
    relative = posixpath.relpath(target or ".", posixpath.dirname(page) or ".")
    return f"{relative}/" if target.endswith("/") or not target else relative


def drop_source_maps(version_dir: Path) -> None:
    """Source maps are not published: the ``.map`` files go, and so do the comments that
    name them (the browser would fetch them with the developer tools open and report a
    missing file)."""
    for source_map in sorted(version_dir.rglob("*.map")):
        source_map.unlink()
    for path in sorted([*version_dir.rglob("*.js"), *version_dir.rglob("*.css")]):
        data = path.read_bytes()
        stripped = _SOURCE_MAP_COMMENT.sub(b"\n", data) if b"sourceMappingURL" in data else data
        if stripped != data:
            path.write_bytes(stripped)


def move_to_objects(version_dir: Path, site: Path, placement: Placement, version_url: str) -> None:
    """Rewrite the version's pages and move its placed files to ``site/objects/``; an
    object already there (another version's, the same bytes by its name) is kept."""
    for page in sorted(version_dir.rglob("*.html")):
        relative = page.relative_to(version_dir).as_posix()
        text = page.read_text(encoding="utf-8")
        rewritten = rewrite_page(relative, text, placement, version_url)
        if rewritten != text:
            page.write_text(rewritten, encoding="utf-8")
    for path, object_path in sorted(placement.moved.items()):
        source, target = version_dir / path, site / object_path
        if target.exists():
            source.unlink()
        else:
            target.parent.mkdir(parents=True, exist_ok=True)
            source.rename(target)
    for folder in sorted(version_dir.rglob("*"), key=lambda p: len(p.parts), reverse=True):
        if folder.is_dir() and not any(folder.iterdir()):
            folder.rmdir()
