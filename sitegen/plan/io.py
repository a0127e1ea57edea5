"""Reading plans and hashing them."""

from __future__ import annotations

import hashlib
import json
import tomllib
from pathlib import Path

import yaml
from pydantic import ValidationError

from sitegen.errors import ConfigError, pydantic_issues
from sitegen.plan.models import Plan


def load_plan(path: Path) -> Plan:
    """Read a plan from YAML, TOML or JSON; every problem is reported with its field."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"cannot read plan {path}: {exc.strerror}") from exc
    try:
        if path.suffix == ".toml":
            raw = tomllib.loads(text)
        elif path.suffix == ".json":
            raw = json.loads(text)
        else:
            raw = yaml.safe_load(text)
    except (ValueError, yaml.YAMLError) as exc:
        raise ConfigError(f"{path}: not valid {path.suffix.lstrip('.') or 'YAML'}: {exc}") from exc
    try:
        return Plan.model_validate(raw)
    except ValidationError as exc:
        problems = "\n  ".join(str(issue) for issue in pydantic_issues(exc, str(path)))
        raise ConfigError(f"invalid plan:\n  {problems}") from exc


def canonical_plan_json(plan: Plan) -> str:
    """The plan as canonical JSON (sorted keys, no whitespace): what is hashed."""
    return json.dumps(
        plan.model_dump(mode="json"), sort_keys=True, ensure_ascii=False, separators=(",", ":")
    )


def plan_sha256(plan: Plan) -> str:
    """SHA-256 of the canonical plan JSON, stamped into every record (pre-registration)."""
    return hashlib.sha256(canonical_plan_json(plan).encode("utf-8")).hexdigest()


def campaign_id(plan: Plan) -> str:
    """``<plan name>-<12 hex>``: a changed plan starts a new campaign."""
    return f"{plan.name}-{plan_sha256(plan)[:12]}"
