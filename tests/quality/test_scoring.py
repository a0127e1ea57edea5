from __future__ import annotations

import json
from fractions import Fraction

import pytest

from sitegen.core.strict_model import field_docstrings
from sitegen.quality.answers import (
    EVIDENCE_CHOICES,
    boolean_answer,
    choice_answer,
    decimal_answer,
    integer_answer,
)
from sitegen.quality.documents import generate_document_task
from sitegen.quality.scoring import (
    DocumentScore,
    ItemScore,
    Score,
    extract_last_json_object,
    score_answer,
    score_document,
)

INTEGER = integer_answer(12)
PERCENT = decimal_answer(Fraction(9395, 100), 2)
CHOICE = choice_answer("不明", EVIDENCE_CHOICES)
BOOLEAN = boolean_answer(True)


def score(text, expected, finish="stop", reached=True):
    return score_answer(text, finish, reached, expected)


@pytest.mark.parametrize("model", [Score, ItemScore, DocumentScore])
def test_every_field_has_a_docstring_for_the_data_dictionary(model):
    assert [name for name in model.model_fields if name not in field_docstrings(model)] == []


@pytest.mark.parametrize(
    ("text", "expected", "outcome", "reason"),
    [
        ('{"answer": 12}', INTEGER, "correct", None),
        ('{"answer": 12.0}', INTEGER, "correct", None),
        ('{"answer": 12.5}', INTEGER, "wrong", "value_mismatch"),
        ('{"answer": 13}', INTEGER, "wrong", "value_mismatch"),
        ('{"answer": "12"}', INTEGER, "format_error", "not_a_number"),
        ('{"answer": "12個"}', INTEGER, "format_error", "not_a_number"),
        ('{"answer": true}', INTEGER, "format_error", "not_a_number"),
        ('{"answer": 93.95}', PERCENT, "correct", None),
        ('{"answer": 93.950}', PERCENT, "correct", None),
        ('{"answer": 93.9}', PERCENT, "wrong", "value_mismatch"),
        ('{"answer": 93.951}', PERCENT, "format_error", "too_many_decimals"),
        ('{"answer": "93.95%"}', PERCENT, "format_error", "not_a_number"),
        ('{"answer": " 不明 "}', CHOICE, "correct", None),
        ('{"answer": "はい"}', CHOICE, "wrong", "value_mismatch"),
        ('{"answer": "分からない"}', CHOICE, "format_error", "not_a_choice"),
        ('{"answer": null}', CHOICE, "format_error", "not_a_string"),
        ('{"answer": true}', BOOLEAN, "correct", None),
        ('{"answer": false}', BOOLEAN, "wrong", "value_mismatch"),
        ('{"answer": "true"}', BOOLEAN, "format_error", "not_a_boolean"),
        ('{"result": 12}', INTEGER, "format_error", "missing_key"),
        ("答えは12です。", INTEGER, "format_error", "no_json_object"),
        ('{"answer": NaN}', INTEGER, "format_error", "no_json_object"),
    ],
)
def test_values_must_match_exactly_as_specified(text, expected, outcome, reason):
    result = score(text, expected)
    assert (result.outcome, result.reason) == (outcome, reason)


def test_decimal_answer_accepts_an_integer_equal_to_it():
    spec = decimal_answer(Fraction(94), 1)
    assert score('{"answer": 94}', spec).outcome == "correct"


def test_the_last_top_level_object_counts_even_inside_a_fence():
    text = (
        '最初は {"answer": 11} と考えました。\n```json\n{"answer": 12, "note": {"answer": 13}}\n```'
    )
    assert score(text, INTEGER).outcome == "correct"
    assert extract_last_json_object(text) == {"answer": 12, "note": {"answer": 13}}
    assert extract_last_json_object('{broken {"answer": 1} tail }') == {"answer": 1}


def test_the_answered_value_keeps_its_exact_digits():
    assert score('{"answer": 93.950}', PERCENT).answered == "93.950"
    assert score('{"answer": "93.95%"}', PERCENT).answered == '"93.95%"'
    assert score("no json", PERCENT).answered is None


@pytest.mark.parametrize(
    ("finish", "reached", "text", "outcome"),
    [
        ("length", True, '{"answer": 12}', "truncated"),
        ("error", True, '{"answer": 12}', "error"),
        ("stop", False, "", "not_reached"),
        ("stop", True, "   ", "not_reached"),
        ("length", False, "", "truncated"),
    ],
)
def test_only_a_natural_finish_with_answer_text_can_be_correct(finish, reached, text, outcome):
    assert score(text, INTEGER, finish=finish, reached=reached).outcome == outcome


def _document_answer(task, **overrides):
    values = {item.key: item.value for item in task.items} | overrides
    return json.dumps(values, ensure_ascii=False)


def test_a_document_passes_only_when_every_item_is_correct():
    task = generate_document_task("doc-1", 50, seed=4)
    perfect = score_document(_document_answer(task), "stop", True, task)
    assert perfect.passed and perfect.outcome == "correct"
    assert perfect.n_correct == len(task.items) == 6

    total = next(i.value for i in task.items if i.key == "department_quantity_total")
    one_off = score_document(
        _document_answer(task, department_quantity_total=total + 1), "stop", True, task
    )
    assert not one_off.passed and one_off.outcome == "wrong" and one_off.n_correct == 5
    wrong = [item for item in one_off.items if item.outcome != "correct"]
    assert [(i.key, i.outcome) for i in wrong] == [("department_quantity_total", "wrong")]


def test_unanswered_document_items_count_as_wrong():
    task = generate_document_task("doc-1", 50, seed=4)
    partial = json.loads(_document_answer(task))
    del partial["wait_cause"]
    result = score_document(json.dumps(partial, ensure_ascii=False), "stop", True, task)
    assert not result.passed and result.n_correct == 5
    assert result.items[-1].outcome == "format_error" and result.items[-1].reason == "missing_key"


def test_a_truncated_document_answer_scores_every_item_as_truncated():
    task = generate_document_task("doc-1", 50, seed=4)
    result = score_document(_document_answer(task), "length", True, task)
    assert result.outcome == "truncated" and not result.passed and result.n_correct == 0
    assert {item.outcome for item in result.items} == {"truncated"}
    no_json = score_document("考え中…", "stop", True, task)
    assert no_json.outcome == "format_error"
    assert {item.reason for item in no_json.items} == {"no_json_object"}
