"""Objective scoring of answers requested as JSON.

A response is correct only when the engine finished naturally (``finish == "stop"``), an
answer text was reached, the last top-level JSON object in that text parses (it may sit
in a ```json fence), the key exists and its value matches exactly as specified. Every
other case is a failure, kept apart by ``outcome`` so pages can report truncations,
unreached answers, format errors and wrong answers separately.
"""

from __future__ import annotations

import json
from decimal import Decimal
from typing import Any, Literal, cast

from sitegen.core.strict_model import StrictModel
from sitegen.quality.answers import AnswerSpec
from sitegen.quality.documents import DocumentTask

Finish = Literal["stop", "length", "error"]
Outcome = Literal["correct", "wrong", "format_error", "truncated", "not_reached", "error"]


class Score(StrictModel):
    """The scored outcome of one answer."""

    outcome: Outcome
    """``correct``; ``wrong`` (well-formed but a different value); ``format_error`` (no
    JSON object, missing key, or a value of the wrong type or precision); ``truncated``
    (stopped by the output cap); ``not_reached`` (natural finish without answer text);
    ``error`` (engine error). Only ``correct`` counts as a pass."""
    reason: str | None
    """Stable code of why the answer is not correct (e.g. ``not_a_number``); null if correct."""
    answered: str | None
    """The extracted value as JSON text (exact digits kept); null when none was extracted."""


class ItemScore(StrictModel):
    """The scored outcome of one item of a document task."""

    key: str
    """JSON key of the item."""
    outcome: Outcome
    """As for a single answer; a missing key is a ``format_error`` and counts as wrong."""
    reason: str | None
    """Stable code of why the item is not correct; null if correct."""
    answered: str | None
    """The extracted value as JSON text; null when none was extracted."""


class DocumentScore(StrictModel):
    """The scored outcome of one document-task answer, item by item."""

    task_id: str
    """The task scored."""
    outcome: Outcome
    """Whole response: ``error``, ``truncated``, ``not_reached`` or ``format_error`` (no
    JSON object) when no item could be scored; else ``correct`` if every item is correct
    and ``wrong`` otherwise."""
    items: tuple[ItemScore, ...]
    """Per-item results, in the task's item order."""
    n_correct: int
    """Items answered correctly."""
    passed: bool
    """True only if every item is correct (unanswered items count as wrong)."""


class _NonFiniteNumber(ValueError):
    """NaN and Infinity are not JSON."""


def _reject_constant(name: str) -> Any:
    raise _NonFiniteNumber(name)


# Decimal keeps the digits exactly as written, so "93.950" and "93.95" can be told apart.
_DECODER = json.JSONDecoder(parse_float=Decimal, parse_constant=_reject_constant)


def extract_last_json_object(text: str) -> dict[str, Any] | None:
    """The last top-level JSON object in ``text``, or None.

    Scans left to right; each ``{`` that starts a parsable object is taken whole and the
    scan resumes after it, so objects nested in an earlier object are never returned.
    """
    last = None
    start = text.find("{")
    while start != -1:
        try:
            value, end = _DECODER.raw_decode(text, start)
        except (ValueError, RecursionError):
            start = text.find("{", start + 1)
            continue
        last = value
        start = text.find("{", end)
    return last


def _plain(value: Any) -> Any:
    if isinstance(value, Decimal):
        return float(value)
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def _json_text(value: Any) -> str:
    if isinstance(value, Decimal):
        return str(value)
    return json.dumps(_plain(value), ensure_ascii=False)


def _decimal_places(number: Decimal) -> int:
    # a finite number's exponent is an int ('n', 'N', 'F' are NaN's and inf's)
    return max(0, -cast(int, number.normalize().as_tuple().exponent))


def judge_value(value: Any, expected: AnswerSpec) -> tuple[Outcome, str | None]:
    """Compare one parsed JSON value (floats as ``Decimal``) with the expected answer."""
    if expected.kind == "boolean":
        if type(value) is not bool:
            return "format_error", "not_a_boolean"
        return ("correct", None) if value is expected.value else ("wrong", "value_mismatch")
    if expected.kind == "choice":
        if not isinstance(value, str):
            return "format_error", "not_a_string"
        chosen = value.strip()
        if chosen not in (expected.choices or ()):
            return "format_error", "not_a_choice"
        return ("correct", None) if chosen == expected.value else ("wrong", "value_mismatch")
    # A bool is an int in Python but not a number in JSON; a quoted "93.95%" is a string.
    if isinstance(value, bool) or not isinstance(value, int | Decimal):
        return "format_error", "not_a_number"
    number = Decimal(value)
    if expected.kind == "decimal" and _decimal_places(number) > (expected.decimals or 0):
        return "format_error", "too_many_decimals"
    if number == Decimal(repr(expected.value)):
        return "correct", None
    return "wrong", "value_mismatch"


def _response_failure(
    text: str, finish: Finish, answer_reached: bool
) -> tuple[Outcome, str] | None:
    if finish == "error":
        return "error", "engine_error"
    if finish == "length":
        return "truncated", "output_cap"
    if not answer_reached or not text.strip():
        return "not_reached", "no_answer_text"
    return None


def _score_key(
    found: dict[str, Any], expected: AnswerSpec
) -> tuple[Outcome, str | None, str | None]:
    if expected.key not in found:
        return "format_error", "missing_key", None
    value = found[expected.key]
    outcome, reason = judge_value(value, expected)
    return outcome, reason, _json_text(value)


def score_answer(text: str, finish: Finish, answer_reached: bool, expected: AnswerSpec) -> Score:
    """Score the answer text of one response (thinking excluded) against ``expected``."""
    failure = _response_failure(text, finish, answer_reached)
    if failure is not None:
        return Score(outcome=failure[0], reason=failure[1], answered=None)
    found = extract_last_json_object(text)
    if found is None:
        return Score(outcome="format_error", reason="no_json_object", answered=None)
    outcome, reason, answered = _score_key(found, expected)
    return Score(outcome=outcome, reason=reason, answered=answered)


def score_document(
    text: str, finish: Finish, answer_reached: bool, task: DocumentTask
) -> DocumentScore:
    """Score every item of a document task from the last JSON object of the answer text."""
    failure = _response_failure(text, finish, answer_reached)
    found = None if failure is not None else extract_last_json_object(text)
    if failure is None and found is None:
        failure = ("format_error", "no_json_object")
    items = []
    reason: str | None
    for expected in task.items:
        if found is None:
            assert failure is not None  # set above when nothing was found
            outcome, reason, answered = failure[0], failure[1], None
        else:
            outcome, reason, answered = _score_key(found, expected)
        items.append(ItemScore(key=expected.key, outcome=outcome, reason=reason, answered=answered))
    n_correct = sum(item.outcome == "correct" for item in items)
    passed = n_correct == len(items)
    if failure is not None:
        overall: Outcome = failure[0]
    else:
        overall = "correct" if passed else "wrong"
    return DocumentScore(
        task_id=task.task_id,
        outcome=overall,
        items=tuple(items),
        n_correct=n_correct,
        passed=passed,
    )
