"""What the pages state about each condition beside its medians (pure): how many of its
trials were capped or never answered, its peak memory, the input lengths it was filled
to, the context it allocated, its end-to-end times and the threshold claims observed in
its trials.

Each is a function of the trials table and the plan, computed once by ``make_report``.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import Any, cast

import numpy as np
import pandas as pd

from sitegen.plan.plan_models import Plan
from sitegen.records.annotations import ThresholdClaim
from sitegen.statistics.row_groups import row_groups
from sitegen.statistics.speed import Comparison
from sitegen.statistics.trials import floats

COMPLETION_LENGTH_TOLERANCE = 0.05
"""Median output lengths within 5 % count as equal for a completion-time ratio (C-LENGTH)."""


@dataclass(frozen=True)
class ConditionOverview:
    """One condition's line beside the headline."""

    condition_id: str
    concurrency: int
    """Requests in flight at once (the plan's ``concurrency``)."""
    n: int
    """Measured trials that enter the statistics (speed and quality)."""
    length_capped: int
    """Of them, those that stopped at the output cap."""
    answer_not_reached: int
    """Of them, those that produced no answer text after thinking."""
    peak_memory_mib: float | None
    """Highest peak memory of any device in any of them (``None``: none recorded)."""


@dataclass(frozen=True)
class ThresholdResult:
    """A threshold claim as observed: ``k`` of ``n`` trials strictly above the declared
    bound, never a rounded one (``n`` 0: nothing was observed, no count is shown)."""

    claim: ThresholdClaim
    k: int
    n: int

    @property
    def above_decimals(self) -> int:
        """Decimals of the bound as declared (49.96 → 2, 50 → 0): it is shown with them,
        so a rounded bound never seems to put a trial on the other side."""
        exponent = Decimal(repr(self.claim.above)).normalize().as_tuple().exponent
        return max(0, -int(exponent))


@dataclass(frozen=True)
class CompletionTimes:
    """End-to-end times of each condition on one input beside their output lengths."""

    input_id: str
    rows: list[dict[str, Any]]
    lengths_differ: bool
    """Median output lengths differ by more than ``COMPLETION_LENGTH_TOLERANCE``."""
    time_ratio: float | None
    """Second condition's median time ÷ first's (two conditions only)."""
    factor_only: bool
    """The two conditions differ in the declared factor alone (C-CONFDIFF)."""

    @property
    def time_change_percent(self) -> float | None:
        """``time_ratio`` as a signed change in percent."""
        return None if self.time_ratio is None else (self.time_ratio - 1) * 100


@dataclass(frozen=True)
class AnswerLimits:
    """What limits one set of quality answers (the problems, or one document task): the
    output cap, the allocated context and the filled input length (C-CAPACITY)."""

    task_id: str | None
    """The document task; ``None`` for the suite's problems."""
    max_output_tokens: int
    context_capacity: tuple[int, ...]
    """The allocated context of the off and on conditions (one value when they agree)."""
    prompt_min: int | None
    """Smallest and largest input length (tokens) of the set's usable answers."""
    prompt_max: int | None


FACT_COLUMNS = [
    "condition_id",
    "input_id",
    "prompt_tokens",
    "peak_mem_mib",
    "finish",
    "answer_reached",
    "engine_context_per_slot",
]
"""What the condition facts below read of the usable trials: only these columns are
selected, once (the whole table's usable rows would be most of it again)."""


def filled_lengths(usable: pd.DataFrame) -> dict[str, tuple[int, int]]:
    """Per condition: the smallest and largest input length (tokens) of its ``usable``
    trials, shown beside the context capacity (C-CAPACITY)."""
    usable = usable.dropna(subset=["prompt_tokens"])
    lengths = floats(usable["prompt_tokens"])
    return {
        str(condition_id): (int(lengths[at].min()), int(lengths[at].max()))
        for (condition_id,), at in row_groups(usable, ("condition_id",))
    }


def condition_overview(plan: Plan, usable: pd.DataFrame) -> list[ConditionOverview]:
    """Per condition in plan order, what the summary shows beside the headline: its
    concurrency, how many of its ``usable`` trials were length-capped or never reached an
    answer, and its highest peak memory."""
    # Each column read once as a numpy array, the rows grouped once by condition.
    rows_of = {condition_id: at for (condition_id,), at in row_groups(usable, ("condition_id",))}
    peaks = floats(usable["peak_mem_mib"])
    capped = (usable["finish"] == "length").to_numpy(dtype=bool, na_value=False)
    not_reached = (~usable["answer_reached"].astype(bool)).to_numpy()
    overview = []
    for condition in plan.conditions:
        at = rows_of.get(condition.id, np.array([], dtype=np.int64))
        peak = peaks[at][~np.isnan(peaks[at])]
        overview.append(
            ConditionOverview(
                condition_id=condition.id,
                concurrency=condition.concurrency,
                n=len(at),
                length_capped=int(capped[at].sum()),
                answer_not_reached=int(not_reached[at].sum()),
                peak_memory_mib=float(peak.max()) if len(peak) else None,
            )
        )
    return overview


