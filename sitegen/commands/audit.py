"""``sitegen audit``: check a published version's figures against its own downloads.

Reads a site (a directory or any static host over HTTP, urllib only) the way a reader
would: the version from ``versions.json``, each report's downloads through the version's
``objects.json`` map when it has one (a content-addressed archive), else at their plain
paths. Then, per report: the ``SHA256SUMS`` against the files, its signature against the
key the version publishes, the campaign rebuilt from ``records.jsonl.gz``, ``plan.json``
and ``manifest.json`` with the build's own statistics, every figure a page marks
(``data-figure``, see ``pages/published_figures.py``) compared with the recomputed text,
and every derived download (CSV, Parquet, records, plan) compared byte for byte with the
recomputed one. What cannot be recomputed is listed, never passed in silence.

Fetching is at the edges (``PublishedSite``, ``audit_site``); the comparisons are pure
(``commands.audit_checks``).
"""

from __future__ import annotations

import hashlib
import posixpath
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
from pydantic import ValidationError

from sitegen.commands.audit_checks import (
    SUMS_FILE,
    Finding,
    checksum_findings,
    figure_findings,
    linked_pages,
    load_json,
    mark_findings,
    object_name_findings,
    page_file,
    pick_version,
    recompute_report,
    report_of,
    resolve,
    sums_names,
    table_findings,
    version_labels,
)
from sitegen.core.errors import SitegenError, UsageError, one_line
from sitegen.core.price_list import PRICES_DOWNLOAD
from sitegen.core.signing import (
    PUBLIC_KEY_FILE,
    SIGNATURE_SUFFIX,
    fingerprint,
    parse_public_key,
    signature_problem,
)
from sitegen.core.site_layout import OBJECT_MAP, OBJECTS_DIR, VERSIONS_DIR, VERSIONS_FILE
from sitegen.importers.import_campaign import OWN_FILES, read_published_manifest
from sitegen.pages.downloads import make_downloads
from sitegen.pages.published_figures import report_figures
from sitegen.publish.signed_files import (
    FILE_LIST,
    LIST_FILES,
    PageMarks,
    SignedFiles,
    in_root_list,
    read_marks,
)
from sitegen.records.layout import IMPORT_FILE
from sitegen.records.record_models import PublishedManifest

DOWNLOADS = "downloads"
UNLISTED_LIMIT = 64 << 20
"""Bytes read at most of a file whose size no signed list gives (``versions.json``, the
lists themselves, the files of a version published before lists)."""
READ_BLOCK = 1 << 16
READ_TIMEOUT_S = 60.0
"""The longest wait for a server's next bytes."""
DEADLINE_S = 1800.0
"""An audit's default overall deadline, all reads together (``--deadline``)."""
RECOMPUTED_KINDS = (".csv", ".parquet", ".jsonl.gz", "plan.json", "manifest.json")
"""Downloads derived from the records and plan, hence recomputed and compared."""
NOT_RECOMPUTED = (
    "annotations (post-hoc analyses, threshold claims, curated examples; they are not in "
    "the downloads), the home, overview, comparison, changelog and history pages, charts "
    "and figures a page does not mark with data-figure"
)
"""What no figure table covers: a version's signed list hashes it, nothing recomputes it."""


@dataclass
class AuditResult:
    version: str
    key_fingerprint: str | None = None
    """The signing key the version publishes (``None``: it publishes none)."""
    pages: int = 0
    figures: int = 0
    """Marked figures compared."""
    files: int = 0
    """Downloads whose SHA-256 was checked."""
    tables: int = 0
    """Derived downloads compared with their recomputed bytes."""
    listed: int = 0
    """Files checked against a signed list (``files.json``)."""
    published_manifests: int = 0
    """Reports whose ``manifest.json`` is a ``PublishedManifest`` (made by a sitegen that
    signs a list of every file)."""
    checked: dict[str, str] = field(default_factory=dict)
    """Site-root path of each download whose SHA-256 was checked → that SHA-256."""
    hashed: set[str] = field(default_factory=set)
    imported: set[str] = field(default_factory=set)
    """The imported reports: their figures are their source tool's, never recomputed."""
    """The reports whose downloads were checked against their ``SHA256SUMS``."""
    findings: list[Finding] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    """What was not checked, and why."""


# --------------------------------------------------------------------------- the site


