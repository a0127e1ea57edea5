"""The archive: every published version stays frozen under ``v/<label>/``.

Layout of the site directory::

    index.html                      redirect to latest/
    404.html                        the newest version's (its links start at the site root)
    versions.json                   the version list in mike's format
    v/versions.json                 the same list where mkdocs-material's selector reads it
                                    (``../versions.json`` from a version's root)
    latest/…                        one redirect page per page of the newest version
    assets/…                        files shared by every version (plotly.js)
    v/<label>/…                     one complete bilingual site per version
    v/<label>/.sitegen-version.json that version's file hashes and headline figures
    .sitegen-build.json             digest of the last build's inputs (up-to-date check)

A published version is never rewritten: its hashes are verified before every build,
re-publishing a label with identical bytes changes nothing and with different bytes is
refused. Versions are ordered by the time of their latest record, then by label.
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

import pandas as pd
from markupsafe import Markup, escape

from sitegen.errors import SitegenError
from sitegen.pages.directives import html_environment
from sitegen.pages.i18n import LANGUAGES, Catalog
from sitegen.pages.report import Report
from sitegen.records.store import RECORDS_FILE, write_atomic

VERSIONS_DIR = "v"
LATEST_ALIAS = "latest"
VERSION_MANIFEST = ".sitegen-version.json"
BUILD_MARKER = ".sitegen-build.json"
VERSIONS_FILE = "versions.json"
CHANGELOG_PAGE = "changelog"
SHARED_ASSETS = "assets"
"""Site-root folder of the files shared by every version."""

_LABEL = re.compile(r"[0-9A-Za-z][0-9A-Za-z._-]{0,63}")
_MANIFEST_SCHEMA_VERSION = 1
_FIGURE_DIGITS = 2
"""Medians are compared as displayed (two decimals): smaller moves are rounding noise."""


class ArchiveError(SitegenError):
    """A published version would change, or the archive on disk is not as published."""


def check_label(label: str) -> str:
    if not _LABEL.fullmatch(label) or label == LATEST_ALIAS:
        raise ArchiveError(
            f"version label '{label}' is not allowed: use letters, digits, '.', '_' and '-' "
            f"(at most 64, starting with a letter or digit), and not '{LATEST_ALIAS}'"
        )
    return label


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def hash_tree(directory: Path) -> dict[str, str]:
    """``relative path → sha256`` of every file below ``directory`` (manifest excluded)."""
    return {
        path.relative_to(directory).as_posix(): sha256_bytes(path.read_bytes())
        for path in sorted(directory.rglob("*"))
        if path.is_file() and path.name != VERSION_MANIFEST
    }


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
        }
        return (json.dumps(manifest, ensure_ascii=False, indent=1, sort_keys=True) + "\n").encode()

    @classmethod
    def from_manifest(cls, path: Path) -> PublishedVersion:
        try:
            raw = json.loads(path.read_bytes())
            if raw["schema_version"] != _MANIFEST_SCHEMA_VERSION:
                raise ValueError(f"unknown schema_version {raw['schema_version']!r}")
            return cls(raw["label"], raw["data_epoch"], raw["figures"], raw["files"], raw["shared"])
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise ArchiveError(f"cannot read the version manifest {path}: {exc}") from exc


def read_archive(site_dir: Path) -> list[PublishedVersion]:
    """Every version published in ``site_dir``, verified byte for byte against its
    manifest; oldest first."""
    versions_dir = site_dir / VERSIONS_DIR
    if not versions_dir.is_dir():
        return []
    published = []
    for directory in sorted(p for p in versions_dir.iterdir() if p.is_dir()):
        version = PublishedVersion.from_manifest(directory / VERSION_MANIFEST)
        if version.label != directory.name:
            raise ArchiveError(
                f"{directory}: the manifest names version '{version.label}', not '{directory.name}'"
            )
        _verify(site_dir, directory, version)
        published.append(version)
    return sorted(published, key=lambda v: v.sort_key)


def _verify(site_dir: Path, directory: Path, version: PublishedVersion) -> None:
    actual = hash_tree(directory)
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
        listed = "; ".join(problems[:5]) + (
            f" and {len(problems) - 5} more" if len(problems) > 5 else ""
        )
        raise ArchiveError(
            f"published version '{version.label}' in {directory} no longer matches its manifest "
            f"({listed}); restore it from a backup before building"
        )


def headline_figures(reports: list[Report]) -> dict[str, Any]:
    """Per campaign: titles, record count and digest, and the median generation rate per
    condition × speed input (the figures the changelog compares)."""
    figures = {}
    for report in reports:
        speed_inputs = {spec.id for spec in report.plan.inputs}
        medians = {
            f"{row.condition_id}|{row.input_id}": round(float(row.gen_tps_median), 4)
            for row in report.summary.itertuples()
            if row.input_id in speed_inputs and pd.notna(row.gen_tps_median)
        }
        records = report.campaign.directory / RECORDS_FILE
        figures[report.slug] = {
            "title": dict(report.plan.title),
            "records": len(report.campaign.records),
            "records_sha256": sha256_bytes(records.read_bytes()),
            "gen_tps_median": dict(sorted(medians.items())),
        }
    return figures


def predecessor(
    published: list[PublishedVersion], label: str, data_epoch: int
) -> PublishedVersion | None:
    """The version just before ``label`` in archive order (``label`` itself excluded)."""
    earlier = [v for v in published if v.label != label and v.sort_key < (data_epoch, label)]
    return earlier[-1] if earlier else None


@dataclass(frozen=True)
class MovedFigure:
    campaign: str
    condition_id: str
    input_id: str
    before: float
    after: float

    @property
    def change_percent(self) -> float:
        return (self.after - self.before) / self.before * 100 if self.before else float("nan")


@dataclass(frozen=True)
class Changes:
    """What changed between a version and its predecessor."""

    previous_label: str | None
    added: list[str]
    removed: list[str]
    records: list[tuple[str, int, int]]
    """(campaign, records before, records after) for campaigns whose records changed."""
    moved: list[MovedFigure]
    titles: dict[str, dict[str, str]]

    @property
    def empty(self) -> bool:
        return not (self.added or self.removed or self.records or self.moved)


def compare(previous: PublishedVersion | None, figures: dict[str, Any]) -> Changes:
    before = previous.figures if previous else {}
    titles = {slug: f["title"] for slug, f in {**before, **figures}.items()}
    common = sorted(before.keys() & figures.keys())
    moved = []
    for slug in common:
        old, new = before[slug]["gen_tps_median"], figures[slug]["gen_tps_median"]
        for key in sorted(old.keys() & new.keys()):
            if round(old[key], _FIGURE_DIGITS) != round(new[key], _FIGURE_DIGITS):
                condition_id, input_id = key.split("|", 1)
                moved.append(MovedFigure(slug, condition_id, input_id, old[key], new[key]))
    return Changes(
        previous_label=previous.label if previous else None,
        added=sorted(figures.keys() - before.keys()) if previous else [],
        removed=sorted(before.keys() - figures.keys()),
        records=[
            (slug, before[slug]["records"], figures[slug]["records"])
            for slug in common
            if before[slug]["records_sha256"] != figures[slug]["records_sha256"]
        ],
        moved=moved,
        titles=titles,
    )


def changelog_docs(
    changes: Changes, label: str, catalogs: dict[str, Catalog], project_dir: Path
) -> dict[str, bytes]:
    """The changelog page of one version in both languages (mkdocs docs paths → bytes)."""
    env = html_environment(str(project_dir / "theme" / "overrides" / "sitegen"))
    docs = {}
    for lang in LANGUAGES:
        catalog = catalogs[lang]
        body = env.get_template("changelog.html").render(
            t=catalog.t, lang=lang, label=label, changes=changes
        )
        # One raw-HTML block for Markdown: no blank lines inside it (split at "\n" only:
        # splitlines() would also split titles at U+2028 and other separators).
        block = Markup("\n".join(line for line in body.split("\n") if line.strip()))
        title = escape(catalog.t("changelog.title"))
        name = f"{CHANGELOG_PAGE}.md" if lang == LANGUAGES[0] else f"{CHANGELOG_PAGE}.{lang}.md"
        docs[name] = f"# {title}\n\n{block}\n".encode()
    return docs


def link_file(source: str | Path, target: str | Path) -> None:
    """Copy a frozen file by a hard link where the filesystem allows (published files
    never change in place), by copying otherwise."""
    try:
        os.link(source, target)
    except OSError:
        shutil.copy2(source, target)


def link_tree(source: Path, target: Path) -> None:
    shutil.copytree(source, target, copy_function=link_file)


def versions_json(versions: list[PublishedVersion]) -> bytes:
    """mike's format, newest first; the newest carries the ``latest`` alias."""
    ordered = sorted(versions, key=lambda v: v.sort_key, reverse=True)
    entries = [
        {"version": v.label, "title": v.label, "aliases": [LATEST_ALIAS] if i == 0 else []}
        for i, v in enumerate(ordered)
    ]
    return (json.dumps(entries, ensure_ascii=False, indent=1) + "\n").encode()


