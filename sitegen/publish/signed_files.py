"""Signed lists of every published byte: what ``sitegen audit`` checks a site against.

Each version publishes ``v/<label>/files.json``: every file it serves by its path from the
site root (its pages and the files under ``v/<label>/``, every object it uses, each file of
a folder object included, and the shared assets), each with its SHA-256 and size, and the
figures each of its pages marks (id and printed text). The site's root publishes
``files.json`` over every other file but the objects (the version lists, the redirects,
the changelog and history data), rewritten by every build, with the SHA-256 of each
version's list. With a signing key each list has a detached signature beside it
(``files.json.sig``), dated by the newest record it covers, so the same data makes the
same bytes. ``sitegen audit`` checks a site against them (``audit.signed_list_findings``).
Their format is ``pages.file_list_model.SignedFiles``.
"""

from __future__ import annotations

from datetime import UTC, datetime
from html.parser import HTMLParser
from pathlib import Path

from sitegen.core.signing import SIGNATURE_SUFFIX, Signer
from sitegen.core.site_layout import OBJECTS_DIR, VERSIONS_DIR
from sitegen.pages.file_list_model import ListedFile, SignedFiles
from sitegen.pages.published_figures import FIGURE_ATTRIBUTE
from sitegen.publish.archive import sha256_bytes

FILE_LIST = "files.json"
"""A version's list (``v/<label>/files.json``) and the site root's (``files.json``)."""
LIST_FILES = (FILE_LIST, FILE_LIST + SIGNATURE_SUFFIX)
"""A list and its signature: never in a list."""


class PageMarks(HTMLParser):
    """A page's links (``href``) and its marked figures (``data-figure``) with their text."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.links: list[str] = []
        self.figures: list[tuple[str, str]] = []
        self._figure: str | None = None
        self._text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = {name: value or "" for name, value in attrs}
        if tag == "a" and values.get("href"):
            self.links.append(values["href"])
        if FIGURE_ATTRIBUTE in values:
            self._figure, self._text = values[FIGURE_ATTRIBUTE], []

    def handle_data(self, data: str) -> None:
        if self._figure is not None:
            self._text.append(data)

    def handle_endtag(self, tag: str) -> None:
        if tag == "span" and self._figure is not None:
            self.figures.append((self._figure, "".join(self._text)))
            self._figure = None


def read_marks(html: str) -> PageMarks:
    parser = PageMarks()
    parser.feed(html)
    parser.close()
    return parser


def version_list(
    site: Path,
    label: str,
    files: dict[str, str],
    objects: dict[str, str],
    shared: dict[str, bytes],
) -> SignedFiles:
    """The list of version ``label`` in the release folder ``site``: ``files`` (its files,
    path from the version's root → SHA-256), ``objects`` (each object file it uses, folder
    objects' files included, site-root path → SHA-256) and the ``shared`` assets."""
    version_dir = site / VERSIONS_DIR / label
    prefix = f"{VERSIONS_DIR}/{label}/"
    listed = {
        prefix + path: ListedFile(sha256=digest, size_bytes=(version_dir / path).stat().st_size)
        for path, digest in files.items()
    }
    listed |= {
        path: ListedFile(sha256=digest, size_bytes=(site / path).stat().st_size)
        for path, digest in objects.items()
    }
    listed |= {
        path: ListedFile(sha256=sha256_bytes(data), size_bytes=len(data))
        for path, data in shared.items()
    }
    figures = {
        path: marks
        for path in files
        if path.endswith(".html")
        and (marks := read_marks((version_dir / path).read_text(encoding="utf-8")).figures)
    }
    return SignedFiles(label=label, files=dict(sorted(listed.items())), figures=figures)


def in_root_list(path: str) -> bool:
    """Whether the root's list names the file at ``path`` (from the site root): any but
    the versions' and the objects' files, the lists and dot-files (hosts need not serve
    them)."""
    parts = path.split("/")
    return not (
        parts[0] == OBJECTS_DIR
        or (parts[0] == VERSIONS_DIR and len(parts) > 2)
        or parts[-1].startswith(".")
        or path in LIST_FILES
    )


def site_list(site: Path, newest: str, versions: dict[str, str | None]) -> SignedFiles:
    """The root's list of the release folder ``site`` (``in_root_list``)."""
    listed = {}
    for path in sorted(site.rglob("*")):
        relative = path.relative_to(site).as_posix()
        if path.is_file() and in_root_list(relative):
            data = path.read_bytes()
            listed[relative] = ListedFile(sha256=sha256_bytes(data), size_bytes=len(data))
    return SignedFiles(label=newest, files=listed, versions=versions)


def write_list(
    directory: Path, listing: SignedFiles, signer: Signer | None, data_epoch: int
) -> dict[str, str]:
    """Write ``listing`` into ``directory`` as ``files.json``, and its signature, dated
    ``data_epoch`` (Unix seconds), with a ``signer``; returns the files written (name →
    SHA-256)."""
    data = (listing.model_dump_json(indent=1) + "\n").encode()
    written = {FILE_LIST: data}
    if signer is not None:
        signed_at = datetime.fromtimestamp(data_epoch, UTC)
        written[FILE_LIST + SIGNATURE_SUFFIX] = signer.signature(data, signed_at=signed_at)
    for name, content in written.items():
        (directory / name).write_bytes(content)
    return {name: sha256_bytes(content) for name, content in written.items()}
