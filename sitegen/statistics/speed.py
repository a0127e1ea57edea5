"""Speed statistics: pure functions from trial tables to summaries (SPEC §4.5)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import pandas as pd

from sitegen.engine.registry import location_options
from sitegen.plan.models import ConditionSpec, Plan
from sitegen.records.models import TrialRecord
from sitegen.statistics.trials import enters_statistics, usable

SPEED_METRICS = (
    "gen_tps",
    "native_tps",
    "ttft_s",
    "t_first_answer_s",
    "e2e_s",
    "prompt_processing_s",
    "t_first_visible_s",
    "t_natural_finish_s",
    "reasoning_tokens",
    "answer_tokens",
)
"""Metrics summarized per condition and input (the latency breakdown included)."""


def speed_summary(frame: pd.DataFrame) -> pd.DataFrame:
    """Per condition and input: n, median, min and max of each speed metric over measured
    trials; the output cap, allocated context and filled input length that limit them;
    draft acceptance pooled (``acceptance`` = Σ accepted / Σ proposed) and as the median
    of per-trial rates (``acceptance_median`` over the ``acceptance_n`` trials that
    proposed drafts); finish counts. Without drafting (``speculative_mode`` ``off``, or no
    draft counts) the acceptance columns are ``None``.

    Median is the sample median (mean of the two middle values for even n).
    """
    rows = []
    for (condition_id, input_id), group in usable(frame).groupby(
        ["condition_id", "input_id"], sort=False
    ):
        row: dict[str, object] = {
            "condition_id": condition_id,
            "input_id": input_id,
            "n": len(group),
            "prompt_tokens": int(group["prompt_tokens"].median()),
            "context_capacity": int(group["context_capacity"].iloc[0]),
            "max_output_tokens": int(group["max_output_tokens"].max())
            if "max_output_tokens" in group
            else None,
            "speculative_mode": str(group["speculative_mode"].iloc[0])
            if "speculative_mode" in group
            else None,
            "generated_tokens_median": float(group["generated_tokens"].median()),
            "finish_length": int((group["finish"] == "length").sum()),
            "answer_not_reached": int((~group["answer_reached"]).sum()),
        }
        for metric in SPEED_METRICS:
            # A frame without a metric's column (built before it existed) has no values.
            values = group[metric].dropna() if metric in group else pd.Series(dtype=float)
            row[f"{metric}_n"] = len(values)
            row[f"{metric}_median"] = float(values.median()) if len(values) else None
            row[f"{metric}_min"] = float(values.min()) if len(values) else None
            row[f"{metric}_max"] = float(values.max()) if len(values) else None
        proposed = group["draft_proposed"].dropna().sum()
        row["draft_proposed"] = int(proposed) if group["draft_proposed"].notna().any() else None
        row["draft_accepted"] = (
            int(group["draft_accepted"].dropna().sum())
            if row["draft_proposed"] is not None
            else None
        )
        row["acceptance"] = row["draft_accepted"] / proposed if row["draft_proposed"] else None
        drafted = group.dropna(subset=["draft_proposed", "draft_accepted"])
        drafted = drafted[drafted["draft_proposed"] > 0]
        rates = drafted["draft_accepted"].astype(float) / drafted["draft_proposed"].astype(float)
        row["acceptance_n"] = len(rates)
        row["acceptance_median"] = float(rates.median()) if len(rates) else None
        rows.append(row)
    return pd.DataFrame(rows)


@dataclass(frozen=True)
class Comparison:
    """Condition ``treatment`` against ``baseline`` on one input."""

    input_id: str
    baseline: str
    treatment: str
    differing_fields: tuple[str, ...]
    """Fields other than the declared factor that differ; non-empty → configuration comparison."""
    baseline_median: float | None
    treatment_median: float | None

    @property
    def is_factor_only(self) -> bool:
        return not self.differing_fields

    @property
    def ratio(self) -> float | None:
        """Median gen tok/s ratio, only when the conditions differ in the declared factor alone."""
        if not self.is_factor_only or not self.baseline_median or self.treatment_median is None:
            return None
        return self.treatment_median / self.baseline_median

    @property
    def change_percent(self) -> float | None:
        """The ratio as a signed change in percent (1.22× → +21.7), where a ratio is given."""
        ratio = self.ratio
        return None if ratio is None else (ratio - 1) * 100

    @property
    def has_medians(self) -> bool:
        """Both conditions have a median generation rate on this input."""
        return self.baseline_median is not None and self.treatment_median is not None


def condition_differences(
    a: ConditionSpec, b: ConditionSpec, factor: str, engine: str
) -> tuple[str, ...]:
    """Fields in which two conditions differ, except the id, the declared factor and the
    ``engine``'s location options (two servers that differ only in port run alike)."""
    location = location_options(engine)
    left, right = a.model_dump(exclude={"id", factor}), b.model_dump(exclude={"id", factor})
    for dump in (left, right):
        dump["engine_options"] = {
            key: value for key, value in dump["engine_options"].items() if key not in location
        }
    return tuple(sorted(k for k in left if left[k] != right[k]))


