from __future__ import annotations

import json

import pytest

from sitegen.core.strict_model import field_docstrings
from sitegen.quality.answers import UNKNOWN
from sitegen.quality.documents import (
    CAUSE_CHOICES,
    BusinessRecord,
    DocumentTask,
    compose_document_prompt,
    generate_document_task,
)


@pytest.mark.parametrize("model", [BusinessRecord, DocumentTask])
def test_every_field_has_a_docstring_for_the_data_dictionary(model):
    assert [name for name in model.model_fields if name not in field_docstrings(model)] == []


@pytest.mark.parametrize("n_records", [50, 600])
def test_expected_values_are_recomputed_from_the_material(n_records):
    task = generate_document_task("doc", n_records, seed=11)
    lines = task.material.splitlines()[1:]
    rows = [json.loads(line) for line in lines]
    assert rows == [r.model_dump() for r in task.records]
    assert len({row["id"] for row in rows}) == n_records

    expected = {item.key: item.value for item in task.items}
    department = task.question.split("departmentが「")[1].split("」")[0]
    looked_up = task.question.split("idが「")[1].split("」")[0]
    waits = [row["wait_seconds"] for row in rows]
    assert expected == {
        "row_count": n_records,
        "min_wait_seconds": min(waits),
        "max_wait_seconds": max(waits),
        "department_quantity_total": sum(
            row["quantity"] for row in rows if row["department"] == department
        ),
        "lookup_wait_seconds": next(r["wait_seconds"] for r in rows if r["id"] == looked_up),
        "wait_cause": UNKNOWN,
    }


def test_the_cause_is_unknown_because_the_records_do_not_hold_it():
    task = generate_document_task("doc", 50, seed=3)
    cause = task.items[-1]
    assert cause.kind == "choice" and cause.value == UNKNOWN and cause.choices == CAUSE_CHOICES
    assert set(BusinessRecord.model_fields) == {
        "id",
        "date",
        "department",
        "quantity",
        "wait_seconds",
        "status",
    }


def test_the_question_names_every_item_and_the_material_does_not_give_the_row_count():
    task = generate_document_task("doc", 50, seed=3)
    for item in task.items:
        assert item.key in task.question
    assert "50" not in task.material.splitlines()[0]


def test_generation_is_deterministic_and_seeded():
    first = generate_document_task("doc", 50, seed=1, filler_tokens_hint=1800)
    assert first == generate_document_task("doc", 50, seed=1, filler_tokens_hint=1800)
    assert first.filler_tokens_hint == 1800
    assert first.content_sha256 != generate_document_task("doc", 50, seed=2).content_sha256


def test_prompt_puts_filler_first_then_material_then_question():
    task = generate_document_task("doc", 5, seed=1)
    prompt = compose_document_prompt(task, "FILLER")
    assert prompt.index("FILLER") < prompt.index(task.material) < prompt.index(task.question)
    assert compose_document_prompt(task).startswith(task.material)


def test_at_least_one_record_is_required():
    with pytest.raises(ValueError):
        generate_document_task("doc", 0, seed=1)
