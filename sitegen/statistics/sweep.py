"""Sweeps: conditions that vary several factors (draft length × temperature ×
quantization × concurrency …), each speculative level against its matched baseline, and
the throughput–latency trade-off of concurrency (Pareto front). Pure.

The factors are read from the conditions themselves (what differs between them), so a
grid's factor names, a hand-written list and a stored ``plan.json`` give the same sweep.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from sitegen.plan.engine_registry import location_options
from sitegen.plan.plan_models import ConditionSpec, Plan
from sitegen.statistics.row_groups import row_groups
from sitegen.statistics.speed import Comparison
from sitegen.statistics.trials import floats

FACTORS = (
    "speculative_mode",
    "draft_max",
    "temperature",
    "top_p",
    "top_k",
    "model",
    "quantization",
    "concurrency",
    "context_capacity",
    "threads",
)
"""Factors a sweep can vary, in display order; engine options follow as ``option:<key>``."""
SPECULATIVE_FACTORS = frozenset({"speculative_mode", "draft_max"})
"""The speculative level: the x axis of sweep charts, the rows of the ratio table."""


def factor_values(plan: Plan, condition: ConditionSpec) -> dict[str, Any]:
    """The value of every factor for one condition (options that only locate a server
    are no factor)."""
    sampling = plan.sampling_for(condition)
    model = plan.model_for(condition)
    values: dict[str, Any] = {
        "speculative_mode": condition.speculative.mode,
        "draft_max": condition.speculative.draft_max,
        "temperature": sampling.temperature,
        "top_p": sampling.top_p,
        "top_k": sampling.top_k,
        "model": model.name,
        "quantization": model.quantization,
        "concurrency": condition.concurrency,
        "context_capacity": condition.context_capacity,
        "threads": condition.threads,
    }
    location = location_options(plan.engine)
    for key, value in sorted(condition.engine_options.items()):
        if key not in location:
            values[f"option:{key}"] = value
    return values


def varying_factors(plan: Plan) -> list[str]:
    """The factors whose value differs between conditions, in ``FACTORS`` order."""
    table = [factor_values(plan, c) for c in plan.conditions]
    keys = list(FACTORS) + sorted({k for row in table for k in row if k.startswith("option:")})
    return [k for k in keys if len({repr(row.get(k)) for row in table}) > 1]


@dataclass(frozen=True)
class SweepCell:
    """One speculative level in one series on one input: its comparison and figures."""

    comparison: Comparison
    acceptance: float | None
    """Pooled acceptance of the treatment on this input."""
    treatment_n: int
    baseline_n: int


@dataclass(frozen=True)
class Sweep:
    """A sweep's factors, series and cells."""

    factors: list[str]
    """Varying factors (``FACTORS`` order)."""
    series_factors: list[str]
    """Varying factors other than the speculative level: each combination is a series
    (a line of a chart, a column of the ratio table)."""
    levels: list[str]
    """Speculative levels (condition label without the series), rows of the ratio table."""
    series: list[str]
    """Series keys in plan order."""
    condition_level: dict[str, str]
    condition_series: dict[str, str]
    series_values: dict[str, dict[str, Any]]
    """Each series' factor values (for its label in either language)."""
    cells: dict[tuple[str, str, str], SweepCell]
    """(input, level, series) → cell (speculative conditions only)."""
    has_draft_lengths: bool
    """Draft length varies: charts against draft length are drawn."""
    has_concurrency: bool
    """Concurrency varies: the Pareto chart is drawn."""


def speculative_level(values: dict[str, Any]) -> str:
    """``off``, ``ngram-simple ≤4``, ``draft-mtp ≤3``: the row of a sweep table."""
    if values["speculative_mode"] == "off":
        return "off"
    return f"{values['speculative_mode']} ≤{values['draft_max']}"


def series_key(values: dict[str, Any], series_factors: list[str]) -> str:
    """A stable key of a series, e.g. ``temperature=0.7|concurrency=2`` (``all`` when the
    sweep varies only the speculative level)."""
    return "|".join(f"{k}={values[k]}" for k in series_factors) or "all"


