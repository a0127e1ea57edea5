"""Whether a build of an engine is faster, slower or no different from the build before it
(pure): the verdict of each step of a build series, decided by the ratio's interval and by
the series' own variation, as rustc-perf decides what is significant.

The rule, as the page states it. A step from build k−1 to build k compares, for one
condition × input × metric, the median of build k over the median of build k−1 (the
ratio; each metric's direction is explicit: a higher generation rate is faster, a lower
time to first token is faster). The step is

- **inconclusive** when either build has fewer than ``MIN_STEP_VALUES`` trials with a
  value (failed trials have none: they are counted, never summarized), or the ratio has no
  bootstrap interval (a median that is not positive, or of zero in a resample);
- **faster** or **slower** only when both hold: the percentile-bootstrap interval of the
  ratio (the plan's ``dispersion``: resamples, seed, confidence) lies wholly on one side of
  1× (an interval that reaches 1× exactly, its low or high end equal to 1, does not), and
  the change is larger than the series' noise threshold;
- **no change** otherwise.

The noise threshold is the series' own run-to-run variation: the upper fence Q3 +
``FENCE_IQRS`` × IQR of the sizes of every step of that condition × input × metric in the
series (|ln ratio|, so a halving and a doubling are the same size), taken over the steps
whose both builds have enough values, when there are at least ``MIN_STEPS_FOR_FENCE`` of
them; never less than ``NOISE_FLOOR``; with fewer steps, ``NOISE_FLOOR`` alone. This is
rustc-perf's significance threshold (an IQR upper fence over the relative changes between
neighbouring artifacts) with the fence of this project's outlier labels
(``dispersion.IQR_FENCE``). An interval that excludes 1× says that the two builds' trials
differ; the fence asks whether they differ by more than neighbouring builds of this
series usually do (a machine's thermal state, another process, the day's clocks), which
the trials of one campaign cannot show.

A real regression is itself one of the steps the fence is computed from. The upper
quartile of n sizes (linear interpolation) lies at or below the second largest when n ≥
5, so the largest step, however large, never moves the fence; in general the sizes of the
k largest steps do not when n ≥ 4k + 1. That is why ``MIN_STEPS_FOR_FENCE`` is 5: with four steps, one
large change would raise the upper quartile towards itself and could hide below its own
fence. A series whose every step changes a lot (noisy, or improving steadily build after
build) has a high fence, and only a change beyond that is called faster or slower.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

from sitegen.plan.plan_models import DispersionSpec
from sitegen.statistics.dispersion import IQR_FENCE, median_ratio_interval
from sitegen.statistics.headlines import MIN_RATIO_TRIALS

Verdict = Literal["faster", "slower", "no change", "inconclusive"]
"""What a step from one build to the next shows for one metric."""
Reason = Literal["too_few", "no_interval", "interval_crosses_1", "within_noise", "beyond_noise"]
"""Why a step got its verdict, as a key the pages translate: ``too_few`` (a build has
fewer than ``MIN_STEP_VALUES`` values: inconclusive), ``no_interval`` (no bootstrap
interval: inconclusive), ``interval_crosses_1`` (the interval includes or reaches 1×: no
change), ``within_noise`` (the interval excludes 1× but the change is within the series'
noise threshold: no change), ``beyond_noise`` (faster or slower)."""
Better = Literal["higher", "lower"]
"""Which way a metric is faster: a higher generation rate, a lower time to first token."""

MIN_STEP_VALUES = MIN_RATIO_TRIALS
"""Trials with a value each build of a step needs for a verdict: the number a ratio needs
before the summary quotes it (``headlines.MIN_RATIO_TRIALS``)."""
NOISE_FLOOR = 0.02
"""The smallest noise threshold, as a relative change (2 %): a change smaller than this
is no change, however narrow its interval."""
MIN_STEPS_FOR_FENCE = 5
"""Steps with a ratio a series needs before its own variation sets the threshold (with
fewer, ``NOISE_FLOOR``): from five steps on, a single step never moves the fence."""
FENCE_IQRS = IQR_FENCE
"""How many IQRs above the upper quartile of the step sizes the noise threshold lies."""


@dataclass(frozen=True)
class StepVerdict:
    """The verdict of one step (build k−1 → build k) of one condition × input × metric."""

    verdict: Verdict
    ratio: float | None
    """median(build k) ÷ median(build k−1); ``None`` without a value on a side or with a
    median that is not positive."""
    interval: tuple[float, float] | None
    """Percentile-bootstrap interval of ``ratio`` (``None``: fewer than two values on a
    side, or a median of zero in a resample)."""
    threshold: float
    """The series' noise threshold for this metric, as a relative change (0.02 = 2 %): a
    ratio must lie beyond 1 + threshold or 1 ÷ (1 + threshold) to be faster or slower."""
    reason: Reason


def log_ratio_bound(threshold: float) -> float:
    """The noise threshold as a bound on |ln ratio| (a relative change of ``threshold``
    upwards; the same size downwards is 1 ÷ (1 + threshold))."""
    return math.log1p(threshold)


def noise_threshold(step_sizes: Sequence[float]) -> float:
    """The noise threshold (a relative change) of a series whose steps with a ratio have
    these sizes (|ln ratio|): Q3 + ``FENCE_IQRS`` × IQR of them from
    ``MIN_STEPS_FOR_FENCE`` steps on, never below ``NOISE_FLOOR``; else ``NOISE_FLOOR``."""
    if len(step_sizes) < MIN_STEPS_FOR_FENCE:
        return NOISE_FLOOR
    # Linear interpolation between order statistics, as the plan's quartiles.
    q1, q3 = np.quantile(np.asarray(step_sizes, dtype=float), [0.25, 0.75])
    fence = float(q3 + FENCE_IQRS * (q3 - q1))
    return max(NOISE_FLOOR, math.expm1(fence))


def excludes_one(interval: tuple[float, float]) -> bool:
    """The interval lies wholly above or wholly below 1×; one that reaches 1× exactly (its
    low or high end equal to 1) does not exclude it."""
    low, high = interval
    return low > 1 or high < 1


def judge_step(
    ratio: float | None,
    interval: tuple[float, float] | None,
    counts: tuple[int, int],
    threshold: float,
    better: Better,
) -> StepVerdict:
    """The verdict of one step by the module's rule: ``counts`` are the values of the
    build before and of the build after, ``threshold`` the series' noise threshold."""
    if min(counts) < MIN_STEP_VALUES:
        return StepVerdict("inconclusive", ratio, interval, threshold, "too_few")
    if ratio is None or interval is None:
        return StepVerdict("inconclusive", ratio, interval, threshold, "no_interval")
    if not excludes_one(interval):
        return StepVerdict("no change", ratio, interval, threshold, "interval_crosses_1")
    if abs(math.log(ratio)) <= log_ratio_bound(threshold):
        return StepVerdict("no change", ratio, interval, threshold, "within_noise")
    faster = ratio > 1 if better == "higher" else ratio < 1
    return StepVerdict("faster" if faster else "slower", ratio, interval, threshold, "beyond_noise")


