"""Factor grids: a plan file's ``grid:`` section, expanded into conditions and inputs.

::

    grid:
      conditions:
        common: {threads: 8}                  # fields every generated condition shares
        vary:                                 # crossed in this order; the first varies slowest
          speculative: [{mode: "off"}, {mode: draft-mtp, draft_max: 3}]
          context_capacity: [262144, 1048576]
      inputs:
        common: {text: "…material and question…"}
        vary:
          target_prompt_tokens: [8193, 32768]
          max_output_tokens: [1024, 8192]

gives the conditions ``off-cap256k``, ``off-cap1m``, ``mtp3-cap256k``, ``mtp3-cap1m`` and
the inputs ``in8k-out1k``, ``in8k-out8k``, ``in32k-out1k``, ``in32k-out8k``.

A factor named after a field lists that field's values (readable labels are made for
the fields in ``CONDITION_LABELS`` / ``INPUT_LABELS``) or maps labels to values. Any
other factor name maps labels to sets of fields that change together (e.g. a server's
``base_url`` with its speculative mode). Mappings merge key by key over ``common``.

Expansion happens when the plan is loaded: the stored ``plan.json`` is the expanded
plan, so its hash pre-registers every generated condition and input.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, Field, ValidationError, field_validator

from sitegen.core.errors import ConfigError, Issue, error_message, pydantic_issues
from sitegen.core.strict_model import StrictModel
from sitegen.plan.plan_models import ConditionSpec, InputSpec, SamplingOverride, SpeculativeSpec

GRID_KEY = "grid"
LABEL_PATTERN = re.compile(r"^[a-z0-9][a-z0-9_.-]*$")
# Stands in for the id while a combination is validated; the real id needs the values.
_PENDING_ID = "pending"


class GridSection(StrictModel):
    """Conditions or inputs generated as the product of factors."""

    common: dict[str, Any] = {}
    """Fields every generated entry shares (``id`` is generated, never given)."""
    vary: dict[str, list[Any] | dict[str, Any]] = Field(min_length=1)
    """Factors, crossed in the order written (the first varies slowest): a field name with
    a list of values or a mapping label → value, or another name with a mapping
    label → set of fields."""

    @field_validator("vary", mode="before")
    @classmethod
    def _levels_listed_or_mapped(cls, vary: Any) -> Any:
        # One clear message instead of one per branch of the union.
        for name, levels in vary.items() if isinstance(vary, dict) else ():
            if not isinstance(levels, list | dict):
                raise ValueError(
                    f"factor '{name}' needs a list of values or a mapping label → value"
                )
        return vary


class PlanGrid(StrictModel):
    """The ``grid:`` section of a plan file."""

    conditions: GridSection | None = None
    """Conditions to generate, appended after the listed ``conditions``."""
    inputs: GridSection | None = None
    """Speed inputs to generate, appended after the listed ``inputs``."""


def tokens_label(count: int) -> str:
    """``1048576`` → ``1m``, ``262144`` → ``256k``, ``8193`` → ``8k``, ``512`` → ``512``."""
    if count >= 1 << 20 and count % (1 << 20) == 0:
        return f"{count >> 20}m"
    if count >= 1 << 10:
        return f"{round(count / 1024)}k"
    return str(count)


def speculative_label(spec: SpeculativeSpec) -> str:
    """``off``, ``mtp3`` (MTP heads), ``draft3`` or ``ngram-simple8``: mode and draft length."""
    if spec.mode == "off":
        return "off"
    name = {"draft-mtp": "mtp"}.get(spec.mode, spec.mode)
    return f"{name}{spec.draft_max}"


def sampling_label(sampling: SamplingOverride | None) -> str:
    """``t0.7``, ``t1p0.95k40``: the condition's own settings (``plan-sampling`` if none)."""
    if sampling is None:
        return "plan-sampling"
    parts = [
        f"{prefix}{value:g}"
        for prefix, value in (
            ("t", sampling.temperature),
            ("p", sampling.top_p),
            ("k", sampling.top_k),
        )
        if value is not None
    ]
    return "".join(parts) or "plan-sampling"


CONDITION_LABELS: dict[str, Callable[[Any], str]] = {
    "speculative": speculative_label,
    "context_capacity": lambda capacity: f"cap{tokens_label(capacity)}",
    "threads": lambda threads: f"th{threads}" if threads else "th-default",
    "sampling": sampling_label,
    "concurrency": lambda users: f"c{users}",
}
"""Fields of a condition whose values name themselves in generated ids."""

INPUT_LABELS: dict[str, Callable[[Any], str]] = {
    "target_prompt_tokens": lambda target: f"in{tokens_label(target)}" if target else "in-asis",
    "max_output_tokens": lambda cap: f"out{tokens_label(cap)}",
}
"""Fields of an input whose values name themselves in generated ids."""


@dataclass(frozen=True)
class _Section:
    name: str
    model: type[BaseModel]
    labels: dict[str, Callable[[Any], str]]


_SECTIONS = (
    _Section("conditions", ConditionSpec, CONDITION_LABELS),
    _Section("inputs", InputSpec, INPUT_LABELS),
)


@dataclass(frozen=True)
class _Level:
    """One level of a factor: the fields it sets and its label (``None``: from the value)."""

    factor: str
    key: str
    fields: dict[str, Any]
    label: str | None


