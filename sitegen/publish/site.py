"""Publishing one rendered version: it goes into a staging site next to the archived
versions carried over from the current site, and the staging site is switched in (see
``release``) only when it is complete."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Literal

from markupsafe import escape

from sitegen.core.errors import ArchiveError, StorageError
from sitegen.core.project import packaged_theme
from sitegen.core.signing import Signer
from sitegen.core.site_layout import (
    OBJECT_MAP,
    SHARED_ASSETS,
    SITEMAP_ARCHIVE,
    VERSION_MANIFEST,
    VERSIONS_DIR,
)
from sitegen.core.site_settings import read_site_settings
from sitegen.pages.mkdocs import CONTENT_SECURITY_POLICY, VersionBuild, render_version, version_url
from sitegen.publish.archive import (
    PublishedVersion,
    hash_tree,
    link_file,
    link_identical,
    link_tree,
    object_digest,
    sha256_bytes,
    write_root,
)
from sitegen.publish.changelog import changelog_files
from sitegen.publish.history import history_files
from sitegen.publish.marker import BuildMarker, write_build_marker
from sitegen.publish.objects import (
    NOT_FOUND_PAGE,
    drop_source_maps,
    move_to_objects,
    place_objects,
)
from sitegen.publish.release import SiteHome, kill_point, new_staging, switch
from sitegen.publish.signed_files import FILE_LIST, site_list, version_list, write_list

Outcome = Literal["published", "unchanged"]


def shared_assets() -> dict[str, bytes]:
    """Files of the packaged ``theme/assets/shared/`` by their path from the site root."""
    shared_dir = packaged_theme() / "assets" / "shared"
    return {
        f"{SHARED_ASSETS}/{path.relative_to(shared_dir).as_posix()}": path.read_bytes()
        for path in sorted(shared_dir.rglob("*"))
        if path.is_file()
    }


def publish_version(
    build: VersionBuild,
    project_dir: Path,
    home: SiteHome,
    published: list[PublishedVersion],
    marker: BuildMarker,
    signer: Signer | None = None,
) -> Outcome:
    """Render ``build`` and publish it next to the ``published`` versions of the site,
    with the version's and the site's signed lists of files (``signed_files``; ``signer``:
    the publisher's key, ``None``: unsigned lists).

    Runs inside ``exclusive_site`` (which gives ``home``). An already published label
    with the same bytes is left as it is; with other bytes it is refused before anything
    is written.
    """
    staging = new_staging(home)
    try:
        return _publish_in(staging, build, project_dir, home, published, marker, signer)
    except OSError as exc:  # a full disk while writing: one line, the site untouched
        raise StorageError.from_os_error(exc, "write the new version under", staging) from exc
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _publish_in(
    staging: Path,
    build: VersionBuild,
    project_dir: Path,
    home: SiteHome,
    published: list[PublishedVersion],
    marker: BuildMarker,
    signer: Signer | None,
) -> Outcome:
    """``publish_version``'s work inside its staging folder."""
    site = staging / "site"
    version_dir = site / VERSIONS_DIR / build.label
    render_version(build, project_dir, staging, version_dir)
    kill_point("after-render")
    objects, object_files = _store_objects(
        version_dir, site, _version_url(project_dir, build.label)
    )
    not_found = _take_site_level_files(version_dir)
    shared = shared_assets()
    files = hash_tree(version_dir)
    listing = version_list(site, build.label, files, object_files, shared)
    files |= write_list(version_dir, listing, signer, build.data_epoch)
    version = PublishedVersion(
        build.label,
        build.data_epoch,
        build.figures,
        files,
        {path: sha256_bytes(data) for path, data in shared.items()},
        objects,
    )
    existing = next((v for v in published if v.label == build.label), None)
    if existing is not None:
        _require_identical(existing, version)
        write_build_marker(home.site, marker)
        return "unchanged"
    (version_dir / VERSION_MANIFEST).write_bytes(version.manifest_bytes())
    _carry_over(home.site, site, published, version)
    _write_shared(home.site, site, published, shared)
    newest = max([*published, version], key=lambda v: v.sort_key)
    if newest is not version:
        not_found = (home.site / NOT_FOUND_PAGE).read_bytes()
    write_root(site, [*published, version], CONTENT_SECURITY_POLICY, root_notice(build), not_found)
    every_version = [*published, version]
    for path, data in (
        history_files(every_version, build.catalogs)
        | changelog_files(every_version, build.catalogs)
    ).items():
        (site / path).parent.mkdir(parents=True, exist_ok=True)
        (site / path).write_bytes(data)
    lists = {v.label: v.files.get(FILE_LIST) for v in every_version}
    write_list(site, site_list(site, newest.label, lists), signer, newest.data_epoch)
    write_build_marker(site, marker)
    kill_point("after-release-written")
    switch(home, site)
    return "published"


def _version_url(project_dir: Path, label: str) -> str:
    """The address of the version's root, as mkdocs rendered its pages for it."""
    return version_url(read_site_settings(project_dir), label)


def _store_objects(
    version_dir: Path, site: Path, version_url: str
) -> tuple[dict[str, str], dict[str, str]]:
    """Move the rendered version's shared files to ``site/objects/`` (see ``objects``),
    write its ``objects.json``; returns its objects (site-root path → sha256) and every
    file they hold (the same, with each file of a folder object instead of the folder)."""
    drop_source_maps(version_dir)
    rendered = hash_tree(version_dir)
    pages = {
        path: (version_dir / path).read_text(encoding="utf-8")
        for path in rendered
        if path.endswith(".html")
    }
    placement = place_objects(rendered, pages)
    move_to_objects(version_dir, site, placement, version_url)
    object_map = json.dumps(placement.moved, indent=1, sort_keys=True) + "\n"
    (version_dir / OBJECT_MAP).write_text(object_map, encoding="utf-8")
    in_folders = tuple(f"{folder}/" for folder in placement.folders.values())
    files = {
        placement.moved[path]: rendered[path]
        for path in placement.moved
        if not placement.moved[path].startswith(in_folders)
    }
    every_file = {stored: rendered[path] for path, stored in placement.moved.items()}
    return files | {folder: object_digest(folder) for folder in in_folders}, every_file


def _take_site_level_files(version_dir: Path) -> bytes:
    """Take out of the version what only the site root serves; returns its 404 page (a
    static host serves the site root's ``404.html``, the newest version's, for every
    missing address). ``sitemap.xml.gz`` goes: only search engines read it, and archived
    versions are not for indexing (the version selector reads ``sitemap.xml``)."""
    (version_dir / SITEMAP_ARCHIVE).unlink(missing_ok=True)
    page = version_dir / NOT_FOUND_PAGE
    not_found = page.read_bytes()
    page.unlink()
    return not_found


def _carry_over(
    site_dir: Path, site: Path, published: list[PublishedVersion], version: PublishedVersion
) -> None:
    """Every published version and the objects it uses into the new release (hard links),
    then the new version's files that are byte for byte files already published become
    links to them: the release holds those bytes once."""
    known: dict[str, Path] = {}
    for other in published:
        link_tree(site_dir / VERSIONS_DIR / other.label, site / VERSIONS_DIR / other.label)
        for path, digest in other.objects.items():
            target = site / path
            if path.endswith("/"):
                if not target.exists():
                    link_tree(site_dir / path, target)
                continue
            if not target.exists():
                target.parent.mkdir(parents=True, exist_ok=True)
                link_file(site_dir / path, target)
            known.setdefault(digest, target)
        for path, digest in other.files.items():
            known.setdefault(digest, site / VERSIONS_DIR / other.label / path)
    new_files = {site / p: digest for p, digest in version.objects.items() if not p.endswith("/")}
    version_dir = site / VERSIONS_DIR / version.label
    new_files |= {version_dir / path: digest for path, digest in version.files.items()}
    link_identical(new_files, known)


def root_notice(build: VersionBuild) -> str:
    """The root page's text in every language: where it goes, and how to open the site
    from files (a version's pages open from their ``index.html``; search and the version
    menu need a web server, e.g. ``sitegen serve``)."""
    return "".join(
        f'<p lang="{lang}">{escape(catalog.t("root.opening"))} {escape(catalog.t("root.files"))}</p>\n'
        for lang, catalog in build.catalogs.items()
    )


def _require_identical(existing: PublishedVersion, version: PublishedVersion) -> None:
    differing: list[str | tuple[str, str]] = sorted(
        path
        for path in existing.files.keys() | version.files.keys()
        if existing.files.get(path) != version.files.get(path)
    )
    differing += sorted(set(existing.shared.items()) ^ set(version.shared.items()))
    differing += sorted(set(existing.objects.items()) ^ set(version.objects.items()))
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
