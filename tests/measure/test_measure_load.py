"""Open-loop load runs with the fake engine: each request sent at its scheduled time while
earlier ones are still running, the schedule and the actual sends recorded, and a run
killed while its records were written resumed without losing or duplicating a record."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator

import pandas as pd
import pytest

from sitegen.engine.contract import GenerationRequest
from sitegen.engine.fake import FakeEngine
from sitegen.measure import run_campaign
from sitegen.pages.downloads import make_downloads
from sitegen.plan.expand import expand_trials
from sitegen.plan.plan_models import ConditionSpec, InputSpec
from sitegen.records.campaign import read_campaign
from sitegen.records.registrations import find_campaign
from sitegen.records.stream import StreamChunk, StreamEnd, StreamEvent
from sitegen.records.verify import verify_campaign
from sitegen.statistics.load import LOAD_COLUMNS
from sitegen.statistics.report import make_report
from sitegen.validation import validate_campaigns
from tests.conftest import break_the_sixth_append, make_plan

REQUEST_S = 1.0
"""How long each request of the slow fake engine takes: longer than the gaps between
sends, so an open-loop run has several requests in flight."""


SHORT_REQUEST_S = 0.3
"""A request's time where the test checks what is sent or kept, not that sends overlap."""

LATE_S = 0.6
"""How late a send may be behind its schedule here: the dispatcher's lag, generous for a
machine whose two cores other test processes keep busy (CI has stalled a send 0.44 s;
the dispatcher does not add up lags: each send waits for its own time from the run's
start). Still below REQUEST_S less the schedule's 0.25 s, so the open-loop check holds."""


class SlowFakeEngine(FakeEngine):
    """The fake engine, but every request really takes ``request_s`` (it sleeps, as a
    server's request waits on the network, releasing the interpreter)."""

    request_s = REQUEST_S

    def generate(self, request: GenerationRequest) -> Iterator[StreamEvent]:
        start = time.monotonic()
        time.sleep(self.request_s / 3)
        yield StreamChunk(t=time.monotonic(), answer="alpha ")
        time.sleep(self.request_s * 2 / 3)
        yield StreamChunk(t=time.monotonic(), answer="beta")
        yield StreamEnd(
            t=time.monotonic(),
            finish="stop",
            generated_tokens=2,
            prompt_tokens=self.count_tokens(request.prompt),
            prompt_processing_s=min(0.01, time.monotonic() - start),
        )


def load_plan(**load):
    return make_plan(
        conditions=[ConditionSpec(id="off", context_capacity=512)],
        inputs=[InputSpec(id="short", text="question one", max_output_tokens=16)],
        repetitions=1,
        warmups=0,
        load={"profile": "constant", "rates": [20.0], "requests": 6} | load,
        slo={"ttft_p95_s": 10.0},
    )


def engines(plan, request_s: float = REQUEST_S):
    engine = SlowFakeEngine(plan, plan.conditions[0])
    engine.request_s = request_s
    return {"off": engine}