class PublishedSite:
    """A published site: a directory or a base URL; files by site-root-relative path.

    Every read is bounded: at most ``limit`` bytes (a listed file's signed size, else
    ``UNLISTED_LIMIT``), and all reads of one audit together end by ``deadline`` (a
    ``time.monotonic()`` value), however slowly a server sends."""

    def __init__(self, location: str, deadline: float) -> None:
        self.location = location
        self.deadline = deadline
        self.is_url = location.startswith(("http://", "https://"))
        if self.is_url:
            self.base = location if location.endswith("/") else location + "/"
        else:
            self.root = Path(location)
            if not (self.root / VERSIONS_FILE).is_file():
                raise UsageError(f"{location}: no {VERSIONS_FILE}; not a sitegen site")

    def where(self, path: str) -> str:
        """The address or file of ``path``, as messages name it."""
        if self.is_url:
            return urllib.parse.urljoin(self.base, urllib.parse.quote(path))
        return str(self.root / path)

    def read(self, path: str, limit: int | None = None) -> bytes | None:
        """The file's bytes, ``None`` when the site has no such file; ``TooLarge`` past
        ``limit`` bytes (default ``UNLISTED_LIMIT``)."""
        limit = UNLISTED_LIMIT if limit is None else limit
        path = posixpath.normpath(path)
        if path.startswith(("../", "/")) or path == "..":
            return None  # outside the site (a hostile objects.json): nothing of it is read
        if not self.is_url:
            try:
                with (self.root / path).open("rb") as handle:
                    data = handle.read(limit + 1)
            except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
                return None
            except OSError as exc:
                raise SitegenError(f"cannot read {self.root / path}: {one_line(exc)}") from exc
            return self._within(path, data, limit)
        url = self.where(path)
        try:
            with urllib.request.urlopen(url, timeout=self._remaining(url)) as response:
                data = b""
                while len(data) <= limit:
                    self._remaining(url)
                    block = response.read1(min(READ_BLOCK, limit + 1 - len(data)))
                    if not block:
                        break
                    data += block
        except urllib.error.HTTPError as exc:
            if exc.code in (403, 404, 410):
                return None
            raise SitegenError(f"cannot fetch {url}: HTTP {exc.code}") from exc
        except (urllib.error.URLError, OSError) as exc:
            raise UsageError(f"cannot fetch {url}: {one_line(exc)}") from exc
        return self._within(path, data, limit)

    def _remaining(self, url: str) -> float:
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise SitegenError(f"cannot fetch {url}: the audit's deadline passed")
        return min(left, READ_TIMEOUT_S)

    def _within(self, path: str, data: bytes, limit: int) -> bytes:
        if len(data) > limit:
            raise TooLarge(f"{self.where(path)}: more than {limit:,} bytes")
        return data


class TooLarge(SitegenError):
    """A file larger than a reader takes (its signed size, or ``UNLISTED_LIMIT``)."""


class VersionFiles:
    """One version's files by version-relative path: through its ``objects.json`` when it
    has one, else at ``v/<label>/<path>``."""

    def __init__(self, site: PublishedSite, label: str) -> None:
        self.site = site
        self.label = label
        self.prefix = f"{VERSIONS_DIR}/{label}/"
        listing = site.read(self.prefix + OBJECT_MAP)
        where = self.prefix + OBJECT_MAP
        objects = load_json(listing, where) if listing is not None else {}
        if not isinstance(objects, dict) or not all(
            isinstance(value, str) for value in objects.values()
        ):
            raise SitegenError(f"{where}: not a JSON object of paths")
        self.objects: dict[str, str] = objects
        self.paths = {stored: path for path, stored in objects.items()}

    def version_path(self, location: str) -> str | None:
        """The version's path of a site-root path (``None``: not one of its files)."""
        if location.startswith(self.prefix):
            return location[len(self.prefix) :]
        return self.paths.get(location)

    def location(self, path: str) -> str:
        """Where the site holds the version's file ``path`` (site-root-relative)."""
        return self.objects.get(path) or self.prefix + path

    def read(self, path: str) -> bytes | None:
        return self.site.read(self.location(path))


def crawl(files: VersionFiles) -> dict[str, PageMarks]:
    """Every page of the version reachable from its home pages (both languages), by
    address (``en/reports/x/``), read for its links and marked figures."""
    pages: dict[str, PageMarks] = {}
    queue = ["", "en/"]
    while queue:
        page = queue.pop()
        if page in pages:
            continue
        data = files.read(page_file(page))
        if data is None:
            continue
        pages[page] = read_marks(data.decode("utf-8", errors="replace"))
        queue += linked_pages(page, pages[page].links, files.label)
    return pages


