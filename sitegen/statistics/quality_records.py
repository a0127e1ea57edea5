"""From a campaign's quality records to the tables the quality statistics take (pure).

Scoring happens here, at build time, from the stored full texts: the answers and
the scorer are both published, so every score can be recomputed.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

import pandas as pd

from sitegen.plan.items import PlanItem
from sitegen.plan.plan_models import Plan
from sitegen.quality.scoring import score_answer, score_document
from sitegen.records.annotations import PostHocAnalysis
from sitegen.statistics.quality import (
    IdenticalShareResult,
    NonInferiorityResult,
    SensitivityResult,
    greedy_identical_share,
    non_inferiority,
    pair_table,
    post_hoc,
    problem_differences,
    sensitivity,
)

OUTCOMES = ("correct", "wrong", "format_error", "truncated", "not_reached", "error")
"""Scored outcomes, in display order; all but ``correct`` are failures, reported apart."""


@dataclass(frozen=True)
class QualityTables:
    """Scored quality trials of one campaign."""

    answers: pd.DataFrame
    """One row per scored problem answer (both factors)."""
    document_items: pd.DataFrame
    """One row per document task item × seed × factor."""
    documents: pd.DataFrame
    """One row per document answer (passed only if every item is right)."""
    incomplete_pairs: int
    """Pairs left out because one side failed (failed attempts are excluded, never scored)."""
    problems: pd.DataFrame = field(default_factory=pd.DataFrame)
    """One row per scored problem: ``problem_id, domain, question, expected`` (the correct
    answer as the JSON object the question asks for), so every score can be checked."""


def score_quality(
    plan: Plan,
    items: dict[str, PlanItem],
    rows: pd.DataFrame,
    texts: Callable[[list[int]], Iterable[dict[str, str | None]]],
) -> QualityTables:
    """Score every complete pair's answers. ``rows`` are the records as columns (a
    campaign keeps no texts in memory: ``Campaign.rows``); ``texts(indices)`` yields the
    texts of the records at ``indices``, in that order (``Campaign.iter_texts``)."""
    quality = plan.quality
    assert quality is not None
    factor_of = {quality.off_condition: "off", quality.on_condition: "on"}
    quality_inputs = [i for i, item in items.items() if item.kind != "speed"]
    # Only the columns scoring reads: three copies of every column of nearly every record
    # (measured, ok, scored) would be a large build's peak of memory.
    measured = rows.loc[
        (rows["role"] == "measured") & rows["input_id"].isin(quality_inputs),
        [*SCORED_FIELDS, "status"],
    ]
    ok = measured[measured["status"] == "ok"]
    # pandas-stubs types agg's result as a scalar; a set per group is what pandas returns.
    sides = ok.groupby(["input_id", "repetition"], sort=False)["condition_id"].agg(
        lambda conditions: {factor_of[c] for c in conditions}  # type: ignore[type-var]
    )
    complete = {key for key, found in sides.items() if found == {"off", "on"}}
    all_pairs = set(zip(measured["input_id"], measured["repetition"], strict=True))
    scored = ok[[key in complete for key in zip(ok["input_id"], ok["repetition"], strict=True)]]
    problems: dict[str, dict[str, object]] = {}
    tables: dict[str, list[pd.DataFrame]] = {"answers": [], "document_items": [], "documents": []}
    # A block at a time: each block's values become columns before the next is scored, so
    # the Python objects alive at once stay few (400,000 answers would scatter them).
    for start in range(0, len(scored), SCORE_BLOCK):
        block = scored.iloc[start : start + SCORE_BLOCK]
        scored_block = _score_block(block, texts(list(block.index)), items, factor_of, problems)
        for name, columns in scored_block.items():
            if columns:
                tables[name].append(pd.DataFrame(columns))
    described = sorted(problems.values(), key=lambda problem: str(problem["problem_id"]))
    return QualityTables(
        answers=_concat(tables["answers"]),
        document_items=_concat(tables["document_items"]),
        documents=_concat(tables["documents"]),
        incomplete_pairs=len(all_pairs - complete),
        problems=pd.DataFrame(described),
    )


SCORE_BLOCK = 4096
"""Answers scored at a time."""

SCORED_FIELDS = (
    "input_id",
    "repetition",
    "condition_id",
    "finish",
    "answer_reached",
    "generated_tokens",
    "trial_id",
    "order_index",
)
"""The record columns an answer's row is made from."""


