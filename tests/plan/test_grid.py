"""Plans as factor grids: expansion at load time, generated ids, errors, the example plans."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
import yaml

from sitegen.core.errors import ConfigError
from sitegen.measure import run_campaign
from sitegen.plan.expand import expand_trials
from sitegen.plan.grid import tokens_label
from sitegen.plan.plan_file import canonical_plan_json, load_plan, plan_sha256
from sitegen.plan.plan_models import ConditionSpec, Plan, QualitySpec, SamplingOverride
from tests.conftest import make_plan

PLANS = Path(__file__).resolve().parents[2] / "examples" / "plans"

HEADER = """
name: grid
title: {ja: グリッド, en: Grid}
engine: fake
model: {name: fake-model, source: unused, quantization: none}
repetitions: 2
warmups: 1
"""

CAMPAIGN_GRID = (
    HEADER
    + """
grid:
  conditions:
    common: {threads: 2, engine_options: {tps: 500}}
    vary:
      speculative: [{mode: off}, {mode: draft-mtp, draft_max: 3}]
      context_capacity: [262144, 1048576]
  inputs:
    common: {text: "material and question"}
    vary:
      target_prompt_tokens: [8193, 32768]
      max_output_tokens: [1024, 4096, 8192]
"""
)


def _write(tmp_path: Path, text: str, name: str = "plan.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def _error(tmp_path: Path, text: str) -> str:
    path = _write(tmp_path, text)
    with pytest.raises(ConfigError) as caught:
        load_plan(path)
    message = str(caught.value)
    assert str(path) in message
    return message


def test_grid_expands_into_readable_ids_in_block_order(tmp_path):
    plan = load_plan(_write(tmp_path, CAMPAIGN_GRID))
    assert [c.id for c in plan.conditions] == [
        "off-cap256k",
        "off-cap1m",
        "mtp3-cap256k",
        "mtp3-cap1m",
    ]
    mtp = plan.conditions[3]
    assert (mtp.speculative.mode, mtp.speculative.draft_max) == ("draft-mtp", 3)
    assert (mtp.context_capacity, mtp.threads, mtp.engine_options) == (1048576, 2, {"tps": 500})
    assert [i.id for i in plan.inputs] == [
        "in8k-out1k",
        "in8k-out4k",
        "in8k-out8k",
        "in32k-out1k",
        "in32k-out4k",
        "in32k-out8k",
    ]
    assert (plan.inputs[4].target_prompt_tokens, plan.inputs[4].max_output_tokens) == (32768, 4096)
    assert plan.inputs[0].text == "material and question"
    assert len(expand_trials(plan)) == 4 * (1 + 6 * 2)


def test_stored_plan_is_the_expanded_plan_and_its_hash_is_in_every_record(tmp_path):
    plan = load_plan(_write(tmp_path, CAMPAIGN_GRID.replace("8193, 32768", "40, 60")))
    result = run_campaign(plan, tmp_path / "data")
    stored = (result.directory / "plan.json").read_bytes()
    assert "grid" not in json.loads(stored)
    assert [c["id"] for c in json.loads(stored)["conditions"]][-1] == "mtp3-cap1m"
    assert hashlib.sha256(stored).hexdigest() == plan_sha256(plan)
    records = [json.loads(line) for line in (result.directory / "records.jsonl").open()]
    assert {r["plan_sha256"] for r in records} == {plan_sha256(plan)}


def test_toml_and_json_grids_give_the_same_plan(tmp_path):
    toml = """
name = "grid"
title = {ja = "グリッド", en = "Grid"}
engine = "fake"
repetitions = 2
warmups = 1
model = {name = "fake-model", source = "unused", quantization = "none"}

[grid.conditions.common]
threads = 2
engine_options = {tps = 500}

[grid.conditions.vary]
speculative = [{mode = "off"}, {mode = "draft-mtp", draft_max = 3}]
context_capacity = [262144, 1048576]

[grid.inputs]
common = {text = "material and question"}
vary = {target_prompt_tokens = [8193, 32768], max_output_tokens = [1024, 4096, 8192]}
"""
    from_yaml = load_plan(_write(tmp_path, CAMPAIGN_GRID))
    from_toml = load_plan(_write(tmp_path, toml, "plan.toml"))
    as_json = json.dumps(yaml.safe_load(CAMPAIGN_GRID.replace("mode: off", "mode: 'off'")))
    from_json = load_plan(_write(tmp_path, as_json, "plan.json"))
    assert plan_sha256(from_yaml) == plan_sha256(from_toml) == plan_sha256(from_json)


def test_labelled_levels_change_fields_together_and_mappings_merge(tmp_path):
    plan = load_plan(
        _write(
            tmp_path,
            HEADER.replace("engine: fake", "engine: llamacpp-http")
            + """
conditions:
  - {id: reference, context_capacity: 4096}
inputs:
  - {id: short, text: q, max_output_tokens: 8}
