"""Speed reference values (a real report's per-trial rates) and the C-CONFDIFF rule for
ratios."""

from __future__ import annotations

import pandas as pd
import pytest

from sitegen.plan.plan_models import ConditionSpec, SpeculativeSpec
from sitegen.records.table import RecordTable
from sitegen.statistics.speed import compare_conditions, speed_summary
from sitegen.statistics.trials import trials_frame, usable
from tests.conftest import make_plan
from tests.recordfixtures import h100_provenance, make_record, records_for


def _frame(values: dict[tuple[str, str], list[float]]) -> pd.DataFrame:
    rows = []
    for (condition, input_id), rates in values.items():
        for rate in rates:
            rows.append(
                dict(
                    condition_id=condition,
                    input_id=input_id,
                    role="measured",
                    status="ok",
                    gen_tps=rate,
                    native_tps=None,
                    ttft_s=1.0,
                    t_first_answer_s=1.2,
                    e2e_s=9.0,
                    prompt_tokens=8193,
                    context_capacity=40960,
                    generated_tokens=1024,
                    finish="stop",
                    answer_reached=True,
                    draft_proposed=None,
                    draft_accepted=None,
                )
            )
    frame = pd.DataFrame(rows)
    frame["draft_proposed"] = frame["draft_proposed"].astype("Int64")
    frame["draft_accepted"] = frame["draft_accepted"].astype("Int64")
    return frame


def test_reference_medians_and_ratios():
    records = records_for(
        {
            ("off", "short"): [41.28, 51.22, 51.15],
            ("on", "short"): [61.52, 62.27, 62.78],
            ("off", "padded"): [49.72, 49.73, 49.77],
            ("on", "padded"): [55.77, 53.99, 57.01],
        }
    )
    frame = trials_frame(RecordTable.of(records))
    summary = speed_summary(usable(frame)).set_index(["condition_id", "input_id"])
    assert summary.loc[("off", "short"), "gen_tps_median"] == 51.15
    assert summary.loc[("on", "short"), "gen_tps_median"] == 62.27
    assert summary.loc[("off", "short"), "gen_tps_min"] == 41.28
    comparisons = {
        c.input_id: c
        for c in compare_conditions(
            make_plan(), speed_summary(usable(frame)), records, usable(frame)
        )
    }
    assert all(c.is_factor_only and c.unrecorded_fields == () for c in comparisons.values())
    assert round((comparisons["short"].ratio - 1) * 100, 1) == 21.7
    # 55.77 / 49.73 = +12.146 %: the seed's "about 12.2 %" was computed before its per-trial
    # values were rounded to 2 decimals, so agreement is within that rounding.
    assert (comparisons["padded"].ratio - 1) * 100 == pytest.approx(12.2, abs=0.06)


def test_without_records_nothing_is_factor_only():
    """Medians alone show nothing about how the conditions ran: no ratio."""
    frame = _frame({("off", "short"): [50.0, 51.0], ("on", "short"): [60.0, 61.0]})
    comparisons = compare_conditions(make_plan(), speed_summary(usable(frame)))
    assert all(c.ratio is None and not c.is_factor_only for c in comparisons)
    assert "driver" in comparisons[0].unrecorded_fields


def test_configuration_comparison_has_no_ratio():
    plan = make_plan(
        conditions=[
            ConditionSpec(id="off", context_capacity=40960),
            ConditionSpec(
                id="on",
                speculative=SpeculativeSpec(mode="draft-mtp", draft_max=3),
                context_capacity=1048576,
            ),
        ]
    )
    records = records_for({("off", "short"): [50.0, 51.0], ("on", "short"): [60.0, 61.0]})
    frame = trials_frame(RecordTable.of(records))
    (comparison,) = [
        c
        for c in compare_conditions(plan, speed_summary(usable(frame)), records, usable(frame))
        if c.input_id == "short"
    ]
    assert comparison.differing_fields == ("context_capacity",)
    assert comparison.ratio is None
    assert comparison.treatment_median == pytest.approx(60.5)


def test_warmups_and_failures_are_excluded():
    frame = _frame({("off", "short"): [10.0, 20.0, 30.0, 1000.0]})
    frame.loc[3, "role"] = "warmup"
    frame.loc[2, "status"] = "failed"
    summary = speed_summary(usable(frame))
    assert summary.loc[0, "n"] == 2 and summary.loc[0, "gen_tps_median"] == 15.0


def test_memory_summary_per_condition_and_device(tmp_path):
    from sitegen.measure import run_campaign
    from sitegen.records.campaign import read_campaign
    from sitegen.statistics.speed import memory_summary

    result = run_campaign(make_plan(), tmp_path)
    campaign = read_campaign(result.directory, [])
    summary = memory_summary(campaign.table, {"short", "padded"}).set_index("condition_id")
    assert set(summary.index) == {"off", "on"}
    assert (summary["n"] == 6).all() and (summary["device"] == "cpu").all()
    assert (summary["max_mib"] >= summary["median_mib"]).all() and (summary["median_mib"] > 0).all()


def test_location_options_never_make_a_configuration_comparison():
    """The GLM plan's two conditions run on two servers (different ``base_url``s); an
    address locates a server and changes nothing measured, so the comparison is factor-only
    when the records show everything else recorded and equal."""
    from pathlib import Path

    from sitegen.plan.plan_file import load_plan

    plan = load_plan(
        Path(__file__).parents[2] / "examples" / "plans" / "glm-h100-llamacpp-http.yaml"
    )
    off, mtp = plan.conditions
    assert off.engine_options["base_url"] != mtp.engine_options["base_url"]
    records = []
    for condition in plan.conditions:
        provenance = h100_provenance()
        provenance["engine"].update(id="llamacpp-http", api="http completion")
        provenance["flags"] = {**provenance["flags"], **condition.engine_options}
        provenance["flags"] = {k: str(v) for k, v in provenance["flags"].items()}
        for spec in plan.inputs:
            for repetition, rate in enumerate(
                (50.0, 50.0, 50.0) if condition is off else (60.0,) * 3
            ):
                records.append(
                    make_record(
                        condition.id,
                        spec.id,
                        rate,
                        repetition,
                        speculative=condition.speculative,
                        drafts=None if condition is off else (300, 200),
                        provenance=provenance,
                    )
                )
    frame = trials_frame(RecordTable.of(records))
    comparisons = compare_conditions(plan, speed_summary(usable(frame)), records, usable(frame))
    assert len(comparisons) == len(plan.inputs) == 6
    for comparison in comparisons:
        assert comparison.is_factor_only and comparison.differing_fields == ()
        assert comparison.ratio == pytest.approx(1.2)
        assert comparison.change_percent == pytest.approx(20.0)