def _concat(frames: list[pd.DataFrame]) -> pd.DataFrame:
    """The blocks as one table with the types one table of all rows would have (a block
    whose column is all missing is untyped until then); the blocks are emptied."""
    if not frames:
        return pd.DataFrame()
    if len(frames) == 1:
        return frames[0]
    # A column at a time, each block's piece let go once joined: the blocks and the whole
    # table are never both in memory.
    columns = {
        name: pd.concat([frame.pop(name) for frame in frames], ignore_index=True).infer_objects()
        for name in list(frames[0].columns)
    }
    return pd.DataFrame(columns, copy=False)


def _score_block(
    block: pd.DataFrame,
    block_texts: Iterable[dict[str, str | None]],
    items: dict[str, PlanItem],
    factor_of: dict[str, str],
    problems: dict[str, dict[str, object]],
) -> dict[str, dict[str, list]]:
    """The scored answers, document items and documents of one block of records, as
    column lists; each problem's description is added to ``problems``."""
    fields = SCORED_FIELDS
    # Python values with None for missing, as the answer tables have always held.
    block_rows = block[list(fields)].astype(object).where(block[list(fields)].notna(), None)
    answers: dict[str, list] = {}
    doc_items: dict[str, list] = {}
    documents: dict[str, list] = {}
    for r, record_texts in zip(block_rows.to_dict("records"), block_texts, strict=True):
        text = record_texts["text"] or ""
        item = items[r["input_id"]]
        base = {
            "problem_id": r["input_id"],
            "seed": r["repetition"],
            "factor": factor_of[r["condition_id"]],
            "condition_id": r["condition_id"],
            "finish": r["finish"],
            "answer_reached": r["answer_reached"],
            "generated_tokens": r["generated_tokens"],
            "trial_id": r["trial_id"],
            "order_index": r["order_index"],
        }
        if item.problem is not None:
            problems.setdefault(
                r["input_id"],
                {
                    "problem_id": r["input_id"],
                    "domain": item.problem.domain,
                    "question": item.problem.question,
                    "expected": item.expected_json,
                },
            )
            score = score_answer(text, r["finish"], r["answer_reached"], item.problem.answer)
            _append(
                answers,
                {
                    **base,
                    "template_id": item.problem.template_id,
                    "domain": item.problem.domain,
                    "outcome": score.outcome,
                    "reason": score.reason,
                    "answered": score.answered,
                    "correct": score.outcome == "correct",
                    # Only compared for identical outputs: the digest, not the whole text.
                    "text_sha256": hashlib.sha256(text.encode("utf-8")).hexdigest(),
                },
            )
        elif item.document is not None:
            scored = score_document(text, r["finish"], r["answer_reached"], item.document)
            _append(
                documents,
                {
                    **base,
                    "template_id": "document",
                    "outcome": scored.outcome,
                    "correct": scored.passed,
                    "n_correct_items": scored.n_correct,
                },
            )
            for item_score in scored.items:
                _append(
                    doc_items,
                    {
                        **base,
                        "template_id": "document",
                        "item": item_score.key,
                        "outcome": item_score.outcome,
                        "correct": item_score.outcome == "correct",
                    },
                )
    return {"answers": answers, "document_items": doc_items, "documents": documents}


def _append(columns: dict[str, list], row: dict[str, object]) -> None:
    for name, value in row.items():
        columns.setdefault(name, []).append(value)


def with_truncation_counts(pairs: pd.DataFrame, answers: pd.DataFrame, by: str) -> pd.DataFrame:
    """``pairs`` (one row per ``by`` group) with each group's own length-capped and
    answer-not-reached counts per factor (C-TRUNC: the counts of the same set)."""
    columns = {}
    for factor in ("off", "on"):
        # Only the columns counted: every column of half the answers is a large copy.
        side = answers.loc[answers["factor"] == factor, ["outcome", by]]
        for outcome, name in (("truncated", "truncated"), ("not_reached", "not_reached")):
            # One grouped count per column (not one filter per group: thousands of problems).
            counts = (side["outcome"] == outcome).groupby(side[by]).sum()
            columns[f"{factor}_{name}"] = pairs[by].map(counts).fillna(0).astype(int)
    return pairs.assign(**columns)


