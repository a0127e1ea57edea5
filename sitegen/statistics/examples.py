"""Examples side by side (pure): for each selected answer, the problem as the plan wrote
it, the correct answer, and the answers of the compared conditions to the same item and
seed, each with its scored outcome, so a reader can check the answer and the tables.

For a quality item (a suite problem or a document task) the sides are the pair: the same
problem × seed with the factor off and on. For a speed input they are every condition's
answer to the same input and repetition, in plan order (there is nothing to score).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

import pandas as pd

from sitegen.plan.items import PlanItem
from sitegen.plan.plan_models import Plan
from sitegen.quality.scoring import score_answer, score_document
from sitegen.records.annotations import CuratedExample
from sitegen.records.campaign import Campaign
from sitegen.records.record_models import TrialRecord
from sitegen.statistics.trials import enters_statistics


@dataclass(frozen=True)
class ExampleSide:
    """One condition's answer to the example's item and seed."""

    condition_id: str
    factor: Literal["off", "on"] | None
    """``off``/``on`` for the two sides of a quality pair; None for a speed input."""
    record: TrialRecord | None
    """The answer with its texts; None when this side has no successful measured trial."""
    outcome: str | None
    """Scored outcome (``correct``, ``wrong``, ``format_error`` …) of a quality answer; None
    for a speed input or a missing side."""
    answered: str | None
    """The value the scorer extracted, as JSON text (problems; None otherwise)."""
    items_correct: int | None = None
    """Document tasks: the items answered correctly (of ``items_total``)."""
    items_total: int | None = None


@dataclass(frozen=True)
class ExampleView:
    """A selected answer with what a reader needs to check it."""

    record: TrialRecord
    """The selected trial, with its texts."""
    kind: Literal["speed", "problem", "document"]
    problem: str
    """The plan item's text (material and question), never the filler before it."""
    expected: str | None
    """The correct answer as the JSON object the scorer expects; None for a speed input."""
    sides: tuple[ExampleSide, ...]


def _side(
    condition_id: str, factor: Literal["off", "on"] | None, record: TrialRecord | None, item
) -> ExampleSide:
    if record is None or record.metrics is None or item.kind == "speed":
        return ExampleSide(condition_id, factor, record, None, None)
    m = record.metrics
    if item.problem is not None:
        score = score_answer(record.text, m.finish, m.answer_reached, item.problem.answer)
        return ExampleSide(condition_id, factor, record, score.outcome, score.answered)
    scored = score_document(record.text, m.finish, m.answer_reached, item.document)
    return ExampleSide(
        condition_id,
        factor,
        record,
        scored.outcome,
        None,
        items_correct=scored.n_correct,
        items_total=len(scored.items),
    )


Side = tuple[str, Literal["off", "on"] | None, int | None]
"""A side of an example: its condition, its factor (a quality pair's) and the row of its
answer (``None``: none)."""


def example_views(
    plan: Plan,
    items: dict[str, PlanItem],
    rows: pd.DataFrame,
    selected: Sequence[int],
    with_texts: Callable[[list[int]], Iterable[TrialRecord]],
) -> list[ExampleView]:
    """A view of each record at ``selected`` (row indices of ``rows``, the records as
    columns), in that order. ``with_texts(indices)`` yields the records at ``indices``
    whole, in that order (``Campaign.iter_full_records``); each needed record is read
    once."""
    # Only the columns read: every column of the rows taken costs more than the views.
    chosen = rows.loc[list(selected), ["input_id", "repetition"]]
    # Only the rows that can be a selected answer's side: those of the same inputs.
    side_rows = enters_statistics(rows) & rows["input_id"].isin(set(chosen["input_id"]))
    sides_of = rows.loc[side_rows, ["condition_id", "input_id", "repetition"]]
    keys = zip(sides_of["condition_id"], sides_of["input_id"], sides_of["repetition"], strict=True)
    usable_at = dict(zip(keys, sides_of.index, strict=True))
    quality = plan.quality
    layouts: list[tuple[int, list[Side]]] = []
    needed: dict[int, None] = {}
    selected_rows = zip(selected, chosen["input_id"], chosen["repetition"], strict=True)
    for index, input_id, repetition in selected_rows:
        needed[index] = None
        item = items.get(input_id)
        wanted: list[tuple[str, Literal["off", "on"] | None]]
        if item is not None and item.kind != "speed" and quality is not None:
            wanted = [(quality.off_condition, "off"), (quality.on_condition, "on")]
        else:
            wanted = [(c.id, None) for c in plan.conditions]
        sides: list[Side] = []
        for condition_id, factor in wanted:
            at = usable_at.get((condition_id, input_id, repetition))
            if at is None and factor is None:
                continue  # a speed condition without this repetition is left out
            if at is not None:
                needed[at] = None
            sides.append((condition_id, factor, at))
        layouts.append((index, sides))
    full = dict(zip(needed, with_texts(list(needed)), strict=True))
    views = []
    for index, sides in layouts:
        record = full[index]
        item = items.get(record.input_id)
        if item is None:  # not an item of the plan (C-PLANNED refuses it before this)
            views.append(ExampleView(record, "speed", "", None, ()))
            continue
        views.append(
            ExampleView(
                record=record,
                kind=item.kind,
                problem=item.text,
                expected=item.expected_json,
                sides=tuple(
                    _side(condition_id, factor, None if at is None else full[at], item)
                    for condition_id, factor, at in sides
                ),
            )
        )
    return views


@dataclass(frozen=True)
class ExampleDraw:
    """The examples page: curated answers with their declaration, then a seeded draw."""

    curated: list[tuple[ExampleView, CuratedExample]]
    drawn: list[ExampleView]
    """Each answer with its problem, correct answer and the compared answers beside it."""
    pool_size: int
    """Measured, successful trials the random draw was made from."""


def draw_examples(campaign: Campaign, items: dict[str, PlanItem]) -> ExampleDraw:
    """Curated examples in declaration order, then the plan's ``examples.count`` answers
    drawn with ``random.Random(examples.seed).sample`` from the usable trials in run
    order."""
    declared = campaign.annotations.curated_examples
    rows = campaign.rows
    usable_rows = rows.loc[campaign.table.usable, ["trial_id", "order_index"]]
    # Only the curated trials are looked up (every trial id as a Python string would be
    # a large dict).
    curated_rows = usable_rows[usable_rows["trial_id"].isin([e.trial_id for e in declared])]
    by_id = dict(zip(curated_rows["trial_id"], curated_rows.index, strict=True))
    chosen = [e for e in declared if e.trial_id in by_id]
    pool = [int(i) for i in usable_rows.sort_values("order_index", kind="stable").index]
    draw = campaign.plan.examples
    drawn = random.Random(draw.seed).sample(pool, min(draw.count, len(pool)))
    views = example_views(
        campaign.plan,
        items,
        rows,
        [int(by_id[e.trial_id]) for e in chosen] + drawn,
        campaign.iter_full_records,
    )
    curated = list(zip(views[: len(chosen)], chosen, strict=True))
    return ExampleDraw(curated, views[len(chosen) :], len(pool))
