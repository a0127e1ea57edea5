"""Examples side by side: each example shows the plan item's text (never the filler), the
correct answer, and the compared answers to the same item and seed with their outcomes;
every model text stays escaped."""

from __future__ import annotations

import json
import random

from sitegen.core.project import packaged_theme
from sitegen.core.string_catalog import load_strings
from sitegen.pages.directives import PageContext, directive_functions, html_environment
from sitegen.pages.i18n import Catalog
from sitegen.plan.items import plan_items
from sitegen.plan.plan_models import ExamplesSpec
from sitegen.records.campaign import read_campaign
from sitegen.statistics.examples import example_views
from sitegen.statistics.report import make_report
from tests.sitefixtures import publishable_campaign
from tests.statistics.test_quality_records import quality_plan

HOSTILE = '<script>alert("x")</script>{"answer": "<b>bold</b>"}'


def _quality_campaign(tmp_path, answer_for, plan=None):
    plan = plan or quality_plan()
    items = plan_items(plan)

    def mutate(record: dict) -> None:
        text, finish = answer_for(record, items[record["input_id"]])
        record["text"] = text
        record["metrics"]["finish"] = finish
        record["metrics"]["answer_reached"] = bool(text)

    path = publishable_campaign(tmp_path / "data", plan=plan, mutate=mutate)
    issues: list = []
    campaign = read_campaign(path.parent, issues)
    assert campaign is not None and issues == []
    return campaign, items


def _right(item) -> str:
    return item.expected_json


def _on_wrong(record, item):
    """Everything right, except the on side of the first problem's first seed (hostile)."""
    if (
        record["condition_id"] == "on"
        and record["input_id"] == "arithmetic-001"
        and record["repetition"] == 0
    ):
        return HOSTILE, "stop"
    return _right(item), "stop"


def _index(campaign, trial_id: str) -> int:
    rows = campaign.rows
    return int(rows.index[(rows["trial_id"] == trial_id) & (rows["role"] == "measured")][0])


def test_a_quality_example_shows_the_problem_the_answer_and_both_sides(tmp_path):
    campaign, items = _quality_campaign(tmp_path, _on_wrong)
    selected = _index(campaign, "on/arithmetic-001/r0")
    (view,) = example_views(
        campaign.plan, items, campaign.rows, [selected], campaign.iter_full_records
    )
    problem = items["arithmetic-001"].problem
    assert view.record.trial_id == "on/arithmetic-001/r0" and view.record.text == HOSTILE
    assert view.kind == "problem" and view.problem == problem.question
    assert json.loads(view.expected) == {"answer": problem.answer.value}
    assert [(s.factor, s.condition_id) for s in view.sides] == [("off", "off"), ("on", "on")]
    off, on = view.sides
    assert off.record.trial_id == "off/arithmetic-001/r0"  # the same problem × seed
    assert (off.outcome, on.outcome) == ("correct", "format_error")
    assert off.answered == json.dumps(problem.answer.value)
    assert on.answered == '"<b>bold</b>"' and on.record.text == HOSTILE


def test_a_document_example_scores_every_item(tmp_path):
    campaign, items = _quality_campaign(tmp_path, _on_wrong)
    (view,) = example_views(
        campaign.plan,
        items,
        campaign.rows,
        [_index(campaign, "off/doc/r1")],
        campaign.iter_full_records,
    )
    task = items["doc"].document
    assert view.kind == "document" and view.problem == items["doc"].text
    assert set(json.loads(view.expected)) == {spec.key for spec in task.items}
    assert [s.record.trial_id for s in view.sides] == ["off/doc/r1", "on/doc/r1"]
    assert all(s.outcome == "correct" and s.items_correct == s.items_total for s in view.sides)
    assert view.sides[0].items_total == len(task.items)