# --------------------------------------------------------------------------- signed lists


def read_signed_list(
    site: PublishedSite, path: str, key: Ed25519PublicKey | None, result: AuditResult
) -> tuple[SignedFiles | None, bytes | None]:
    """The list at ``path`` and its bytes (``None``: the site has none), its signature
    checked against ``key`` into ``result``."""
    data = site.read(path)
    if data is None:
        return None, None
    if key is not None:
        signature = site.read(path + SIGNATURE_SUFFIX)
        problem = signature_problem(data, signature, key, FILE_LIST + SIGNATURE_SUFFIX)
        if problem:
            result.findings.append(Finding(path, problem))
    try:
        return SignedFiles.model_validate(load_json(data, site.where(path))), data
    except ValidationError as exc:
        result.findings.append(Finding(path, f"not a list of files: {one_line(exc)}"))
        return None, data


def listed_file_findings(
    site: PublishedSite, listing: SignedFiles, where: str, result: AuditResult
) -> dict[str, bytes]:
    """Fetch every file ``listing`` (at ``where``) names, each at most its signed size (a
    page: at most ``UNLISTED_LIMIT``, so that its marks are read even when it grew), and
    check its SHA-256 into ``result``; returns the pages (``.html``) read, by path."""
    pages = {}
    for path, entry in listing.files.items():
        larger = Finding(path, f"altered: larger than the {entry.size_bytes:,} bytes {where} signs")
        try:
            data = site.read(path, None if path.endswith(".html") else entry.size_bytes)
        except TooLarge:
            result.findings.append(larger)
            continue
        if data is None:
            result.findings.append(Finding(path, f"listed in {where} but not published"))
            continue
        result.listed += 1
        if len(data) > entry.size_bytes:
            result.findings.append(larger)
        elif hashlib.sha256(data).hexdigest() != entry.sha256:
            result.findings.append(
                Finding(path, f"altered: its SHA-256 is not the one {where} lists")
            )
        if path.endswith(".html"):
            pages[path] = data
    result.findings += object_name_findings(listing)
    return pages


def unlisted_findings(
    site: PublishedSite, listed: Iterable[str], folders: Iterable[str]
) -> list[Finding]:
    """In a site directory, each file under ``folders`` (site-root paths ending in ``/``;
    ``""``: the root's own files, ``in_root_list``) that no list names: a file added after
    publishing. Over HTTP nothing lists a folder: only what a list names is read."""
    if site.is_url:
        return []
    known = set(listed)
    findings = []
    for folder in folders:
        base = site.root / folder
        for path in sorted(base.rglob("*")) if base.is_dir() else []:
            relative = path.relative_to(site.root).as_posix()
            if (
                path.is_file()
                and relative not in known
                and not path.name.startswith(".")
                and path.name not in LIST_FILES
                and (folder or in_root_list(relative))
            ):
                findings.append(Finding(relative, "added: no signed list names it"))
    return findings


def signed_list_findings(
    site: PublishedSite,
    files: VersionFiles,
    labels: list[str],
    key: Ed25519PublicKey | None,
    result: AuditResult,
) -> bool:
    """Check the site's and the version's signed lists and every file they name into
    ``result``; whether the version has a list (versions published before lists have
    none)."""
    root, _ = read_signed_list(site, FILE_LIST, key, result)
    version, version_bytes = read_signed_list(site, files.prefix + FILE_LIST, key, result)
    if root is not None:
        listed_file_findings(site, root, FILE_LIST, result)
        result.findings += unlisted_findings(site, root.files, [""])
        if sorted(root.versions) != sorted(labels):
            result.findings.append(
                Finding(
                    VERSIONS_FILE,
                    f"lists {', '.join(sorted(labels))}; {FILE_LIST} signs "
                    f"{', '.join(sorted(root.versions))}",
                )
            )
        signed = root.versions.get(files.label)
        if signed is not None and (
            version_bytes is None or hashlib.sha256(version_bytes).hexdigest() != signed
        ):
            result.findings.append(
                Finding(
                    files.prefix + FILE_LIST, f"not the list {FILE_LIST} signs for this version"
                )
            )
    if version is None:
        return version_bytes is not None
    if version.label != files.label:
        result.findings.append(
            Finding(files.prefix + FILE_LIST, f"lists version {version.label}, not {files.label}")
        )
    where = files.prefix + FILE_LIST
    pages = listed_file_findings(site, version, where, result)
    folders = {
        f"{OBJECTS_DIR}/{p.split('/')[1]}/"
        for p in version.files
        if p.startswith(f"{OBJECTS_DIR}/")
    }
    result.findings += unlisted_findings(site, version.files, [files.prefix, *sorted(folders)])
    result.findings += mark_findings(files.prefix, version, pages)
    return True


