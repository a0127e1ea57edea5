"""A campaign directory, written and read back in one place.

Layout: ``plan.json`` (canonical bytes; its SHA-256 is the plan hash), append-only
``records.jsonl``, ``annotations.yaml`` (declarations added after measuring),
``logs/engine.log`` and ``manifest.json`` (every file with its SHA-256).

Records are appended and flushed one by one (fsync), so a killed ``measure`` loses at
most the line being written; reopening truncates that torn tail and the runner redoes
just that trial. Reading collects every problem as an ``Issue`` naming the file, the
record and the field; ``verify_campaign`` re-hashes a copy against its manifest.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path

import yaml
from pydantic import ValidationError

from sitegen.errors import DataError, Issue, pydantic_issues
from sitegen.plan.io import campaign_id, canonical_plan_json, plan_sha256
from sitegen.plan.models import Plan
from sitegen.records.annotations import ANNOTATIONS_FILE, Annotations
from sitegen.records.models import (
    RECORD_SCHEMA_VERSION,
    ArtifactEntry,
    Manifest,
    TrialRecord,
)

PLAN_FILE = "plan.json"
RECORDS_FILE = "records.jsonl"
MANIFEST_FILE = "manifest.json"
CAMPAIGNS_DIR = "campaigns"
"""Folder of ``data/`` holding one directory per campaign."""


def write_atomic(path: Path, data: bytes) -> None:
    """Write via a temporary file and rename, so readers never see half a file."""
    temporary = path.with_name(f".{path.name}.tmp")
    with temporary.open("wb") as handle:
        handle.write(data)
        handle.flush()
        os.fsync(handle.fileno())
    temporary.replace(path)


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while block := handle.read(1 << 20):
            digest.update(block)
    return digest.hexdigest()


class CampaignStore:
    """Append-only storage of one campaign."""

    def __init__(self, directory: Path, plan: Plan) -> None:
        self.directory = directory
        self.plan = plan
        self.campaign_id = campaign_id(plan)
        self.plan_sha256 = plan_sha256(plan)
        self.records_path = directory / RECORDS_FILE

    @classmethod
    def open(cls, campaigns_dir: Path, plan: Plan) -> CampaignStore:
        """Create the campaign directory, or reopen it to resume."""
        store = cls(campaigns_dir / campaign_id(plan), plan)
        store.directory.mkdir(parents=True, exist_ok=True)
        plan_path = store.directory / PLAN_FILE
        if not plan_path.exists():
            # Canonical bytes: the file's own SHA-256 equals the plan hash.
            write_atomic(plan_path, canonical_plan_json(plan).encode("utf-8"))
        store._truncate_torn_tail()
        return store

    def _truncate_torn_tail(self) -> None:
        if not self.records_path.exists():
            self.records_path.touch()
            return
        data = self.records_path.read_bytes()
        if data and not data.endswith(b"\n"):
            with self.records_path.open("r+b") as handle:
                handle.truncate(data.rfind(b"\n") + 1)

    def completed_trial_ids(self) -> set[str]:
        """Trials that already have a record (measured, warm-up or failed)."""
        with self.records_path.open(encoding="utf-8") as handle:
            return {json.loads(line)["trial_id"] for line in handle if line.strip()}

    def append(self, record: TrialRecord) -> None:
        line = record.model_dump_json() + "\n"
        with self.records_path.open("a", encoding="utf-8") as handle:
            handle.write(line)
            handle.flush()
            os.fsync(handle.fileno())

    def write_manifest(self) -> Manifest:
        """Hash every file of the campaign (except the manifest) into ``manifest.json``."""
        artifacts = [
            ArtifactEntry(
                path=path.relative_to(self.directory).as_posix(),
                sha256=sha256_file(path),
                size_bytes=path.stat().st_size,
            )
            for path in sorted(self.directory.rglob("*"))
            if path.is_file() and path.name != MANIFEST_FILE and not path.name.startswith(".")
        ]
        with self.records_path.open(encoding="utf-8") as handle:
            count = sum(1 for line in handle if line.strip())
        manifest = Manifest(
            campaign_id=self.campaign_id,
            plan_sha256=self.plan_sha256,
            record_count=count,
            artifacts=artifacts,
        )
        write_atomic(
            self.directory / MANIFEST_FILE, (manifest.model_dump_json(indent=2) + "\n").encode()
        )
        return manifest


# --- reading ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Campaign:
    """A campaign read back from disk: its plan and its records in file order."""

    directory: Path
    plan: Plan
    plan_sha256: str
    records: list[TrialRecord]
    annotations: Annotations
    """Caveat metadata (defaults when the campaign has no annotations file)."""
    record_lines: tuple[int, ...] = ()
    """Line number in ``records.jsonl`` of each record (parallel to ``records``)."""

    @property
    def campaign_id(self) -> str:
        return self.directory.name

    @property
    def records_path(self) -> Path:
        return self.directory / RECORDS_FILE

    @property
    def annotations_path(self) -> Path:
        return self.directory / ANNOTATIONS_FILE

    def record_location(self, index: int) -> str:
        """``<records.jsonl>:<line> (trial <id>)`` of the record at ``index``."""
        line = self.record_lines[index] if index < len(self.record_lines) else "?"
        return f"{self.records_path}:{line} (trial {self.records[index].trial_id})"


def campaign_directories(data_dir: Path) -> list[Path]:
    """The campaign directories under ``data_dir/campaigns``, sorted by name."""
    campaigns_dir = data_dir / CAMPAIGNS_DIR
    if not campaigns_dir.is_dir():
        return []
    return sorted(p for p in campaigns_dir.iterdir() if p.is_dir())


def read_campaigns(data_dir: Path) -> tuple[list[Campaign], list[Issue]]:
    """Every campaign under ``data_dir/campaigns`` with every problem found reading them."""
    directories = campaign_directories(data_dir)
    if not directories:
        where = data_dir / CAMPAIGNS_DIR
        return [], [Issue(str(where), "no campaign found; run 'sitegen measure' first", "data")]
    issues: list[Issue] = []
    campaigns = [c for d in directories if (c := read_campaign(d, issues)) is not None]
    return campaigns, issues


def read_campaign(directory: Path, issues: list[Issue]) -> Campaign | None:
    """Read one campaign, appending every problem to ``issues``."""
    plan_path = directory / PLAN_FILE
    try:
        plan_bytes = plan_path.read_bytes()
        plan = Plan.model_validate_json(plan_bytes)
    except FileNotFoundError:
        issues.append(Issue(str(plan_path), "missing plan file", "data"))
        return None
    except ValidationError as exc:
        issues.extend(pydantic_issues(exc, str(plan_path)))
        return None
    # The registered plan is the file's bytes: its hash stays valid when the plan model
    # later gains optional fields.
    expected_hash = hashlib.sha256(plan_bytes).hexdigest()
    if not directory.name.endswith(f"-{expected_hash[:12]}"):
        issues.append(
            Issue(
                str(directory),
                f"directory name does not end with the plan hash '{expected_hash[:12]}'; "
                "the plan was changed after the campaign started",
                "data",
            )
        )
    records, lines = _read_records(directory / RECORDS_FILE, issues)
    annotations = _read_annotations(directory / ANNOTATIONS_FILE, issues)
    return Campaign(directory, plan, expected_hash, records, annotations, tuple(lines))


def _read_annotations(path: Path, issues: list[Issue]) -> Annotations:
    if not path.exists():
        return Annotations()
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        return Annotations.model_validate(raw)
    except yaml.YAMLError as exc:
        issues.append(Issue(str(path), f"not valid YAML: {exc}", "data"))
    except ValidationError as exc:
        issues.extend(pydantic_issues(exc, str(path)))
    return Annotations()


def _read_records(path: Path, issues: list[Issue]) -> tuple[list[TrialRecord], list[int]]:
    """Every valid record of ``records.jsonl`` with its line number; each invalid line and
    each duplicate trial becomes an issue."""
    records: list[TrialRecord] = []
    numbers: list[int] = []
    seen: dict[str, int] = {}
    try:
        # Not splitlines(): answer texts may hold U+2028 or U+0085, which JSON writes raw.
        lines = path.read_text(encoding="utf-8").split("\n")
    except FileNotFoundError:
        issues.append(Issue(str(path), "missing records file", "data"))
        return records, numbers
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        where = f"{path}:{number}"
        try:
            raw = json.loads(line)
        except json.JSONDecodeError as exc:
            issues.append(Issue(where, f"not valid JSON ({exc.msg} at column {exc.colno})"))
            continue
        if not isinstance(raw, dict):
            issues.append(Issue(where, "a record must be a JSON object"))
            continue
        trial = raw.get("trial_id", "?")
        where = f"{path}:{number} (trial {trial})"
        version = raw.get("schema_version")
        if version != RECORD_SCHEMA_VERSION:
            issues.append(
                Issue(
                    f"{where} → schema_version",
                    f"unknown record schema_version {version!r}; "
                    f"this sitegen reads version {RECORD_SCHEMA_VERSION}",
                )
            )
            continue
        try:
            record = TrialRecord.model_validate(raw)
        except ValidationError as exc:
            issues.extend(pydantic_issues(exc, where))
            continue
        if record.trial_id in seen:
            issues.append(
                Issue(
                    f"{where} → trial_id",
                    f"duplicate of line {seen[record.trial_id]}; a trial is recorded once",
                    "data",
                )
            )
        seen.setdefault(record.trial_id, number)
        records.append(record)
        numbers.append(number)
    return records, numbers


# --- verifying against the manifest ------------------------------------------------------

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