def test_a_speed_example_shows_the_input_without_filler_and_every_condition(tmp_path):
    path = publishable_campaign(tmp_path / "data")
    campaign = read_campaign(path.parent, [])
    items = plan_items(campaign.plan)
    selected = _index(campaign, "on/padded/r2")
    (view,) = example_views(
        campaign.plan, items, campaign.rows, [selected], campaign.iter_full_records
    )
    assert view.kind == "speed" and view.problem == "question two" and view.expected is None
    assert view.record.prompt != view.problem and view.record.prompt.endswith("question two")
    assert [s.record.trial_id for s in view.sides] == ["off/padded/r2", "on/padded/r2"]
    assert all(s.outcome is None and s.factor is None for s in view.sides)


def _render_examples(report, lang: str) -> str:
    catalog = Catalog(lang, load_strings(packaged_theme()))
    env = html_environment(str(packaged_theme() / "partials"))
    return str(directive_functions(PageContext(env, catalog, report, [report]))["examples"]())


def test_every_drawn_example_is_rendered_with_its_pair(tmp_path):
    campaign, _ = _quality_campaign(tmp_path, _on_wrong)
    report = make_report(campaign)
    drawn = report.examples.drawn
    assert drawn and report.examples.curated == []
    for lang in ("ja", "en"):
        html = _render_examples(report, lang)
        assert html.count('data-claim="example"') == len(drawn)
        assert html.count('data-factor="off"') == len(drawn)
        assert html.count('data-factor="on"') == len(drawn)
        assert html.count('data-selected="true"') == len(drawn)
        assert html.count('class="sg-text sg-problem"') == len(drawn)


def test_a_curated_hostile_answer_is_shown_beside_its_pair_escaped(tmp_path):
    no_draw = quality_plan().model_copy(update={"examples": ExamplesSpec(count=0)})
    campaign, items = _quality_campaign(tmp_path, _on_wrong, no_draw)
    annotations_path = campaign.directory / "annotations.yaml"
    annotations_path.write_text(
        "curated_examples:\n"
        "  - {trial_id: on/arithmetic-001/r0, reason: {ja: 形式の誤り, en: a format error}}\n",
        encoding="utf-8",
    )
    campaign = read_campaign(campaign.directory, [])
    report = make_report(campaign)
    ((view, example),) = report.examples.curated
    assert view.record.trial_id == "on/arithmetic-001/r0" and report.examples.drawn == []
    html = _render_examples(report, "en")
    assert html.count('data-claim="example"') == 1
    assert 'data-selected="true"' in html and 'data-outcome="format_error"' in html
    assert 'data-outcome="correct"' in html
    assert "&lt;script&gt;alert(" in html and "<script>" not in html
    assert "&lt;b&gt;bold&lt;/b&gt;" in html and "<b>" not in html
    question = items["arithmetic-001"].problem.question.split("\n")[0]
    assert question in html


def test_the_random_draw_is_the_plans_registered_seed(tmp_path):
    plan = quality_plan().model_copy(update={"examples": ExamplesSpec(count=2, seed=399)})
    campaign, _ = _quality_campaign(tmp_path, _on_wrong, plan)
    drawn = make_report(campaign).examples.drawn
    records = list(campaign.iter_full_records())
    pool = sorted(
        (i for i, r in enumerate(records) if r.role == "measured" and r.status == "ok"),
        key=lambda i: records[i].order_index,
    )
    expected = [records[i].trial_id for i in random.Random(399).sample(pool, 2)]
    assert [view.record.trial_id for view in drawn] == expected
    assert 'data-seed="399"' in _render_examples(make_report(campaign), "en")


def test_annotations_may_not_choose_the_random_seed(tmp_path):
    campaign, _ = _quality_campaign(tmp_path, _on_wrong)
    campaign.annotations_path.write_text("random_examples: {count: 1, seed: 399}\n")
    issues: list = []
    read_campaign(campaign.directory, issues)
    (issue,) = issues
    assert str(issue).count("\n") == 0
    assert "annotations.yaml → random_examples" in str(issue)
    assert "examples.seed" in str(issue)