# --------------------------------------------------------------------------- the audit


def audit_site(
    location: str,
    label: str | None = None,
    pinned_key: str | None = None,
    deadline_s: float | None = None,
) -> AuditResult:
    """Audit version ``label`` (default: the latest) of the site at ``location`` (a
    directory or an ``http(s)://`` address). ``pinned_key``: the fingerprint the
    publisher gave (``sha256:…``); a site signed by any other key, or by none, fails.
    ``deadline_s``: all reads together end within it (default ``DEADLINE_S``)."""
    site = PublishedSite(location, time.monotonic() + (deadline_s or DEADLINE_S))
    listing = site.read(VERSIONS_FILE)
    if listing is None:
        raise UsageError(f"{location}: no {VERSIONS_FILE}; not a sitegen site")
    labels = version_labels(listing)
    files = VersionFiles(site, pick_version(listing, label))
    if files.read("index.html") is None:
        # e.g. the site's v/ folder, which holds a copy of versions.json for the selector
        raise UsageError(
            f"{location}: version {files.label} has no pages at {files.prefix}; give the "
            f"site's root (the folder or address holding {VERSIONS_FILE} and {files.prefix})"
        )
    result = AuditResult(files.label)
    key_line = files.read(PUBLIC_KEY_FILE)
    key = None
    if key_line is not None:
        key = parse_public_key(key_line.decode("utf-8", errors="replace"), PUBLIC_KEY_FILE)
        result.key_fingerprint = fingerprint(key)
    if pinned_key is not None and result.key_fingerprint != pinned_key:
        result.findings.append(
            Finding(
                files.prefix + PUBLIC_KEY_FILE,
                f"the site is signed by key {result.key_fingerprint}, not the pinned {pinned_key}"
                if key is not None
                else f"the site publishes no signing key; --key pins {pinned_key}",
            )
        )
    has_list = signed_list_findings(site, files, labels, key, result)
    pages = crawl(files)
    result.pages = len(pages)
    slugs = sorted({slug for page in pages if (slug := report_of(page))})
    if not slugs:
        result.findings.append(Finding(files.prefix, "no report pages found"))
    figures: dict[str, dict[str, str] | None] = {}
    with tempfile.TemporaryDirectory(prefix="sitegen-audit-") as scratch:
        for slug in slugs:
            figures[slug] = audit_report(files, slug, key, Path(scratch) / slug, result)
    for slug in slugs:
        marked = sum(len(parsed.figures) for p, parsed in pages.items() if report_of(p) == slug)
        if figures[slug] is not None and not marked:
            result.findings.append(
                Finding(f"reports/{slug}/", "no page marks a figure: nothing to compare")
            )
    result.findings += link_findings(files, pages, result.checked, result.hashed)
    for page, parsed in pages.items():
        slug = report_of(page)
        if slug in result.imported:
            continue  # its source tool's figures: the signed list checks their marks
        result.figures += len(parsed.figures)
        result.findings += figure_findings(
            page, parsed.figures, figures.get(slug) if slug else None
        )
    if has_list:
        result.notes.append(f"hashed against the signed list, not recomputed: {NOT_RECOMPUTED}")
    elif result.published_manifests:
        result.findings.append(
            Finding(
                files.prefix + FILE_LIST,
                "missing: this version's reports publish the manifests of sitegen versions "
                "that sign a list of every file",
            )
        )
    else:
        result.notes.append(
            f"version {files.label} was published before versions signed a list of their "
            f"files: only its downloads and marked figures are checked, not {NOT_RECOMPUTED}"
        )
    return result