def expand_grid(raw: dict[str, Any], where: str) -> dict[str, Any]:
    """The plan data with ``grid`` replaced by the conditions and inputs it generates.

    ``where`` names the file in error messages; every problem found is reported at once.
    """
    data = {key: value for key, value in raw.items() if key != GRID_KEY}
    try:
        grid = PlanGrid.model_validate(raw[GRID_KEY])
    except ValidationError as exc:
        raise invalid_plan(pydantic_issues(exc, f"{where} → {GRID_KEY}")) from exc
    issues: list[Issue] = []
    for section in _SECTIONS:
        spec = getattr(grid, section.name)
        if spec is None:
            continue
        listed = data.get(section.name) or []
        if not isinstance(listed, list):
            issues.append(Issue(f"{where} → {section.name}", "must be a list"))
            continue
        location = f"{where} → {GRID_KEY}.{section.name}"
        data[section.name] = [*listed, *_expand_section(section, spec, location, issues)]
    if issues:
        raise invalid_plan(issues)
    return data


def invalid_plan(issues: list[Issue]) -> ConfigError:
    """The error that lists every problem of a plan file."""
    problems = "\n  ".join(str(issue) for issue in issues)
    return ConfigError(f"invalid plan:\n  {problems}")


def _expand_section(
    section: _Section, spec: GridSection, where: str, issues: list[Issue]
) -> list[dict[str, Any]]:
    found_before = len(issues)
    fields = set(section.model.model_fields) - {"id"}
    if "id" in spec.common:
        issues.append(Issue(f"{where}.common.id", "ids are generated from the factor levels"))
    unknown = sorted(set(spec.common) - fields - {"id"})
    if unknown:
        issues.append(Issue(f"{where}.common", f"unknown field(s) {', '.join(unknown)}"))
    factors = [
        _levels(section, name, levels, f"{where}.vary.{name}", issues)
        for name, levels in spec.vary.items()
    ]
    if len(issues) > found_before:
        return []

    generated: dict[str, dict[str, Any]] = {}
    origin: dict[str, str] = {}
    reported: set[tuple[str, str]] = set()
    for combination in itertools.product(*factors):
        chosen = " × ".join(f"{level.factor}.{level.key}" for level in combination)
        merged = spec.common
        for level in combination:
            merged = _merged(merged, level.fields)
        try:
            entry = section.model.model_validate({**merged, "id": _PENDING_ID})
        except ValidationError as exc:
            for error in exc.errors():
                field = ".".join(str(part) for part in error["loc"]) or "(entry)"
                # The same mistake shows in many combinations: report it once.
                message = error_message(error)
                if (field, message) not in reported:
                    reported.add((field, message))
                    issues.append(Issue(f"{where} [{chosen}] → {field}", message))
            continue
        entry_id = "-".join(
            level.label or section.labels[level.factor](getattr(entry, level.factor))
            for level in combination
        )
        if entry_id in generated:
            issues.append(
                Issue(
                    where,
                    f"[{chosen}] and [{origin[entry_id]}] both generate the id '{entry_id}'; "
                    "give the factor's levels as a mapping label → value",
                )
            )
            continue
        generated[entry_id] = {"id": entry_id, **merged}
        origin[entry_id] = chosen
    return list(generated.values())


def _levels(
    section: _Section,
    name: str,
    levels: list[Any] | dict[str, Any],
    where: str,
    issues: list[Issue],
) -> list[_Level]:
    if not levels:
        issues.append(Issue(where, "a factor needs at least one level"))
        return []
    fields = set(section.model.model_fields) - {"id"}
    if name == "id":
        issues.append(Issue(where, "ids are generated from the factor levels"))
        return []
    if name in fields:
        if isinstance(levels, dict):
            return [
                _Level(
                    name, label, {name: value}, _checked_label(label, f"{where}.{label}", issues)
                )
                for label, value in levels.items()
            ]
        if name not in section.labels:
            issues.append(
                Issue(
                    where,
                    f"values of '{name}' do not name themselves; give them as a mapping "
                    "label → value",
                )
            )
            return []
        return [_Level(name, str(index), {name: value}, None) for index, value in enumerate(levels)]
    if not isinstance(levels, dict):
        issues.append(
            Issue(
                where,
                f"'{name}' is not a field of {section.name} ({', '.join(sorted(fields))}); "
                "a factor named otherwise maps labels to sets of fields",
            )
        )
        return []
    result = []
    for label, level_fields in levels.items():
        location = f"{where}.{label}"
        if not isinstance(level_fields, dict):
            issues.append(Issue(location, "must be a mapping of fields"))
            continue
        unknown = sorted(set(level_fields) - fields)
        if unknown:
            issues.append(Issue(location, f"unknown field(s) {', '.join(unknown)}"))
            continue
        result.append(_Level(name, label, level_fields, _checked_label(label, location, issues)))
    return result


def _checked_label(label: str, where: str, issues: list[Issue]) -> str:
    if not LABEL_PATTERN.match(label):
        issues.append(
            Issue(where, f"label '{label}' must be lower-case letters, digits, '.', '_' or '-'")
        )
    return label


def _merged(base: dict[str, Any], override: dict[str, Any]) -> dict[str, Any]:
    """``override`` over ``base``; mappings merge key by key."""
    result = dict(base)
    for key, value in override.items():
        if isinstance(value, dict) and isinstance(result.get(key), dict):
            result[key] = _merged(result[key], value)
        else:
            result[key] = value
    return result
