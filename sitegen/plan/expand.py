"""Expanding a plan into the ordered list of trials it pre-registers."""

from __future__ import annotations

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


def expand_trials(plan: Plan) -> list[TrialSpec]:
    """Every planned request in run order; ids are stable so a campaign can resume.

    Speed trials come first (sequential blocks or interleaved rounds in the plan's
    ``round_order``), then the quality pairs: each problem × seed under the off and on
    conditions, in the quality section's ``pair_order``.
    """
    items = plan_items(plan)
    first_input = next(iter(items))
    sampling = plan.sampling
    planned: list[tuple[str, str, Role, int, int]] = []

    def warmups(condition_id: str) -> None:
        for k in range(plan.warmups):
            planned.append((condition_id, first_input, "warmup", k, sampling.seed_base + k))

    def measured(condition_id: str, input_id: str, repetition: int) -> None:
        seed = sampling.seed_base + repetition * sampling.seed_stride
        planned.append((condition_id, input_id, "measured", repetition, seed))

    if plan.order == "sequential":
        for condition in plan.conditions:
            warmups(condition.id)
            for spec in plan.inputs:
                for repetition in range(plan.repetitions):
                    measured(condition.id, spec.id, repetition)
    else:
        for condition in plan.conditions:
            warmups(condition.id)
        for spec in plan.inputs:
            for repetition in range(plan.repetitions):
                # ``alternate``: reverse odd rounds so neither condition always runs second.
                reverse = plan.round_order != "as-listed" and repetition % 2 == 1
                conditions = plan.conditions[::-1] if reverse else plan.conditions
                for condition in conditions:
                    measured(condition.id, spec.id, repetition)

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

    return [
        TrialSpec(
            trial_id=_trial_id(condition_id, input_id, role, repetition),
            condition_id=condition_id,
            input_id=input_id,
            role=role,
            repetition=repetition,
            seed=seed,
            order_index=index,
        )
        for index, (condition_id, input_id, role, repetition, seed) in enumerate(planned)
    ]


def _trial_id(condition_id: str, input_id: str, role: Role, repetition: int) -> str:
    if role == "warmup":
        return f"{condition_id}/warmup-{repetition}"
    return f"{condition_id}/{input_id}/r{repetition}"
