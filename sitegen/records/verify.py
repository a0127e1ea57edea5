"""``sitegen verify``: check a campaign directory (e.g. copied from a GPU host) against its
``manifest.json``.

Every file is hashed again; a changed, missing or unlisted file, a different record
count and a plan whose hash is not the manifest's are all reported at once.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

from pydantic import ValidationError

from sitegen.errors import DataError, Issue, pydantic_issues
from sitegen.records.annotations import ANNOTATIONS_FILE
from sitegen.records.models import Manifest
from sitegen.records.store import MANIFEST_FILE, PLAN_FILE, RECORDS_FILE, sha256_file

RULE = "manifest"


@dataclass(frozen=True)
class VerifiedCampaign:
    """A campaign whose files all match its manifest."""

    directory: Path
    campaign_id: str
    plan_sha256: str
    files: int
    records: int


def verify_campaign(directory: Path) -> VerifiedCampaign:
    """Re-hash ``directory`` against its manifest; raises ``DataError`` naming every mismatch."""
    if not directory.is_dir():
        raise DataError([Issue(str(directory), "not a campaign directory", RULE)])
    manifest_path = directory / MANIFEST_FILE
    try:
        manifest = Manifest.model_validate_json(manifest_path.read_bytes())
    except FileNotFoundError:
        raise DataError(
            [Issue(str(manifest_path), "missing manifest; 'sitegen measure' writes it", RULE)]
        ) from None
    except ValidationError as exc:
        raise DataError(pydantic_issues(exc, str(manifest_path))) from exc

    issues: list[Issue] = []
    listed = {entry.path: entry for entry in manifest.artifacts}
    for entry in manifest.artifacts:
        path = directory / entry.path
        if not path.is_file():
            issues.append(Issue(str(path), "missing: listed in the manifest, not found", RULE))
            continue
        actual = sha256_file(path)
        if actual != entry.sha256:
            issues.append(
                Issue(
                    str(path),
                    f"changed: sha256 {actual} ({path.stat().st_size} bytes), the manifest "
                    f"lists {entry.sha256} ({entry.size_bytes} bytes)",
                    RULE,
                )
            )
    for path in _campaign_files(directory):
        relative = path.relative_to(directory).as_posix()
        # Annotations are written after measuring, so the manifest does not cover them.
        if relative not in listed and relative != ANNOTATIONS_FILE:
            issues.append(Issue(str(path), "extra: not listed in the manifest", RULE))

    records = _count_records(directory / RECORDS_FILE)
    if records is not None and records != manifest.record_count:
        issues.append(
            Issue(
                str(directory / RECORDS_FILE),
                f"{records} records, the manifest counts {manifest.record_count}",
                RULE,
            )
        )
    plan_path = directory / PLAN_FILE
    if plan_path.is_file():
        plan_hash = hashlib.sha256(plan_path.read_bytes()).hexdigest()
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


def _campaign_files(directory: Path) -> list[Path]:
    # The files ``CampaignStore.write_manifest`` lists: all but the manifest and dot-files.
    return [
        path
        for path in sorted(directory.rglob("*"))
        if path.is_file() and path.name != MANIFEST_FILE and not path.name.startswith(".")
    ]


def _count_records(path: Path) -> int | None:
    if not path.is_file():
        return None  # reported as a missing file
    with path.open("rb") as handle:
        return sum(1 for line in handle if line.strip())
