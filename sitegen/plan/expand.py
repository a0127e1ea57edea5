"""Expanding a plan into the ordered list of trials it pre-registers."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Literal

from sitegen.plan.items import plan_items
from sitegen.plan.models import Plan

Role = Literal["warmup", "measured"]


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
    warm-ups and quality answers run alone)."""

    @property
    def round_key(self) -> tuple[str, str, str, int]:
        """Trials that run together share it: condition, input, role and repetition."""
        return (self.condition_id, self.input_id, self.role, self.repetition)


def expand_trials(plan: Plan) -> list[TrialSpec]:
    """Every planned request in run order (``iter_trials``)."""
    return list(iter_trials(plan))


def iter_trials(plan: Plan) -> Iterator[TrialSpec]:
    """Every planned request in run order, one at a time; ids are stable so a campaign can
    resume.

    Speed trials come first (sequential blocks or interleaved rounds in the plan's
    ``round_order``), then the quality pairs: each problem × seed under the off and on
    conditions, in the quality section's ``pair_order``.
    """
    items = plan_items(plan)
    first_input = next(iter(items))
    sampling = plan.sampling
    planned: list[tuple[str, str, Role, int, int, int, int]] = []
    concurrency = {c.id: c.concurrency for c in plan.conditions}

    def warmups(condition_id: str) -> None:
        for k in range(plan.warmups):
            planned.append((condition_id, first_input, "warmup", k, sampling.seed_base + k, 0, 1))

    def measured(condition_id: str, input_id: str, repetition: int, users: int = 1) -> None:
        seed = sampling.seed_base + repetition * sampling.seed_stride
        for user in range(users):
            planned.append(
                (condition_id, input_id, "measured", repetition, seed + user, user, users)
            )

    if plan.order == "sequential":
        for condition in plan.conditions:
            warmups(condition.id)
            for spec in plan.inputs:
                for repetition in range(plan.repetitions):
                    measured(condition.id, spec.id, repetition, condition.concurrency)
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

    for index, (condition_id, input_id, role, repetition, seed, user, users) in enumerate(planned):
        yield TrialSpec(
            trial_id=_trial_id(condition_id, input_id, role, repetition, user, users),
            condition_id=condition_id,
            input_id=input_id,
            role=role,
            repetition=repetition,
            seed=seed,
            order_index=index,
            user=user,
            concurrency=users,
        )


def _trial_id(
    condition_id: str, input_id: str, role: Role, repetition: int, user: int, users: int
) -> str:
    if role == "warmup":
        return f"{condition_id}/warmup-{repetition}"
    if users > 1:
        return f"{condition_id}/{input_id}/r{repetition}/u{user}"
    return f"{condition_id}/{input_id}/r{repetition}"