grid:
  conditions:
    common:
      context_capacity: 1048576
      engine_options: {ready_timeout_s: 600}
    vary:
      server:
        off: {speculative: {mode: off}, engine_options: {base_url: "http://127.0.0.1:8080"}}
        mtp3:
          speculative: {mode: draft-mtp, draft_max: 3}
          engine_options: {base_url: "http://127.0.0.1:8081"}
      engine_options:
        gpu: {}
        rss: {server_pid: 4242}
""",
        )
    )
    assert [c.id for c in plan.conditions] == [
        "reference",
        "off-gpu",
        "off-rss",
        "mtp3-gpu",
        "mtp3-rss",
    ]
    assert plan.conditions[4].engine_options == {
        "ready_timeout_s": 600,
        "base_url": "http://127.0.0.1:8081",
        "server_pid": 4242,
    }
    assert [i.id for i in plan.inputs] == ["short"]


def test_sampling_sweep_is_recorded_per_condition(tmp_path):
    plan = load_plan(
        _write(
            tmp_path,
            HEADER
            + """
sampling: {top_p: 0.95}
inputs: [{id: q, text: question, max_output_tokens: 8}]
grid:
  conditions:
    common: {context_capacity: 512}
    vary:
      speculative: [{mode: off}, {mode: draft-mtp, draft_max: 2}, {mode: draft-mtp, draft_max: 4}]
      sampling: [{temperature: 0}, {temperature: 0.7}, {temperature: 1.0, top_k: 40}]
""",
        )
    )
    ids = [c.id for c in plan.conditions]
    assert ids[:3] == ["off-t0", "off-t0.7", "off-t1k40"] and ids[-1] == "mtp4-t1k40"
    result = run_campaign(plan, tmp_path / "data")
    records = [json.loads(line) for line in (result.directory / "records.jsonl").open()]
    sampling = {r["condition_id"]: r["sampling"] for r in records if r["repetition"] == 1}
    assert sampling["mtp2-t0.7"] == {"temperature": 0.7, "top_p": 0.95, "top_k": 0, "seed": 101234}
    assert sampling["off-t1k40"]["temperature"] == 1.0 and sampling["off-t1k40"]["top_k"] == 40


def test_sampling_for_applies_only_what_the_condition_sets():
    plan = make_plan()
    plain = ConditionSpec(id="a", context_capacity=64)
    hot = ConditionSpec(id="b", context_capacity=64, sampling=SamplingOverride(temperature=0.7))
    assert plan.sampling_for(plain) is plan.sampling
    assert plan.sampling_for(hot) == plan.sampling.model_copy(update={"temperature": 0.7})


def test_quality_pairs_must_sample_alike():
    quality = QualitySpec(
        suite_id="s",
        per_template=1,
        suite_seed=1,
        suite_sha256="0" * 64,
        max_output_tokens=8,
        off_condition="off",
        on_condition="hot",
    )
    hot = ConditionSpec(id="hot", context_capacity=64, sampling=SamplingOverride(temperature=1))
    with pytest.raises(ValueError, match="must sample alike"):
        make_plan(conditions=[*make_plan().conditions, hot], quality=quality)


def test_unset_new_fields_leave_the_plan_hash_as_before():
    plain = json.loads(canonical_plan_json(make_plan()))
    assert "round_order" not in plain and all("sampling" not in c for c in plain["conditions"])
    hot = ConditionSpec(id="hot", context_capacity=64, sampling=SamplingOverride(temperature=1))
    swept = make_plan(conditions=[*make_plan().conditions, hot], order="interleaved")
    stored = canonical_plan_json(swept)
    assert '"round_order":"alternate"' in stored and '"sampling":{"temperature":1.0' in stored
    assert plan_sha256(Plan.model_validate_json(stored)) == plan_sha256(swept)


def test_round_order_is_stated_in_interleaved_plans():
    assert make_plan().round_order is None
    interleaved = make_plan(order="interleaved")
    assert interleaved.round_order == "alternate"
    assert '"round_order":"alternate"' in interleaved.model_dump_json()
    as_listed = make_plan(order="interleaved", round_order="as-listed")
    measured = [t.condition_id for t in expand_trials(as_listed) if t.role == "measured"]
    assert measured[:6] == ["off", "on"] * 3
    with pytest.raises(ValueError, match="interleaved plans only"):
        make_plan(round_order="as-listed")


@pytest.mark.parametrize(
    ("grid", "expected"),
    [
        (
            "conditions: {common: {context_capacity: 512, thraeds: 2}, vary: {speculative: [{mode: off}]}}",
            "grid.conditions.common: unknown field(s) thraeds",
        ),
        (
            "conditions: {vary: {context_capacty: [512, 1024]}}",
            "grid.conditions.vary.context_capacty: 'context_capacty' is not a field of conditions",
        ),
        (
            "conditions: {common: {context_capacity: 512}, vary: {engine_options: [{a: 1}, {a: 2}]}}",
            "grid.conditions.vary.engine_options: values of 'engine_options' do not name themselves",
        ),
        (
            "conditions: {common: {context_capacity: 512}, vary: {speculative: [{mode: off, draft_max: 3}]}}",
            "grid.conditions [speculative.0] → speculative: draft_max must be unset",
        ),
        (
            "inputs: {common: {text: t, max_output_tokens: 8}, vary: {target_prompt_tokens: [8192, 8193]}}",
            "[target_prompt_tokens.1] and [target_prompt_tokens.0] both generate the id 'in8k'",
        ),
        (
            "conditions: {common: {context_capacity: 512}, vary: {threads: {Two Threads: 2}}}",
            "grid.conditions.vary.threads.Two Threads: label 'Two Threads' must be lower-case",
        ),
        (
            "conditions: {common: {id: x, context_capacity: 512}, vary: {threads: [1]}}",
            "grid.conditions.common.id: ids are generated",
        ),
        ("conditoins: {vary: {threads: [1]}}", "grid → conditoins: Extra inputs are not permitted"),
        ("inputs: {vary: {}}", "grid → inputs.vary: Dictionary should have at least 1 item"),
        (
            "inputs: {common: {text: t}, vary: {max_output_tokens: 8}}",
            "grid → inputs.vary: factor 'max_output_tokens' needs a list of values",
        ),
    ],
)
def test_grid_errors_name_file_and_field(tmp_path, grid, expected):
    text = HEADER + "inputs: [{id: q, text: t, max_output_tokens: 8}]\n"
    text += "conditions: [{id: c, context_capacity: 512}]\ngrid:\n  " + grid + "\n"
    assert expected in _error(tmp_path, text)


def test_a_mistake_shared_by_every_combination_is_reported_once(tmp_path):
    message = _error(
        tmp_path,
        HEADER
        + """
