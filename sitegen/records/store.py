"""A campaign on disk: ``plan.json``, append-only ``records.jsonl``, ``manifest.json``.

Records are appended and flushed one by one (fsync), so a killed ``measure``
loses at most the line being written; reopening truncates that torn tail and the
runner redoes just that trial.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

from sitegen.plan.io import campaign_id, canonical_plan_json, plan_sha256
from sitegen.plan.models import Plan
from sitegen.records.models import ArtifactEntry, Manifest, TrialRecord

PLAN_FILE = "plan.json"
RECORDS_FILE = "records.jsonl"
MANIFEST_FILE = "manifest.json"


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
