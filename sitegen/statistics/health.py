"""Speculation health (C-SPECHEALTH): did the declared speculation actually run? Pure.

A drafter that never loaded (memory full), or a mode the engine silently ignored,
proposes no drafts; the run then measures the engine without speculation, and its ratio
to the baseline says nothing about speculation.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, NamedTuple

import pandas as pd

from sitegen.plan.plan_models import Plan

HealthKind = Literal["no-counts", "no-drafts", "low-acceptance", "memory-headroom"]


@dataclass(frozen=True)
class HealthFinding:
    """One way a speculative condition fell outside the plan's bounds, as observed."""

    condition_id: str
    kind: HealthKind
    observed: float
    """Drafts proposed (``no-drafts``: 0; ``no-counts``: 0, none reported), pooled
    acceptance on the input (a proportion), or peak memory (MiB) of ``device``."""
    limit: float | None
    """The declared bound (``None`` for ``no-counts`` and ``no-drafts``, which need no
    declaration)."""
    trials: int
    """Usable speed trials the observation covers (of the input; for ``memory-headroom``
    of every speed input)."""
    device: str | None = None
    """``memory-headroom``: the device over its bound."""
    input_id: str | None = None
    """The speed input observed; ``None`` for ``memory-headroom``, measured over every
    speed input of the condition."""


def speculation_health(
    plan: Plan, summary: pd.DataFrame, memory: pd.DataFrame
) -> dict[str, tuple[HealthFinding, ...]]:
    """Per speculative condition with usable speed trials: every finding (empty: healthy).

    Drafts are judged per input, never pooled over inputs (an input without drafts is not
    made healthy by another's). An input whose engine reported no draft counts is
    ``no-counts``: speculation is not shown to have run, so no ratio is its effect."""
    bounds = plan.speculation_health
    # Each table read once, its rows sorted by condition: a selection per condition costs
    # more than a small campaign's findings.
    rows_of: dict[str, list[_InputRow]] = {}
    if not summary.empty:
        columns = (summary[name].tolist() for name in _InputRow._fields)
        for row in map(_InputRow._make, zip(*columns, strict=True)):
            rows_of.setdefault(row.condition_id, []).append(row)
    peaks_of: dict[str, list[tuple[str, float]]] = {}
    if bounds.max_device_memory_mib is not None and len(memory):
        peaks = zip(memory["condition_id"], memory["device"], memory["max_mib"], strict=True)
        for condition_id, device, peak in peaks:
            peaks_of.setdefault(condition_id, []).append((device, peak))
    findings: dict[str, tuple[HealthFinding, ...]] = {}
    for condition in plan.conditions:
        rows = rows_of.get(condition.id)
        if condition.speculative.mode == "off" or not rows:
            continue
        found = [
            finding
            for row in rows
            if (finding := _draft_finding(condition.id, row, bounds.min_acceptance)) is not None
        ]
        for device, peak in peaks_of.get(condition.id, ()):
            if bounds.max_device_memory_mib is not None and peak > bounds.max_device_memory_mib:
                found.append(
                    HealthFinding(
                        condition.id,
                        "memory-headroom",
                        float(peak),
                        bounds.max_device_memory_mib,
                        sum(int(row.n) for row in rows),
                        device=device,
                    )
                )
        findings[condition.id] = tuple(found)
    return findings


class _InputRow(NamedTuple):
    """What the findings read of a summary row (one condition on one input)."""

    condition_id: str
    input_id: str
    n: int
    draft_proposed: float | None
    draft_accepted: float
    """Missing (NaN or ``None``) only where ``draft_proposed`` is."""


def _draft_finding(
    condition_id: str, row: _InputRow, min_acceptance: float | None
) -> HealthFinding | None:
    """What one input's summary row shows about the drafts (``None``: they ran)."""
    trials = int(row.n)
    if row.draft_proposed is None or pd.isna(row.draft_proposed):
        return HealthFinding(condition_id, "no-counts", 0, None, trials, input_id=row.input_id)
    if row.draft_proposed == 0:
        return HealthFinding(condition_id, "no-drafts", 0, None, trials, input_id=row.input_id)
    acceptance = row.draft_accepted / row.draft_proposed
    if min_acceptance is not None and acceptance < min_acceptance:
        return HealthFinding(
            condition_id,
            "low-acceptance",
            acceptance,
            min_acceptance,
            trials,
            input_id=row.input_id,
        )
    return None
