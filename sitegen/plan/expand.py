"""Expanding a plan into the ordered list of trials it pre-registers."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from itertools import chain
from typing import Literal

from sitegen.plan.arrivals import arrival_offsets
from sitegen.plan.items import plan_items
from sitegen.plan.plan_models import ConditionSpec, LoadSpec, Plan

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
    rounds), each run's requests in schedule order; then the quality pairs: each problem ×
    seed under the off and on conditions, in the quality section's ``pair_order``.
    """
    items = plan_items(plan)
    first_input = next(iter(items))
    load = plan.load if plan.load is not None and plan.load.open_loop else None
    order = _sequential if plan.order == "sequential" else _interleaved
    speed = order(plan, first_input, load)
    quality_items = [item.item_id for item in items.values() if item.kind != "speed"]
    planned = chain(speed, _quality_pairs(plan, quality_items))
    for index, request in enumerate(planned):
        yield TrialSpec(
            trial_id=request.trial_id(),
            condition_id=request.condition_id,
            input_id=request.input_id,
            role=request.role,
            repetition=request.repetition,
            seed=request.seed,
            order_index=index,
            user=request.user,
            concurrency=request.users,
            load_rate=request.rate,
            scheduled_s=request.offset,
        )


@dataclass(frozen=True, slots=True)
class _Request:
    """A planned request before its place in the run order is counted (``TrialSpec``'s
    fields but ``order_index``)."""

    condition_id: str
    input_id: str
    role: Role
    repetition: int
    seed: int
    user: int = 0
    users: int = 1
    rate: float | None = None
    offset: float | None = None

    def trial_id(self) -> str:
        """Stable across runs of the plan: what resuming finds a trial's records by."""
        if self.role == "warmup":
            return f"{self.condition_id}/warmup-{self.repetition}"
        if self.rate is not None:
            return f"{self.condition_id}/{self.input_id}/load-{rate_label(self.rate)}/q{self.user}"
        if self.users > 1:
            return f"{self.condition_id}/{self.input_id}/r{self.repetition}/u{self.user}"
        return f"{self.condition_id}/{self.input_id}/r{self.repetition}"


def _sequential(plan: Plan, first_input: str, load: LoadSpec | None) -> Iterator[_Request]:
    """Condition after condition: its warm-ups, its repetitions of every input, then its
    open-loop ``load`` runs."""
    for condition in plan.conditions:
        yield from _warmups(plan, condition.id, first_input)
        for spec in plan.inputs:
            for repetition in range(plan.repetitions):
                yield from _measured(plan, condition.id, spec.id, repetition, condition.concurrency)
        if load is not None:
            for spec in plan.inputs:
                for rate_index in range(len(load.rates)):
                    yield from _load_run(plan, load, condition.id, spec.id, rate_index)


def _interleaved(plan: Plan, first_input: str, load: LoadSpec | None) -> Iterator[_Request]:
    """Every condition's warm-ups, then rounds of the conditions per input and repetition,
    then rounds of their open-loop ``load`` runs per input and rate; ``alternate``
    reverses the odd rounds so neither condition always runs second."""
    for condition in plan.conditions:
        yield from _warmups(plan, condition.id, first_input)
    for spec in plan.inputs:
        for repetition in range(plan.repetitions):
            for condition in _round_conditions(plan, repetition):
                yield from _measured(plan, condition.id, spec.id, repetition, condition.concurrency)
    if load is not None:
        for spec in plan.inputs:
            for rate_index in range(len(load.rates)):
                for condition in _round_conditions(plan, rate_index):
                    yield from _load_run(plan, load, condition.id, spec.id, rate_index)


def _round_conditions(plan: Plan, round_index: int) -> list[ConditionSpec]:
    """The conditions in a round's order: ``alternate`` reverses the odd rounds."""
    reverse = plan.round_order != "as-listed" and round_index % 2 == 1
    return plan.conditions[::-1] if reverse else plan.conditions


def _quality_pairs(plan: Plan, item_ids: list[str]) -> Iterator[_Request]:
    """Each problem × seed under the off and on conditions, in ``pair_order``."""
    quality = plan.quality
    if quality is None:
        return
    pair_index = 0
    for item_id in item_ids:
        for k in range(quality.seeds):
            pair = [quality.off_condition, quality.on_condition]
            if quality.pair_order == "alternate" and pair_index % 2:
                pair.reverse()
            for condition_id in pair:
                yield from _measured(plan, condition_id, item_id, k)
            pair_index += 1


def _warmups(plan: Plan, condition_id: str, input_id: str) -> Iterator[_Request]:
    """A condition's warm-ups, each alone, warm-up k seeded ``seed_base + k``."""
    for k in range(plan.warmups):
        yield _Request(condition_id, input_id, "warmup", k, plan.sampling.seed_base + k)


def _measured(
    plan: Plan, condition_id: str, input_id: str, repetition: int, users: int = 1
) -> Iterator[_Request]:
    """One round: ``users`` requests together, seeded from the repetition's seed."""
    seed = plan.sampling.seed_base + repetition * plan.sampling.seed_stride
    for user in range(users):
        yield _Request(condition_id, input_id, "measured", repetition, seed + user, user, users)


def _load_run(
    plan: Plan, load: LoadSpec, condition_id: str, input_id: str, rate_index: int
) -> Iterator[_Request]:
    """A run's requests in schedule order; request k's seed is ``seed_base + k``."""
    offsets = arrival_offsets(load, rate_index)
    rate = load.rates[rate_index]
    for k, offset in enumerate(offsets):
        seed = plan.sampling.seed_base + k
        yield _Request(
            condition_id, input_id, "measured", rate_index, seed, k, len(offsets), rate, offset
        )


def rate_label(rate: float) -> str:
    """A rate as trial ids and run ids write it: ``2`` for 2.0, ``0.5``, ``12.25`` (exact:
    two rates never share a label)."""
    return str(int(rate)) if float(rate).is_integer() else repr(float(rate))
