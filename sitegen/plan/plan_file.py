"""Reading plans and hashing them."""

from __future__ import annotations

import hashlib
import json
import re
import tomllib
from pathlib import Path
from typing import TYPE_CHECKING

import yaml
from pydantic import ValidationError

from sitegen.core.errors import ConfigError, one_line, pydantic_issues
from sitegen.core.yaml_text import MAX_DEPTH, check_shape, read_text
from sitegen.plan.engine_registry import validate_engine_options
from sitegen.plan.grid import GRID_KEY, expand_grid, invalid_plan
from sitegen.plan.plan_models import (
    DispersionSpec,
    ExamplesSpec,
    Plan,
    SpeculationHealthSpec,
    TelemetrySpec,
)

if TYPE_CHECKING:
    _SafeLoader = yaml.SafeLoader
else:  # libyaml's parser where PyYAML has it
    _SafeLoader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _PlanYamlLoader(_SafeLoader):
    """YAML with only ``true``/``false`` as booleans (as in YAML 1.2), so ``mode: off`` and a
    label ``off:`` stay strings instead of turning into ``False``; parsed by libyaml where
    PyYAML has it, like every other YAML sitegen reads (``yaml_text``)."""


_PlanYamlLoader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag != "tag:yaml.org,2002:bool"]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}
_PlanYamlLoader.add_implicit_resolver(
    "tag:yaml.org,2002:bool",
    re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"),
    list("tTfF"),
)


def read_config_file(path: Path, kind: str) -> object:
    """The data of a YAML, TOML or JSON file (by suffix; YAML otherwise); ``kind`` names
    the file in the error (``plan``, ``fleet plan``)."""
    text = read_text(path, kind)  # bounded UTF-8, or one line naming the file
    try:
        if path.suffix == ".toml":
            raw = tomllib.loads(text)
        elif path.suffix == ".json":
            raw = json.loads(text)
        else:
            raw = yaml.load(text, Loader=_PlanYamlLoader)  # a SafeLoader subclass
    except RecursionError:
        raise ConfigError(
            f"{kind} {path}: nested too deep to read (sitegen's limit: {MAX_DEPTH} levels)"
        ) from None
    except (ValueError, yaml.YAMLError) as exc:
        raise ConfigError(
            f"{path}: not valid {path.suffix.lstrip('.') or 'YAML'}: {one_line(exc)}"
        ) from exc
    return check_shape(raw, f"{kind} {path}")


def load_plan(path: Path) -> Plan:
    """Read a plan from YAML, TOML or JSON, expanding its ``grid`` section; every problem
    is reported with its file and field."""
    raw = read_config_file(path, "plan")
    if isinstance(raw, dict) and GRID_KEY in raw:
        raw = expand_grid(raw, str(path))
    try:
        plan = Plan.model_validate(raw)
    except ValidationError as exc:
        raise invalid_plan(pydantic_issues(exc, str(path))) from exc
    try:
        validate_engine_options(plan)
    except ConfigError as exc:
        raise ConfigError(f"{path}: {exc}") from exc
    return plan


def canonical_plan_json(plan: Plan) -> str:
    """The plan as canonical JSON (sorted keys, no whitespace): what is hashed."""
    data = plan.model_dump(mode="json")
    # Fields added since plans were first hashed are left out while unset, so a plan that
    # does not use them keeps its hash, and so its campaign, across sitegen versions.
    _drop_if_unset(data, "round_order")
    _drop_if_unset(data["model"], "remote_unhashable", unset=False)
    _drop_if_unset(data, "load")
    _drop_if_unset(data, "slo")
    _drop_if_unset(data, "headline")
    _drop_if_unset(data, "series")
    for key, default in (
        ("dispersion", DispersionSpec()),
        ("telemetry", TelemetrySpec()),
        ("speculation_health", SpeculationHealthSpec()),
        ("examples", ExamplesSpec()),
    ):
        _drop_if_unset(data, key, unset=default.model_dump(mode="json"))
    for condition in data["conditions"]:
        _drop_if_unset(condition, "sampling")
        _drop_if_unset(condition, "model")
        _drop_if_unset(condition, "concurrency", unset=1)
        _drop_if_unset(condition, "label")
    return json.dumps(data, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def _drop_if_unset(data: dict[str, object], key: str, unset: object = None) -> None:
    # ``==``, not ``is``: False and 0 are different unset values, as are equal dicts.
    if data[key] == unset and type(data[key]) is type(unset):
        del data[key]


def plan_sha256(plan: Plan) -> str:
    """SHA-256 of the canonical plan JSON, stamped into every record (pre-registration)."""
    return hashlib.sha256(canonical_plan_json(plan).encode("utf-8")).hexdigest()


def campaign_id(plan: Plan, nonce: str | None = None) -> str:
    """``<plan name>-<nonce>-<12 hex of the plan hash>``: a changed plan starts a new
    campaign, and so does a plan registered again (its campaign deleted and measured anew),
    by its new ``nonce`` (``records.registrations``). Without a nonce, ``<plan name>-<12 hex>``:
    the id of campaigns registered before nonces were, which keep it."""
    if nonce is None:
        return f"{plan.name}-{plan_sha256(plan)[:12]}"
    return f"{plan.name}-{nonce}-{plan_sha256(plan)[:12]}"