def make_sweep(plan: Plan, summary: pd.DataFrame, comparisons: list[Comparison]) -> Sweep | None:
    """The sweep of a plan with several speculative levels or several concurrency levels;
    ``None`` for a plain off/on comparison."""
    factors = varying_factors(plan)
    speculative = [c for c in plan.conditions if c.speculative.mode != "off"]
    has_draft = "draft_max" in factors
    has_concurrency = "concurrency" in factors
    if len(speculative) < 2 and not has_concurrency:
        return None
    series_factors = [f for f in factors if f not in SPECULATIVE_FACTORS]
    values = {c.id: factor_values(plan, c) for c in plan.conditions}
    condition_level = {cid: speculative_level(v) for cid, v in values.items()}
    condition_series = {cid: series_key(v, series_factors) for cid, v in values.items()}
    series = list(dict.fromkeys(condition_series.values()))
    series_values = {
        condition_series[cid]: {k: v[k] for k in series_factors} for cid, v in values.items()
    }
    levels = list(dict.fromkeys(condition_level[c.id] for c in speculative))
    rows = {(r["condition_id"], r["input_id"]): r for r in summary.to_dict("records")}
    cells = {}
    for comparison in comparisons:
        treatment = comparison.treatment
        row = rows.get((treatment, comparison.input_id), {})
        base = rows.get((comparison.baseline, comparison.input_id), {})
        cells[(comparison.input_id, condition_level[treatment], condition_series[treatment])] = (
            SweepCell(
                comparison,
                row.get("acceptance"),
                int(row.get("n", 0)),
                int(base.get("n", 0)),
            )
        )
    return Sweep(
        factors=factors,
        series_factors=series_factors,
        levels=levels,
        series=series,
        condition_level=condition_level,
        condition_series=condition_series,
        series_values=series_values,
        cells=cells,
        has_draft_lengths=has_draft,
        has_concurrency=has_concurrency,
    )


def pareto_front(points: pd.DataFrame) -> pd.Series:
    """Per row (``aggregate_tps``, ``per_user_tps``): whether no other row is at least as
    good in both and better in one (higher is better on both axes)."""
    aggregate = floats(points["aggregate_tps"])
    per_user = floats(points["per_user_tps"])
    return pd.Series(_front(aggregate, per_user), index=points.index)


def _front(aggregate: np.ndarray, per_user: np.ndarray) -> np.ndarray:
    """``pareto_front`` of the points (``aggregate[i]``, ``per_user[i]``): every pair
    compared at once (row: the point judged, column: the one that may dominate it)."""
    at_least = (aggregate[None, :] >= aggregate[:, None]) & (per_user[None, :] >= per_user[:, None])
    better = (aggregate[None, :] > aggregate[:, None]) | (per_user[None, :] > per_user[:, None])
    return np.logical_not((at_least & better).any(axis=1))


def pareto_points(summary: pd.DataFrame) -> pd.DataFrame:
    """Per condition × input: per-user rate (median generation rate of one request) and
    aggregate rate (median over rounds of all tokens ÷ round time), with the Pareto front
    marked per input."""
    columns = ["condition_id", "input_id", "concurrency", "per_user_tps", "aggregate_tps"]
    if summary.empty:
        return pd.DataFrame(columns=[*columns, "front"])
    points = summary.rename(
        columns={"gen_tps_median": "per_user_tps", "aggregate_tps_median": "aggregate_tps"}
    )[columns].dropna(subset=["per_user_tps", "aggregate_tps"])
    aggregate = floats(points["aggregate_tps"])
    per_user = floats(points["per_user_tps"])
    front = np.zeros(len(points), dtype=bool)
    for _, at in row_groups(points, ("input_id",)):
        front[at] = _front(aggregate[at], per_user[at])
    points["front"] = front
    return points.reset_index(drop=True)
