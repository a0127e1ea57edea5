"""Open-loop load in plans: the arrival schedules (constant and Poisson, seeded and
reproducible), their validation, the planned trials they expand into, and a plan's hash
unchanged when it declares no load."""

from __future__ import annotations

import math

import numpy as np
import pytest
from pydantic import ValidationError

from sitegen.plan.arrivals import arrival_offsets
from sitegen.plan.expand import expand_trials, rate_label
from sitegen.plan.plan_file import plan_sha256
from sitegen.plan.plan_models import LoadSpec, SLOSpec
from tests.conftest import make_plan


def test_constant_schedule_is_evenly_spaced():
    load = LoadSpec(profile="constant", rates=[4.0, 0.5], requests=5)
    assert arrival_offsets(load, 0) == (0.0, 0.25, 0.5, 0.75, 1.0)
    assert arrival_offsets(load, 1) == (0.0, 2.0, 4.0, 6.0, 8.0)
    by_time = LoadSpec(profile="constant", rates=[3.0], duration_s=2.0)
    offsets = arrival_offsets(by_time, 0)
    assert len(offsets) == 6 and offsets[-1] < 2.0  # every arrival before 2 s
    # No drift: the thousandth arrival is exactly 999 gaps out.
    many = LoadSpec(profile="constant", rates=[7.0], requests=1000)
    assert arrival_offsets(many, 0)[-1] == pytest.approx(999 / 7, abs=1e-6)


def test_poisson_schedule_is_seeded_reproducible_and_exponential():
    load = LoadSpec(profile="poisson", rates=[5.0, 20.0], requests=20_000, seed=11)
    offsets = arrival_offsets(load, 0)
    assert offsets == arrival_offsets(LoadSpec(**load.model_dump()), 0)  # same seed, same times
    assert offsets[0] == 0.0 and all(np.diff(offsets) >= 0)
    gaps = np.diff(offsets)
    # Mean gap 1/rate: the standard error of the mean of n exponential gaps is mean/√n.
    assert gaps.mean() == pytest.approx(1 / 5.0, rel=4 / math.sqrt(len(gaps)))
    assert gaps.std() == pytest.approx(1 / 5.0, rel=0.05)  # exponential: sd = mean
    # Exponential: P(gap ≤ mean) = 1 − 1/e, and P(gap ≤ 3 × mean) = 1 − 1/e³.
    for multiple in (1, 3):
        share = (gaps <= multiple / 5.0).mean()
        assert share == pytest.approx(1 - math.exp(-multiple), abs=0.015)
    # Each rate its own stream; another seed, other times.
    other_rate = np.diff(arrival_offsets(load, 1))
    assert other_rate.mean() == pytest.approx(1 / 20.0, rel=0.05)
    assert not np.allclose(other_rate[:50] * 4, gaps[:50])
    reseeded = LoadSpec(profile="poisson", rates=[5.0, 20.0], requests=20_000, seed=12)
    assert arrival_offsets(reseeded, 0) != offsets


def test_poisson_by_duration_stops_at_the_duration():
    load = LoadSpec(profile="poisson", rates=[10.0], duration_s=30.0, seed=3)
    offsets = arrival_offsets(load, 0)
    assert offsets[-1] < 30.0
    # About rate × duration arrivals (Poisson: ± a few √300).
    assert abs(len(offsets) - 300) < 4 * math.sqrt(300)
    assert len(offsets) <= load.expected_requests()


@pytest.mark.parametrize(
    ("load", "message"),
    [
        ({"profile": "poisson", "requests": 3}, "needs rates"),
        ({"profile": "poisson", "rates": [1.0]}, "give requests (per run) or duration_s"),
        (
            {"profile": "constant", "rates": [1.0], "requests": 2, "duration_s": 3},
            "give requests (per run) or duration_s",
        ),
        ({"profile": "constant", "rates": [0.0], "requests": 2}, "is not a rate above 0"),
        ({"profile": "constant", "rates": [2.0, 2.0], "requests": 2}, "each rate may appear once"),
        ({"profile": "concurrency", "rates": [2.0]}, "takes no rates"),
    ],
)
def test_invalid_load_is_refused_in_one_line(load, message):
    with pytest.raises(ValidationError) as caught:
        make_plan(load=load)
    assert message in str(caught.value)


def test_slo_needs_a_target_and_an_open_loop_load():
    with pytest.raises(ValidationError, match="at least one target"):
        SLOSpec()
    with pytest.raises(ValidationError, match="declare load with a constant or poisson"):
        make_plan(slo={"ttft_p95_s": 1.0})
    with pytest.raises(ValidationError, match="declare load with a constant or poisson"):
        make_plan(load={"profile": "concurrency"}, slo={"ttft_p95_s": 1.0})


def test_a_huge_load_is_refused_before_expanding():
    with pytest.raises(ValidationError, match="requests planned"):
        make_plan(load={"profile": "poisson", "rates": [10_000.0], "duration_s": 86_400})


def test_load_runs_are_planned_trials_after_each_conditions_repetitions():
    plan = make_plan(
        load={"profile": "poisson", "rates": [8.0, 2.5], "requests": 3, "seed": 5},
        slo={"ttft_p95_s": 1.0},
    )
    trials = expand_trials(plan)
    loads = [t for t in trials if t.load_rate is not None]
    # 2 conditions × 2 inputs × 2 rates × 3 requests.
    assert len(loads) == 24
    assert len({t.trial_id for t in trials}) == len(trials)
    assert loads[0].trial_id == "off/short/load-8/q0"
    assert "off/padded/load-2.5/q2" in {t.trial_id for t in loads}
    # Sequential: a condition's load runs follow its repetitions, before the next condition.
    off = [t.condition_id for t in trials if t.role == "measured"]
    assert off.index("on") == 2 * 3 + 12
    run = [t for t in loads if t.round_key == loads[0].round_key]
    assert [t.user for t in run] == [0, 1, 2] and {t.concurrency for t in run} == {3}
    assert [t.scheduled_s for t in run] == list(arrival_offsets(plan.load, 0))
    assert all(t.runs_together for t in run)
    # The same schedule for every condition and input of a rate.
    for t in loads:
        assert t.scheduled_s == arrival_offsets(plan.load, t.repetition)[t.user]
    assert [t.seed for t in run] == [plan.sampling.seed_base + k for k in range(3)]


def test_interleaved_load_runs_alternate_their_conditions():
    plan = make_plan(
        order="interleaved", load={"profile": "constant", "rates": [1.0, 2.0], "requests": 2}
    )
    loads = [t for t in expand_trials(plan) if t.load_rate is not None]
    runs = list(dict.fromkeys((t.input_id, t.load_rate, t.condition_id) for t in loads))
    assert runs[:4] == [
        ("short", 1.0, "off"),
        ("short", 1.0, "on"),
        ("short", 2.0, "on"),
        ("short", 2.0, "off"),
    ]


def test_plans_without_load_keep_their_hash():
    plan = make_plan()
    assert plan_sha256(plan) == plan_sha256(make_plan(load=None, slo=None))
    assert plan_sha256(make_plan(load={"profile": "concurrency"})) != plan_sha256(plan)


def test_rate_labels_are_exact():
    assert [rate_label(r) for r in (2.0, 0.5, 12.25, 1234.567)] == ["2", "0.5", "12.25", "1234.567"]
