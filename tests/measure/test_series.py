"""A plan measured as a series: ``--new-campaign`` registers the next campaign, a plain
measure resumes the latest registered one, and a campaign refuses an engine that reports
another value of the series factor than its records hold."""

from __future__ import annotations

import dataclasses
import json

import pytest

from sitegen.core.errors import ConfigError, UsageError
from sitegen.engine.fake import FakeEngine
from sitegen.measure import run_campaign
from sitegen.plan.plan_models import ConditionSpec, InputSpec
from sitegen.records.campaign import read_campaign
from sitegen.records.registrations import find_campaign
from sitegen.records.series_factor import factor_values
from tests.conftest import make_plan

SERIES = {"factor": "engine_build"}


def _series_plan(**overrides):
    fields = dict(
        series=SERIES,
        inputs=[InputSpec(id="short", text="question one", max_output_tokens=4)],
        repetitions=1,
    )
    return make_plan(**(fields | overrides))


def _registered(data):
    lines = (data / "registry.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line)["campaign_id"] for line in lines]


def _report_version(monkeypatch, version, only_condition=None):
    """The fake engine reports ``version`` (for ``only_condition``'s engine alone, if given)."""
    describe = FakeEngine.describe

    def other_build(engine):
        description = describe(engine)
        if only_condition not in (None, engine.condition.id):
            return description
        engine_info = description.engine.model_copy(update={"version": version})
        return dataclasses.replace(description, engine=engine_info)

    monkeypatch.setattr(FakeEngine, "describe", other_build)


def _values(directory):
    campaign = read_campaign(directory, [])
    return factor_values(campaign.iter_full_records(), "engine_build")


def test_new_campaign_registers_the_next_and_a_plain_run_resumes_the_latest(tmp_path, monkeypatch):
    plan = _series_plan()
    first = run_campaign(plan, tmp_path)  # no campaign yet: the first of the series
    _report_version(monkeypatch, "1")
    second = run_campaign(plan, tmp_path, new_campaign=True)
    assert first.directory != second.directory and second.written == first.written
    assert _registered(tmp_path) == [first.directory.name, second.directory.name]
    assert list(_values(first.directory)) == ["0 fake"]
    assert list(_values(second.directory)) == ["1 fake"]

    resumed = run_campaign(plan, tmp_path)
    assert resumed.directory == second.directory
    assert resumed.written == 0 and resumed.skipped == second.written
    assert find_campaign(tmp_path / "campaigns", plan) == second.directory


def test_the_latest_is_the_last_registered_not_the_last_by_name(tmp_path):
    plan = _series_plan()
    directories = [run_campaign(plan, tmp_path, new_campaign=True).directory for _ in range(3)]
    assert _registered(tmp_path) == [d.name for d in directories]
    assert find_campaign(tmp_path / "campaigns", plan) == directories[-1]
    assert find_campaign(tmp_path / "campaigns", plan, new=True) is None


def test_a_plan_without_series_has_no_next_campaign(tmp_path, fake_plan):
    with pytest.raises(UsageError, match="plan unit declares no series"):
        run_campaign(fake_plan, tmp_path, new_campaign=True)
    assert not (tmp_path / "campaigns").exists() or not any((tmp_path / "campaigns").iterdir())


def test_resuming_with_another_build_is_refused_and_writes_nothing(tmp_path, monkeypatch):
    failing = ConditionSpec(id="off", context_capacity=512, engine_options={"fail_input": "one"})
    plan = _series_plan(conditions=[failing])
    first = run_campaign(plan, tmp_path)
    assert first.failed  # left for the next measure to retry
    records = (first.directory / "records.jsonl").read_bytes()
    _report_version(monkeypatch, "1")
    with pytest.raises(ConfigError) as refused:
        run_campaign(plan, tmp_path)
    message = str(refused.value)
    assert first.directory.name in message and "series by engine_build" in message
    assert "'0 fake' (trial off/warmup-0 and 1 more)" in message
    assert "condition off reports '1 fake'" in message
    assert "sitegen measure --new-campaign" in message
    assert (first.directory / "records.jsonl").read_bytes() == records

    nxt = run_campaign(plan, tmp_path, new_campaign=True)  # the cure
    assert nxt.directory != first.directory and list(_values(nxt.directory)) == ["1 fake"]


def test_an_engine_changing_within_a_run_is_refused_before_its_records(tmp_path, monkeypatch):
    _report_version(monkeypatch, "1", only_condition="on")
    plan = _series_plan()
    with pytest.raises(ConfigError, match=r"measured with '0 fake' \(the engine of condition off"):
        run_campaign(plan, tmp_path)
    directory = find_campaign(tmp_path / "campaigns", plan)
    assert directory is not None and list(_values(directory)) == ["0 fake"]
    conditions = {r.condition_id for r in read_campaign(directory, []).iter_full_records()}
    assert conditions == {"off"}
