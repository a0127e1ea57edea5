"""Arrival schedules of open-loop load runs, computed from the plan before anything runs.

A run (one condition × speed input × offered rate) sends request k at offset ``t_k``
seconds after the run starts, whether or not the earlier requests have ended (open loop).
The first request is sent at once (``t_0 = 0``); the gaps after it are:

- ``constant``: every gap is 1 ÷ rate;
- ``poisson``: gaps drawn from the exponential distribution with mean 1 ÷ rate (a Poisson
  process), by ``random.Random`` seeded with the plan's ``load.seed`` and the rate's
  position in ``load.rates``. Python guarantees the same sequence from the same seed
  across versions, so the schedule is as fixed as the plan.

With ``requests: n`` a run has n arrivals; with ``duration_s: t`` every arrival before t
seconds. Every condition and input shares the schedule of a rate.
"""

from __future__ import annotations

import random
from functools import cache

from sitegen.plan.plan_models import LoadSpec

OFFSET_DIGITS = 6
"""Scheduled offsets are rounded to the microsecond (as records store times)."""


def schedule_seed(seed: int, rate_index: int) -> int:
    """The generator seed of the rate at ``rate_index``: one independent stream per rate."""
    return (rate_index << 32) | seed


def arrival_offsets(load: LoadSpec, rate_index: int) -> tuple[float, ...]:
    """The scheduled send offsets (seconds from the run's start) of one run at
    ``load.rates[rate_index]``, ascending, the first 0."""
    return _offsets(
        load.profile,
        load.rates[rate_index],
        load.requests,
        load.duration_s,
        schedule_seed(load.seed, rate_index),
    )


@cache
def _offsets(
    profile: str, rate: float, requests: int | None, duration_s: float | None, seed: int
) -> tuple[float, ...]:
    mean_gap = 1.0 / rate
    draw = random.Random(seed).expovariate if profile == "poisson" else None
    offsets: list[float] = []
    t = 0.0
    while True:
        if requests is not None and len(offsets) >= requests:
            break
        if duration_s is not None and t >= duration_s:
            break
        offsets.append(round(t, OFFSET_DIGITS))
        t += draw(rate) if draw else mean_gap
        if draw is None:
            # Multiples, not a running sum: no drift over thousands of gaps.
            t = len(offsets) * mean_gap
    return tuple(offsets)
