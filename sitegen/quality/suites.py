"""Problem suites: deterministic generators of short Japanese problems with exact answers.

Six domains × five templates (their makers in ``japanese_problems``, the answers they
expect in ``answers``), and an opt-in easy set (``EASY_DOMAIN``: one-step English problems
for very small models) that a plan gets only by naming its templates. Every template draws
its parameters from ``random.Random(f"{seed}/{template_id}")`` and computes the expected answer from those
parameters with Python arithmetic; the question text is only ever *written* from them,
never parsed. Seeding each template separately keeps templates independent (editing one
does not shift the others) and makes a suite prefix-stable: the first ``k`` problems of a
template are the same for every ``per_template >= k``. Any change to a template's output
must bump ``GENERATOR_VERSION``.
"""

from __future__ import annotations

import hashlib
import json
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal, cast

import sitegen.quality.japanese_problems as japanese
from sitegen.core.strict_model import StrictModel
from sitegen.core.text import Bilingual
from sitegen.quality.answers import AnswerKind, AnswerSpec, Made, answer_instruction, integer_answer

GENERATOR_VERSION = "1"

DomainId = Literal["arithmetic", "units", "records", "code", "logic", "evidence", "easy"]


class Problem(StrictModel):
    """One generated problem with its expected answer."""

    problem_id: str
    """Stable id within the suite: ``<domain>-<number>``, numbered from 001 per domain."""
    suite_id: str
    """Id of the suite the problem belongs to."""
    domain: DomainId
    """Domain the template belongs to (see the domain list)."""
    template_id: str
    """Template that generated the problem; the stratum of the bootstrap."""
    question: str
    """Full question text with the required JSON answer format: Japanese, ending with the
    format, in the standard suite; English, opening with it, in the easy set."""
    answer: AnswerSpec
    """Expected answer and its exact format."""


class Suite(StrictModel):
    """A generated problem suite: fixed before any run, identified by its content hash."""

    suite_id: str
    """Id given by the plan."""
    generator_version: str
    """Version of the generator code; the same version, seed and size give the same suite."""
    seed: int
    """Seed of the generator."""
    per_template: int
    """Problems generated per template (reference: 20, giving 600 problems)."""
    content_sha256: str
    """SHA-256 of the canonical JSON of ``problems`` (sorted keys, UTF-8, no spaces)."""
    problems: tuple[Problem, ...]
    """The problems, ordered by domain, then template, then draw."""


class TemplateInfo(StrictModel):
    """What a template asks, for per-template tables."""

    template_id: str
    """Template id, ``<domain>.<name>``."""
    domain: DomainId
    """Domain of the template."""
    label: Bilingual
    """Short name in both languages."""
    answer_kind: AnswerKind
    """JSON type of the answer the template asks for."""


class Domain(StrictModel):
    """A problem domain and its templates."""

    domain_id: DomainId
    """Domain id, also the prefix of its problem ids."""
    label: Bilingual
    """Short name in both languages."""
    template_ids: tuple[str, ...]
    """Its templates, in generation order."""


def canonical_json(value: Any) -> str:
    """JSON with sorted keys, no spaces and unescaped non-ASCII: the hashed form."""
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def canonical_sha256(value: Any) -> str:
    """SHA-256 hex digest of :func:`canonical_json` encoded as UTF-8."""
    return hashlib.sha256(canonical_json(value).encode("utf-8")).hexdigest()


# --- templates -------------------------------------------------------------------------
# Each maker returns the question body and the expected answer; the instruction is
# appended here.


def _with_answer_instruction(body: str, answer: AnswerSpec) -> str:
    return f"{body}\n{answer_instruction(answer)}"


@dataclass(frozen=True)
class _Template:
    info: TemplateInfo
    make: Callable[[random.Random], Made]
    compose: Callable[[str, AnswerSpec], str] = _with_answer_instruction
    """The full question from the body and the answer (the JSON format instruction)."""


def _template(
    template_id: str,
    kind: AnswerKind,
    ja: str,
    en: str,
    make: Callable[[random.Random], Made],
    compose: Callable[[str, AnswerSpec], str] = _with_answer_instruction,
) -> _Template:
    domain = cast(DomainId, template_id.split(".", 1)[0])  # TemplateInfo validates it
    info = TemplateInfo(
        template_id=template_id, domain=domain, label=Bilingual(ja=ja, en=en), answer_kind=kind
    )
    return _Template(info, make, compose)


