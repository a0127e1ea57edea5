"""The runner with the deterministic fake engine: resume, failures as data."""

from __future__ import annotations

import json

import pytest

from sitegen.measure import run_campaign
from sitegen.plan.expand import expand_trials
from sitegen.plan.plan_models import ConditionSpec
from sitegen.records.campaign import read_campaign
from sitegen.records.registrations import find_campaign
from sitegen.records.verify import verify_campaign
from sitegen.validation import validate_campaigns
from tests.conftest import break_the_sixth_append, make_plan


def _lines(directory):
    return (directory / "records.jsonl").read_text(encoding="utf-8").splitlines()


def test_full_campaign_and_manifest(tmp_path, fake_plan):
    result = run_campaign(fake_plan, tmp_path)
    lines = _lines(result.directory)
    assert len(lines) == len(expand_trials(fake_plan)) == result.written
    assert result.incomplete == 0 and result.retried == 0 and not result.stopped
    record = json.loads(lines[1])
    assert record["schema_version"] == 1 and list(record)[0] == "schema_version"
    assert record["attempt"] == 1
    padded = next(json.loads(line) for line in lines if '"input_id":"padded"' in line)
    assert abs(padded["prompt_tokens"] - 40) <= 4 and "not to be used" in padded["prompt"]
    manifest = json.loads((result.directory / "manifest.json").read_text())
    assert manifest["record_count"] == len(lines) and manifest["pending_record_sha256"] is None
    assert {a["path"] for a in manifest["artifacts"]} == {
        "plan.json",
        "records.jsonl",
        "logs/engine.log",
        "logs/telemetry.jsonl",
    }
    assert (result.directory / ".lock").is_file()  # a dot-file: never listed


def test_resume_truncates_torn_tail_without_duplicates(tmp_path, fake_plan, monkeypatch):
    planned = [t.trial_id for t in expand_trials(fake_plan)]
    break_the_sixth_append(monkeypatch, KeyboardInterrupt())  # the kill: half a line
    with pytest.raises(KeyboardInterrupt):
        run_campaign(fake_plan, tmp_path)
    monkeypatch.undo()
    directory = find_campaign(tmp_path / "campaigns", fake_plan)
    torn = (directory / "records.jsonl").read_bytes()
    assert torn.count(b"\n") == 5 and not torn.endswith(b"\n")

    again = run_campaign(fake_plan, tmp_path)
    assert again.skipped == 5 and again.written == len(planned) - 5 and again.incomplete == 0
    # The interrupted condition's model is loaded anew, so it is warmed up again first.
    assert again.resume_warmups == 1
    ids = [json.loads(line)["trial_id"] for line in _lines(directory)]
    assert ids[5] == "off/resume-warmup-1-0" and ids[6] == planned[5]  # redone once
    assert [i for i in ids if "resume-warmup" not in i] == planned
    verify_campaign(directory)
    finished = run_campaign(fake_plan, tmp_path)
    assert finished.written == 0 and finished.resume_warmups == 0


def test_engine_error_and_missed_length_become_failed_records(tmp_path):
    plan = make_plan(
        conditions=[
            ConditionSpec(id="off", context_capacity=512, engine_options={"fail_input": "two"})
        ],
        prompt_tolerance_tokens=0,
    )
    result = run_campaign(plan, tmp_path)
    records = [json.loads(line) for line in _lines(result.directory)]
    failed = [r for r in records if r["status"] == "failed"]
    assert failed and all("fake engine failure" in r["failure_reason"] for r in failed)
    assert result.failed == len(failed) == 3
    assert all(r["status"] == "ok" for r in records if r["input_id"] == "short")


def test_load_failures_are_recorded_until_the_condition_stops(tmp_path, monkeypatch):
    from sitegen.core.errors import EngineError
    from sitegen.engine import fake

    def refuse(self, plan, condition):
        raise EngineError("out of memory while loading")

    monkeypatch.setattr(fake.FakeEngine, "__init__", refuse)
    plan = make_plan()
    result = run_campaign(plan, tmp_path)
    records = [json.loads(line) for line in _lines(result.directory)]
    # Each attempt tries to load again; after 3 in a row the condition's trials stay pending.
    assert [r["trial_id"] for r in records] == [
        "off/warmup-0",
        "off/short/r0",
        "off/short/r1",
        "on/warmup-0",
        "on/short/r0",
        "on/short/r1",
    ]
    assert all(r["status"] == "failed" and "load failure" in r["failure_reason"] for r in records)
    assert [(s.condition_id, s.left_pending) for s in result.stopped] == [("off", 4), ("on", 4)]
    assert result.failed == 6 and result.incomplete == len(expand_trials(plan))


def test_records_validate_but_fake_engine_is_never_publishable(tmp_path, fake_plan):
    run_campaign(fake_plan, tmp_path)
    issues = []
    campaign = read_campaign(find_campaign(tmp_path / "campaigns", fake_plan), issues)
    assert len(campaign) == len(expand_trials(fake_plan)) and not issues
    issues = validate_campaigns([campaign])
    assert issues and all(i.rule == "C-ENGINE" for i in issues)
    assert all("test engine" in i.message for i in issues[:5])
    assert issues[5].message == f"and {len(campaign) - 5} more like the above"
    assert "provenance.engine.id" in issues[0].location
