from __future__ import annotations

import pytest

from sitegen.core.errors import ConfigError
from sitegen.plan.expand import expand_trials
from sitegen.plan.plan_file import campaign_id, load_plan, plan_sha256
from sitegen.plan.plan_models import SpeculativeSpec
from sitegen.plan.prompts import fit_prompt
from tests.conftest import make_plan


def test_sequential_order_ids_and_seeds(fake_plan):
    trials = expand_trials(fake_plan)
    assert len(trials) == 2 * (1 + 2 * 3)
    assert [t.trial_id for t in trials[:3]] == ["off/warmup-0", "off/short/r0", "off/short/r1"]
    assert [t.order_index for t in trials] == list(range(len(trials)))
    assert [
        t.seed
        for t in trials
        if t.condition_id == "off" and t.input_id == "short" and t.role == "measured"
    ] == [1234, 101234, 201234]
    assert len({t.trial_id for t in trials}) == len(trials)


def test_interleaved_alternates_leading_condition():
    trials = [t for t in expand_trials(make_plan(order="interleaved")) if t.role == "measured"]
    assert [t.condition_id for t in trials[:4]] == ["off", "on", "on", "off"]


def test_plan_hash_changes_campaign(fake_plan):
    changed = make_plan(repetitions=4)
    assert plan_sha256(fake_plan) != plan_sha256(changed)
    assert campaign_id(fake_plan).startswith("unit-") and campaign_id(fake_plan) != campaign_id(
        changed
    )


def test_speculative_mode_needs_draft_length():
    with pytest.raises(ValueError, match="needs draft_max"):
        SpeculativeSpec(mode="ngram-simple")
    with pytest.raises(ValueError, match="must be unset"):
        SpeculativeSpec(mode="off", draft_max=3)


def test_load_plan_names_file_and_field(tmp_path):
    path = tmp_path / "plan.yaml"
    path.write_text(
        "name: x\ntitle: {ja: a, en: b}\nmodel: {name: m, source: s, quantization: q}\n"
        "conditions: [{id: off, context_capacity: 10}]\ninputs: [{id: i, text: t, max_output_tokens: 0}]\n"
        "repetitons: 3\n",
        encoding="utf-8",
    )
    with pytest.raises(ConfigError) as caught:
        load_plan(path)
    message = str(caught.value)
    assert f"{path} → conditions.0.context_capacity" in message
    assert "inputs.0.max_output_tokens" in message
    assert "repetitons: Extra inputs are not permitted" in message


def test_fit_prompt_reaches_target_with_marked_filler():
    def count(text: str) -> int:
        return len(text.split())

    prompt = fit_prompt("what is two plus two ?", 60, "reference log , not to be used .", count)
    assert 56 <= count(prompt) <= 60
    assert prompt.endswith("what is two plus two ?")
    assert "not to be used" in prompt
    assert fit_prompt("as is", None, "x", count) == "as is"
    with pytest.raises(ConfigError):
        fit_prompt("far too long for the target", 3, "x", count)
