"""What each trial's ``input_id`` refers to: a speed input, a suite problem or a
document task, regenerated deterministically from the plan."""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from typing import Literal

from sitegen.core.errors import ConfigError
from sitegen.plan.plan_models import Plan, QualitySpec
from sitegen.quality.documents import DocumentTask, compose_document_prompt, generate_document_task
from sitegen.quality.suites import (
    EASY_DOMAIN,
    Problem,
    Suite,
    canonical_sha256,
    generate_suite,
)


@dataclass(frozen=True)
class PlanItem:
    """One prompt of the plan."""

    item_id: str
    kind: Literal["speed", "problem", "document"]
    text: str
    target_prompt_tokens: int | None
    max_output_tokens: int
    problem: Problem | None = None
    document: DocumentTask | None = None

    @property
    def expected_json(self) -> str | None:
        """The correct answer as the JSON object the item asks for (every item of a document
        task); None for a speed input."""
        if self.problem is not None:
            answer = self.problem.answer
            return json.dumps({answer.key: answer.value}, ensure_ascii=False)
        if self.document is not None:
            return json.dumps({s.key: s.value for s in self.document.items}, ensure_ascii=False)
        return None


def make_suite(quality: QualitySpec) -> Suite:
    """The plan's problem suite, restricted to its templates. The easy set's templates are
    generated only when ``quality.templates`` names one of them (after the Japanese suite's,
    in their own domain), so a plan without them keeps its suite and hash."""
    suite = _generate(quality.suite_id, quality.per_template, quality.suite_seed)
    if quality.templates is None:
        return suite
    problems = suite.problems
    if set(quality.templates) & set(EASY_DOMAIN.template_ids):
        easy = _generate(quality.suite_id, quality.per_template, quality.suite_seed, easy=True)
        problems = (*problems, *easy.problems)
    unknown = set(quality.templates) - {p.template_id for p in problems}
    if unknown:
        raise ConfigError(f"quality.templates: unknown template id(s) {sorted(unknown)}")
    kept = tuple(p for p in problems if p.template_id in quality.templates)
    return _restricted(suite, kept)


@cache
def _generate(suite_id: str, per_template: int, seed: int, easy: bool = False) -> Suite:
    if easy:
        return generate_suite(suite_id, per_template, seed, domains=(EASY_DOMAIN,))
    return generate_suite(suite_id, per_template, seed)


def _restricted(suite: Suite, problems: tuple[Problem, ...]) -> Suite:
    return suite.model_copy(
        update={
            "problems": problems,
            "content_sha256": canonical_sha256([p.model_dump(mode="json") for p in problems]),
        }
    )


def suite_sha256(quality: QualitySpec) -> str:
    """The hash to register in ``quality.suite_sha256``."""
    return make_suite(quality).content_sha256


def plan_items(plan: Plan) -> dict[str, PlanItem]:
    """Every item of the plan by id; refuses a suite whose content changed since registration."""
    items = {
        spec.id: PlanItem(
            spec.id, "speed", spec.text, spec.target_prompt_tokens, spec.max_output_tokens
        )
        for spec in plan.inputs
    }
    quality = plan.quality
    if quality is None:
        return items
    suite = make_suite(quality)
    if suite.content_sha256 != quality.suite_sha256:
        raise ConfigError(
            f"quality.suite_sha256: the generated suite hashes to {suite.content_sha256}, "
            f"not the registered {quality.suite_sha256}; the generator changed — register a new plan"
        )
    for problem in suite.problems:
        items[problem.problem_id] = PlanItem(
            problem.problem_id,
            "problem",
            problem.question,
            None,
            quality.max_output_tokens,
            problem=problem,
        )
    for spec in quality.documents:
        task = generate_document_task(spec.task_id, spec.n_records, spec.seed)
        items[spec.task_id] = PlanItem(
            spec.task_id,
            "document",
            compose_document_prompt(task),
            spec.target_prompt_tokens,
            spec.max_output_tokens,
            document=task,
        )
    duplicates = len(plan.inputs) + len(suite.problems) + len(quality.documents) - len(items)
    if duplicates:
        raise ConfigError("input, problem and document ids must be distinct")
    return items
