"""Sweeps (issue: the 002 report): matched baselines, dispersion declared in the plan,
speculation health (C-SPECHEALTH), concurrency rounds and the Pareto front, telemetry."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from sitegen.measure import run_campaign
from sitegen.plan.expand import expand_trials
from sitegen.plan.plan_file import canonical_plan_json
from sitegen.plan.plan_models import (
    DispersionSpec,
    SpeculationHealthSpec,
    SpeculativeSpec,
)
from sitegen.records.campaign import read_campaigns
from sitegen.records.verify import verify_campaign
from sitegen.statistics import dispersion
from sitegen.statistics.dispersion import median_ratio_interval, outlier_labels
from sitegen.statistics.report import make_report
from sitegen.statistics.sweep import pareto_front, varying_factors
from tests.conftest import make_plan
from tests.sitefixtures import (
    publishable_campaign,
    read_records,
    sweep_condition,
    sweep_plan,
    write_records,
)

OFF = SpeculativeSpec()
_condition = sweep_condition


def _ngram(draft_max: int) -> SpeculativeSpec:
    return SpeculativeSpec(mode="ngram-simple", draft_max=draft_max)


def _report(data_dir):
    (campaign,), issues = read_campaigns(data_dir)
    assert issues == []
    return make_report(campaign)


def test_each_speculative_level_is_compared_with_its_matched_baseline(tmp_path):
    run_campaign(sweep_plan(), tmp_path)
    report = _report(tmp_path)
    pairs = {(c.treatment, c.baseline): c for c in report.comparisons}
    # Temperature 0.7 against off at 0.7, never against the plan's first condition.
    assert set(pairs) == {
        ("ng2-t0", "off-t0"),
        ("ng4-t0", "off-t0"),
        ("ng2-t0.7", "off-t0.7"),
        ("ng4-t0.7", "off-t0.7"),
    }
    assert all(c.is_factor_only and c.ratio is not None for c in pairs.values())
    sweep = report.sweep
    assert sweep.factors == ["speculative_mode", "draft_max", "temperature"]
    assert sweep.series_factors == ["temperature"]
    assert sweep.levels == ["ngram-simple ≤2", "ngram-simple ≤4"]
    cell = sweep.cells[("q", "ngram-simple ≤4", "temperature=0.7")]
    assert cell.comparison.baseline == "off-t0.7" and cell.treatment_n == 4


def test_without_a_matched_baseline_a_level_is_a_configuration_comparison(tmp_path):
    plan = sweep_plan(
        conditions=[
            _condition("off-t0", OFF, 0.0),
            _condition("ng4-t0.7", _ngram(4), 0.7),
            _condition("ng2-t0.7", _ngram(2), 0.7),
        ]
    )
    run_campaign(plan, tmp_path)
    comparisons = _report(tmp_path).comparisons
    assert {(c.treatment, c.baseline) for c in comparisons} == {
        ("ng4-t0.7", "off-t0"),
        ("ng2-t0.7", "off-t0"),
    }
    assert all(c.differing_fields == ("sampling",) and c.ratio is None for c in comparisons)


def test_factors_come_from_the_conditions_and_ignore_server_locations():
    plan = sweep_plan()
    assert varying_factors(plan) == ["speculative_mode", "draft_max", "temperature"]
    assert varying_factors(make_plan()) == ["speculative_mode", "draft_max"]


def test_outliers_are_labelled_never_dropped():
    frame = pd.DataFrame(
        {
            "condition_id": ["a"] * 6 + ["b"] * 3,
            "input_id": ["q"] * 9,
            "gen_tps": [50.0, 51.0, 49.0, 50.5, 49.5, 90.0, 10.0, 50.0, 90.0],
        }
    )
    labels = outlier_labels(frame, "iqr-1.5")
    assert labels.tolist() == [False] * 5 + [True] + [False] * 3  # b: too few for quartiles
    assert not outlier_labels(frame, "none").any()


def test_outliers_stay_in_every_statistic(tmp_path):
    def slow_first(record):
        if record["condition_id"] == "off-t0" and record["trial_id"].endswith("r0"):
            record["metrics"]["gen_tps"] = 1.0
            record["metrics"]["generation_s"] = (record["metrics"]["generated_tokens"] - 1) / 1.0

    plan = sweep_plan(dispersion=DispersionSpec(outliers="iqr-1.5"))
    publishable_campaign(tmp_path, plan, mutate=slow_first)
    report = _report(tmp_path)
    row = report.summary.set_index("condition_id").loc["off-t0"]
    assert row["n"] == 4 and row["outliers"] == 1 and row["gen_tps_min"] == 1.0
    assert report.trials.loc[report.trials["trial_id"] == "off-t0/q/r0", "outlier"].item()


def test_bootstrap_interval_is_reproducible_and_brackets_the_ratio():
    rng = np.random.default_rng(1)
    treatment, baseline = rng.normal(60, 2, 16), rng.normal(50, 2, 16)
    spec = DispersionSpec(bootstrap_resamples=2000, bootstrap_seed=7)
    low, high = median_ratio_interval(treatment, baseline, spec)
    assert median_ratio_interval(treatment, baseline, spec) == (low, high)
    assert low < np.median(treatment) / np.median(baseline) < high
    assert low > 1.1 and high < 1.3
    wider = median_ratio_interval(treatment, baseline, DispersionSpec(confidence=0.99))
    assert wider[0] < low and wider[1] > high
    assert median_ratio_interval(treatment[:1], baseline, spec) is None


def test_the_interval_is_the_same_drawn_in_blocks(monkeypatch):
    """Resamples drawn a block at a time (bounded memory for 400,000 trials) take the same
    values from the generator as one draw of every resample at once."""
    rng = np.random.default_rng(3)
    treatment, baseline = rng.normal(60, 5, 301), rng.normal(50, 5, 257)
    spec = DispersionSpec(bootstrap_resamples=500, bootstrap_seed=11)
    generator = np.random.default_rng(spec.bootstrap_seed)
    top = np.median(generator.choice(treatment, size=(500, len(treatment))), axis=1)
    bottom = np.median(generator.choice(baseline, size=(500, len(baseline))), axis=1)
    whole = tuple(float(q) for q in np.quantile(top / bottom, [0.025, 0.975]))
    monkeypatch.setattr(dispersion, "RESAMPLE_BLOCK", 7 * len(treatment) + 3)
    assert median_ratio_interval(treatment, baseline, spec) == whole


def test_dispersion_fields_keep_older_plan_hashes():
    plan = make_plan()
    assert "dispersion" not in canonical_plan_json(plan)
    assert "concurrency" not in canonical_plan_json(plan)
    declared = make_plan(dispersion=DispersionSpec(outliers="iqr-1.5"))
    assert '"outliers":"iqr-1.5"' in canonical_plan_json(declared)


def _no_drafts(record):
    if record["speculative"]["mode"] != "off" and record["metrics"]:
        record["metrics"]["draft_proposed"] = 0
        record["metrics"]["draft_accepted"] = 0


def test_speculation_that_proposed_no_drafts_gets_no_ratio(tmp_path):
    publishable_campaign(tmp_path, make_plan(), mutate=_no_drafts)
    report = _report(tmp_path)
    # Per input, never pooled over inputs: each of the two inputs is its own finding.
    findings = {f.input_id: f for f in report.health["on"]}
    assert set(findings) == {"short", "padded"}
    assert all((f.kind, f.observed, f.trials) == ("no-drafts", 0, 3) for f in findings.values())
    assert all(c.is_factor_only and c.ratio is None and c.health for c in report.comparisons)


def test_low_acceptance_and_memory_over_headroom_are_findings(tmp_path):
    def low(record):
        if record["speculative"]["mode"] != "off" and record["metrics"]:
            record["metrics"]["draft_proposed"] = 100
            record["metrics"]["draft_accepted"] = 5
            record["peak_memory"] = [
                {
                    "device": "cuda:0",
                    "source": "nvml-used",
                    "peak_mib": 80000.0,
                    "sample_interval_s": 0.05,
                }
            ]

    plan = make_plan(
        speculation_health=SpeculationHealthSpec(min_acceptance=0.2, max_device_memory_mib=76800)
    )
    publishable_campaign(tmp_path, plan, mutate=low)
    findings = {f.kind: f for f in _report(tmp_path).health["on"]}
    assert findings["low-acceptance"].observed == pytest.approx(0.05)
    assert findings["low-acceptance"].limit == 0.2
    assert (findings["memory-headroom"].device, findings["memory-headroom"].observed) == (
        "cuda:0",
        80000.0,
    )


def test_the_page_states_what_was_observed_and_refuses_an_injected_ratio(tmp_path):
    from sitegen.commands.build import render_site
    from sitegen.pages.render import check_rendered
    from tests.sitefixtures import PROJECT

    publishable_campaign(tmp_path / "data", make_plan(), mutate=_no_drafts)
    rendered = render_site(tmp_path / "data", PROJECT)
    index = next(p for p in rendered.docs if p.endswith("/index.en.md") and "reports/" in p)
    html = rendered.docs[index].decode()
    assert 'data-claim="speculation-health"' in html and 'data-claim="speed-ratio"' not in html
    assert "proposed 0 draft tokens in 3 trials" in html
    injected = html.replace(
        'data-claim="speculation-health"',
        'data-claim="speed-ratio" data-factor-only="true" data-healthy="true" data-ci="1–2"',
        1,
    )
    found = check_rendered({**rendered.docs, index: injected.encode()}, rendered.reports)
    assert "C-SPECHEALTH" in {issue.rule for issue in found}


def test_concurrent_rounds_run_every_user_and_record_the_aggregate(tmp_path):
    plan = sweep_plan(
        conditions=[_condition("off-c1", OFF), _condition("off-c3", OFF, users=3)],
        repetitions=2,
    )
    trials = [t for t in expand_trials(plan) if t.condition_id == "off-c3"]
    assert [t.trial_id for t in trials[1:4]] == [
        "off-c3/q/r0/u0",
        "off-c3/q/r0/u1",
        "off-c3/q/r0/u2",
    ]
    assert [t.seed for t in trials[1:4]] == [1234, 1235, 1236]
    result = run_campaign(plan, tmp_path)
    records = read_records(result.directory / "records.jsonl")
    rounds = [r for r in records if r["condition_id"] == "off-c3" and r["role"] == "measured"]
    assert len(rounds) == 6 and len({r["round"]["run_id"] for r in rounds}) == 2
    first = [r for r in rounds if "/r0/" in r["trial_id"]]
    assert {r["round"]["generated_tokens"] for r in first} == {
        sum(r["metrics"]["generated_tokens"] for r in first)
    }
    assert all(r["round"] is None for r in records if r["condition_id"] == "off-c1")
    report = _report(tmp_path)
    row = report.summary.set_index("condition_id").loc["off-c3"]
    assert row["n"] == 6 and row["aggregate_tps_n"] == 2 and row["concurrency"] == 3


def test_a_resumed_round_runs_all_its_users_and_records_only_the_missing(tmp_path):
    plan = sweep_plan(conditions=[_condition("off-c3", OFF, users=3)], repetitions=1)
    result = run_campaign(plan, tmp_path)
    path = result.directory / "records.jsonl"
    kept = [r for r in read_records(path) if r["trial_id"] != "off-c3/q/r0/u1"]
    write_records(path, kept)
    again = run_campaign(plan, tmp_path)
    assert (again.written, again.skipped, again.resume_warmups) == (1, 3, 1)
    records = read_records(path)
    assert sorted(r["trial_id"] for r in records if r["role"] == "measured") == [
        "off-c3/q/r0/u0",
        "off-c3/q/r0/u1",
        "off-c3/q/r0/u2",
    ]
    redone = records[-1]
    assert redone["trial_id"] == "off-c3/q/r0/u1" and redone["round"]["size"] == 3
    assert redone["round"]["run_id"] != records[1]["round"]["run_id"]


def test_an_engine_serving_one_request_at_a_time_refuses_concurrency():
    from sitegen.core.errors import ConfigError
    from sitegen.plan.engine_registry import validate_engine_options

    plan = make_plan(engine="exllamav3", conditions=[_condition("off-c2", OFF, users=2)])
    with pytest.raises(ConfigError, match="concurrency must be 1"):
        validate_engine_options(plan)


def test_pareto_front():
    points = pd.DataFrame(
        {"aggregate_tps": [50.0, 90.0, 120.0, 80.0], "per_user_tps": [50.0, 45.0, 30.0, 40.0]}
    )
    assert pareto_front(points).tolist() == [True, True, True, False]


class _ScriptedGpu:
    """A telemetry probe with fixed readings: 200 W and a counter rising 1 J per read."""

    device = "cuda:0"

    def __init__(self):
        self.reads = 0

    def read(self, now):
        from sitegen.engine.telemetry_probe import TelemetrySample

        self.reads += 1
        return TelemetrySample(
            t_s=now,
            device="cuda:0",
            sm_util_pct=80.0,
            mem_bw_util_pct=60.0,
            power_w=200.0,
            sm_clock_mhz=1800.0,
            temperature_c=60.0,
            memory_used_mib=1000.0,
            energy_mj=1000 * self.reads,
        )


def test_gpu_telemetry_reaches_records_the_signed_log_and_energy_per_token(tmp_path, monkeypatch):
    from sitegen.engine.fake import FakeEngine
    from sitegen.measure import requests

    class _GpuProbe:
        source, device = "nvml-used", "cuda:0"

        def read_mib(self):
            return 1000.0

    monkeypatch.setattr(FakeEngine, "memory_probes", lambda self: [_GpuProbe()])
    monkeypatch.setattr(requests, "nvml_telemetry_probes", lambda: [_ScriptedGpu()])
    result = run_campaign(make_plan(repetitions=1), tmp_path)
    record = read_records(result.directory / "records.jsonl")[-1]
    (gpu,) = record["telemetry"]
    assert (gpu["source"], gpu["sm_util_mean_pct"], gpu["energy_source"]) == (
        "nvml",
        80.0,
        "counter",
    )
    lines = (result.directory / "logs/telemetry.jsonl").read_text().splitlines()
    assert len(lines) == len(read_records(result.directory / "records.jsonl"))
    assert json.loads(lines[-1])["trial_ids"] == [record["trial_id"]]
    assert verify_campaign(result.directory).files == 4
    trials = _report(tmp_path).trials.set_index("trial_id")
    row = trials.loc[record["trial_id"]]
    assert row["energy_per_token_j"] == pytest.approx(
        gpu["energy_j"] / record["metrics"]["generated_tokens"]
    )


def test_cpu_runs_record_process_cpu_time(tmp_path):
    result = run_campaign(make_plan(repetitions=1), tmp_path)
    record = read_records(result.directory / "records.jsonl")[-1]
    (cpu,) = record["telemetry"]
    assert cpu["source"] == "process-cpu-time" and cpu["cpu_time_s"] >= 0
    assert cpu["sm_util_mean_pct"] is None and cpu["sample_interval_s"] is None
