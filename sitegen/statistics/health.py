"""Speculation health (C-SPECHEALTH): did the declared speculation actually run? Pure.

A drafter that never loaded (memory full), or a mode the engine silently ignored,
proposes no drafts; the run then measures the engine without speculation, and its ratio
to the baseline says nothing about speculation (seed report 002: 0.6× at 96 % VRAM).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import pandas as pd

from sitegen.plan.models import Plan

HealthKind = Literal["no-drafts", "low-acceptance", "memory-headroom"]


@dataclass(frozen=True)
class HealthFinding:
    """One way a speculative condition fell outside the plan's bounds, as observed."""

    condition_id: str
    kind: HealthKind
    observed: float
    """Drafts proposed (``no-drafts``: 0), pooled acceptance (a proportion), or peak
    memory (MiB) of ``device``."""
    limit: float | None
    """The declared bound (``None`` for ``no-drafts``, which needs no declaration)."""
    trials: int
    """Usable speed trials of the condition the observation covers."""
    device: str | None = None
    """``memory-headroom``: the device over its bound."""


def speculation_health(
    plan: Plan, summary: pd.DataFrame, memory: pd.DataFrame
) -> dict[str, tuple[HealthFinding, ...]]:
    """Per speculative condition with usable speed trials: every finding (empty: healthy).

    Drafts are pooled over the condition's speed inputs. A condition whose engine reports
    no draft counts at all is not judged on drafts (nothing was observed)."""
    bounds = plan.speculation_health
    findings: dict[str, tuple[HealthFinding, ...]] = {}
    for condition in plan.conditions:
        if condition.speculative.mode == "off" or summary.empty:
            continue
        rows = summary[summary["condition_id"] == condition.id]
        if rows.empty:
            continue
        trials = int(rows["n"].sum())
        found: list[HealthFinding] = []
        counted = rows.dropna(subset=["draft_proposed"])
        if len(counted):
            proposed = int(counted["draft_proposed"].sum())
            accepted = int(counted["draft_accepted"].sum())
            if proposed == 0:
                found.append(HealthFinding(condition.id, "no-drafts", 0, None, trials))
            elif bounds.min_acceptance is not None and accepted / proposed < bounds.min_acceptance:
                found.append(
                    HealthFinding(
                        condition.id,
                        "low-acceptance",
                        accepted / proposed,
                        bounds.min_acceptance,
                        trials,
                    )
                )
        if bounds.max_device_memory_mib is not None and len(memory):
            peaks = memory[memory["condition_id"] == condition.id]
            for row in peaks.itertuples():
                if row.max_mib > bounds.max_device_memory_mib:
                    found.append(
                        HealthFinding(
                            condition.id,
                            "memory-headroom",
                            float(row.max_mib),
                            bounds.max_device_memory_mib,
                            trials,
                            device=row.device,
                        )
                    )
        findings[condition.id] = tuple(found)
    return findings
