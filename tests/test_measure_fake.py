"""The runner with the deterministic fake engine: resume, failures as data."""

from __future__ import annotations

import json

from sitegen.measure import run_campaign
from sitegen.plan.expand import expand_trials
from sitegen.plan.models import ConditionSpec
from sitegen.records.campaign import CampaignStore, read_campaign
from sitegen.validation import validate_campaigns
from tests.conftest import make_plan


def _lines(directory):
    return (directory / "records.jsonl").read_text(encoding="utf-8").splitlines()


def test_full_campaign_and_manifest(tmp_path, fake_plan):
    result = run_campaign(fake_plan, tmp_path)
    lines = _lines(result.directory)
    assert len(lines) == len(expand_trials(fake_plan)) == result.written
    record = json.loads(lines[1])
    assert record["schema_version"] == 1 and list(record)[0] == "schema_version"
    padded = next(json.loads(line) for line in lines if '"input_id":"padded"' in line)
    assert abs(padded["prompt_tokens"] - 40) <= 4 and "not to be used" in padded["prompt"]
    manifest = json.loads((result.directory / "manifest.json").read_text())
    assert manifest["record_count"] == len(lines)
    assert {a["path"] for a in manifest["artifacts"]} == {
        "plan.json",
        "records.jsonl",
        "logs/engine.log",
    }


def test_resume_truncates_torn_tail_without_duplicates(tmp_path, fake_plan):
    result = run_campaign(fake_plan, tmp_path)
    lines = _lines(result.directory)
    # Simulate a kill: 5 complete records and half of the sixth.
    torn = "\n".join(lines[:5]) + "\n" + lines[5][: len(lines[5]) // 2]
    (result.directory / "records.jsonl").write_text(torn, encoding="utf-8")
    again = run_campaign(fake_plan, tmp_path)
    assert again.skipped == 5 and again.written == len(lines) - 5
    # The interrupted condition's model is loaded anew, so it is warmed up again first.
    assert again.resume_warmups == 1
    ids = [json.loads(line)["trial_id"] for line in _lines(result.directory)]
    assert (
        ids[5] == "off/resume-warmup-1-0"
        and ids[6] == lines[5].split('"trial_id":"')[1].split('"')[0]
    )
    assert sorted(i for i in ids if "resume-warmup" not in i) == sorted(
        t.trial_id for t in expand_trials(fake_plan)
    )
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


def test_load_failure_is_recorded_per_trial(tmp_path, monkeypatch):
    from sitegen.engine import fake
    from sitegen.errors import EngineError

    def refuse(self, plan, condition):
        raise EngineError("out of memory while loading")

    monkeypatch.setattr(fake.FakeEngine, "__init__", refuse)
    plan = make_plan()
    result = run_campaign(plan, tmp_path)
    records = [json.loads(line) for line in _lines(result.directory)]
    assert len(records) == len(expand_trials(plan))
    assert all(r["status"] == "failed" and "load failure" in r["failure_reason"] for r in records)


def test_records_validate_but_fake_engine_is_never_publishable(tmp_path, fake_plan):
    run_campaign(fake_plan, tmp_path)
    issues = []
    campaign = read_campaign(
        CampaignStore.open(tmp_path / "campaigns", fake_plan).directory, issues
    )
    assert len(campaign.records) == len(expand_trials(fake_plan)) and not issues
    issues = validate_campaigns([campaign])
    assert issues and all(i.rule == "C-ENGINE" and "test engine" in i.message for i in issues)
    assert "provenance.engine.id" in issues[0].location
