"""Pre-registration that cannot be re-done quietly: the plan's registration time is the
campaign manifest's first entry and every record starts after it (C-PLANNED); a record's
engine is the plan's (C-ENGINE)."""

from __future__ import annotations

import json
import shutil
from datetime import datetime
from pathlib import Path

import pytest

from sitegen.cli import main
from sitegen.commands.build import render_site
from sitegen.core.errors import DataError
from sitegen.measure import run_campaign
from sitegen.pages.render import check_rendered
from sitegen.plan.plan_models import ConditionSpec, InputSpec
from sitegen.records.campaign import read_campaign
from sitegen.records.layout import MANIFEST_FILE, RECORDS_FILE
from sitegen.records.record_models import Manifest
from sitegen.records.store import CampaignStore
from tests.conftest import make_plan
from tests.sitefixtures import publishable_campaign, read_records, resign, write_records

PROJECT = Path(__file__).resolve().parents[2]


def _manifest(directory: Path) -> Manifest:
    return Manifest.model_validate_json((directory / MANIFEST_FILE).read_bytes())


def test_the_registration_is_recorded_when_the_campaign_is_created_and_kept(tmp_path):
    plan = make_plan()
    directory = run_campaign(plan, tmp_path).directory
    registered = _manifest(directory).registered_at
    starts = [r["started_at"] for r in read_records(directory / RECORDS_FILE)]
    assert registered is not None
    assert all(datetime.fromisoformat(registered) <= datetime.fromisoformat(s) for s in starts)
    with CampaignStore.open(tmp_path / "campaigns", plan):
        pass  # a resumed campaign keeps its registration
    assert _manifest(directory).registered_at == registered


def test_a_plan_registered_again_after_measuring_is_refused(tmp_path):
    """The audit's case: the plan is registered anew after measuring (its trials re-stamped
    with the new plan hash, start times kept) with a slow trial dropped."""
    data = tmp_path / "data"
    measured = publishable_campaign(data, make_plan(name="first"))
    records = read_records(measured)
    shutil.rmtree(measured.parent)
    later = make_plan(name="first", engine="llamacpp-embedded", repetitions=2)
    with CampaignStore.open(data / "campaigns", later) as store:
        directory = store.directory
        kept = [
            {**r, "campaign_id": store.campaign_id, "plan_sha256": store.plan_sha256}
            for r in records
            if r["repetition"] < 2 and r["trial_id"] != "on/short/r1"
        ]
    write_records(directory / RECORDS_FILE, kept)
    with pytest.raises(DataError) as caught:
        render_site(data, PROJECT)
    message = str(caught.value)
    assert "C-PLANNED" in {issue.rule for issue in caught.value.issues}
    assert "→ started_at" in message and "before the plan's registration" in message


def test_a_campaign_from_before_the_recorded_registration_still_reads_and_says_so(tmp_path, capsys):
    directory = publishable_campaign(tmp_path, make_plan()).parent
    manifest = json.loads((directory / MANIFEST_FILE).read_text())
    del manifest["registered_at"]
    (directory / MANIFEST_FILE).write_text(json.dumps(manifest, indent=2))
    resign(directory)
    campaign = read_campaign(directory, [])
    starts = [datetime.fromisoformat(r.started_at) for r in campaign.iter_full_records()]
    assert not campaign.registration_recorded and campaign.registered_at == min(starts)
    site = render_site(tmp_path, PROJECT)
    method = next(v for k, v in site.docs.items() if k.endswith("/method.en.md")).decode()
    assert "the start of the first trial: this campaign was written before" in method
    assert main(["check", "--data", str(tmp_path), "--project", str(PROJECT)]) == 0
    (warning,) = [line for line in capsys.readouterr().out.splitlines() if "warning" in line]
    assert "written before manifest.json recorded the registration" in warning
    assert "start of the first trial" not in _method_of(
        publishable_campaign(tmp_path / "new", make_plan()).parents[2]
    )


def _method_of(data: Path) -> str:
    site = render_site(data, PROJECT)
    return next(v for k, v in site.docs.items() if k.endswith("/method.en.md")).decode()


def test_records_of_another_engine_than_the_plans_are_refused(tmp_path):
    """The audit's case: a plan with ``engine: fake`` whose records say ``llamacpp-http``."""
    directory = run_campaign(make_plan(), tmp_path).directory
    records = read_records(directory / RECORDS_FILE)
    for record in records:
        record["provenance"]["engine"]["id"] = "llamacpp-http"
    write_records(directory / RECORDS_FILE, records)
    with pytest.raises(DataError) as caught:
        render_site(tmp_path, PROJECT)
    issue = next(i for i in caught.value.issues if i.rule == "C-ENGINE")
    assert "→ provenance.engine.id" in issue.location and "trial off/warmup-0" in issue.location
    assert "'llamacpp-http'" in issue.message and "'fake'" in issue.message


