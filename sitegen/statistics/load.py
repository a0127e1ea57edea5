"""Open-loop load runs: throughput, latency and goodput against the offered rate, and the
saturation point. Pure functions of the trials table, the chunk gaps and the plan.

Definitions (the speed page states them):

- Offered rate: the rate the plan declares for a run (requests/s); its requests are sent
  on the run's pre-computed schedule (``sitegen.plan.arrivals``) whether or not earlier ones
  have ended.
- Achieved throughput: requests that completed ÷ the run's time from its start to its
  last request's end; output tokens/s: every token the run's requests generated ÷ the same
  time. A rate resumed after an interruption pools its runs (sums of both).
- A request meets the SLO when each declared target holds for it: its time to first token
  ≤ ``ttft_p95_s``, its end-to-end time ≤ ``e2e_p95_s``, and the 99th percentile of its own
  gaps between stream chunks ≤ ``itl_p99_ms`` (no gap: met). A failed request meets none.
  Goodput: the requests that met every target ÷ the run's time.
- Saturation point (per condition and input): the lowest offered rate whose achieved
  throughput is below ``1 − SATURATION_SHORTFALL`` of the offered rate, or whose median
  end-to-end time exceeds ``SATURATION_LATENCY_FACTOR`` × the median at the lowest offered
  rate.

Each run's statistics use the latest attempt of each of its requests.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import cast

import numpy as np
import pandas as pd

from sitegen.plan.arrivals import arrival_offsets
from sitegen.plan.plan_models import Plan, SLOSpec
from sitegen.statistics.latency import percentile_row

SATURATION_SHORTFALL = 0.2
"""A run whose achieved throughput falls short of its offered rate by more than this
fraction is saturated. Generous, because a short run falls short without any queue: its
window ends with its last request's latency, and a Poisson schedule's realized rate
varies around the declared one."""
SATURATION_LATENCY_FACTOR = 2.0
"""A run whose median end-to-end time exceeds this multiple of the median at the lowest
offered rate is saturated (requests wait in a queue)."""

LOAD_COLUMNS = (
    "condition_id",
    "input_id",
    "profile",
    "offered_rate",
    "planned",
    "recorded",
    "ok",
    "failed",
    "runs",
    "wall_s",
    "throughput_rps",
    "output_tps",
    "ttft_n",
    "ttft_median_s",
    "ttft_p95_s",
    "ttft_max_s",
    "e2e_median_s",
    "e2e_p95_s",
    "e2e_max_s",
    "send_lag_median_ms",
    "send_lag_max_ms",
    "slo_met",
    "slo_n",
    "goodput_rps",
    "saturated",
    "saturated_by",
    "saturation_point",
)
"""The load table's columns (the ``load`` download), one row per condition × input ×
offered rate; P95 is missing below ``latency.MIN_VALUES`` (C-TAIL: the max stands in)."""


def load_rows(frame: pd.DataFrame) -> pd.DataFrame:
    """The rows of a trials table sent in an open-loop load run (every role and status)."""
    if "load_profile" not in frame:
        return frame.iloc[0:0]
    return frame[frame["load_profile"].notna()]


def request_gap_p99(gaps: pd.DataFrame, records: pd.Index) -> pd.Series:
    """Each record's own 99th percentile of its gaps between stream chunks (seconds, linear
    interpolation), for the records in ``records``; missing for a record without a gap."""
    if not len(gaps):
        return pd.Series(np.nan, index=records, dtype=float)
    mine = gaps[gaps["record"].isin(records)]
    return mine.groupby("record")["gap_s"].quantile(0.99).reindex(records).astype(float)


def meets_slo(requests: pd.DataFrame, gap_p99: pd.Series, slo: SLOSpec) -> pd.Series:
    """Per request (rows of a trials table): whether it succeeded and met every declared
    target (``gap_p99``: each request's own P99 gap in seconds, missing without gaps)."""
    met = requests["status"] == "ok"
    if slo.ttft_p95_s is not None:
        met &= requests["ttft_s"].astype(float) <= slo.ttft_p95_s
    if slo.e2e_p95_s is not None:
        met &= requests["e2e_s"].astype(float) <= slo.e2e_p95_s
    if slo.itl_p99_ms is not None:
        gap = gap_p99.reindex(requests.index)
        met &= gap.isna() | (gap <= slo.itl_p99_ms / 1000)
    return met.fillna(False).astype(bool)


def load_table(plan: Plan, frame: pd.DataFrame, gaps: pd.DataFrame) -> pd.DataFrame:
    """One row per condition × input × offered rate of the plan's load runs
    (``LOAD_COLUMNS``), in plan order of conditions and inputs, rates ascending; empty
    without open-loop load."""
    load = plan.load
    if load is None or not load.open_loop:
        return pd.DataFrame(columns=list(LOAD_COLUMNS))
    rows = load_rows(frame)
    rows = rows[rows["role"] == "measured"].drop_duplicates("trial_id", keep="last")
    ok = rows[rows["status"] == "ok"]
    gap_p99 = request_gap_p99(gaps, ok.index)
    met = meets_slo(rows, gap_p99, plan.slo) if plan.slo is not None else None
    # Every condition and input shares the schedule of a rate.
    planned = {rate: len(arrival_offsets(load, i)) for i, rate in enumerate(load.rates)}
    table = []
    for condition in plan.conditions:
        for spec in plan.inputs:
            for rate in sorted(load.rates):
                key = (condition.id, spec.id, rate)
                mine = rows[
                    (rows["condition_id"] == condition.id)
                    & (rows["input_id"] == spec.id)
                    & (rows["load_offered_rate"] == rate)
                ]
                table.append(_rate_row(key, load.profile, planned[rate], mine, met))
    result = pd.DataFrame(table, columns=list(LOAD_COLUMNS))
    return mark_saturation(result)


def _rate_row(
    key: tuple[str, str, float],
    profile: str,
    planned: int,
    mine: pd.DataFrame,
    met: pd.Series | None,
) -> dict:
    condition_id, input_id, rate = key
    ok = mine[mine["status"] == "ok"]
    runs = mine.drop_duplicates("load_run_id")
    wall = float(runs["load_run_wall_s"].astype(float).sum()) if len(runs) else 0.0
    completed = float(runs["load_run_completed"].astype(float).sum()) if len(runs) else 0.0
    tokens = float(runs["load_run_generated_tokens"].astype(float).sum()) if len(runs) else 0.0
    ttft = percentile_row(ok["ttft_s"].to_numpy(float, na_value=np.nan))
    e2e = percentile_row(ok["e2e_s"].to_numpy(float, na_value=np.nan))
    lag = (
        (mine["load_sent_s"].astype(float) - mine["load_scheduled_s"].astype(float)) * 1000
    ).dropna()
    row = {
        "condition_id": condition_id,
        "input_id": input_id,
        "profile": profile,
        "offered_rate": rate,
        "planned": planned,
        "recorded": len(mine),
        "ok": len(ok),
        "failed": len(mine) - len(ok),
        "runs": len(runs),
        "wall_s": wall if len(runs) else None,
        "throughput_rps": completed / wall if wall > 0 else None,
        "output_tps": tokens / wall if wall > 0 else None,
        "ttft_n": ttft["n"],
        "ttft_median_s": ttft["p50"],
        "ttft_p95_s": ttft["p95"],
        "ttft_max_s": ttft["max"],
        "e2e_median_s": e2e["p50"],
        "e2e_p95_s": e2e["p95"],
        "e2e_max_s": e2e["max"],
        "send_lag_median_ms": float(lag.median()) if len(lag) else None,
        "send_lag_max_ms": float(lag.max()) if len(lag) else None,
        "slo_met": None,
        "slo_n": None,
        "goodput_rps": None,
    }
    if met is not None:
        k = int(met.reindex(mine.index).fillna(False).sum())
        row |= {
            "slo_met": k,
            "slo_n": len(mine),
            "goodput_rps": k / wall if wall > 0 else None,
        }
    return row


def mark_saturation(table: pd.DataFrame) -> pd.DataFrame:
    """Add ``saturated`` (this rate meets a saturation criterion), ``saturated_by``
    (``throughput``, ``latency`` or ``throughput+latency``) and ``saturation_point`` (the
    lowest such rate of its condition and input) to a load table."""
    table = table.copy()
    table["saturated"] = False
    table["saturated_by"] = None
    table["saturation_point"] = False
    for _, group in table.groupby(["condition_id", "input_id"], sort=False):
        group = group.sort_values("offered_rate")
        measured = group.dropna(subset=["e2e_median_s"])
        reference = float(measured["e2e_median_s"].iloc[0]) if len(measured) else None
        point_found = False
        for index, row in group.iterrows():
            reasons = []
            throughput, median = row["throughput_rps"], row["e2e_median_s"]
            limit = (1 - SATURATION_SHORTFALL) * row["offered_rate"]
            if not pd.isna(throughput) and throughput < limit:
                reasons.append("throughput")
            if reference and not pd.isna(median) and median > SATURATION_LATENCY_FACTOR * reference:
                reasons.append("latency")
            if reasons:
                table.at[index, "saturated"] = True
                table.at[index, "saturated_by"] = "+".join(reasons)
                if not point_found:
                    table.at[index, "saturation_point"] = True
                    point_found = True
    return table


@dataclass(frozen=True)
class SaturationPoint:
    """The saturation point of one condition and input (``rate`` ``None``: none of the
    offered rates saturated)."""

    condition_id: str
    input_id: str
    rate: float | None
    by: str | None


def saturation_points(table: pd.DataFrame) -> list[SaturationPoint]:
    """Per condition × input of a load table, its saturation point."""
    points = []
    for key, group in table.groupby(["condition_id", "input_id"], sort=False):
        # Grouped by two columns of ids: each key is a (condition, input) pair of strings.
        condition_id, input_id = cast(tuple[str, str], key)
        hit = group[group["saturation_point"]]
        points.append(
            SaturationPoint(
                condition_id,
                input_id,
                float(hit["offered_rate"].iloc[0]) if len(hit) else None,
                hit["saturated_by"].iloc[0] if len(hit) else None,
            )
        )
    return points
