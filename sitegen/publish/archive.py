"""The archive: every published version stays frozen under ``v/<label>/``.

A published version is never rewritten: its hashes are verified before every build (its
files and the objects it uses, see ``objects``), re-publishing a label with identical
bytes changes nothing and with different bytes is refused. Versions are ordered by the
time of their latest record, then by label.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from markupsafe import escape

from sitegen.core.errors import ArchiveError
from sitegen.core.site_layout import (
    LATEST_ALIAS,
    OBJECTS_DIR,
    SHARED_ASSETS,
    VERSION_MANIFEST,
    VERSIONS_DIR,
    VERSIONS_FILE,
)
from sitegen.publish.objects import folder_digest
from sitegen.records.layout import sha256_file

_LABEL = re.compile(r"[0-9A-Za-z][0-9A-Za-z._-]{0,63}")
_MANIFEST_SCHEMA_VERSION = 3
"""3: ``objects`` lists the objects' paths only (each is named by its SHA-256); 2: the
objects' paths with the hash of every file; 1 (published before objects): no objects."""
_OBJECT_PATH = re.compile(rf"{OBJECTS_DIR}/([0-9a-f]{{64}})/(?:[^/]+)?")


def check_label(label: str) -> str:
    if not _LABEL.fullmatch(label) or label in (LATEST_ALIAS, VERSIONS_FILE):
        raise ArchiveError(
            f"version label '{label}' is not allowed: use letters, digits, '.', '_' and '-' "
            f"(at most 64, starting with a letter or digit), and not '{LATEST_ALIAS}' or "
            f"'{VERSIONS_FILE}'"
        )
    return label


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def hash_tree(directory: Path, hashes: FileHashes | None = None) -> dict[str, str]:
    """``relative path → sha256`` of every file below ``directory`` (manifest excluded),
    each read in blocks (a version's downloads may be larger than memory should hold)."""
    hashes = hashes or FileHashes()
    return {
        path.relative_to(directory).as_posix(): hashes.of(path)
        for path in sorted(directory.rglob("*"))
        if path.is_file() and path.name != VERSION_MANIFEST
    }


class FileHashes:
    """SHA-256 of files, each hard-linked file read once: versions share most of their
    bytes through hard links, and a build verifies every version."""

    def __init__(self) -> None:
        self._by_inode: dict[tuple[int, int], str] = {}

    def of(self, path: Path) -> str:
        status = path.stat()
        inode = (status.st_dev, status.st_ino)
        if inode not in self._by_inode:
            self._by_inode[inode] = sha256_file(path)
        return self._by_inode[inode]


@dataclass(frozen=True)
class PublishedVersion:
    """What ``v/<label>/.sitegen-version.json`` records about one version."""

    label: str
    data_epoch: int
    """Start time (Unix seconds) of the version's latest record: orders the versions."""
    figures: dict[str, Any]
    """Headline figures per campaign (see ``headline_figures``), for the changelog."""
    files: dict[str, str] = field(default_factory=dict)
    """Every file of the version directory: relative path → sha256."""
    shared: dict[str, str] = field(default_factory=dict)
    """Site-root files the version uses: path → sha256."""
    objects: dict[str, str] = field(default_factory=dict)
    """The objects the version's pages name: site-root path → sha256. A path ending in
    ``/`` is a folder object (the digest of its listing, see ``objects.folder_digest``);
    from schema 3 on each digest is the one in the object's name."""

    @property
    def sort_key(self) -> tuple[int, str]:
        return (self.data_epoch, self.label)

    def manifest_bytes(self) -> bytes:
        manifest = {
            "schema_version": _MANIFEST_SCHEMA_VERSION,
            "label": self.label,
            "data_epoch": self.data_epoch,
            "figures": self.figures,
            "files": self.files,
            "shared": self.shared,
            "objects": sorted(self.objects),
        }
        return (json.dumps(manifest, ensure_ascii=False, indent=1, sort_keys=True) + "\n").encode()

    @classmethod
    def from_manifest(cls, path: Path) -> PublishedVersion:
        try:
            raw = json.loads(path.read_bytes())
            if raw["schema_version"] not in (1, 2, _MANIFEST_SCHEMA_VERSION):
                raise ValueError(f"unknown schema_version {raw['schema_version']!r}")
            objects = _read_objects(raw["objects"]) if raw["schema_version"] > 1 else {}
            return cls(
                raw["label"],
                raw["data_epoch"],
                raw["figures"],
                raw["files"],
                raw["shared"],
                objects,
            )
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise ArchiveError(f"cannot read the version manifest {path}: {exc}") from exc


