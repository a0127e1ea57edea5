"""Reading campaigns back and checking them. Every problem is collected as an ``Issue``
naming the file, the record and the field; the build aborts once, listing them all."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import yaml
from pydantic import ValidationError

from sitegen.engine.registry import is_publishable
from sitegen.errors import ConfigError, DataError, Issue, pydantic_issues
from sitegen.plan.items import plan_items
from sitegen.plan.models import Plan
from sitegen.records.annotations import ANNOTATIONS_FILE, Annotations
from sitegen.records.models import RECORD_SCHEMA_VERSION, TrialRecord
from sitegen.records.store import PLAN_FILE, RECORDS_FILE
from sitegen.validation.campaign import Campaign
from sitegen.validation.rules import check_data


def load_campaigns(data_dir: Path) -> list[Campaign]:
    """Every campaign under ``data_dir/campaigns``; raises ``DataError`` listing all issues."""
    campaigns_dir = data_dir / "campaigns"
    directories = (
        sorted(p for p in campaigns_dir.glob("*") if p.is_dir()) if campaigns_dir.is_dir() else []
    )
    if not directories:
        raise DataError(
            [Issue(str(campaigns_dir), "no campaign found; run 'sitegen measure' first", "data")]
        )
    issues: list[Issue] = []
    campaigns = [c for d in directories if (c := read_campaign(d, issues)) is not None]
    for campaign in campaigns:
        issues.extend(check_data(campaign))
    if issues:
        raise DataError(issues)
    return campaigns


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
    records = _read_records(directory / RECORDS_FILE, plan, expected_hash, issues)
    annotations = _read_annotations(directory / ANNOTATIONS_FILE, issues)
    return Campaign(directory, plan, expected_hash, records, annotations)


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


def _read_records(
    path: Path, plan: Plan, expected_hash: str, issues: list[Issue]
) -> list[TrialRecord]:
    records: list[TrialRecord] = []
    seen: dict[str, int] = {}
    conditions = {c.id for c in plan.conditions}
    try:
        inputs = set(plan_items(plan))
    except ConfigError as exc:
        issues.append(Issue(str(path.with_name("plan.json")), str(exc), "data"))
        return records
    try:
        # Not splitlines(): answer texts may hold U+2028 or U+0085, which JSON writes raw.
        lines = path.read_text(encoding="utf-8").split("\n")
    except FileNotFoundError:
        issues.append(Issue(str(path), "missing records file", "data"))
        return records
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
        issues.extend(_check_record(record, where, expected_hash, conditions, inputs))
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
    return records


def _check_record(
    record: TrialRecord, where: str, expected_hash: str, conditions: set[str], inputs: set[str]
) -> list[Issue]:
    found = []
    engine_id = record.provenance.engine.id
    if not is_publishable(engine_id):
        found.append(
            Issue(
                f"{where} → provenance.engine.id",
                f"engine '{engine_id}' is a test engine (or unknown) and can never be published",
                "data",
            )
        )
    if record.plan_sha256 != expected_hash:
        found.append(
            Issue(f"{where} → plan_sha256", "does not match the campaign's plan.json", "data")
        )
    if record.condition_id not in conditions:
        found.append(Issue(f"{where} → condition_id", "not a condition of the plan", "data"))
    if record.input_id not in inputs:
        found.append(Issue(f"{where} → input_id", "not an input of the plan", "data"))
    if record.status == "ok" and record.metrics is None:
        found.append(Issue(f"{where} → metrics", "an ok record needs metrics", "data"))
    if record.status == "failed" and not record.failure_reason:
        found.append(Issue(f"{where} → failure_reason", "a failed record needs a reason", "data"))
    return found