inputs: [{id: q, text: t, max_output_tokens: 8}]
grid:
  conditions:
    common: {context_capacity: 10}
    vary: {threads: [1, 2, 3]}
""",
    )
    assert message.count("context_capacity: Input should be greater than or equal to 64") == 1


def test_yaml_off_stays_a_string(tmp_path):
    plan = load_plan(
        _write(
            tmp_path,
            HEADER
            + "conditions: [{id: c, context_capacity: 512, speculative: {mode: off}}]\n"
            + "inputs: [{id: q, text: t, max_output_tokens: 8}]\n"
            + "template_kwargs: {thinking: on, verbose: true}\n",
        )
    )
    assert plan.conditions[0].speculative.mode == "off"
    assert plan.template_kwargs == {"thinking": "on", "verbose": True}


def test_tokens_label():
    assert [tokens_label(n) for n in (512, 1024, 8193, 40960, 262144, 1048576)] == [
        "512",
        "1k",
        "8k",
        "40k",
        "256k",
        "1m",
    ]


@pytest.mark.parametrize(
    "path",
    # fleet-*.yaml are fleet plans (tests/fleet), listing these plans.
    sorted(p for p in PLANS.iterdir() if not p.name.startswith("fleet-")),
    ids=lambda p: p.name,
)
def test_every_example_plan_loads_and_expands(path):
    plan = load_plan(path)
    trials = expand_trials(plan)
    assert len({t.trial_id for t in trials}) == len(trials) > 0
    assert {"CUDA_VISIBLE_DEVICES", "NCCL_P2P_DISABLE"} <= set(plan.record_env)
    measured = [
        t for t in trials if t.role == "measured" and t.input_id in {i.id for i in plan.inputs}
    ]
    seeds = sorted({t.seed for t in measured})
    assert seeds[:3] == [plan.sampling.seed_base + k * 100_000 for k in range(3)]


def test_glm_plans_reproduce_the_seed_campaign_structure():
    for name, engine in (
        ("glm-h100-llamacpp-http.yaml", "llamacpp-http"),
        ("glm-b200-exllamav3.yaml", "exllamav3"),
    ):
        plan = load_plan(PLANS / name)
        assert plan.engine == engine and plan.repetitions == 3
        assert [(c.speculative.mode, c.speculative.draft_max) for c in plan.conditions] == [
            ("off", None),
            ("draft-mtp", 3),
        ]
        assert {c.context_capacity for c in plan.conditions} == {1_048_576}
        assert {i.target_prompt_tokens for i in plan.inputs} == {8193, 32768}
        assert {i.max_output_tokens for i in plan.inputs} == {1024, 4096, 8192}


def test_sweep_plan_crosses_draft_length_and_temperature():
    plan = load_plan(PLANS / "sweep-draft-temperature.yaml")
    pairs = {(c.speculative.draft_max, plan.sampling_for(c).temperature) for c in plan.conditions}
    assert pairs == {(n, t) for n in (None, 2, 3, 4) for t in (0.0, 0.7, 1.0)}
