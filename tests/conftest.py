"""Shared fixtures: plans for the deterministic fake engine (unit tests only)."""

from __future__ import annotations

import pytest

from sitegen.plan.models import ConditionSpec, InputSpec, ModelSpec, Plan, SpeculativeSpec


def make_plan(**overrides) -> Plan:
    """A small plan on the fake engine; keyword arguments replace plan fields."""
    fields = dict(
        name="unit",
        title={"ja": "単体テスト", "en": "Unit test"},
        engine="fake",
        model=ModelSpec(name="fake-model", source="unused", quantization="none"),
        conditions=[
            ConditionSpec(id="off", context_capacity=512),
            ConditionSpec(
                id="on",
                speculative=SpeculativeSpec(mode="ngram-simple", draft_max=4),
                context_capacity=512,
            ),
        ],
        inputs=[
            InputSpec(id="short", text="question one", max_output_tokens=16),
            InputSpec(
                id="padded", text="question two", target_prompt_tokens=40, max_output_tokens=16
            ),
        ],
        repetitions=3,
        warmups=1,
    )
    fields.update(overrides)
    return Plan(**fields)


@pytest.fixture
def fake_plan() -> Plan:
    return make_plan()
