"""The published plan schema accepts every plan the loader accepts (so editors can
validate plan files) and refuses, where JSON Schema can say so, what the loader refuses."""

from __future__ import annotations

import json

import jsonschema
import pytest

from sitegen.core.errors import ConfigError
from sitegen.fleet.fleet_file import load_fleet
from sitegen.pages.schema import schema_files
from sitegen.plan.demo import DEMO_PLANS
from sitegen.plan.plan_file import load_plan, read_config_file
from tests.conftest import make_plan
from tests.hostilecampaign import hostile_base_plan
from tests.sitefixtures import PROJECT, hostile_plan, sweep_plan
from tests.test_end_to_end import PLAN as END_TO_END_PLAN


def _validator(name: str) -> jsonschema.Validator:
    schema = json.loads(schema_files()[f"{name}.schema.json"])
    return jsonschema.Draft202012Validator(schema)


def _errors(name: str, data: object) -> list[str]:
    return [
        f"{'.'.join(map(str, e.absolute_path))}: {e.message}"
        for e in _validator(name).iter_errors(data)
    ]


PLAN_FILES = sorted((PROJECT / "examples" / "plans").glob("*.yaml"))


@pytest.mark.parametrize("path", PLAN_FILES, ids=lambda p: p.name)
def test_every_shipped_plan_file_is_valid_for_the_loader_and_the_schema(path):
    raw = read_config_file(path, "plan")
    if "campaigns" in raw:
        load_fleet(path)
        assert _errors("fleet-plan", raw) == []
    else:
        load_plan(path)
        assert _errors("plan", raw) == []


def test_the_shipped_plans_include_grids_and_fleets():
    raws = [read_config_file(path, "plan") for path in PLAN_FILES]
    assert any("grid" in raw for raw in raws) and any("campaigns" in raw for raw in raws)


@pytest.mark.parametrize(
    "plan",
    [
        *DEMO_PLANS,
        make_plan(),
        sweep_plan(),
        sweep_plan(concurrency=True),
        hostile_plan(),
        hostile_base_plan(),
    ],
    ids=lambda plan: plan.name,
)
def test_demo_and_test_plans_are_valid(plan):
    assert _errors("plan", plan.model_dump(mode="json")) == []


def test_a_plan_file_written_by_the_tests_is_valid(tmp_path):
    path = tmp_path / "plan.yaml"
    path.write_text(END_TO_END_PLAN, encoding="utf-8")
    load_plan(path)
    assert _errors("plan", read_config_file(path, "plan")) == []


VALID = {
    "name": "p",
    "title": {"ja": "計画", "en": "Plan"},
    "engine": "llamacpp-embedded",
    "model": {"name": "m", "source": "package:m", "quantization": "q"},
    "conditions": [{"id": "off", "context_capacity": 512}],
    "inputs": [{"id": "a", "text": "x", "max_output_tokens": 8}],
    "repetitions": 2,
}

REFUSED = {
    "unknown top-level key": {**VALID, "repetitons": 3},
    "no title": {k: v for k, v in VALID.items() if k != "title"},
    "neither conditions nor grid": {k: v for k, v in VALID.items() if k != "conditions"},
    "concurrency zero": {
        **VALID,
        "conditions": [{"id": "off", "context_capacity": 512, "concurrency": 0}],
    },
    "unknown speculative mode": {
        **VALID,
        "conditions": [{"id": "off", "context_capacity": 512, "speculative": {"mode": "magic"}}],
    },
    "unknown condition key": {
        **VALID,
        "conditions": [{"id": "off", "context_capacity": 512, "ctx": 1}],
    },
    "grid without factors": {**VALID, "grid": {"conditions": {"vary": {}}}},
    "title without English": {**VALID, "title": {"ja": "計画"}},
}


def test_the_valid_example_passes_both(tmp_path):
    path = tmp_path / "plan.json"
    path.write_text(json.dumps(VALID), encoding="utf-8")
    load_plan(path)
    assert _errors("plan", VALID) == []


@pytest.mark.parametrize("case", REFUSED)
def test_what_the_loader_refuses_the_schema_refuses(case, tmp_path):
    path = tmp_path / "plan.json"
    path.write_text(json.dumps(REFUSED[case]), encoding="utf-8")
    with pytest.raises(ConfigError):
        load_plan(path)
    assert _errors("plan", REFUSED[case])
