"""Document tasks: synthetic business records with several scored items per task.

The generator writes support-desk records as JSON lines and asks for six items, each
recomputed from the records: row count, minimum and maximum wait, one department's total
quantity, one record's wait looked up by id, and the cause of the waits, which the records
do not contain (correct answer: 「不明」). The runner pads the prompt to its target length
with filler placed *before* the material (see :func:`compose_document_prompt`).
Reference sizes: 50 records for 4K-token inputs, 600 records for 32K.
"""

from __future__ import annotations

import datetime as dt
import random

from sitegen.core.strict_model import StrictModel
from sitegen.quality.answers import (
    UNKNOWN,
    AnswerSpec,
    choice_answer,
    integer_answer,
    value_type_label,
)
from sitegen.quality.suites import canonical_sha256

DOCUMENT_GENERATOR_VERSION = "1"
DEPARTMENTS = ("営業部", "経理部", "物流部", "サポート部", "開発部", "人事部")
STATUSES = ("完了", "対応中", "保留")
CAUSE_CHOICES = ("天候", "人員不足", "システム障害", UNKNOWN)
_FIRST_DAY = dt.date(2025, 4, 1)
_DAYS = 91


class BusinessRecord(StrictModel):
    """One synthetic support-desk record of the material."""

    id: str
    """Record id, unique within the task, e.g. ``R-01234``."""
    date: str
    """Date the request was received (ISO 8601)."""
    department: str
    """Department that handled the request."""
    quantity: int
    """Number of items (件数) in the request."""
    wait_seconds: int
    """Seconds the requester waited."""
    status: str
    """Processing status: 完了, 対応中 or 保留."""


class DocumentTask(StrictModel):
    """A document task: the records, the text shown to the model and the scored items."""

    task_id: str
    """Id given by the plan."""
    generator_version: str
    """Version of the document generator code."""
    seed: int
    """Seed of the generator."""
    n_records: int
    """Number of records in the material (reference: 50 at 4K, 600 at 32K)."""
    filler_tokens_hint: int | None
    """Filler tokens the runner expects to add before the material; informational only,
    the runner measures and records the real prompt length."""
    records: tuple[BusinessRecord, ...]
    """The records, in the order they appear in the material."""
    material: str
    """The records as shown to the model: a heading, then one JSON object per line."""
    question: str
    """Japanese question asking for one JSON object holding every item."""
    items: tuple[AnswerSpec, ...]
    """Scored items, each with its JSON key and expected value recomputed from the records."""
    content_sha256: str
    """SHA-256 of the canonical JSON of material, question and items."""


def _make_records(rng: random.Random, n_records: int) -> list[BusinessRecord]:
    numbers = sorted(rng.sample(range(1, 100_000), n_records))
    days = sorted(rng.randrange(_DAYS) for _ in range(n_records))
    return [
        BusinessRecord(
            id=f"R-{number:05d}",
            date=(_FIRST_DAY + dt.timedelta(days=day)).isoformat(),
            department=rng.choice(DEPARTMENTS),
            quantity=rng.randint(1, 60),
            wait_seconds=rng.randint(5, 3600),
            status=rng.choice(STATUSES),
        )
        for number, day in zip(numbers, days, strict=True)
    ]


def generate_document_task(
    task_id: str, n_records: int, seed: int, filler_tokens_hint: int | None = None
) -> DocumentTask:
    """Generate a document task of ``n_records`` records, deterministic in ``seed``."""
    if n_records < 1:
        raise ValueError("n_records must be at least 1")
    rng = random.Random(f"{seed}/document/{n_records}")
    records = _make_records(rng, n_records)
    department = rng.choice([r.department for r in records])
    looked_up = rng.choice(records)
    waits = [r.wait_seconds for r in records]
    items = (
        integer_answer(len(records), key="row_count"),
        integer_answer(min(waits), key="min_wait_seconds"),
        integer_answer(max(waits), key="max_wait_seconds"),
        integer_answer(
            sum(r.quantity for r in records if r.department == department),
            key="department_quantity_total",
        ),
        integer_answer(looked_up.wait_seconds, key="lookup_wait_seconds"),
        choice_answer(UNKNOWN, CAUSE_CHOICES, key="wait_cause"),
    )
    asked = (
        "記録の行数",
        "wait_secondsの最小値",
        "wait_secondsの最大値",
        f"departmentが「{department}」の記録のquantityの合計",
        f"idが「{looked_up.id}」の記録のwait_seconds",
        "待ち時間が発生した原因。記録から判断できない場合は「不明」",
    )
    lines = "\n".join(
        f"{n}. {item.key}: {what}（{value_type_label(item)}）"
        for n, (item, what) in enumerate(zip(items, asked, strict=True), start=1)
    )
    shape = ", ".join(f'"{item.key}": …' for item in items)
    question = (
        f"上の業務記録（JSON行、1行1件）だけを使って、次の{len(items)}項目に答えてください。"
        "記録に書かれていないことは推測しないでください。\n"
        f"{lines}\n回答は {{{shape}}} の形のJSONオブジェクト1つだけで答えてください。"
        "数値には引用符や単位を付けないでください。"
    )
    record_lines = "\n".join(r.model_dump_json() for r in records)
    # No record count in the heading: the row count is one of the scored items.
    material = f"業務記録（JSON行、1行1件）:\n{record_lines}"
    content = {
        "material": material,
        "question": question,
        "items": [item.model_dump(mode="json") for item in items],
    }
    return DocumentTask(
        task_id=task_id,
        generator_version=DOCUMENT_GENERATOR_VERSION,
        seed=seed,
        n_records=n_records,
        filler_tokens_hint=filler_tokens_hint,
        records=tuple(records),
        material=material,
        question=question,
        items=items,
        content_sha256=canonical_sha256(content),
    )


def compose_document_prompt(task: DocumentTask, filler: str = "") -> str:
    """The prompt text: the runner's filler (if any), then the material, then the question."""
    parts = [filler] if filler else []
    return "\n\n".join([*parts, task.material, task.question])
