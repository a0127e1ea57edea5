"""A plan's ``series``: which factor its campaigns vary in, and a plan without it keeping
the hash it had before the field existed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sitegen.core.errors import ConfigError
from sitegen.pages.schema import schema_files
from sitegen.plan.plan_file import canonical_plan_json, load_plan, plan_sha256
from sitegen.plan.series_spec import SERIES_FACTORS
from tests.conftest import make_plan

EXAMPLE = Path(__file__).parents[2] / "examples" / "plans" / "glm-h100-llamacpp-http.yaml"
EXAMPLE_SHA256 = "29161efca63ef270fbe7956be2cf4916a740ad34e11a5c616562922dbbc96f10"
"""The example's plan hash computed by sitegen before plans had a ``series``."""


def test_a_plan_without_series_keeps_its_hash():
    plan = load_plan(EXAMPLE)
    assert plan.series is None
    assert plan_sha256(plan) == EXAMPLE_SHA256
    assert "series" not in json.loads(canonical_plan_json(plan))


def test_a_series_is_part_of_the_plan_and_its_hash():
    plan = make_plan(series={"factor": "engine_build"})
    assert plan.series is not None and plan.series.factor == "engine_build"
    assert json.loads(canonical_plan_json(plan))["series"] == {"factor": "engine_build"}
    assert plan_sha256(plan) != plan_sha256(make_plan())


@pytest.mark.parametrize("factor", SERIES_FACTORS)
def test_every_reported_field_can_be_a_series_factor(factor):
    assert make_plan(series={"factor": factor}).series.factor == factor


def test_a_factor_the_plan_fixes_is_refused(tmp_path):
    path = tmp_path / "plan.yaml"
    raw = make_plan().model_dump(mode="json") | {"series": {"factor": "sampling"}}
    path.write_text(json.dumps(raw), encoding="utf-8")
    with pytest.raises(ConfigError, match=r"series.factor: sampling is fixed by the plan"):
        load_plan(path)


def test_the_published_schema_describes_the_series():
    schema = json.loads(schema_files()["plan.schema.json"])
    series = schema["$defs"]["SeriesSpec"]
    assert "one campaign per value" in schema["properties"]["series"]["description"]
    assert "engine_build" in series["properties"]["factor"]["enum"]
    assert series["description"].startswith("This plan is measured once per value")
