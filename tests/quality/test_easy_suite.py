"""The easy set: opt-in English one-step problems for a very small model (the CPU demo).
Their answers are recomputed here from the question text alone, independently of the
generator, and scored from JSON like every other problem."""

from __future__ import annotations

import re

import pytest

from sitegen.plan.demo import DEMO_QUALITY_PLAN
from sitegen.plan.items import make_suite, plan_items, suite_sha256
from sitegen.plan.plan_models import QualitySpec
from sitegen.quality.scoring import score_answer
from sitegen.quality.suites import (
    ALL_DOMAINS,
    DOMAINS,
    EASY_DOMAIN,
    EASY_EXAMPLE_VALUE,
    EASY_TEMPLATES,
    generate_suite,
)

INSTRUCTION = f'Reply with JSON only, like {{"answer": {EASY_EXAMPLE_VALUE}}}.\n'


@pytest.fixture(scope="module")
def easy_suite():
    return generate_suite("easy", per_template=20, seed=11, domains=(EASY_DOMAIN,))


def _recomputed(template_id: str, body: str) -> int:
    """The answer read off the question text by a separate parser (never the generator)."""
    patterns = {
        "easy.count": r"The box holds (\d+) (\w+)\. How many \2 are in the box\?",
        "easy.age": r"(\w+) is (\d+) years old\. How old is \1\?",
        "easy.price": r"A (\w+) costs (\d+) dollars\. How many dollars does the \1 cost\?",
        "easy.add": r"What is (\d) \+ (\d)\?",
    }
    match = re.fullmatch(patterns[template_id], body)
    assert match, (template_id, body)
    if template_id == "easy.add":
        return int(match[1]) + int(match[2])
    return int(match[1] if template_id == "easy.count" else match[2])


def test_the_easy_set_is_its_own_domain_and_never_in_the_default_suite():
    assert EASY_DOMAIN not in DOMAINS and (*DOMAINS, EASY_DOMAIN) == ALL_DOMAINS
    assert EASY_DOMAIN.label.ja and EASY_DOMAIN.label.en
    assert [t.template_id for t in EASY_TEMPLATES] == list(EASY_DOMAIN.template_ids)
    assert all(t.domain == "easy" and t.answer_kind == "integer" for t in EASY_TEMPLATES)
    default = generate_suite("x", per_template=1, seed=0)
    assert not any(p.domain == "easy" for p in default.problems)


def test_easy_answers_agree_with_the_question_text(easy_suite):
    problems = easy_suite.problems
    assert len(problems) == 20 * len(EASY_TEMPLATES)
    assert problems[0].problem_id == "easy-001" and problems[-1].problem_id == "easy-080"
    for problem in problems:
        assert problem.question.startswith(INSTRUCTION)
        body = problem.question.removeprefix(INSTRUCTION)
        assert problem.answer.kind == "integer" and problem.answer.key == "answer"
        assert problem.answer.value == _recomputed(problem.template_id, body), problem
        # Copying the format example is never a correct answer.
        assert problem.answer.value != EASY_EXAMPLE_VALUE


def test_easy_generation_is_deterministic_and_prefix_stable(easy_suite):
    again = generate_suite("easy", per_template=20, seed=11, domains=(EASY_DOMAIN,))
    assert again == easy_suite
    small = generate_suite("easy", per_template=2, seed=11, domains=(EASY_DOMAIN,))
    for template_id in EASY_DOMAIN.template_ids:
        first_two = [p.question for p in easy_suite.problems if p.template_id == template_id][:2]
        assert [p.question for p in small.problems if p.template_id == template_id] == first_two


@pytest.mark.parametrize(
    ("text", "outcome"),
    [
        ('{"answer": 7}', "correct"),
        ('Sure.\n```json\n{"answer": 7}\n```', "correct"),
        (f'{{"answer": {EASY_EXAMPLE_VALUE}}}', "wrong"),
        ('{"answer": "7"}', "format_error"),
        ('{"answer": 7.5}', "wrong"),
        ("The answer is 7.", "format_error"),
    ],
)
def test_easy_answers_are_scored_from_the_json(text, outcome):
    problem = next(
        p
        for p in generate_suite("easy", per_template=20, seed=11, domains=(EASY_DOMAIN,)).problems
        if p.answer.value == 7
    )
    assert score_answer(text, "stop", True, problem.answer).outcome == outcome
    assert score_answer(text, "length", True, problem.answer).outcome == "truncated"


def _quality(templates):
    draft = QualitySpec(
        suite_id="demo",
        per_template=2,
        suite_seed=7,
        templates=templates,
        suite_sha256="0" * 64,
        max_output_tokens=32,
        off_condition="off",
        on_condition="on",
    )
    return draft.model_copy(update={"suite_sha256": suite_sha256(draft)})


def test_a_plan_gets_the_easy_set_only_by_naming_its_templates():
    japanese = _quality(["arithmetic.change", "logic.order"])
    standard = generate_suite("demo", per_template=2, seed=7)
    kept = [p for p in standard.problems if p.template_id in ("arithmetic.change", "logic.order")]
    assert list(make_suite(japanese).problems) == kept  # same problems, same ids, same hash
    mixed = make_suite(_quality(["arithmetic.change", "easy.price"])).problems
    assert [p.template_id for p in mixed] == ["arithmetic.change"] * 2 + ["easy.price"] * 2
    assert [p.problem_id for p in mixed][2:] == ["easy-005", "easy-006"]
    with pytest.raises(Exception, match="unknown template"):
        make_suite(_quality(["easy.nope"]))


def test_the_demo_quality_campaign_runs_the_easy_set():
    quality = DEMO_QUALITY_PLAN.quality
    assert set(quality.templates) == set(EASY_DOMAIN.template_ids)
    items = plan_items(DEMO_QUALITY_PLAN)  # the registered hash matches the generator
    problems = [i for i in items.values() if i.kind == "problem"]
    assert problems and all(i.problem.domain == "easy" for i in problems)
