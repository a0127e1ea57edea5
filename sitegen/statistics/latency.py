"""Latency distributions: percentiles of time to first token, first answer, time per
output token, inter-token latency and end-to-end time per condition and input. Pure
functions of the trials table and the chunk gaps.

Definitions (the method page states them):

- TPOT (time per output token) of a request: (last chunk − first chunk) ÷ (generated
  tokens − 1), the time per token after the first; vLLM's ``tpot``, and GuideLLM's
  ``inter_token_latency``.
- ITL (inter-token latency): the gaps between successive stream chunks after the first,
  pooled over the requests of a condition and input; vLLM's ``itl``. A speculative chunk
  may carry several tokens and is one gap, as in vLLM: then ITL is longer than TPOT.

A percentile needs enough values to be more than the largest of them (C-TAIL): P90 needs
10, P95 20, P99 100. With fewer, the page shows the observed maximum in its place and
says why.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from sitegen.records.inclusion import MIN_VALUES
from sitegen.statistics.row_groups import row_groups

LATENCY_METRICS = ("ttft_s", "t_first_answer_s", "tpot_s", "itl_s", "e2e_s")
"""The latency metrics with percentiles, in page order."""
PERCENTILES = (50, 90, 95, 99)
"""The percentiles reported (linear interpolation between order statistics, numpy's and
pandas' default)."""
CDF_POINTS = 200
"""Most points a condition's CDF is drawn with (quantiles at even steps beyond)."""


def tpot(frame: pd.DataFrame) -> pd.Series:
    """Time per output token of each trial: generation time ÷ (generated tokens − 1);
    missing with fewer than two tokens or no generation time."""
    tokens = frame["generated_tokens"].to_numpy(dtype=float, na_value=np.nan) - 1
    generation_s = frame["generation_s"].to_numpy(dtype=float, na_value=np.nan)
    return pd.Series(generation_s / np.where(tokens > 0, tokens, np.nan), index=frame.index)


def percentile_row(values: np.ndarray) -> dict[str, float | int | None]:
    """n, mean, max and each percentile that ``values`` has enough of (else ``None``)."""
    values = values[~np.isnan(values)]
    row: dict[str, float | int | None] = {"n": len(values)}
    row["mean"] = float(values.mean()) if len(values) else None
    row["max"] = float(values.max()) if len(values) else None
    for p in PERCENTILES:
        enough = len(values) >= MIN_VALUES[p]
        row[f"p{p}"] = float(np.percentile(values, p)) if enough and len(values) else None
    return row


def latency_percentiles(usable: pd.DataFrame, gaps: pd.DataFrame) -> pd.DataFrame:
    """Per condition × input × metric (``LATENCY_METRICS``): n, mean, P50, P90, P95, P99
    (``None`` below ``MIN_VALUES``) and max. ``usable``: the trials entering the statistics
    (with ``tpot_s``); ``gaps``: one row per chunk gap (``record``, ``gap_s``), whose
    ``record`` is a row index of ``usable``'s table. Metrics no trial has are left out."""
    rows = []
    # Grouped once by position, each metric read as one numpy array: a frame per group
    # costs more than a small campaign's percentiles.
    groups = row_groups(usable, ("condition_id", "input_id"))
    metrics = {
        metric: usable[metric].to_numpy(float, na_value=np.nan)
        for metric in LATENCY_METRICS
        if metric in usable
    }
    gaps_of = _gaps_by_group(usable.index, [at for _, at in groups], gaps)
    for ((condition_id, input_id), at), group_gaps in zip(groups, gaps_of, strict=True):
        for metric in LATENCY_METRICS:
            if metric == "itl_s":
                values = group_gaps
            elif metric in metrics:
                values = metrics[metric][at]
            else:
                continue
            row = percentile_row(values)
            if row["n"]:
                rows.append(
                    {"condition_id": condition_id, "input_id": input_id, "metric": metric, **row}
                )
    columns = [
        "condition_id",
        "input_id",
        "metric",
        "n",
        "mean",
        *(f"p{p}" for p in PERCENTILES),
        "max",
    ]
    return pd.DataFrame(rows, columns=columns)


def _gaps_by_group(
    records: pd.Index, groups: list[np.ndarray], gaps: pd.DataFrame
) -> list[np.ndarray]:
    """The chunk gaps of each group's trials (row positions of the trials, whose index
    ``records`` names their records), each group's in the order of ``gaps``."""
    if not len(gaps):
        return [np.array([], dtype=float) for _ in groups]
    # One slot more than there are trials: a gap of another record (position -1) reads
    # it and belongs to no group.
    group_at = np.full(len(records) + 1, -1)
    for number, at in enumerate(groups):
        group_at[at] = number
    gap_group = group_at[records.get_indexer(pd.Index(gaps["record"]))]
    gap_s = gaps["gap_s"].to_numpy(float)
    # Gaps sorted by group, in their own order within one (a mean's sum depends on it).
    order = np.argsort(gap_group, kind="stable")
    ends = np.searchsorted(gap_group[order], np.arange(len(groups)), side="right")
    starts = np.searchsorted(gap_group[order], np.arange(len(groups)), side="left")
    return [gap_s[order[start:end]] for start, end in zip(starts, ends, strict=True)]


def cdf_points(values: np.ndarray) -> tuple[list[float], list[float]]:
    """The empirical CDF of ``values``: sorted values and the fraction of values at or
    below each; at most ``CDF_POINTS`` points (evenly spaced fractions beyond that)."""
    values = np.sort(values[~np.isnan(values)])
    if not len(values):
        return [], []
    fractions = np.arange(1, len(values) + 1) / len(values)
    if len(values) > CDF_POINTS:
        picked = np.unique(np.linspace(0, len(values) - 1, CDF_POINTS).round().astype(int))
        values, fractions = values[picked], fractions[picked]
    return values.tolist(), fractions.tolist()