def redirect_page(target: str, csp: str) -> bytes:
    """A page that sends the reader to ``target`` (relative URL) without any script."""
    href = escape(target)
    return (
        "<!doctype html>\n"
        '<html><head><meta charset="utf-8">\n'
        f'<meta http-equiv="Content-Security-Policy" content="{csp}">\n'
        '<meta name="robots" content="noindex">\n'
        f'<meta http-equiv="refresh" content="0; url={href}">\n'
        f'<title>{href}</title></head>\n<body><p><a href="{href}">{href}</a></p></body></html>\n'
    ).encode()


def write_root(site: Path, versions: list[PublishedVersion], csp: str) -> None:
    """Files outside the version directories: version lists, ``latest/`` and the root
    redirect. ``site`` already holds every version directory."""
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
        path.write_bytes(redirect_page(target, csp))
    (site / "index.html").write_bytes(redirect_page(f"{LATEST_ALIAS}/", csp))
    # mkdocs writes 404.html with links from the site root, so it serves the whole site.
    (site / "404.html").write_bytes((site / VERSIONS_DIR / newest.label / "404.html").read_bytes())


def write_build_marker(site: Path, inputs_sha256: str, label: str, counts: dict[str, int]) -> None:
    marker = {"inputs_sha256": inputs_sha256, "version": label, **counts}
    write_atomic(site / BUILD_MARKER, (json.dumps(marker, sort_keys=True) + "\n").encode())


def read_build_marker(site_dir: Path) -> dict[str, Any] | None:
    """The last build's marker, if it is whole and the version it names is in place."""
    try:
        marker = json.loads((site_dir / BUILD_MARKER).read_bytes())
        label = str(marker["version"])
        if not {"inputs_sha256", "campaigns", "records"} <= marker.keys():
            return None
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None
    if not (site_dir / VERSIONS_DIR / label / VERSION_MANIFEST).is_file():
        return None
    return marker
