"""Load statistics: achieved throughput and output tokens/s per offered rate, latency,
"k of n met every target" and goodput against the declared SLO, the saturation point,
and the load runs kept out of the closed-loop statistics."""

from __future__ import annotations

import pandas as pd
import pytest

from sitegen.plan.plan_models import ConditionSpec, InputSpec
from sitegen.plan.slo_targets import slo_key
from sitegen.records.record_models import TrialRecord
from sitegen.records.table import RecordTable
from sitegen.statistics.load import (
    SATURATION_LATENCY_FACTOR,
    SATURATION_SHORTFALL,
    load_table,
    mark_saturation,
    meets_slo,
    saturation_points,
)
from sitegen.statistics.trials import enters_statistics, observed_run_order, trials_frame
from tests.conftest import make_plan
from tests.recordfixtures import make_record

PLAN = make_plan(
    conditions=[ConditionSpec(id="off", context_capacity=512)],
    inputs=[InputSpec(id="short", text="q", max_output_tokens=8)],
    load={"profile": "constant", "rates": [4.0, 1.0, 2.0], "requests": 4},
    slo={"ttft_p95_s": 0.5, "itl_p99_ms": 100.0, "e2e_p95_s": 2.0},
)


def load_record(
    rate: float,
    k: int,
    *,
    ttft: float = 0.1,
    e2e: float = 1.0,
    chunks: list[float] | None = None,
    wall: float,
    completed: int = 4,
    failed: bool = False,
    attempt: int = 1,
    run: str = "a",
) -> TrialRecord:
    data = make_record("off", "short", 10.0, repetition=k).model_dump()
    label = f"{rate:g}"
    data |= {
        "trial_id": f"off/short/load-{label}/q{k}",
        "attempt": attempt,
        "load": {
            "profile": "constant",
            "offered_rate": rate,
            "request_index": k,
            "scheduled_s": k / rate,
            "sent_s": k / rate + 0.002,
            "run_id": f"off/short/load-{label}@{run}",
            "run_requests": 4,
            "run_wall_s": wall,
            "run_completed": completed,
            "run_generated_tokens": 40,
        },
    }
    if failed:
        data |= {"status": "failed", "failure_reason": "engine error: boom", "metrics": None}
    else:
        data["metrics"] |= {
            "ttft_s": ttft,
            "e2e_s": e2e,
            "chunk_times_s": chunks if chunks is not None else [ttft, ttft + 0.05, ttft + 0.1],
            "generated_tokens": 10,
        }
    return TrialRecord.model_validate(data)


def campaign_records() -> list[TrialRecord]:
    records = [make_record("off", "short", 10.0, repetition=r) for r in range(3)]
    # 1 req/s: every request meets every target; the run took 4 s.
    records += [load_record(1.0, k, wall=4.0) for k in range(4)]
    # 2 req/s: one request too slow to its first token, one with a 150 ms chunk gap.
    records += [
        load_record(2.0, 0, wall=2.5, ttft=0.8),
        load_record(2.0, 1, wall=2.5, chunks=[0.1, 0.25, 0.3]),
        load_record(2.0, 2, wall=2.5, e2e=1.5),
        load_record(2.0, 3, wall=2.5, chunks=[0.1]),  # one chunk: no gap, met
    ]
    # 4 req/s: a queue builds; one request failed, then tried again in a later run.
    records += [
        load_record(4.0, 0, wall=4.0, e2e=2.5, completed=3),
        load_record(4.0, 1, wall=4.0, e2e=3.0, completed=3),
        load_record(4.0, 2, wall=4.0, failed=True, completed=3),
        load_record(4.0, 3, wall=4.0, e2e=2.5, completed=3),
        load_record(4.0, 2, wall=5.0, e2e=2.6, completed=4, attempt=2, run="b"),
    ]
    return records


@pytest.fixture(scope="module")
def table():
    records = RecordTable.of(campaign_records())
    return load_table(PLAN, trials_frame(records), records.chunk_gaps).set_index("offered_rate")


