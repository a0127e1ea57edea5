"""The context the llama.cpp engines actually allocate is recorded beside the plan's
capacity, and a plan capacity the engine did not use is refused (C-CAPACITY)."""

from __future__ import annotations

import pytest

from sitegen.engine.llamacpp_embedded import EmbeddedLlamaCpp
from sitegen.measure import run_campaign
from sitegen.plan.plan_models import ConditionSpec, InputSpec, Plan
from sitegen.records.campaign import read_campaign
from sitegen.validation import validate_campaigns
from tests.engine.conftest import GEMMA

pytestmark = pytest.mark.slow


def _plan(capacity: int) -> Plan:
    return Plan(
        name="capacity",
        title={"ja": "容量", "en": "capacity"},
        model=GEMMA,
        conditions=[ConditionSpec(id="c", context_capacity=capacity, threads=1)],
        inputs=[InputSpec(id="q", text="The harbour town", max_output_tokens=2)],
        repetitions=1,
        warmups=0,
    )


def test_the_embedded_engine_reports_the_context_it_allocated():
    plan = _plan(512)
    engine = EmbeddedLlamaCpp(plan, plan.conditions[0])
    try:
        assert engine.describe().context_per_slot == 512
    finally:
        engine.close()


def test_a_capacity_llama_cpp_rounded_up_is_refused(tmp_path):
    """The audit's case: ``context_capacity: 64`` while llama.cpp ran with more per slot."""
    directory = run_campaign(_plan(64), tmp_path).directory
    issues: list = []
    campaign = read_campaign(directory, issues)
    (record,) = campaign.iter_full_records()
    assert record.status == "ok" and record.engine_context_per_slot > 64
    found = [i for i in validate_campaigns([campaign]) if i.rule == "C-CAPACITY"]
    assert any(
        "→ engine_context_per_slot" in i.location
        and f"allocated {record.engine_context_per_slot} tokens" in i.message
        and "context_capacity 64" in i.message
        for i in found
    )
