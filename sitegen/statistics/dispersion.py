"""Spread and uncertainty, as the plan declares them (``Plan.dispersion``): quantiles,
outlier labels and the bootstrap interval of a median ratio. Pure functions."""

from __future__ import annotations

import numpy as np
import pandas as pd

from sitegen.plan.plan_models import DispersionSpec

QUANTILES = {"p10": 0.10, "q1": 0.25, "q3": 0.75, "p90": 0.90}
"""Quantiles summarized beside each median (linear interpolation between order
statistics, pandas' default); the IQR is ``q3 − q1``."""
IQR_FENCE = 1.5
"""``iqr-1.5``: how many IQRs outside the quartiles a value must lie to be an outlier."""


def outlier_labels(frame: pd.DataFrame, policy: str, metric: str = "gen_tps") -> pd.Series:
    """Per row of a trials table: whether its ``metric`` lies outside Q1 − 1.5 IQR … Q3 +
    1.5 IQR of its condition and input (``iqr-1.5``). Labels only: nothing is dropped.
    ``none`` labels nothing; a row without a value is never an outlier."""
    labels = pd.Series(False, index=frame.index)
    if policy == "none" or frame.empty:
        return labels
    for _, group in frame.groupby(["condition_id", "input_id"], sort=False):
        values = group[metric].astype(float)
        present = values.dropna()
        if len(present) < 4:  # quartiles of fewer values say nothing about outliers
            continue
        q1, q3 = present.quantile(0.25), present.quantile(0.75)
        fence = IQR_FENCE * (q3 - q1)
        labels.loc[group.index] = (values < q1 - fence) | (values > q3 + fence)
    return labels


RESAMPLE_BLOCK = 1 << 20
"""Values drawn at a time (8 MB): 2,000 resamples of 20,000 trials would otherwise be one
320 MB array. Drawing the rows in blocks takes the same values from the generator."""


def _resampled_medians(rng: np.random.Generator, values: np.ndarray, count: int) -> np.ndarray:
    """The medians of ``count`` resamples of ``values`` with replacement, as
    ``np.median(rng.choice(values, size=(count, len(values))), axis=1)``."""
    rows = max(1, RESAMPLE_BLOCK // len(values))
    return np.concatenate(
        [
            np.median(rng.choice(values, size=(min(rows, count - start), len(values))), axis=1)
            for start in range(0, count, rows)
        ]
    )


def median_ratio_interval(
    treatment: np.ndarray, baseline: np.ndarray, spec: DispersionSpec
) -> tuple[float, float] | None:
    """Percentile bootstrap interval of median(treatment) ÷ median(baseline): each side
    resampled with replacement on its own, ``spec.bootstrap_resamples`` times, from a
    generator seeded with ``spec.bootstrap_seed`` (every comparison starts from the same
    seed, so each interval is reproducible on its own). ``None`` with fewer than two values
    on a side, or a baseline median of zero in a resample."""
    treatment = treatment[~np.isnan(treatment)]
    baseline = baseline[~np.isnan(baseline)]
    if len(treatment) < 2 or len(baseline) < 2:
        return None
    rng = np.random.default_rng(spec.bootstrap_seed)
    b = spec.bootstrap_resamples
    top = _resampled_medians(rng, treatment, b)
    bottom = _resampled_medians(rng, baseline, b)
    if (bottom == 0).any():
        return None
    ratios = top / bottom
    tail = (1 - spec.confidence) / 2
    low, high = np.quantile(ratios, [tail, 1 - tail])
    return float(low), float(high)