_TEMPLATES: tuple[_Template, ...] = (
    _template("arithmetic.change", "integer", "おつり", "Change", japanese.arithmetic_change),
    _template(
        "arithmetic.budget", "integer", "予算残高", "Budget balance", japanese.arithmetic_budget
    ),
    _template(
        "arithmetic.discount",
        "integer",
        "割引後の合計",
        "Discounted total",
        japanese.arithmetic_discount,
    ),
    _template(
        "arithmetic.work_days", "integer", "作業日数", "Work days", japanese.arithmetic_work_days
    ),
    _template(
        "arithmetic.average", "decimal", "平均点", "Average score", japanese.arithmetic_average
    ),
    _template(
        "units.achievement", "decimal", "達成率", "Achievement rate", japanese.units_achievement
    ),
    _template(
        "units.minutes", "integer", "時間の合計（分）", "Total minutes", japanese.units_minutes
    ),
    _template(
        "units.storage", "decimal", "容量換算（GB）", "Storage in GB", japanese.units_storage
    ),
    _template(
        "units.tokens_per_second",
        "decimal",
        "毎秒トークン数",
        "Tokens per second",
        japanese.units_tokens_per_second,
    ),
    _template(
        "units.growth", "decimal", "前月比", "Month-over-month change", japanese.units_growth
    ),
    _template(
        "records.net_shipped",
        "integer",
        "出荷−返品の合計",
        "Net shipped",
        japanese.records_net_shipped,
    ),
    _template(
        "records.department_sum",
        "integer",
        "部署別合計",
        "Department total",
        japanese.records_department_sum,
    ),
    _template(
        "records.count_threshold",
        "integer",
        "条件付き件数",
        "Count above threshold",
        japanese.records_count_threshold,
    ),
    _template("records.top_store", "choice", "最大の店舗", "Top store", japanese.records_top_store),
    _template(
        "records.completed_average",
        "decimal",
        "完了案件の平均",
        "Average of completed",
        japanese.records_completed_average,
    ),
    _template(
        "code.sorted_set", "integer", "重複除去と整列", "Sorted set index", japanese.code_sorted_set
    ),
    _template("code.slice_sum", "integer", "スライスの合計", "Slice sum", japanese.code_slice_sum),
    _template(
        "code.loop_modulo",
        "integer",
        "条件付きループ",
        "Loop with modulo",
        japanese.code_loop_modulo,
    ),
    _template(
        "code.dict_count", "integer", "辞書での集計", "Dictionary count", japanese.code_dict_count
    ),
    _template("code.while_loop", "integer", "whileループ", "While loop", japanese.code_while_loop),
    _template("logic.rooms", "integer", "会議室の最小数", "Minimum rooms", japanese.logic_rooms),
    _template("logic.order", "choice", "発表順", "Presentation order", japanese.logic_order),
    _template("logic.rule_check", "boolean", "発注規則", "Reorder rule", japanese.logic_rule_check),
    _template(
        "logic.shift_overlap",
        "integer",
        "出勤日の重なり",
        "Shift overlap",
        japanese.logic_shift_overlap,
    ),
    _template(
        "logic.sum_difference",
        "integer",
        "和と差",
        "Sum and difference",
        japanese.logic_sum_difference,
    ),
    _template(
        "evidence.eligibility",
        "choice",
        "規程の適用",
        "Policy eligibility",
        japanese.evidence_eligibility,
    ),
    _template(
        "evidence.delivery",
        "choice",
        "期限内の到着",
        "Delivery deadline",
        japanese.evidence_delivery,
    ),
    _template("evidence.claim", "choice", "主張の裏付け", "Claim support", japanese.evidence_claim),
    _template(
        "evidence.stock", "choice", "在庫の充足", "Stock sufficiency", japanese.evidence_stock
    ),
    _template(
        "evidence.attendance", "choice", "出席の確認", "Attendance", japanese.evidence_attendance
    ),
)

_DOMAIN_LABELS: dict[DomainId, tuple[str, str]] = {
    "arithmetic": ("日本語の計算", "Arithmetic (Japanese)"),
    "units": ("単位・指標", "Units and metrics"),
    "records": ("資料集計", "Record aggregation"),
    "code": ("コード読解", "Code reading"),
    "logic": ("論理・制約", "Logic and constraints"),
    "evidence": ("根拠に基づく判断", "Evidence-based judgement"),
}

DOMAINS: tuple[Domain, ...] = tuple(
    Domain(
        domain_id=domain_id,
        label=Bilingual(ja=ja, en=en),
        template_ids=tuple(t.info.template_id for t in _TEMPLATES if t.info.domain == domain_id),
    )
    for domain_id, (ja, en) in _DOMAIN_LABELS.items()
)
TEMPLATES: tuple[TemplateInfo, ...] = tuple(t.info for t in _TEMPLATES)


# --- the easy set ----------------------------------------------------------------------
# Opt-in templates, never part of the default suite (a plan names them in
# ``quality.templates``): one-step English problems that a very small instruct model
# (SmolLM2-135M) answers part of the time, so a CPU demo shows a paired result that is not
# all failures. Same contract as above: parameters from the template's own RNG, the answer
# computed from them, the text only written from them, scored from the JSON answer.

