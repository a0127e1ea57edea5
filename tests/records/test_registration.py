"""Nothing left out unsaid, on the data side: ``publish: false`` needs its reason, a
campaign's id carries the nonce drawn at its registration (a plan measured again after its
campaign was deleted is a new campaign), the registry remembers every registered campaign,
and campaigns registered before nonces keep their id and resume by it."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
import yaml

from sitegen.core.errors import UsageError
from sitegen.measure import run_campaign
from sitegen.plan.plan_file import campaign_id, plan_sha256
from sitegen.records.annotations import read_annotations
from sitegen.records.layout import MANIFEST_FILE, REGISTRY_FILE
from sitegen.records.left_out import left_out_campaigns
from sitegen.records.record_models import Manifest
from sitegen.records.registrations import find_campaign, read_registry
from sitegen.records.verify import verify_campaign
from tests.conftest import break_the_sixth_append, make_plan


def _annotations(tmp_path: Path, **fields) -> tuple[object, list]:
    path = tmp_path / "annotations.yaml"
    path.write_text(yaml.safe_dump(fields, allow_unicode=True), encoding="utf-8")
    issues: list = []
    return read_annotations(path, issues), issues


def test_publish_false_without_a_reason_is_refused_naming_the_file_and_field(tmp_path):
    annotations, issues = _annotations(tmp_path, publish=False)
    assert annotations.publish  # what could not be read is published, and refused
    [issue] = issues
    assert issue.location == f"{tmp_path / 'annotations.yaml'} → unpublished_reason"
    assert "publish: false needs a reason" in issue.message


def test_a_reason_in_one_language_only_is_refused(tmp_path):
    _, issues = _annotations(tmp_path, publish=False, unpublished_reason={"en": "a dry run"})
    assert [issue.location.rsplit(" → ", 1)[1] for issue in issues] == ["unpublished_reason.ja"]


def test_a_reason_for_a_published_campaign_is_refused(tmp_path):
    reason = {"ja": "試し", "en": "a dry run"}
    _, issues = _annotations(tmp_path, unpublished_reason=reason)
    assert [issue.location.rsplit(" → ", 1)[1] for issue in issues] == ["unpublished_reason"]
    assert "publish is not false" in issues[0].message


def test_publish_false_with_its_reason_is_read(tmp_path):
    reason = {"ja": "全試行が失敗", "en": "every trial failed"}
    annotations, issues = _annotations(tmp_path, publish=False, unpublished_reason=reason)
    assert not issues and not annotations.publish
    assert annotations.unpublished_reason.en == "every trial failed"


def test_a_skip_without_a_reason_is_refused(tmp_path):
    directory = tmp_path / "campaigns" / "unit-000000000000"
    directory.mkdir(parents=True)
    found, issues = left_out_campaigns(tmp_path, ["unit-000000000000"])
    assert [(e.campaign_id, e.cause, e.reason) for e in found] == [
        ("unit-000000000000", "skip", None)
    ]
    assert [(i.location, i.message.split(",")[0]) for i in issues] == [
        ("--skip unit-000000000000", "needs a reason")
    ]
    _, issues = left_out_campaigns(tmp_path, {"unit-000000000000": "nul\x00"})
    assert [i.location for i in issues] == ["--skip unit-000000000000"]
    assert "control character" in issues[0].message


NEW_ID = re.compile(r"unit-[0-9a-f]{8}-[0-9a-f]{12}")


def test_a_plan_measured_again_after_its_campaign_was_deleted_gets_a_new_id(tmp_path, fake_plan):
    first = run_campaign(fake_plan, tmp_path).directory
    manifest = Manifest.model_validate_json((first / MANIFEST_FILE).read_bytes())
    assert NEW_ID.fullmatch(first.name) and manifest.campaign_id == first.name
    assert first.name == campaign_id(fake_plan, manifest.registration_nonce)
    shutil.rmtree(first)

    again = run_campaign(fake_plan, tmp_path).directory
    assert NEW_ID.fullmatch(again.name) and again.name != first.name
    records = (again / "records.jsonl").read_text(encoding="utf-8").splitlines()
    assert {json.loads(line)["campaign_id"] for line in records} == {again.name}
    verify_campaign(again)
    registered = read_registry(tmp_path, [])
    assert [r.campaign_id for r in registered] == [first.name, again.name]
    assert {(r.plan_name, r.plan_sha256) for r in registered} == {
        (fake_plan.name, plan_sha256(fake_plan))
    }
    [discarded], issues = left_out_campaigns(tmp_path)
    assert not issues
    assert (discarded.campaign_id, discarded.cause, discarded.plan_name) == (
        first.name,
        "discarded",
        fake_plan.name,
    )
    assert discarded.measured_again_as == (again.name,)


def test_an_interrupted_campaign_is_resumed_under_the_id_it_was_registered_with(
    tmp_path, fake_plan, monkeypatch
):
    break_the_sixth_append(monkeypatch, KeyboardInterrupt())
    with pytest.raises(KeyboardInterrupt):
        run_campaign(fake_plan, tmp_path)
    monkeypatch.undo()
    [registered] = read_registry(tmp_path, [])
    directory = find_campaign(tmp_path / "campaigns", fake_plan)
    assert directory.name == registered.campaign_id and NEW_ID.fullmatch(directory.name)

    resumed = run_campaign(fake_plan, tmp_path)
    assert resumed.directory == directory and resumed.skipped == 5
    manifest = Manifest.model_validate_json((directory / MANIFEST_FILE).read_bytes())
    assert campaign_id(fake_plan, manifest.registration_nonce) == directory.name
    assert len(read_registry(tmp_path, [])) == 1  # resuming registers nothing
    verify_campaign(directory)


def test_a_campaign_registered_before_nonces_keeps_its_id_and_its_manifest_bytes(
    tmp_path, fake_plan
):
    measured = run_campaign(fake_plan, tmp_path).directory
    legacy = measured.with_name(campaign_id(fake_plan))  # <plan name>-<12 hex>
    measured.rename(legacy)
    manifest = Manifest.model_validate_json((legacy / MANIFEST_FILE).read_bytes())
    before = manifest.model_copy(update={"campaign_id": legacy.name, "registration_nonce": None})
    data = (before.model_dump_json(indent=2) + "\n").encode()
    assert b"registration_nonce" not in data
    (legacy / MANIFEST_FILE).write_bytes(data)

    assert find_campaign(tmp_path / "campaigns", fake_plan) == legacy
    again = run_campaign(fake_plan, tmp_path)
    assert again.directory == legacy and again.written == 0
    assert (legacy / MANIFEST_FILE).read_bytes() == data  # nothing new: the same bytes
    verify_campaign(legacy)


def test_measure_refuses_two_campaigns_of_one_plan_it_could_resume(tmp_path, fake_plan):
    directory = run_campaign(fake_plan, tmp_path).directory
    shutil.copytree(directory, directory.with_name(campaign_id(fake_plan)))
    with pytest.raises(UsageError, match="several campaigns of plan unit"):
        run_campaign(fake_plan, tmp_path)


def test_the_registry_skips_a_torn_last_line_and_refuses_a_damaged_one(tmp_path):
    plan = make_plan()
    entry = {
        "campaign_id": campaign_id(plan, "0123abcd"),
        "plan_name": plan.name,
        "plan_sha256": plan_sha256(plan),
        "registered_at": "2025-01-01T00:00:00.000+00:00",
    }
    line = json.dumps(entry)
    (tmp_path / REGISTRY_FILE).write_text(f"{line}\n{line}\n{line[:20]}", encoding="utf-8")
    issues: list = []
    assert [r.campaign_id for r in read_registry(tmp_path, issues)] == [entry["campaign_id"]]
    assert not issues
    (tmp_path / REGISTRY_FILE).write_text(f"{line[:20]}\n{line}\n", encoding="utf-8")
    assert len(read_registry(tmp_path, issues)) == 1
    assert [issue.location.split(" → ")[0] for issue in issues] == [f"{tmp_path / REGISTRY_FILE}:1"]