def object_digest(path: str) -> str:
    """The SHA-256 an object's path names (``objects/<sha256>/<file name>`` or, for a folder
    object, ``objects/<sha256>/``)."""
    named = _OBJECT_PATH.fullmatch(path)
    if named is None:
        raise ValueError(f"not an object path: {path!r}")
    return named[1]


def _read_objects(listed: list[str] | dict[str, str]) -> dict[str, str]:
    """A manifest's objects: schema 3 lists paths, schema 2 maps each file to its hash."""
    if isinstance(listed, dict):
        return dict(listed)
    return {path: object_digest(path) for path in listed}


def read_archive(site_dir: Path) -> list[PublishedVersion]:
    """Every version published in ``site_dir``, verified byte for byte against its
    manifest; oldest first. A version the site's list names whose directory is gone stops
    the build: a build never publishes fewer versions than the site holds."""
    versions_dir = site_dir / VERSIONS_DIR
    directories = (
        sorted(p for p in versions_dir.iterdir() if p.is_dir()) if versions_dir.is_dir() else []
    )
    missing = sorted(set(_listed_labels(site_dir, directories)) - {d.name for d in directories})
    if missing:
        raise ArchiveError(
            f"published version(s) {', '.join(missing)} listed in {site_dir / VERSIONS_FILE} "
            f"are missing from {versions_dir}; restore them from a backup before building"
        )
    published = []
    hashes = FileHashes()
    for directory in directories:
        version = PublishedVersion.from_manifest(directory / VERSION_MANIFEST)
        if version.label != directory.name:
            raise ArchiveError(
                f"{directory}: the manifest names version '{version.label}', not '{directory.name}'"
            )
        _verify(site_dir, directory, version, hashes)
        published.append(version)
    _verify_objects(site_dir, published, hashes)
    return sorted(published, key=lambda v: v.sort_key)


def _listed_labels(site_dir: Path, directories: list[Path]) -> list[str]:
    """The labels of the site's ``versions.json`` (none for a site yet to be built)."""
    listing = site_dir / VERSIONS_FILE
    if not directories and not listing.exists():
        return []
    try:
        return [entry["version"] for entry in json.loads(listing.read_bytes())]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ArchiveError(
            f"cannot read the version list {listing}: {exc}; restore it from a backup before "
            "building"
        ) from exc


def _verify(site_dir: Path, directory: Path, version: PublishedVersion, hashes: FileHashes) -> None:
    actual = hash_tree(directory, hashes)
    problems = [f"missing {p}" for p in sorted(version.files.keys() - actual.keys())]
    problems += [f"unexpected {p}" for p in sorted(actual.keys() - version.files.keys())]
    problems += [
        f"changed {p}"
        for p in sorted(version.files.keys() & actual.keys())
        if version.files[p] != actual[p]
    ]
    for path, digest in sorted(version.shared.items()):
        shared = site_dir / path
        if not shared.is_file() or sha256_bytes(shared.read_bytes()) != digest:
            problems.append(f"missing or changed shared file {path}")
    if problems:
        raise ArchiveError(
            f"published version '{version.label}' in {directory} no longer matches its manifest "
            f"({_listed(problems)}); restore it from a backup before building"
        )


def _verify_objects(site_dir: Path, versions: list[PublishedVersion], hashes: FileHashes) -> None:
    """Every object a version's manifest names, read once however many versions use it."""
    users: dict[tuple[str, str], list[str]] = {}
    for version in versions:
        for path, digest in version.objects.items():
            users.setdefault((path, digest), []).append(version.label)
    problems = []
    for (path, digest), labels in sorted(users.items()):
        stored = site_dir / path
        is_folder = path.endswith("/")
        state = "missing" if not (stored.is_dir() if is_folder else stored.is_file()) else "changed"
        actual = None if state == "missing" else _stored_digest(stored, is_folder, hashes)
        if actual != digest:
            problems.append(f"{state} object {path} (used by {', '.join(sorted(labels))})")
    if problems:
        raise ArchiveError(
            f"the objects of published versions in {site_dir} no longer match their manifests "
            f"({_listed(problems)}); restore them from a backup before building"
        )