def records(directory):
    lines = (directory / "records.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines]


def test_requests_are_sent_on_schedule_without_waiting_for_completions(tmp_path):
    plan = load_plan()
    result = run_campaign(plan, tmp_path, engines=engines(plan))
    assert result.incomplete == 0
    sent = [r for r in records(result.directory) if r["load"]]
    assert [r["trial_id"] for r in sent] == [f"off/short/load-20/q{k}" for k in range(6)]
    assert {r["load"]["run_id"] for r in sent} == {sent[0]["load"]["run_id"]}
    assert all(r["round"] is None and r["status"] == "ok" for r in sent)
    for r in sent:
        load = r["load"]
        assert load["scheduled_s"] == pytest.approx(load["request_index"] / 20)
        # On time: late only by the dispatcher's lag (generous on a busy machine).
        assert 0 <= load["sent_s"] - load["scheduled_s"] < LATE_S
        assert load["run_requests"] == 6 and load["run_completed"] == 6
        assert load["run_generated_tokens"] == 12
    # Open loop: the whole schedule (0.25 s) was sent before the first request (1 s)
    # ended, so every request after the first was sent while others were in flight.
    first_end = sent[0]["load"]["sent_s"] + sent[0]["metrics"]["e2e_s"]
    assert all(r["load"]["sent_s"] < first_end for r in sent)
    wall = sent[0]["load"]["run_wall_s"]
    assert wall < 0.5 * sum(r["metrics"]["e2e_s"] for r in sent)

    campaign = read_campaign(result.directory, issues := [])
    assert not issues and {i.rule for i in validate_campaigns([campaign])} == {"C-ENGINE"}
    report = make_report(campaign)
    (row,) = report.load.to_dict("records")
    assert row["recorded"] == row["planned"] == 6 and row["slo_met"] == 6
    assert row["throughput_rps"] == pytest.approx(6 / wall)
    # The closed-loop statistics hold the repetition only.
    assert report.summary["n"].tolist() == [1]
    assert report.excluded["planned"] == 1 and report.excluded["measured"] == 1
    files = {f.name: f for f in make_downloads(report, tmp_path / "downloads")}
    assert {"load.csv", "load.parquet"} <= set(files)
    table = pd.read_parquet(tmp_path / "downloads" / "load.parquet")
    assert list(table.columns) == list(LOAD_COLUMNS) and table["slo_met"].tolist() == [6]
    trials = pd.read_csv(tmp_path / "downloads" / "trials.csv")
    assert trials["load_sent_s"].notna().sum() == 6


def test_a_run_killed_while_writing_resumes_without_loss_or_duplicates(tmp_path, monkeypatch):
    plan = load_plan()
    planned = [t.trial_id for t in expand_trials(plan)]
    # Appends: the repetition, then q0…q5 of the run; the sixth (q4) is torn by the kill.
    # What is kept depends on the appends, not on timing: short requests do.
    break_the_sixth_append(monkeypatch, KeyboardInterrupt())
    with pytest.raises(KeyboardInterrupt):
        run_campaign(plan, tmp_path, engines=engines(plan, SHORT_REQUEST_S))
    monkeypatch.undo()
    directory = find_campaign(tmp_path / "campaigns", plan)

    again = run_campaign(plan, tmp_path, engines=engines(plan, SHORT_REQUEST_S))
    assert again.skipped == 5 and again.written == 2 and again.incomplete == 0
    kept = records(directory)
    assert [r["trial_id"] for r in kept] == planned  # each planned trial exactly once
    runs = [r["load"]["run_id"] for r in kept if r["load"]]
    # The run was sent again whole; only q4 and q5 were recorded from it.
    assert runs[:4] == [runs[0]] * 4 and runs[4:] == [runs[4]] * 2 and runs[0] != runs[4]
    assert {r["load"]["run_requests"] for r in kept if r["load"]} == {6}
    verify_campaign(directory)
    report = make_report(read_campaign(directory, []))
    (row,) = report.load.to_dict("records")
    assert row["recorded"] == 6 and row["runs"] == 2
    finished = run_campaign(plan, tmp_path, engines=engines(plan, SHORT_REQUEST_S))
    assert finished.written == 0


def test_poisson_sends_follow_the_schedule(tmp_path):
    plan = load_plan(profile="poisson", rates=[10.0, 40.0], requests=5, seed=7)
    # Requests in flight while later ones are due, as in the constant run, in less time.
    result = run_campaign(plan, tmp_path, engines=engines(plan, SHORT_REQUEST_S))
    planned = {t.trial_id: t.scheduled_s for t in expand_trials(plan) if t.load_rate}
    sent = [r for r in records(result.directory) if r["load"]]
    assert len(sent) == 10
    for r in sent:
        assert r["load"]["profile"] == "poisson"
        assert r["load"]["scheduled_s"] == planned[r["trial_id"]]
        assert 0 <= r["load"]["sent_s"] - r["load"]["scheduled_s"] < LATE_S