def test_a_named_reviewer_without_a_declared_review_is_refused(tmp_path):
    """The audit's case: answers a tool reviewed, published as 'no human review
    (automatic scoring only)' because review was left at its default."""
    directory = publishable_campaign(tmp_path, make_plan()).parent
    (directory / "annotations.yaml").write_text("reviewer: sitegen scorer\n")
    with pytest.raises(DataError) as caught:
        render_site(tmp_path, PROJECT)
    issue = next(i for i in caught.value.issues if i.rule == "C-REVIEW")
    assert issue.location.endswith("annotations.yaml → review")
    assert "sitegen scorer" in issue.message


def test_the_review_statement_is_the_declaration(tmp_path):
    publishable_campaign(tmp_path, make_plan())
    site = render_site(tmp_path, PROJECT)
    summary = next(
        (k, v.decode())
        for k, v in site.docs.items()
        if k.endswith("/index.en.md") and "reports/" in k
    )
    assert 'data-claim="review" data-review="none"' in summary[1]
    assert "automatic scoring" not in summary[1] and "none declared" in summary[1]
    forged = dict(site.docs)
    forged[summary[0]] = summary[1].replace('data-review="none"', 'data-review="human"').encode()
    found = check_rendered(forged, site.reports)
    assert any(i.rule == "C-REVIEW" and summary[0] in i.location for i in found)


def _capacity_plan(capacity: int, target: int | None = 40):
    return make_plan(
        conditions=[ConditionSpec(id="off", context_capacity=capacity)],
        inputs=[
            InputSpec(id="padded", text="q", target_prompt_tokens=target, max_output_tokens=16)
        ],
        repetitions=1,
    )


def test_a_capacity_the_engine_did_not_allocate_is_refused(tmp_path):
    """The audit's case: 64 published while llama.cpp ran with 256 per slot."""

    def llama_rounded_up(record):
        record["engine_context_per_slot"] = 256

    publishable_campaign(tmp_path, _capacity_plan(64), mutate=llama_rounded_up)
    with pytest.raises(DataError) as caught:
        render_site(tmp_path, PROJECT)
    issue = next(i for i in caught.value.issues if "→ engine_context_per_slot" in i.location)
    assert issue.rule == "C-CAPACITY" and "(trial off/warmup-0)" in issue.location
    assert sum("→ engine_context_per_slot" in i.location for i in caught.value.issues) == 1
    assert "allocated 256 tokens" in issue.message and "context_capacity 64" in issue.message


def test_an_input_and_output_cap_that_do_not_fit_are_refused(tmp_path):
    def long_prompt(record):
        record["prompt_tokens"] = 200

    publishable_campaign(tmp_path / "actual", _capacity_plan(128), mutate=long_prompt)
    with pytest.raises(DataError) as caught:
        render_site(tmp_path / "actual", PROJECT)
    issue = next(i for i in caught.value.issues if i.rule == "C-CAPACITY")
    assert issue.location.endswith("→ prompt_tokens")
    assert "200 input tokens + output cap 16 = 216" in issue.message
    assert "128-token context of condition 'off'" in issue.message

    publishable_campaign(tmp_path / "planned", _capacity_plan(64, target=60))
    with pytest.raises(DataError) as caught:
        render_site(tmp_path / "planned", PROJECT)
    issue = next(i for i in caught.value.issues if i.rule == "C-CAPACITY")
    assert issue.location.endswith("→ target_prompt_tokens") and "= 76" in issue.message


def test_a_capacity_the_engine_confirmed_or_not_is_stated(tmp_path):
    def reported(record):
        record["engine_context_per_slot"] = 512

    publishable_campaign(tmp_path / "reported", _capacity_plan(512), mutate=reported)
    publishable_campaign(tmp_path / "declared", _capacity_plan(512))
    for data, expected in (
        ("reported", "what the engine reported allocating"),
        ("declared", "The capacity of off is as the plan declares it"),
    ):
        site = render_site(tmp_path / data, PROJECT)
        summary = next(
            v.decode()
            for k, v in site.docs.items()
            if k.endswith("/index.en.md") and "reports/" in k
        )
        assert expected in summary


def test_a_start_that_is_not_a_timestamp_is_named(tmp_path):
    def no_time(record):
        if record["trial_id"] == "on/short/r1":
            record["started_at"] = "yesterday"

    publishable_campaign(tmp_path, make_plan(), mutate=no_time)
    with pytest.raises(DataError) as caught:
        render_site(tmp_path, PROJECT)
    issue = next(i for i in caught.value.issues if i.rule == "C-PLANNED")
    assert "(trial on/short/r1) → started_at" in issue.location
    assert "'yesterday' is not an ISO 8601 timestamp" in issue.message
