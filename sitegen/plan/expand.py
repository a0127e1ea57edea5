"""Expanding a plan into the ordered list of trials it pre-registers."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Literal

from sitegen.plan.arrivals import arrival_offsets
from sitegen.plan.items import plan_items
from sitegen.plan.plan_models import Plan

Role = Literal["warmup", "measured"]
RoundKey = tuple[str, str, str, int, float | None]
"""Condition, input, role, repetition (a load run: the rate's index) and offered rate."""


@dataclass(frozen=True)
class TrialSpec:
    """One planned request (input to the runner)."""

    trial_id: str
    condition_id: str
    input_id: str
    role: Role
    repetition: int
    seed: int
    order_index: int
    user: int = 0
    """Index of the simulated user within a concurrent round (0 when requests run alone)."""
    concurrency: int = 1
    """Requests of the round this trial belongs to (its condition's ``concurrency``;
    warm-ups and quality answers run alone); of a load run, the run's requests."""
    load_rate: float | None = None
    """Offered rate (requests/s) of the open-loop load run this trial belongs to; ``None``
    for closed rounds. A load run's ``repetition`` is the rate's index in ``load.rates``
    and its ``user`` the request's index in the run."""
    scheduled_s: float | None = None
    """When the request is to be sent, seconds after its load run starts (``None``: not a
    load run)."""

    @property
    def round_key(self) -> RoundKey:
        """Trials that run together share it: condition, input, role, repetition and the
        offered rate of a load run."""
        return (self.condition_id, self.input_id, self.role, self.repetition, self.load_rate)

    @property
    def runs_together(self) -> bool:
        """Part of a unit of several requests: a concurrent round or a load run (a load
        run of one request included, as its records carry the run's figures)."""
        return self.concurrency > 1 or self.load_rate is not None


def expand_trials(plan: Plan) -> list[TrialSpec]:
    """Every planned request in run order (``iter_trials``)."""
    return list(iter_trials(plan))


def iter_trials(plan: Plan) -> Iterator[TrialSpec]:
    """Every planned request in run order, one at a time; ids are stable so a campaign can
    resume.

    Speed trials come first (sequential blocks or interleaved rounds in the plan's
    ``round_order``), each condition's open-loop load runs after its repetitions (in
    interleaved plans after every round, the conditions of each rate alternating like
    rounds), each run's requests in schedule order; then the quality pairs: each problem × seed under the off and on
    conditions, in the quality section's ``pair_order``.
    """
    items = plan_items(plan)
    first_input = next(iter(items))
    sampling = plan.sampling
    planned: list[tuple[str, str, Role, int, int, int, int, float | None, float | None]] = []
    concurrency = {c.id: c.concurrency for c in plan.conditions}

    def warmups(condition_id: str) -> None:
        for k in range(plan.warmups):
            planned.append(
                (condition_id, first_input, "warmup", k, sampling.seed_base + k, 0, 1, None, None)
            )

    def measured(condition_id: str, input_id: str, repetition: int, users: int = 1) -> None:
        seed = sampling.seed_base + repetition * sampling.seed_stride
        for user in range(users):
            planned.append(
                (
                    condition_id,
                    input_id,
                    "measured",
                    repetition,
                    seed + user,
                    user,
                    users,
                    None,
                    None,
                )
            )

    def load_runs(runs: list[tuple[str, str, int]]) -> None:
        """Each run's requests in schedule order; request k's seed is ``seed_base + k``."""
        for condition_id, input_id, i in runs:
            offsets = schedules[i]
            rate = rates[i]
            for k, offset in enumerate(offsets):
                planned.append(
                    (
                        condition_id,
                        input_id,
                        "measured",
                        i,
                        sampling.seed_base + k,
                        k,
                        len(offsets),
                        rate,
                        offset,
                    )
                )
        runs.clear()

    load = plan.load if plan.load is not None and plan.load.open_loop else None
    schedules = [arrival_offsets(load, i) for i in range(len(load.rates))] if load else []
    rates = load.rates if load else []
    # Load runs: (condition, input, rate index) in run order, listed by ``load_runs``.
    runs: list[tuple[str, str, int]] = []

    if plan.order == "sequential":
        for condition in plan.conditions:
            warmups(condition.id)
            for spec in plan.inputs:
                for repetition in range(plan.repetitions):
                    measured(condition.id, spec.id, repetition, condition.concurrency)
            for spec in plan.inputs:
                runs.extend((condition.id, spec.id, i) for i in range(len(schedules)))
            load_runs(runs)
    else:
        for condition in plan.conditions:
            warmups(condition.id)
        for spec in plan.inputs:
            for repetition in range(plan.repetitions):
                # ``alternate``: reverse odd rounds so neither condition always runs second.
                reverse = plan.round_order != "as-listed" and repetition % 2 == 1
                conditions = plan.conditions[::-1] if reverse else plan.conditions
                for condition in conditions:
                    measured(condition.id, spec.id, repetition, concurrency[condition.id])
        for spec in plan.inputs:
            for i in range(len(schedules)):
                reverse = plan.round_order != "as-listed" and i % 2 == 1
                conditions = plan.conditions[::-1] if reverse else plan.conditions
                runs.extend((condition.id, spec.id, i) for condition in conditions)
        load_runs(runs)

    quality = plan.quality
    if quality is not None:
        quality_items = [i for i in items.values() if i.kind != "speed"]
        pair_index = 0
        for item in quality_items:
            for k in range(quality.seeds):
                pair = [quality.off_condition, quality.on_condition]
                if quality.pair_order == "alternate" and pair_index % 2:
                    pair.reverse()
                for condition_id in pair:
                    measured(condition_id, item.item_id, k)
                pair_index += 1

    for index, (
        condition_id,
        input_id,
        role,
        repetition,
        seed,
        user,
        users,
        rate,
        offset,
    ) in enumerate(planned):
        yield TrialSpec(
            trial_id=_trial_id(condition_id, input_id, role, repetition, user, users, rate),
            condition_id=condition_id,
            input_id=input_id,
            role=role,
            repetition=repetition,
            seed=seed,
            order_index=index,
            user=user,
            concurrency=users,
            load_rate=rate,
            scheduled_s=offset,
        )


def _trial_id(
    condition_id: str,
    input_id: str,
    role: Role,
    repetition: int,
    user: int,
    users: int,
    rate: float | None = None,
) -> str:
    if role == "warmup":
        return f"{condition_id}/warmup-{repetition}"
    if rate is not None:
        return f"{condition_id}/{input_id}/load-{rate_label(rate)}/q{user}"
    if users > 1:
        return f"{condition_id}/{input_id}/r{repetition}/u{user}"
    return f"{condition_id}/{input_id}/r{repetition}"


def rate_label(rate: float) -> str:
    """A rate as trial ids and run ids write it: ``2`` for 2.0, ``0.5``, ``12.25`` (exact:
    two rates never share a label)."""
    return str(int(rate)) if float(rate).is_integer() else repr(float(rate))
