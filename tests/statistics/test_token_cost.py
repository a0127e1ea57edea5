"""Cost per million output tokens: throughput at the plan's concurrency (lone requests by
their own tokens and time, rounds of concurrent requests each counted once) times the
declared device prices, and every refusal."""

from __future__ import annotations

from datetime import date

import pytest

from sitegen.core.price_list import DevicePrice, PriceList
from sitegen.core.text import Bilingual
from sitegen.plan.plan_models import ConditionSpec, InputSpec
from sitegen.records.record_models import TrialRecord
from sitegen.records.table import RecordTable
from sitegen.statistics.token_cost import token_costs
from tests.conftest import make_plan
from tests.recordfixtures import h100_provenance, make_record

H100 = "NVIDIA H100 80GB HBM3"
PLAN = make_plan(
    conditions=[
        ConditionSpec(id="alone", context_capacity=512),
        ConditionSpec(id="pair", context_capacity=512, concurrency=2),
    ],
    inputs=[InputSpec(id="short", text="q", max_output_tokens=8)],
)
SPEED = frozenset({"short"})


def prices(*devices: tuple[str, float]) -> PriceList:
    return PriceList(
        currency="USD",
        prices=[
            DevicePrice(
                device=name,
                per_hour=per_hour,
                source=Bilingual(ja="価格表", en="price list"),
                as_of=date(2026, 1, 15),
            )
            for name, per_hour in devices
        ],
    )


def alone(repetition: int, tokens: int | None, e2e: float, **kwargs) -> TrialRecord:
    data = make_record("alone", "short", 10.0, repetition, **kwargs).model_dump()
    data["metrics"] |= {"generated_tokens": tokens, "e2e_s": e2e}
    return TrialRecord.model_validate(data)


def in_round(repetition: int, run: str, tokens: int, wall: float, **kwargs) -> TrialRecord:
    data = make_record("pair", "short", 10.0, repetition, **kwargs).model_dump()
    data["round"] = {
        "run_id": run,
        "size": 2,
        "wall_s": wall,
        "generated_tokens": tokens,
        "aggregate_tps": tokens / wall,
    }
    return TrialRecord.model_validate(data)


def costs(records: list[TrialRecord], declared: PriceList | None):
    found = token_costs(PLAN, RecordTable.of(records), SPEED, declared)
    return {row.condition_id: row for row in found.rows}


def records() -> list[TrialRecord]:
    return [
        # Alone: 100 + 300 tokens in 1 s + 3 s → 100 tok/s.
        alone(0, 100, 1.0),
        alone(1, 300, 3.0),
        # Concurrency 2: round a (both requests recorded) 800 tokens in 2 s, round b 400
        # in 2 s → 1,200 tokens in 4 s = 300 tok/s; round a counted once.
        in_round(0, "pair/short/r0@a", 800, 2.0),
        in_round(1, "pair/short/r0@a", 800, 2.0),
        in_round(2, "pair/short/r1@b", 400, 2.0),
    ]


def test_alone_and_rounds_of_concurrency_two():
    found = costs(records(), prices((H100, 3.6)))
    lone, pair = found["alone"], found["pair"]
    assert (lone.output_tokens, lone.wall_s, lone.spans) == (400, 4.0, 2)
    assert lone.throughput_tps == pytest.approx(100.0)
    assert lone.concurrency == 1 and pair.concurrency == 2
    # A round counted once: 800 + 400 tokens in 2 + 2 s over two rounds.
    assert (pair.output_tokens, pair.wall_s, pair.spans) == (1200, 4.0, 2)
    assert pair.throughput_tps == pytest.approx(300.0)
    # Two H100s at 3.6 an hour each: 7.2 / 3600 = 0.002 a second.
    assert lone.per_hour == pytest.approx(7.2)
    assert [(d.device, d.count) for d in lone.devices] == [(H100, 2)]
    assert lone.cost_per_million == pytest.approx(0.002 / 100 * 1e6)  # 20.0
    assert pair.cost_per_million == pytest.approx(0.002 / 300 * 1e6)
    assert lone.refused is None and pair.refused is None


def test_a_failed_trial_is_left_out():
    failed = make_record("alone", "short", 10.0, 2).model_dump()
    failed |= {"status": "failed", "failure_reason": "engine error", "metrics": None}
    found = costs([*records(), TrialRecord.model_validate(failed)], prices((H100, 3.6)))
    assert found["alone"].output_tokens == 400 and found["alone"].spans == 2


def test_refused_without_a_price_list():
    found = costs(records(), None)
    assert {row.refused for row in found.values()} == {"no-prices"}
    assert all(row.cost_per_million is None for row in found.values())
    assert found["alone"].throughput_tps == pytest.approx(100.0)  # measured all the same


def test_refused_for_a_device_without_a_price():
    found = costs(records(), prices(("NVIDIA H200", 5.0)))
    assert found["alone"].refused == "not-priced"
    assert found["alone"].cost_per_million is None and found["alone"].per_hour is None


def test_refused_when_devices_differ_within_a_condition():
    other = h100_provenance(devices=1)
    mixed = [*records(), alone(2, 100, 1.0, provenance=other)]
    found = costs(mixed, prices((H100, 3.6)))
    assert found["alone"].refused == "devices-differ" and found["alone"].devices == ()
    assert found["pair"].refused is None


def test_refused_without_usable_trials_or_token_counts():
    found = costs([r for r in records() if r.condition_id == "pair"], prices((H100, 3.6)))
    assert found["alone"].refused == "no-trials" and found["alone"].throughput_tps is None
    uncounted = costs([*records(), alone(2, None, 1.0)], prices((H100, 3.6)))
    assert uncounted["alone"].refused == "uncounted"
    assert uncounted["alone"].cost_per_million is None