def capacity_as_declared(plan: Plan, usable: pd.DataFrame) -> list[str]:
    """Conditions whose ``usable`` trials' engine did not report the context it allocated
    (``engine_context_per_slot``, as the condition's last trial shows): their capacity is
    shown as the plan declares it."""
    reported_at = usable["engine_context_per_slot"].notna().to_numpy()
    reported = {
        condition_id: bool(reported_at[at[-1]])
        for (condition_id,), at in row_groups(usable, ("condition_id",))
    }
    return [c.id for c in plan.conditions if not reported.get(c.id, False)]


def quality_limits(plan: Plan, usable: pd.DataFrame) -> list[AnswerLimits]:
    """The problems' limits, then each document task's (empty without a quality
    evaluation): output cap, allocated context and filled input length of the ``usable``
    trials."""
    quality = plan.quality
    if quality is None:
        return []
    conditions = (quality.off_condition, quality.on_condition)
    capacities = tuple(sorted({c.context_capacity for c in plan.conditions if c.id in conditions}))
    usable = usable[usable["condition_id"].isin(conditions)]
    documents = {d.task_id: d for d in quality.documents}

    def limits(task_id: str | None, cap: int, selected: pd.DataFrame) -> AnswerLimits:
        prompts = selected["prompt_tokens"].dropna()
        low, high = (int(prompts.min()), int(prompts.max())) if len(prompts) else (None, None)
        return AnswerLimits(task_id, cap, capacities, low, high)

    speed_ids = {i.id for i in plan.inputs}
    problems = usable[~usable["input_id"].isin(speed_ids | set(documents))]
    return [limits(None, quality.max_output_tokens, problems)] + [
        limits(task_id, spec.max_output_tokens, usable[usable["input_id"] == task_id])
        for task_id, spec in documents.items()
    ]


def completion_times(
    input_id: str, summary_records: list[dict[str, Any]], comparisons: list[Comparison]
) -> CompletionTimes:
    """End-to-end times per condition on one speed input (empty without trials)."""
    rows = [r for r in summary_records if r["input_id"] == input_id]
    tokens = [r["generated_tokens_median"] for r in rows]
    lengths_differ = len(tokens) > 1 and max(tokens) > (1 + COMPLETION_LENGTH_TOLERANCE) * min(
        tokens
    )
    time_ratio = None
    factor_only = False
    if len(rows) == 2 and rows[0]["e2e_s_median"] and rows[1]["e2e_s_median"] is not None:
        time_ratio = rows[1]["e2e_s_median"] / rows[0]["e2e_s_median"]
        pair = {rows[0]["condition_id"], rows[1]["condition_id"]}
        factor_only = any(
            c.input_id == input_id and {c.baseline, c.treatment} == pair and c.is_factor_only
            for c in comparisons
        )
    return CompletionTimes(input_id, rows, lengths_differ, time_ratio, factor_only)


def condition_rates(summary: pd.DataFrame) -> dict[str, dict[str, float]]:
    """Per condition, the median over its speed inputs of the per-input medians of the
    generation rate and of energy and CPU time per generated token (shown beside the
    telemetry, which is per condition and device)."""
    if summary.empty:
        return {}
    columns = ["gen_tps_median", "energy_per_token_j_median", "cpu_s_per_token_median"]
    medians = summary.groupby("condition_id", sort=False)[columns].median()
    # Labels are the condition ids and the column names above, cells the medians.
    return cast(dict[str, dict[str, float]], medians.to_dict("index"))


def observed_thresholds(
    claims: list[ThresholdClaim], usable_speed_trials: pd.DataFrame
) -> list[ThresholdResult]:
    """Each threshold claim of the annotations as observed in k of n trials."""
    results = []
    for claim in claims:
        selected = usable_speed_trials[usable_speed_trials["condition_id"] == claim.condition_id]
        if claim.input_id is not None:
            selected = selected[selected["input_id"] == claim.input_id]
        values = selected[claim.metric].dropna()
        results.append(ThresholdResult(claim, int((values > claim.above).sum()), len(values)))
    return results