def observed_setups(records: Iterable[TrialRecord]) -> dict[str, dict[str, frozenset]]:
    """What each condition's usable records show about where they ran: the engine ids
    and the device sets (``id name`` of every device). Compared across a comparison, so
    two conditions measured on different engines or hardware are never a factor-only
    comparison, whatever the plan says."""
    seen: dict[str, dict[str, set]] = {}
    for r in records:
        if enters_statistics(r):
            setup = seen.setdefault(r.condition_id, {"engine": set(), "devices": set()})
            setup["engine"].add(r.provenance.engine.id)
            devices = tuple(sorted(f"{d.id} {d.name}" for d in r.provenance.host.devices))
            setup["devices"].add(devices)
    return {c: {k: frozenset(v) for k, v in setup.items()} for c, setup in seen.items()}


def compare_conditions(
    plan: Plan, summary: pd.DataFrame, setups: dict[str, dict[str, frozenset]] | None = None
) -> list[Comparison]:
    """Every non-baseline condition against the plan's first condition, per input.

    The first condition is the baseline (e.g. speculative off). A ratio is offered
    only where the two differ in the declared factor alone (C-CONFDIFF): in the plan and
    in what their records show (``setups``: engine and devices).
    """
    setups = setups or {}
    baseline, *others = plan.conditions

    def observed_differences(a: str, b: str) -> tuple[str, ...]:
        left, right = setups.get(a, {}), setups.get(b, {})
        return tuple(k for k in ("engine", "devices") if left.get(k) != right.get(k))

    medians = {(row.condition_id, row.input_id): row.gen_tps_median for row in summary.itertuples()}
    return [
        Comparison(
            input_id=spec.id,
            baseline=baseline.id,
            treatment=other.id,
            differing_fields=condition_differences(baseline, other, plan.factor, plan.engine)
            + observed_differences(baseline.id, other.id),
            baseline_median=medians.get((baseline.id, spec.id)),
            treatment_median=medians.get((other.id, spec.id)),
        )
        for spec in plan.inputs
        for other in others
    ]


def memory_summary(records: Iterable[TrialRecord], input_ids: set[str]) -> pd.DataFrame:
    """Per condition and device: n, median and max of the per-request peak memory (MiB)
    over measured, successful trials of the given inputs."""
    rows = [
        {
            "condition_id": r.condition_id,
            "device": memory.device,
            "source": memory.source,
            "peak_mib": memory.peak_mib,
        }
        for r in records
        if enters_statistics(r) and r.input_id in input_ids
        for memory in r.peak_memory
    ]
    if not rows:
        return pd.DataFrame(
            columns=["condition_id", "device", "source", "n", "median_mib", "max_mib"]
        )
    grouped = pd.DataFrame(rows).groupby(["condition_id", "device", "source"], sort=False)[
        "peak_mib"
    ]
    return grouped.agg(n="count", median_mib="median", max_mib="max").reset_index()