EASY_EXAMPLE_VALUE = 0
"""The value in the easy set's format example; no easy answer equals it, so copying the
example is never correct."""
_EASY_ITEMS = ("apples", "pens", "books", "cups", "coins", "stamps")
_EASY_NAMES = ("Tom", "Ann", "Ken", "Mia", "Sam", "Lea")
_EASY_THINGS = ("pen", "book", "cup", "lamp", "bag", "hat")


def easy_instruction(spec: AnswerSpec) -> str:
    """The easy set's opening instruction: the JSON object, shown with a sample value."""
    if spec.kind != "integer":
        raise ValueError("the easy set asks for integers only")
    return f'Reply with JSON only, like {{"{spec.key}": {EASY_EXAMPLE_VALUE}}}.'


def _easy_compose(body: str, answer: AnswerSpec) -> str:
    return f"{easy_instruction(answer)}\n{body}"


def _easy_count(rng: random.Random) -> Made:
    items, count = rng.choice(_EASY_ITEMS), rng.randint(2, 60)
    return f"The box holds {count} {items}. How many {items} are in the box?", integer_answer(count)


def _easy_age(rng: random.Random) -> Made:
    name, age = rng.choice(_EASY_NAMES), rng.randint(5, 80)
    return f"{name} is {age} years old. How old is {name}?", integer_answer(age)


def _easy_price(rng: random.Random) -> Made:
    thing, price = rng.choice(_EASY_THINGS), rng.randint(2, 90)
    question = f"A {thing} costs {price} dollars. How many dollars does the {thing} cost?"
    return question, integer_answer(price)


def _easy_add(rng: random.Random) -> Made:
    first, second = rng.randint(1, 9), rng.randint(1, 9)
    return f"What is {first} + {second}?", integer_answer(first + second)


_EASY_TEMPLATES: tuple[_Template, ...] = (
    _template(
        "easy.count", "integer", "個数の読み取り", "Read a count", _easy_count, _easy_compose
    ),
    _template("easy.age", "integer", "年齢の読み取り", "Read an age", _easy_age, _easy_compose),
    _template(
        "easy.price", "integer", "値段の読み取り", "Read a price", _easy_price, _easy_compose
    ),
    _template("easy.add", "integer", "一桁の足し算", "One-digit sum", _easy_add, _easy_compose),
)
EASY_DOMAIN = Domain(
    domain_id="easy",
    label=Bilingual(ja="やさしい問題（英語）", en="Easy problems (English)"),
    template_ids=tuple(t.info.template_id for t in _EASY_TEMPLATES),
)
"""The easy set: its own domain, generated only when a plan asks for its templates."""
EASY_TEMPLATES: tuple[TemplateInfo, ...] = tuple(t.info for t in _EASY_TEMPLATES)
ALL_DOMAINS: tuple[Domain, ...] = (*DOMAINS, EASY_DOMAIN)
"""Every domain a problem can belong to (labels for per-domain tables)."""

# Redraws allowed per requested problem before a template is judged too narrow for the size.
_MAX_DRAWS_PER_PROBLEM = 50


def generate_suite(
    suite_id: str, per_template: int, seed: int, domains: Sequence[Domain] = DOMAINS
) -> Suite:
    """Generate ``per_template`` distinct problems from each template of ``domains`` (by
    default the 30 templates of the Japanese suite; ``(EASY_DOMAIN,)`` for the easy set).

    Deterministic: the same ``GENERATOR_VERSION``, ``per_template`` and ``seed`` give the
    same problems and ``content_sha256`` on every run and platform.
    """
    if per_template < 1:
        raise ValueError("per_template must be at least 1")
    by_id = {t.info.template_id: t for t in (*_TEMPLATES, *_EASY_TEMPLATES)}
    problems: list[Problem] = []
    for domain in domains:
        number = 0
        for template_id in domain.template_ids:
            rng = random.Random(f"{seed}/{template_id}")
            seen: set[str] = set()
            for _ in range(per_template * _MAX_DRAWS_PER_PROBLEM):
                if len(seen) == per_template:
                    break
                template = by_id[template_id]
                body, answer = template.make(rng)
                question = template.compose(body, answer)
                if question in seen:
                    continue
                seen.add(question)
                number += 1
                problems.append(
                    Problem(
                        problem_id=f"{domain.domain_id}-{number:03d}",
                        suite_id=suite_id,
                        domain=domain.domain_id,
                        template_id=template_id,
                        question=question,
                        answer=answer,
                    )
                )
            if len(seen) < per_template:
                raise ValueError(f"{template_id} cannot produce {per_template} distinct problems")
    return Suite(
        suite_id=suite_id,
        generator_version=GENERATOR_VERSION,
        seed=seed,
        per_template=per_template,
        content_sha256=canonical_sha256([p.model_dump(mode="json") for p in problems]),
        problems=tuple(problems),
    )
