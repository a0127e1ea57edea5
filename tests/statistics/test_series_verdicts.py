"""The verdict of each step of a build series (issue 39): faster or slower only when the
ratio's interval excludes 1× and the change exceeds the series' own noise; the edge cases
of that rule."""

from __future__ import annotations

import math

import numpy as np
import pytest

from sitegen.plan.plan_models import DispersionSpec
from sitegen.statistics.series_verdicts import (
    MIN_STEP_VALUES,
    MIN_STEPS_FOR_FENCE,
    NOISE_FLOOR,
    excludes_one,
    judge_step,
    noise_threshold,
    series_verdicts,
)

SPEC = DispersionSpec()


def tight(median: float, n: int = 8) -> np.ndarray:
    """``n`` trials within ±0.05 % of ``median``: every interval between two such builds
    is narrow."""
    return median * (1 + np.linspace(-0.0005, 0.0005, n))


@pytest.mark.parametrize("interval", [(1.0, 1.2), (0.8, 1.0)])
def test_an_interval_touching_1x_exactly_is_no_change(interval):
    ratio = sum(interval) / 2
    found = judge_step(ratio, interval, (10, 10), NOISE_FLOOR, "higher")
    assert (found.verdict, found.reason) == ("no change", "interval_crosses_1")
    assert not excludes_one(interval)
    assert excludes_one((1.0000001, 1.2)) and excludes_one((0.8, 0.9999999))


def test_an_interval_excluding_1x_within_the_noise_threshold_is_no_change():
    found = judge_step(1.015, (1.01, 1.02), (10, 10), NOISE_FLOOR, "higher")
    assert (found.verdict, found.reason) == ("no change", "within_noise")
    # The same from trials: a 1.5 % change measured tightly is below the 2 % floor.
    (step,) = series_verdicts([tight(100.0), tight(101.5)], SPEC, "higher")
    assert step.interval is not None and excludes_one(step.interval)
    assert (step.verdict, step.reason, step.threshold) == ("no change", "within_noise", 0.02)


def test_a_clear_regression_in_a_quiet_series_is_slower_and_does_not_raise_the_fence():
    medians = [100.0, 100.5, 99.8, 100.3, 80.0, 80.2]
    steps = series_verdicts([tight(m) for m in medians], SPEC, "higher")
    assert [s.verdict for s in steps] == [
        "no change",
        "no change",
        "no change",
        "slower",
        "no change",
    ]
    assert steps[3].reason == "beyond_noise" and steps[3].ratio == pytest.approx(80 / 100.3)
    assert {s.threshold for s in steps} == {NOISE_FLOOR}
    # With five steps or more the largest step never moves the upper quartile: the fence
    # is the same whether the regression is 20 % or as quiet as the others.
    sizes = [0.03, 0.04, 0.035, 0.045]
    assert noise_threshold([*sizes, 0.3]) == noise_threshold([*sizes, 0.05])
    assert noise_threshold([*sizes, 0.3]) == pytest.approx(math.expm1(0.045 + 1.5 * 0.01))


def test_a_noisy_series_has_a_high_fence_and_its_large_changes_are_no_change():
    medians = [100.0, 112.0, 95.0, 110.0, 93.0, 108.0]
    steps = series_verdicts([tight(m) for m in medians], SPEC, "higher")
    assert all(s.interval is not None and excludes_one(s.interval) for s in steps)
    assert [s.verdict for s in steps] == ["no change"] * 5
    assert {s.reason for s in steps} == {"within_noise"}
    assert steps[0].threshold > 0.19


def test_fewer_steps_than_the_fence_needs_use_the_floor():
    assert noise_threshold([0.5] * (MIN_STEPS_FOR_FENCE - 1)) == NOISE_FLOOR
    assert noise_threshold([0.001] * MIN_STEPS_FOR_FENCE) == NOISE_FLOOR


def test_too_few_values_or_no_interval_is_inconclusive():
    few = judge_step(2.0, (1.5, 2.5), (MIN_STEP_VALUES - 1, 10), NOISE_FLOOR, "higher")
    assert (few.verdict, few.reason) == ("inconclusive", "too_few")
    none = judge_step(None, None, (10, 10), NOISE_FLOOR, "higher")
    assert (none.verdict, none.reason) == ("inconclusive", "no_interval")
    (step,) = series_verdicts([tight(100.0), tight(50.0, n=2)], SPEC, "higher")
    assert (step.verdict, step.reason) == ("inconclusive", "too_few")
    assert step.ratio == pytest.approx(0.5)


def test_failed_trials_have_no_value_and_may_leave_a_build_inconclusive():
    """A failed trial's value is missing: dropped, so the build's n is what succeeded."""
    failed = np.array([50.0, 50.1, np.nan, np.nan, np.nan, np.nan])
    before, during, after = tight(100.0), failed, tight(100.0)
    first, second = series_verdicts([before, during, after], SPEC, "higher")
    assert first.reason == second.reason == "too_few"
    enough = np.array([50.0, 50.1, 50.05, np.nan])
    (step,) = series_verdicts([before, enough], SPEC, "higher")
    assert (step.verdict, step.ratio) == ("slower", pytest.approx(0.5, abs=1e-3))


def test_a_lower_time_to_first_token_is_faster():
    up = judge_step(1.3, (1.2, 1.4), (10, 10), NOISE_FLOOR, "lower")
    down = judge_step(0.7, (0.6, 0.8), (10, 10), NOISE_FLOOR, "lower")
    assert (up.verdict, down.verdict) == ("slower", "faster")
    rate_up = judge_step(1.3, (1.2, 1.4), (10, 10), NOISE_FLOOR, "higher")
    assert rate_up.verdict == "faster"
    steps = series_verdicts([tight(0.5), tight(0.8)], SPEC, "lower")
    assert steps[0].verdict == "slower"
