"""Speed statistics: pure functions from trial tables to summaries."""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from sitegen.plan.engine_registry import location_options
from sitegen.plan.plan_models import ConditionSpec, Plan
from sitegen.records.record_models import TrialRecord
from sitegen.records.table import RecordTable
from sitegen.statistics.dispersion import QUANTILES, median_ratio_interval
from sitegen.statistics.health import HealthFinding
from sitegen.statistics.row_groups import highest, median, row_groups
from sitegen.statistics.setups import compare_records
from sitegen.statistics.trials import generation_rates, trial_acceptance

SPEED_METRICS = (
    "gen_tps",
    "aggregate_tps",
    "energy_per_token_j",
    "cpu_s_per_token",
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
ROUND_METRICS = frozenset({"aggregate_tps", "energy_per_token_j", "cpu_s_per_token"})
"""Metrics of a whole concurrent round, shared by its requests: counted once per round."""
ROUND_COLUMNS = ("round_run_id", *sorted(ROUND_METRICS))
"""What ``speed_summary`` reads of a group's rounds."""
SPREAD_METRICS = ("gen_tps", "aggregate_tps", "ttft_s", "e2e_s")
"""Metrics summarized with quantiles (``dispersion.QUANTILES``) beside the median."""
SUMMARY_COLUMNS = tuple(
    dict.fromkeys(
        (
            "condition_id",
            "input_id",
            "prompt_tokens",
            "context_capacity",
            "max_output_tokens",
            "speculative_mode",
            "generated_tokens",
            "finish",
            "answer_reached",
            "concurrency",
            "outlier",
            "draft_proposed",
            "draft_accepted",
            *ROUND_COLUMNS,
            *SPEED_METRICS,
        )
    )
)
"""What ``speed_summary`` reads of a trials table."""


def speed_summary(usable: pd.DataFrame) -> pd.DataFrame:
    """Per condition and input: n, median, min and max of each speed metric over the
    ``usable`` trials (those that enter the statistics, ``trials.usable``); the output
    cap, allocated context and filled input length that limit them; draft acceptance pooled (``acceptance`` = Σ accepted / Σ proposed) and as the median
    of per-trial rates (``acceptance_median`` over the ``acceptance_n`` trials that
    proposed drafts); finish counts. Without drafting (``speculative_mode`` ``off``, or no
    draft counts) the acceptance columns are ``None``.

    Median is the sample median (mean of the two middle values for even n).
    """
    kept = usable[[c for c in SUMMARY_COLUMNS if c in usable]]
    columns = _summary_columns(kept)
    rows = [
        {"condition_id": condition_id, "input_id": input_id, **_group_summary(columns, at)}
        for (condition_id, input_id), at in row_groups(kept, ("condition_id", "input_id"))
    ]
    return pd.DataFrame(rows)


def _summary_columns(kept: pd.DataFrame) -> dict[str, np.ndarray]:
    """What ``_group_summary`` reads of the usable trials, each column taken out of pandas
    once (numbers as floats, missing as NaN); a column the table lacks is left out."""
    numbers = [*SPEED_METRICS, "prompt_tokens", "generated_tokens"]
    columns = {
        name: kept[name].to_numpy(dtype=float, na_value=np.nan) for name in numbers if name in kept
    }
    for name in ("context_capacity", "max_output_tokens", "speculative_mode", "concurrency"):
        if name in kept:
            columns[name] = kept[name].to_numpy()
    if "outlier" in kept:
        columns["outlier"] = kept["outlier"].to_numpy()
    columns["finish_length"] = (kept["finish"] == "length").to_numpy(dtype=bool, na_value=False)
    columns["answer_not_reached"] = (~kept["answer_reached"]).to_numpy()
    # A concurrent round's figures are shared by its requests: its first row per group
    # stands for it (``one_row_per_round``); a request sent alone stands for itself.
    if "round_run_id" in kept:
        alone = kept["round_run_id"].isna()
        first = ~kept.duplicated(["condition_id", "input_id", "round_run_id"])
        columns["counts_round"] = (alone | first).to_numpy()
    else:
        columns["counts_round"] = np.ones(len(kept), dtype=bool)
    for name in ("draft_proposed", "draft_accepted"):
        columns[name] = kept[name].to_numpy(dtype=float, na_value=np.nan)
    columns["acceptance"] = trial_acceptance(kept).to_numpy()
    return columns


def _group_summary(columns: dict[str, np.ndarray], at: np.ndarray) -> dict[str, object]:
    """The summary row of the trials at positions ``at`` (one condition on one input),
    without its key."""
    row: dict[str, object] = {
        "n": len(at),
        "prompt_tokens": int(np.median(_present(columns["prompt_tokens"][at]))),
        "context_capacity": int(columns["context_capacity"][at[0]]),
        "max_output_tokens": int(columns["max_output_tokens"][at].max())
        if "max_output_tokens" in columns
        else None,
        "speculative_mode": str(columns["speculative_mode"][at[0]])
        if "speculative_mode" in columns
        else None,
        "generated_tokens_median": float(np.median(_present(columns["generated_tokens"][at]))),
        "finish_length": int(columns["finish_length"][at].sum()),
        "answer_not_reached": int(columns["answer_not_reached"][at].sum()),
    }
    row["concurrency"] = int(columns["concurrency"][at].max()) if "concurrency" in columns else 1
    row["outliers"] = int(columns["outlier"][at].sum()) if "outlier" in columns else 0
    rounds = at[columns["counts_round"][at]]
    for metric in SPEED_METRICS:
        source = rounds if metric in ROUND_METRICS else at
        values = _present(columns[metric][source]) if metric in columns else np.array([])
        row[f"{metric}_n"] = len(values)
        row[f"{metric}_median"] = float(np.median(values)) if len(values) else None
        row[f"{metric}_min"] = float(values.min()) if len(values) else None
        row[f"{metric}_max"] = float(values.max()) if len(values) else None
        if metric in SPREAD_METRICS:
            # Every quantile in one call (each the same as asked alone); linear
            # interpolation, as pandas' quantile.
            found = np.quantile(values, list(QUANTILES.values())) if len(values) else None
            for position, name in enumerate(QUANTILES):
                row[f"{metric}_{name}"] = None if found is None else float(found[position])
    counted = _present(columns["draft_proposed"][at])
    proposed = int(counted.sum()) if len(counted) else None
    accepted = int(_present(columns["draft_accepted"][at]).sum()) if proposed is not None else None
    row["draft_proposed"] = proposed
    row["draft_accepted"] = accepted
    row["acceptance"] = accepted / proposed if accepted is not None and proposed else None
    rates = _present(columns["acceptance"][at])
    row["acceptance_n"] = len(rates)
    row["acceptance_median"] = float(np.median(rates)) if len(rates) else None
    return row


def _present(values: np.ndarray) -> np.ndarray:
    """The values that are there (not NaN)."""
    return values[~np.isnan(values)]


def records_of(frame: pd.DataFrame) -> list[dict[str, object]]:
    """A table's rows as dicts, a missing value (NaN, NA) as ``None``: what templates and
    JSON take, where NaN would pass a ``is not none`` test."""
    names = list(frame.columns)
    if not names:
        return [{} for _ in range(len(frame))]
    # Column by column as Python values, then rows: pandas' own ``where`` + ``to_dict``
    # is slow for the many small frames a report's pages read.
    columns = [[None if _missing(v) else v for v in frame[name].tolist()] for name in names]
    return [dict(zip(names, row, strict=True)) for row in zip(*columns, strict=True)]


def _missing(value: object) -> bool:
    return (
        value is None
        or value is pd.NA
        or value is pd.NaT
        or (isinstance(value, float) and math.isnan(value))
    )


def present(value: Any) -> float | None:
    """A summary value, or ``None`` where there is none: a table's missing value is NaN,
    which must never reach a ratio or a page as a number."""
    return None if value is None or pd.isna(value) else float(value)


@dataclass(frozen=True)
class Comparison:
    """Condition ``treatment`` against ``baseline`` on one input."""

    input_id: str
    baseline: str
    treatment: str
    differing_fields: tuple[str, ...]
    """Fields other than the declared factor that differ, in the plan or in what both
    sides' records show; non-empty → configuration comparison."""
    baseline_median: float | None
    treatment_median: float | None
    ratio_interval: tuple[float, float] | None = None
    """Bootstrap interval of the median ratio (``Plan.dispersion``), factor-only only;
    ``None`` with fewer than two trials on a side."""
    health: tuple[HealthFinding, ...] = ()
    """Why the treatment's speculation did not run as declared on this input (C-SPECHEALTH)."""
    unrecorded_fields: tuple[str, ...] = ()
    """Fields other than the declared factor that the records of one side or both do not
    record: never equal, so the comparison is not factor-only either."""

    @property
    def is_factor_only(self) -> bool:
        """Every field but the declared factor recorded on both sides and equal."""
        return not self.differing_fields and not self.unrecorded_fields

    @property
    def is_speculation_effect(self) -> bool:
        """A factor-only comparison whose speculation ran as declared on this input: only
        then may its ratio be shown as the effect of speculation."""
        return self.is_factor_only and not self.health

    @property
    def ratio(self) -> float | None:
        """Median gen tok/s ratio, only for a speculation effect with both medians and the
        interval of the ratio (two or more trials a side); otherwise the page states the
        medians alone."""
        if not self.is_speculation_effect or self.ratio_interval is None:
            return None
        if not self.baseline_median or self.treatment_median is None:
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


def matched_baseline(plan: Plan, condition: ConditionSpec) -> ConditionSpec | None:
    """The first condition without speculation that equals ``condition`` in everything
    but the declared factor (same temperature, model file, concurrency, options …)."""
    return next(
        (
            candidate
            for candidate in plan.conditions
            if candidate.speculative.mode == "off"
            and candidate.id != condition.id
            and not condition_differences(candidate, condition, plan.factor, plan.engine)
        ),
        None,
    )


def comparison_pairs(plan: Plan) -> list[tuple[ConditionSpec, ConditionSpec]]:
    """(baseline, treatment) pairs. Each speculative condition is compared with its
    matched baseline, or with the plan's first condition when none matches (a
    configuration comparison). A plan without speculation compares every condition with
    the first."""
    first, *others = plan.conditions
    if all(c.speculative.mode == "off" for c in plan.conditions):
        return [(first, other) for other in others]
    return [
        (matched_baseline(plan, other) or first, other)
        for other in plan.conditions
        if other.speculative.mode != "off" and other.id != first.id
    ]


def compare_conditions(
    plan: Plan,
    summary: pd.DataFrame,
    records: Iterable[TrialRecord] = (),
    trials: pd.DataFrame | None = None,
    health: dict[str, tuple[HealthFinding, ...]] | None = None,
) -> list[Comparison]:
    """Every comparison of ``comparison_pairs``, per speed input.

    A ratio is offered only where the two differ in the declared factor alone (C-CONFDIFF):
    in the plan, and in what both sides' usable ``records`` of the input show
    (``setups.compare_records``: every field recorded and equal; one record of each
    distinct setup is enough, ``setups.setup_records``), and where the treatment's
    speculation ran as declared on that input (``health``, C-SPECHEALTH). ``trials``
    (usable speed trials) give each factor-only ratio its bootstrap interval.
    """
    health = health or {}
    observed: dict[tuple[str, str], list[TrialRecord]] = {}
    for record in records:
        observed.setdefault((record.condition_id, record.input_id), []).append(record)
    # Three columns as Python values: ``itertuples`` would make a tuple of every column.
    medians = (
        {
            (condition_id, input_id): present(median)
            for condition_id, input_id, median in zip(
                summary["condition_id"].tolist(),
                summary["input_id"].tolist(),
                summary["gen_tps_median"].tolist(),
                strict=True,
            )
        }
        if len(summary)
        else {}
    )
    comparisons = []
    for baseline, other in comparison_pairs(plan):
        planned = condition_differences(baseline, other, plan.factor, plan.engine)
        for spec in plan.inputs:
            setups = compare_records(
                observed.get((baseline.id, spec.id), []),
                observed.get((other.id, spec.id), []),
                plan.factor,
            )
            differing = planned + tuple(f for f in setups.differing if f not in planned)
            interval = None
            if not differing and not setups.unrecorded and trials is not None:
                interval = median_ratio_interval(
                    generation_rates(trials, other.id, spec.id),
                    generation_rates(trials, baseline.id, spec.id),
                    plan.dispersion,
                )
            comparisons.append(
                Comparison(
                    input_id=spec.id,
                    baseline=baseline.id,
                    treatment=other.id,
                    differing_fields=differing,
                    baseline_median=medians.get((baseline.id, spec.id)),
                    treatment_median=medians.get((other.id, spec.id)),
                    ratio_interval=interval,
                    health=tuple(
                        f for f in health.get(other.id, ()) if f.input_id in (None, spec.id)
                    ),
                    unrecorded_fields=setups.unrecorded,
                )
            )
    return comparisons


def memory_summary(table: RecordTable, input_ids: set[str]) -> pd.DataFrame:
    """Per condition and device: n, median and max of the per-request peak memory (MiB)
    over measured, successful trials of the given inputs."""
    rows = table.rows
    # Row index = record position: a reading is kept where its record is.
    chosen = table.usable & rows["input_id"].isin(input_ids).to_numpy()
    readings = table.peak_memory[chosen[table.peak_memory["record"].to_numpy()]]
    if readings.empty:
        return pd.DataFrame(
            columns=["condition_id", "device", "source", "n", "median_mib", "max_mib"]
        )
    frame = pd.DataFrame(
        {
            "condition_id": rows["condition_id"].to_numpy()[readings["record"].to_numpy()],
            "device": readings["device"].to_numpy(),
            "source": readings["source"].to_numpy(),
        }
    )
    keys = ("condition_id", "device", "source")
    # Grouped once by position: a groupby's aggregation costs more than a campaign's few
    # readings per device.
    groups = row_groups(frame, keys)
    summary: dict[str, list] = {
        key: [group_key[position] for group_key, _ in groups] for position, key in enumerate(keys)
    }
    peaks = readings["peak_mib"].to_numpy(dtype=float, na_value=np.nan)
    summary["n"] = [int(np.count_nonzero(~np.isnan(peaks[at]))) for _, at in groups]
    summary["median_mib"] = [median(peaks[at]) for _, at in groups]
    summary["max_mib"] = [highest(peaks[at]) for _, at in groups]
    return pd.DataFrame(summary)
