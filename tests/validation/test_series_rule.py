"""C-SERIES: every record of a campaign of a series holds one value of the factor; the
failing case of the catalog's test (``test_rules``) renders a site, this one validates the
records alone."""

from __future__ import annotations

from sitegen.records.campaign import read_campaign
from sitegen.validation import validate_campaigns
from tests.conftest import make_plan
from tests.sitefixtures import publishable_campaign

SERIES_PLAN = make_plan(series={"factor": "model_file"}, repetitions=1)


def _issues(tmp_path, mutate=None):
    records = publishable_campaign(tmp_path, SERIES_PLAN, mutate=mutate)
    campaign = read_campaign(records.parent, [])
    return [issue for issue in validate_campaigns([campaign]) if issue.rule == "C-SERIES"]


def test_a_campaign_of_one_model_file_passes(tmp_path):
    assert _issues(tmp_path) == []


def test_records_of_another_model_file_are_named(tmp_path):
    def other_model(record: dict) -> None:
        if record["condition_id"] == "on":
            record["provenance"]["model"]["sha256"] = "f" * 64

    issues = _issues(tmp_path, other_model)
    assert len(issues) == 3  # on's warm-up and its two measured trials
    first = issues[0]
    assert "(trial on/warmup-0) → provenance.model.sha256" in first.location
    assert f"model_file '{'f' * 64}'" in first.message
    assert "series by model_file was measured with" in first.message
    assert "(from trial off/warmup-0 on)" in first.message
    assert "sitegen measure --new-campaign" in first.message


def test_records_whose_engine_never_loaded_hold_no_value(tmp_path):
    def never_loaded(record: dict) -> None:
        if record["trial_id"] == "on/warmup-0":
            record["provenance"]["engine"]["api"] = "-"
            record["provenance"]["model"]["sha256"] = ""

    assert _issues(tmp_path, never_loaded) == []
