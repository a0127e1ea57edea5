"""A campaign as read back from disk."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from sitegen.plan.models import Plan
from sitegen.records.annotations import Annotations
from sitegen.records.models import TrialRecord


@dataclass(frozen=True)
class Campaign:
    """A validated campaign: its plan and its records in file order."""

    directory: Path
    plan: Plan
    plan_sha256: str
    records: list[TrialRecord]
    annotations: Annotations
    """Caveat metadata (defaults when the campaign has no annotations file)."""

    @property
    def campaign_id(self) -> str:
        return self.directory.name