def _stored_digest(stored: Path, is_folder: bool, hashes: FileHashes) -> str:
    # A folder object: any file added, removed or changed inside changes its digest.
    return folder_digest(hash_tree(stored, hashes)) if is_folder else hashes.of(stored)


def _listed(problems: list[str]) -> str:
    more = len(problems) - 5
    return "; ".join(problems[:5]) + (f" and {more} more" if more > 0 else "")


def link_file(source: str | Path, target: str | Path) -> None:
    """Copy a frozen file by a hard link where the filesystem allows (published files
    never change in place), by copying otherwise."""
    try:
        os.link(source, target)
    except OSError:
        shutil.copy2(source, target)


def link_tree(source: Path, target: Path) -> None:
    shutil.copytree(source, target, copy_function=link_file)


def link_identical(files: dict[Path, str], known: dict[str, Path]) -> None:
    """Make each of ``files`` (path → sha256) a hard link to the file of the same bytes in
    ``known`` (sha256 → path), so the disk holds those bytes once; where the filesystem
    cannot link, the copy stays."""
    for path, digest in sorted(files.items()):
        original = known.get(digest)
        if original is None or original == path:
            continue
        linked = path.with_name(f".{path.name}.link")
        try:
            os.link(original, linked)
        except OSError:
            continue
        os.replace(linked, path)


def versions_json(versions: list[PublishedVersion]) -> bytes:
    """mike's format, newest first; the newest carries the ``latest`` alias."""
    ordered = sorted(versions, key=lambda v: v.sort_key, reverse=True)
    entries = [
        {"version": v.label, "title": v.label, "aliases": [LATEST_ALIAS] if i == 0 else []}
        for i, v in enumerate(ordered)
    ]
    return (json.dumps(entries, ensure_ascii=False, indent=1) + "\n").encode()


REDIRECT_SCRIPT = "js/redirect.js"
"""The redirect pages' script under the shared assets: over HTTP a redirect keeps the
directory URL; from the file system it adds ``index.html`` (a folder shows a listing)."""


def redirect_page(target: str, csp: str, root: str, notice: str) -> bytes:
    """A page that sends the reader to ``target`` (a relative directory URL). ``root`` is
    the relative path to the site root; ``notice`` the page's HTML text (both languages).
    Without scripts a refresh goes to the ``index.html``, which works over HTTP and from
    files alike."""
    href = escape(target)
    return (
        "<!doctype html>\n"
        '<html><head><meta charset="utf-8">\n'
        f'<meta http-equiv="Content-Security-Policy" content="{csp}">\n'
        '<meta name="robots" content="noindex">\n'
        '<link rel="icon" href="data:,">\n'
        f'<script src="{root}{SHARED_ASSETS}/{REDIRECT_SCRIPT}" data-target="{href}"></script>\n'
        f'<noscript><meta http-equiv="refresh" content="0; url={href}index.html"></noscript>\n'
        f"<title>{href}</title></head>\n"
        f'<body><p><a href="{href}index.html">{href}</a></p>\n{notice}</body></html>\n'
    ).encode()


def write_root(
    site: Path, versions: list[PublishedVersion], csp: str, notice: str, not_found: bytes
) -> None:
    """Files outside the version directories: version lists, ``latest/``, the root
    redirect (``notice``: its text) and the 404 page (``not_found``: the newest version's,
    its links start at the site root). ``site`` already holds every version directory."""
    listing = versions_json(versions)
    (site / VERSIONS_FILE).write_bytes(listing)
    (site / VERSIONS_DIR / VERSIONS_FILE).write_bytes(listing)
    newest = max(versions, key=lambda v: v.sort_key)
    for page in sorted(newest.files):
        if not page.endswith("index.html"):
            continue
        folder = page.removesuffix("index.html")
        depth = 1 + folder.count("/")
        target = "../" * depth + f"{VERSIONS_DIR}/{newest.label}/{folder}"
        path = site / LATEST_ALIAS / page
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(redirect_page(target, csp, "../" * depth, ""))
    (site / "index.html").write_bytes(redirect_page(f"{LATEST_ALIAS}/", csp, "", notice))
    (site / "404.html").write_bytes(not_found)