def audit_report(
    files: VersionFiles,
    slug: str,
    key: Ed25519PublicKey | None,
    scratch: Path,
    result: AuditResult,
) -> dict[str, str] | None:
    """Check one report's downloads (hashes, signature, derived tables) into ``result``;
    its recomputed figures, or ``None`` when they cannot be recomputed (said in
    ``result``)."""
    where = f"reports/{slug}/{DOWNLOADS}/"
    sums = files.read(where + SUMS_FILE)
    if files.read(where + IMPORT_FILE) is not None:
        result.imported.add(slug)
    if sums is None and slug in result.imported:
        result.notes.append(
            f"reports/{slug}: not checked (an imported report: its downloads carry no "
            f"{SUMS_FILE}, and its figures are its source tool's)"
        )
        return None
    if sums is None:
        result.findings.append(Finding(where + SUMS_FILE, "not published: nothing to check"))
        return None
    result.hashed.add(slug)
    signature = files.read(where + SUMS_FILE + SIGNATURE_SUFFIX)
    if key is not None:
        problem = signature_problem(sums, signature, key, SUMS_FILE + SIGNATURE_SUFFIX)
        if problem:
            result.findings.append(Finding(where + SUMS_FILE, problem))
    else:
        result.notes.append(
            f"{where}{SUMS_FILE}: the version publishes no signing key; the checksums are "
            "checked, not who published them"
        )
    downloads = {name: files.read(where + name) for name in sums_names(sums)}
    result.findings += checksum_findings(where, sums, downloads)
    result.files += sum(data is not None for data in downloads.values())
    own = {SUMS_FILE: sums, SUMS_FILE + SIGNATURE_SUFFIX: signature}
    result.checked |= {
        files.location(where + name): hashlib.sha256(data).hexdigest()
        for name, data in (downloads | own).items()
        if data is not None
    }
    if slug in result.imported:
        result.notes.append(
            f"reports/{slug}: its downloads checked against {SUMS_FILE}, its figures not "
            "recomputed (an imported report: they are its source tool's)"
        )
        return None
    return recomputed_figures(where, slug, downloads, scratch, result)


def recomputed_figures(
    where: str,
    slug: str,
    downloads: dict[str, bytes | None],
    scratch: Path,
    result: AuditResult,
) -> dict[str, str] | None:
    """Rebuild a report's campaign from its own downloads (``where``) and compare each
    derived download with its recomputed bytes into ``result``; the recomputed figures, or
    ``None`` when the campaign cannot be rebuilt (said in ``result``)."""
    own_files = {name: data for name in OWN_FILES if (data := downloads.get(name)) is not None}
    if len(own_files) < len(OWN_FILES):
        result.notes.append(
            f"reports/{slug}: not recomputed (its downloads are not a measured campaign's "
            f"{', '.join(OWN_FILES)})"
        )
        return None
    try:
        manifest = read_published_manifest(own_files["manifest.json"], where + "manifest.json")
        result.published_manifests += isinstance(manifest, PublishedManifest)
        prices = downloads.get(PRICES_DOWNLOAD)
        report = recompute_report(own_files, manifest.campaign_id, scratch, prices)
    except SitegenError as exc:
        result.findings.append(Finding(where, f"cannot rebuild the campaign: {exc}"))
        return None
    recomputed = {
        file.name: file
        for file in make_downloads(report, scratch / "recomputed")
        if file.name.endswith(RECOMPUTED_KINDS)
    }
    for name in sorted(set(recomputed) | {n for n in downloads if n.endswith(RECOMPUTED_KINDS)}):
        published = downloads.get(name)
        if name not in recomputed:
            result.findings.append(Finding(where + name, "published but not recomputed"))
        elif published is None:
            result.findings.append(Finding(where + name, "recomputed but not published"))
        else:
            result.tables += 1
            result.findings += table_findings(
                where + name, published, recomputed[name].read_bytes()
            )
    return report_figures(report)


def link_findings(
    files: VersionFiles, pages: dict[str, PageMarks], checked: dict[str, str], reports: set[str]
) -> list[Finding]:
    """Each download link of a page of ``reports`` that does not reach a file whose
    SHA-256 was checked: a link to another copy is fetched, and must hold those bytes. A
    download link: one to a version file under a report's ``downloads/``, or to an object
    the version's map does not list named like a checked download."""
    findings = []
    digests = set(checked.values())
    names = {posixpath.basename(path) for path in checked}
    for page, parsed in pages.items():
        if report_of(page) not in reports:
            continue
        for link in parsed.links:
            path = resolve(page, link, files.label)
            if path is None or path in checked:
                continue
            known = files.version_path(path)
            unlisted_object = known is None and path.startswith(f"{OBJECTS_DIR}/")
            if not (
                (known is not None and f"/{DOWNLOADS}/" in f"/{known}")
                or (unlisted_object and posixpath.basename(path) in names)
            ):
                continue
            data = files.site.read(path)
            if data is None or hashlib.sha256(data).hexdigest() not in digests:
                findings.append(
                    Finding(page, f"links {path}, which is not a file {SUMS_FILE} lists")
                )
            else:
                checked[path] = hashlib.sha256(data).hexdigest()
    return findings
