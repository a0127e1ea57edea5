"""Checking a copy of a campaign against its ``manifest.json``: every file exactly as
signed (``sitegen verify``, C-SIGNED); ``measure`` checks the same before it appends."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from pydantic import ValidationError

from sitegen.errors import DataError, Issue, StorageError, pydantic_issues
from sitegen.records.annotations import ANNOTATIONS_FILE
from sitegen.records.layout import (
    MANIFEST_FILE,
    PLAN_FILE,
    RECORDS_FILE,
    FileDigest,
    prefix_digest,
    sha256_file,
)
from sitegen.records.models import (
    Manifest,
)

RULE = "manifest"
"""Rule id of the issues found checking a campaign against its manifest."""


@dataclass(frozen=True)
class VerifiedCampaign:
    """A campaign whose files all match its manifest."""

    directory: Path
    campaign_id: str
    plan_sha256: str
    files: int
    records: int


def verify_campaign(
    directory: Path, already_read: Mapping[str, FileDigest] | None = None
) -> VerifiedCampaign:
    """Re-hash ``directory`` against its manifest; raises ``DataError`` naming every mismatch.
    ``already_read``: digests of files (by path in the campaign) taken while a build parsed
    them, checked instead of reading those files again."""
    already_read = already_read or {}
    if not directory.is_dir():
        raise DataError([Issue(str(directory), "not a campaign directory", RULE)])
    manifest_path = directory / MANIFEST_FILE
    try:
        manifest = Manifest.model_validate_json(manifest_path.read_bytes())
    except FileNotFoundError:
        raise DataError(
            [Issue(str(manifest_path), "missing manifest; 'sitegen measure' writes it", RULE)]
        ) from None
    except OSError as exc:
        raise StorageError.from_os_error(exc, "read", manifest_path) from exc
    except ValidationError as exc:
        raise DataError(pydantic_issues(exc, str(manifest_path))) from exc

    # A copy is checked exactly: bytes a killed measure left after the signed ones count
    # as changes here (resuming signs them).
    issues = artifact_issues(directory, manifest, growing=frozenset(), already_read=already_read)
    listed = {entry.path for entry in manifest.artifacts}
    if RECORDS_FILE in already_read:
        records = already_read[RECORDS_FILE].lines
    else:
        records = _count_records(directory / RECORDS_FILE)
    plan_bytes = _read_if_present(directory / PLAN_FILE)
    if records is not None and records != manifest.record_count:
        # More lines than signed: a measure stopped between an append and its signature.
        resume = (
            "; on the host that measured it, run 'sitegen measure' with the same plan: it "
            "signs or drops the unsigned tail and measures what is missing"
            if records > manifest.record_count
            else ""
        )
        issues.append(
            Issue(
                str(directory / RECORDS_FILE),
                f"{records} records, the manifest counts {manifest.record_count}{resume}",
                RULE,
            )
        )
    plan_path = directory / PLAN_FILE
    if plan_bytes is not None:
        plan_hash = hashlib.sha256(plan_bytes).hexdigest()
        if plan_hash != manifest.plan_sha256:
            issues.append(
                Issue(
                    str(plan_path),
                    f"plan hash {plan_hash}, the manifest registers {manifest.plan_sha256}",
                    RULE,
                )
            )
    elif PLAN_FILE not in listed:
        issues.append(Issue(str(plan_path), "missing plan file", RULE))
    if issues:
        raise DataError(issues)
    return VerifiedCampaign(
        directory, manifest.campaign_id, manifest.plan_sha256, len(listed), manifest.record_count
    )


def artifact_issues(
    directory: Path,
    manifest: Manifest,
    growing: frozenset[str],
    already_read: Mapping[str, FileDigest] | None = None,
) -> list[Issue]:
    """Every listed file missing or changed and every file not listed. A file in
    ``growing`` may have grown: only its first ``size_bytes`` are checked. A file in
    ``already_read`` is checked by that digest."""
    already_read = already_read or {}
    issues: list[Issue] = []
    for entry in manifest.artifacts:
        path = directory / entry.path
        if not path.is_file():
            issues.append(Issue(str(path), "missing: listed in the manifest, not found", RULE))
            continue
        try:
            if entry.path in already_read and entry.path not in growing:
                actual, size = already_read[entry.path].sha256, already_read[entry.path].size_bytes
            elif entry.path in growing:
                prefix, size = prefix_digest(path, entry.size_bytes)
                actual = prefix.hexdigest()
            else:
                actual, size = sha256_file(path), path.stat().st_size
        except OSError as exc:
            issues.append(Issue(str(path), f"cannot read: {exc.strerror or exc}", RULE))
            continue
        if entry.path in growing and size < entry.size_bytes:
            issues.append(
                Issue(
                    str(path),
                    f"changed: {size} bytes, shorter than the {entry.size_bytes} bytes the "
                    "manifest signs",
                    RULE,
                )
            )
        elif entry.path in growing and actual != entry.sha256:
            issues.append(
                Issue(
                    str(path),
                    f"changed: sha256 of its first {entry.size_bytes} bytes is {actual}, "
                    f"the manifest lists {entry.sha256}",
                    RULE,
                )
            )
        elif actual != entry.sha256:
            issues.append(
                Issue(
                    str(path),
                    f"changed: sha256 {actual} ({size} bytes), the manifest "
                    f"lists {entry.sha256} ({entry.size_bytes} bytes)",
                    RULE,
                )
            )
    listed = {entry.path for entry in manifest.artifacts}
    for path in campaign_files(directory):
        relative = path.relative_to(directory).as_posix()
        # Annotations are written after measuring, so the manifest does not cover them.
        if relative not in listed and relative != ANNOTATIONS_FILE:
            issues.append(Issue(str(path), "extra: not listed in the manifest", RULE))
    return issues


def campaign_files(directory: Path) -> list[Path]:
    # Dot-files (the lock, temporary files) and the manifest itself are never listed.
    return [
        path
        for path in sorted(directory.rglob("*"))
        if path.is_file() and path.name != MANIFEST_FILE and not path.name.startswith(".")
    ]


def _count_records(path: Path) -> int | None:
    try:
        with path.open("rb") as handle:
            return sum(1 for line in handle if line.strip())
    except FileNotFoundError:
        return None  # reported as a missing file
    except OSError as exc:
        raise StorageError.from_os_error(exc, "read", path) from exc


def _read_if_present(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return None  # reported as a missing file
    except OSError as exc:
        raise StorageError.from_os_error(exc, "read", path) from exc