def _ratio(current: np.ndarray, previous: np.ndarray) -> float | None:
    """median(current) ÷ median(previous), where both are positive (rates and times are;
    a change has a size, |ln ratio|, only then)."""
    if not len(current) or not len(previous):
        return None
    before, after = float(np.median(previous)), float(np.median(current))
    return after / before if before > 0 and after > 0 else None


def series_verdicts(
    builds: Sequence[np.ndarray], spec: DispersionSpec, better: Better
) -> list[StepVerdict]:
    """The verdict of each step of one condition × input × metric across ``builds`` (in
    series order, each the values of its trials that enter the statistics; missing values
    are dropped): one verdict per neighbouring pair, the threshold from every step whose
    both builds have ``MIN_STEP_VALUES`` values and a ratio."""
    arrays = [np.asarray(build, dtype=float) for build in builds]
    values = [array[~np.isnan(array)] for array in arrays]
    pairs = list(zip(values, values[1:], strict=False))
    ratios = [_ratio(current, previous) for previous, current in pairs]
    counts = [(len(previous), len(current)) for previous, current in pairs]
    sizes = [
        abs(math.log(ratio))
        for ratio, count in zip(ratios, counts, strict=True)
        if ratio is not None and min(count) >= MIN_STEP_VALUES
    ]
    threshold = noise_threshold(sizes)
    return [
        judge_step(
            ratio,
            median_ratio_interval(current, previous, spec) if ratio is not None else None,
            count,
            threshold,
            better,
        )
        for (previous, current), ratio, count in zip(pairs, ratios, counts, strict=True)
    ]