def test_throughput_latency_and_goodput_per_rate(table):
    assert list(table.index) == [1.0, 2.0, 4.0]  # ascending, whatever the plan's order
    one = table.loc[1.0]
    assert one["planned"] == 4 and one["recorded"] == 4 and one["failed"] == 0
    assert one["throughput_rps"] == pytest.approx(1.0)  # 4 completed in 4 s
    assert one["output_tps"] == pytest.approx(10.0)  # 40 tokens in 4 s
    assert one["slo_met"] == 4 and one["slo_n"] == 4 and one["goodput_rps"] == pytest.approx(1.0)
    assert one["send_lag_max_ms"] == pytest.approx(2.0)
    two = table.loc[2.0]
    assert two["throughput_rps"] == pytest.approx(4 / 2.5)
    assert two["slo_met"] == 2 and two["goodput_rps"] == pytest.approx(2 / 2.5)
    assert two["ttft_median_s"] == pytest.approx(0.1)
    assert two["e2e_median_s"] == pytest.approx(1.0) and two["e2e_max_s"] == pytest.approx(1.5)
    assert pd.isna(two["e2e_p95_s"])  # 4 requests: too few for a P95 (C-TAIL)


def test_a_retried_request_counts_once_and_runs_pool(table):
    four = table.loc[4.0]
    # The latest attempt of each request: 4 recorded, none failed now.
    assert four["recorded"] == 4 and four["ok"] == 4 and four["failed"] == 0
    assert four["runs"] == 2  # the first run and the one that retried q2
    assert four["wall_s"] == pytest.approx(9.0)
    assert four["throughput_rps"] == pytest.approx((3 + 4) / 9.0)
    assert four["slo_met"] == 0  # every end-to-end time above 2 s


def test_saturation_point_is_the_lowest_rate_meeting_a_criterion(table):
    assert not table.loc[1.0, "saturated"] and not table.loc[2.0, "saturated"]
    four = table.loc[4.0]
    assert four["saturated"] and four["saturation_point"]
    # 0.78 req/s < 80 % of 4, and a median end-to-end 2.55 s > 2 × 1.0 s.
    assert four["saturated_by"] == "throughput+latency"
    (point,) = saturation_points(table.reset_index())
    assert (point.rate, point.by) == (4.0, "throughput+latency")


def test_saturation_criteria_and_their_thresholds():
    def rows(throughput, e2e):
        return pd.DataFrame(
            {
                "condition_id": "c",
                "input_id": "i",
                "offered_rate": [1.0, 2.0, 4.0],
                "throughput_rps": throughput,
                "e2e_median_s": e2e,
            }
        )

    edge = 1 - SATURATION_SHORTFALL
    fine = mark_saturation(rows([1.0, 2.0 * edge, 4.0 * edge], [1.0, 1.5, 2.0]))
    assert not fine["saturated"].any()  # at the limits, not beyond
    slow = mark_saturation(rows([1.0, 2.0, 4.0], [1.0, SATURATION_LATENCY_FACTOR + 0.01, 9.0]))
    assert slow["saturation_point"].tolist() == [False, True, False]
    assert slow["saturated"].tolist() == [False, True, True]
    assert slow["saturated_by"].tolist()[1] == "latency"
    short = mark_saturation(rows([0.5, 2.0, 4.0], [1.0, 1.0, 1.0]))
    assert short["saturation_point"].tolist() == [True, False, False]
    assert saturation_points(fine)[0].rate is None


def test_meets_slo_per_request():
    requests = pd.DataFrame(
        {
            "status": ["ok", "ok", "ok", "failed", "ok"],
            "ttft_s": [0.1, 0.6, 0.1, None, 0.1],
            "e2e_s": [1.0, 1.0, 2.5, None, 1.0],
        }
    )
    gaps = pd.Series([0.05, 0.05, 0.05, None, 0.2])
    met = meets_slo(requests, gaps, PLAN.slo)
    assert met.tolist() == [True, False, False, False, False]
    only_ttft = PLAN.slo.model_copy(update={"itl_p99_ms": None, "e2e_p95_s": None})
    assert meets_slo(requests, gaps, only_ttft).tolist() == [True, False, True, False, True]
    assert slo_key(PLAN.slo) == "ttft_p95_s=0.5 itl_p99_ms=100 e2e_p95_s=2"
    assert slo_key(None) == ""


def test_load_requests_stay_out_of_the_closed_loop_statistics():
    frame = trials_frame(RecordTable.of(campaign_records()))
    entering = frame[enters_statistics(frame)]
    assert set(entering["trial_id"]) == {"off/short/r0", "off/short/r1", "off/short/r2"}
    assert observed_run_order(frame) == "sequential"
    assert frame["load_offered_rate"].notna().sum() == 13


def test_no_load_no_table():
    records = RecordTable.of([make_record("off", "short", 10.0)])
    plan = make_plan()
    assert load_table(plan, trials_frame(records), records.chunk_gaps).empty