def outcome_counts(frame: pd.DataFrame) -> pd.DataFrame:
    """Per factor: answers, each outcome's count — truncations beside every score (C-TRUNC)."""
    rows = []
    for factor in ("off", "on"):
        part = frame.loc[frame["factor"] == factor, ["outcome"]] if len(frame) else frame
        row = {"factor": factor, "n": len(part)}
        for outcome in OUTCOMES:
            row[outcome] = int((part["outcome"] == outcome).sum()) if len(part) else 0
        rows.append(row)
    return pd.DataFrame(rows)


def per_problem_table(answers: pd.DataFrame, problems: pd.DataFrame) -> pd.DataFrame:
    """``problem_differences`` of ``answers`` with each problem's domain, question and
    correct answer, and its length-capped and answer-not-reached counts per factor."""
    differences = problem_differences(answers)
    if len(problems):
        differences = differences.merge(problems, on="problem_id", how="left")
    table = with_truncation_counts(differences, answers, "problem_id")
    first = ["problem_id", "template_id", "domain", "question", "expected"]
    return table[[c for c in first if c in table] + [c for c in table if c not in first]]


@dataclass(frozen=True)
class QualitySummary:
    """The quality results of one campaign, ready to render."""

    tables: QualityTables
    margin: float
    primary: NonInferiorityResult | None
    """The pre-registered non-inferiority result (``None`` without problem pairs)."""
    sensitivity: SensitivityResult | None
    identical: IdenticalShareResult | None
    pairs: pd.DataFrame
    """Pair table over all problems."""
    pairs_by_domain: pd.DataFrame
    """Pair table per domain, with each domain's own truncation counts."""
    problems: pd.DataFrame
    """Per problem: its question and correct answer, correct seeds off and on, discordant
    seeds, accuracies and their difference, and its own truncation counts."""
    outcomes: pd.DataFrame
    document_pairs_by_item: pd.DataFrame
    document_pairs: pd.DataFrame
    document_outcomes: pd.DataFrame


def summarize_quality(plan: Plan, tables: QualityTables) -> QualitySummary:
    quality = plan.quality
    assert quality is not None
    answers = tables.answers
    has_answers = len(answers) > 0
    has_documents = len(tables.documents) > 0
    empty = pd.DataFrame()
    return QualitySummary(
        tables=tables,
        margin=quality.margin,
        primary=non_inferiority(
            answers,
            quality.margin,
            rng_seed=quality.bootstrap_seed,
            n_boot=quality.bootstrap_resamples,
        )
        if has_answers
        else None,
        sensitivity=sensitivity(answers) if has_answers else None,
        identical=greedy_identical_share(answers) if has_answers else None,
        pairs=pair_table(answers) if has_answers else empty,
        pairs_by_domain=with_truncation_counts(pair_table(answers, by="domain"), answers, "domain")
        if has_answers
        else empty,
        problems=per_problem_table(answers, tables.problems) if has_answers else empty,
        outcomes=outcome_counts(answers),
        document_pairs_by_item=pair_table(tables.document_items, by="item")
        if has_documents
        else empty,
        document_pairs=pair_table(tables.documents) if has_documents else empty,
        document_outcomes=outcome_counts(tables.documents),
    )


@dataclass(frozen=True)
class PostHocResult:
    """A post-hoc analysis of the annotations beside its non-inferiority result."""

    analysis: PostHocAnalysis
    result: NonInferiorityResult


def post_hoc_results(
    plan: Plan, quality: QualitySummary | None, analyses: list[PostHocAnalysis]
) -> list[PostHocResult]:
    """Each post-hoc analysis of the annotations: the non-inferiority test again with
    its templates removed (labelled, shown beside the primary result)."""
    settings = plan.quality
    if quality is None or settings is None:
        return []
    return [
        PostHocResult(
            analysis,
            post_hoc(
                quality.tables.answers,
                exclude_templates=analysis.exclude_templates,
                label=analysis.label,
                reason=analysis.reason,
                margin=settings.margin,
                rng_seed=settings.bootstrap_seed,
                n_boot=settings.bootstrap_resamples,
            ),
        )
        for analysis in analyses
    ]
