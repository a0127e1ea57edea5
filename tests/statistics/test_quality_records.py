"""Quality trials from plan to scored pairs: the fake engine's records, with answers
rewritten per case, go through build-time scoring and the paired statistics."""

from __future__ import annotations

import json

import pytest

from sitegen.measure import run_campaign
from sitegen.plan.expand import expand_trials
from sitegen.plan.items import plan_items, suite_sha256
from sitegen.plan.plan_models import DocumentSpec, QualitySpec
from sitegen.records.campaign import read_campaign
from sitegen.statistics.quality_records import score_quality, summarize_quality
from tests.conftest import make_plan

TEMPLATES = ["arithmetic.change", "units.achievement", "logic.order"]


def quality_plan(**overrides):
    spec = dict(
        suite_id="t",
        per_template=2,
        suite_seed=3,
        templates=TEMPLATES,
        suite_sha256="0" * 64,
        documents=[DocumentSpec(task_id="doc", n_records=5, seed=2, max_output_tokens=32)],
        seeds=2,
        max_output_tokens=32,
        off_condition="off",
        on_condition="on",
        bootstrap_resamples=2000,
    )
    spec.update(overrides)
    draft = QualitySpec(**spec)
    return make_plan(
        inputs=[], quality=draft.model_copy(update={"suite_sha256": suite_sha256(draft)})
    )


def test_pairs_in_registered_order():
    plan = quality_plan(pair_order="alternate")
    quality_trials = [t for t in expand_trials(plan) if t.role == "measured"]
    assert len(quality_trials) == (6 + 1) * 2 * 2
    first_pairs = [t.condition_id for t in quality_trials[:4]]
    assert first_pairs == ["off", "on", "on", "off"]
    assert quality_trials[0].trial_id == "off/arithmetic-001/r0"


def test_changed_suite_is_refused():
    plan = quality_plan()
    tampered = plan.model_copy(
        update={"quality": plan.quality.model_copy(update={"suite_sha256": "1" * 64})}
    )
    with pytest.raises(Exception, match="suite_sha256"):
        plan_items(tampered)


def _answered_campaign(tmp_path, answer_for):
    plan = quality_plan()
    result = run_campaign(plan, tmp_path)
    items = plan_items(plan)
    path = result.directory / "records.jsonl"
    records = [json.loads(line) for line in path.read_text().splitlines()]
    for record in records:
        item = items[record["input_id"]]
        text, finish = answer_for(record, item)
        record["text"] = text
        record["metrics"]["finish"] = finish
        record["metrics"]["answer_reached"] = bool(text)
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records))
    issues = []
    campaign = read_campaign(result.directory, issues)
    return campaign, items


def _json_answer(item):
    if item.problem is not None:
        return json.dumps({"answer": item.problem.answer.value}, ensure_ascii=False)
    return json.dumps({a.key: a.value for a in item.document.items}, ensure_ascii=False)


def test_scoring_pairs_sensitivity_and_truncation(tmp_path):
    worse = "units-001"

    def answer_for(record, item):
        if (
            record["condition_id"] == "on"
            and record["input_id"] == worse
            and record["repetition"] == 0
        ):
            return '{"answer": "93.95%"}', "stop"  # a string with a unit: format error
        if record["condition_id"] == "off" and record["input_id"] == "logic-003":
            return _json_answer(item)[:5], "length"  # truncated
        return _json_answer(item), "stop"

    campaign, items = _answered_campaign(tmp_path, answer_for)
    tables = score_quality(campaign.plan, items, campaign.rows, campaign.iter_texts)
    summary = summarize_quality(campaign.plan, tables)
    assert len(tables.answers) == 6 * 2 * 2  # warm-ups excluded
    pairs = summary.pairs.iloc[0]
    assert (pairs.n_pairs, pairs.both, pairs.off_only, pairs.on_only, pairs.neither) == (
        12,
        9,
        1,
        2,
        0,
    )
    outcomes = summary.outcomes.set_index("factor")
    assert outcomes.loc["off", "truncated"] == 2 and outcomes.loc["on", "format_error"] == 1
    assert summary.sensitivity.k_off_only_problems == 1 and summary.sensitivity.n_problems == 6
    assert summary.primary.n_problems == 6 and not summary.primary.no_discordant_pairs
    doc_items = summary.document_pairs_by_item.set_index("item")
    assert doc_items.loc["wait_cause", "both"] == 2  # "不明" is the right answer
    assert summary.document_pairs.iloc[0].both == 2


def test_failed_side_drops_the_pair(tmp_path):
    def answer_for(record, item):
        return _json_answer(item), "stop"

    campaign, items = _answered_campaign(tmp_path, answer_for)
    rows = campaign.rows.copy()
    rows.loc[3, ["status", "failure_reason"]] = ["failed", "boom"]
    tables = score_quality(campaign.plan, items, rows, campaign.iter_texts)
    assert tables.incomplete_pairs == 1
    summary = summarize_quality(campaign.plan, tables)
    assert summary.primary.no_discordant_pairs and summary.primary.non_inferior
    assert summary.pairs.iloc[0].n_pairs == 11
