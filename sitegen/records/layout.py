"""Where a campaign's files live under ``data/``, and how they are written and hashed.

Light on purpose: the quick up-to-date check of a build needs these names without
importing the record models.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path

from sitegen.core.errors import UsageError

CAMPAIGNS_DIR = "campaigns"
"""Folder of ``data/`` holding one directory per campaign."""
REGISTRY_FILE = "registry.jsonl"
"""In ``data/``: every campaign ``measure`` registered, one JSON line each
(``records.registrations``); the site lists those no longer in ``campaigns/`` as discarded."""
PLAN_FILE = "plan.json"
IMPORT_FILE = "import.json"
"""An imported campaign's registration (``sitegen import``), in place of a plan."""
SOURCES_DIR = "sources"
"""Folder of an imported campaign holding each imported file byte for byte."""
RECORDS_FILE = "records.jsonl"
MANIFEST_FILE = "manifest.json"
PUBLISHED_FILE = "published.json"
"""In a campaign re-imported from a report's downloads: the report's ``manifest.json``
(``PublishedManifest``), which ties its published (redacted) plan to the registered one."""
ENGINE_LOG = "logs/engine.log"
TELEMETRY_LOG = "logs/telemetry.jsonl"
"""Raw GPU telemetry samples, one JSON line per request or round (``sitegen.measure``)."""
LOG_FILES = (ENGINE_LOG, TELEMETRY_LOG)
"""Logs written while measuring: they only grow, and each signature covers them."""
LOCK_FILE = ".lock"
GROWING_FILES = frozenset({RECORDS_FILE, *LOG_FILES})
"""Files that only grow while measuring: on resume their signed bytes must be unchanged,
and bytes after them are what a killed ``measure`` left."""


def check_skipped(data_dir: Path, skip: Collection[str]) -> None:
    """Raise ``UsageError`` when ``skip`` (``--skip``) names no campaign directory of
    ``data_dir``."""
    if not skip:
        return
    campaigns_dir = data_dir / CAMPAIGNS_DIR
    present = set()
    if campaigns_dir.is_dir():
        present = {path.name for path in campaigns_dir.iterdir() if path.is_dir()}
    unknown = sorted(set(skip) - present)
    if unknown:
        raise UsageError(
            f"--skip {', '.join(unknown)}: no campaign directory of that name in {campaigns_dir}"
        )


def scratch_path(path: Path) -> Path:
    """The temporary file ``write_atomic`` writes ``path`` through (a dot-file: never
    listed in a manifest)."""
    return path.with_name(f".{path.name}.tmp")


def write_atomic(path: Path, data: bytes) -> None:
    """Write via a temporary file and rename, so readers never see half a file."""
    temporary = scratch_path(path)
    with temporary.open("wb") as handle:
        handle.write(data)
        handle.flush()
        os.fsync(handle.fileno())
    temporary.replace(path)


@dataclass(frozen=True)
class FileDigest:
    """A file's SHA-256, size and non-blank lines, from one read."""

    sha256: str
    size_bytes: int
    lines: int


def sha256_file(path: Path) -> str:
    """SHA-256 of a file, read in blocks (records files grow to hundreds of MB)."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while block := handle.read(1 << 20):
            digest.update(block)
    return digest.hexdigest()


def prefix_digest(path: Path, size: int) -> tuple[hashlib._Hash, int]:
    """The SHA-256 of the first ``size`` bytes of ``path``, and the file's whole size."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        left = size
        while left and (block := handle.read(min(left, 1 << 20))):
            digest.update(block)
            left -= len(block)
        return digest, os.fstat(handle.fileno()).st_size


def campaign_directories(data_dir: Path) -> list[Path]:
    """The campaign directories under ``data_dir/campaigns``, sorted by name."""
    campaigns_dir = data_dir / CAMPAIGNS_DIR
    if not campaigns_dir.is_dir():
        return []
    return sorted(p for p in campaigns_dir.iterdir() if p.is_dir())
