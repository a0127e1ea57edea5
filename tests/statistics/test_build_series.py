"""An engine tracked across its builds (issue 39): the campaigns of one plan in the
natural order of their builds, each build's medians and failed trials, and each step's
verdicts with what else differs; regressions listed first."""

from __future__ import annotations

from pathlib import Path

import pytest

from sitegen.plan.plan_models import Plan
from sitegen.plan.series_spec import SeriesSpec
from sitegen.records.campaign import Campaign, read_campaigns
from sitegen.statistics.build_series import (
    build_series,
    listed,
    make_series,
    natural_key,
    regressions,
)
from sitegen.statistics.report import Report, make_report
from tests.conftest import make_plan
from tests.sitefixtures import publishable_campaign

PLAN = make_plan(repetitions=4)
"""Two conditions × two inputs, four measured trials each."""


def build(
    data_dir: Path,
    version: str,
    rate: float,
    failed: int = 0,
    mutate_more=None,
    plan: Plan = PLAN,
) -> Report:
    """A campaign of ``plan`` on engine version ``version``: every usable trial's
    generation rate within ±0.03 % of ``rate`` and its TTFT 0.5 s; the first ``failed``
    measured trials of ``off`` on ``short`` failed."""
    seen: list[int] = []

    def mutate(record: dict) -> None:
        record["provenance"]["engine"].update(version=version, build="b1")
        if record["role"] != "measured" or record["status"] != "ok":
            return
        where = (record["condition_id"], record["input_id"])
        if where == ("off", "short") and len(seen) < failed:
            seen.append(1)
            record.update(status="failed", failure_reason="the server went away", metrics=None)
            return
        record["metrics"]["gen_tps"] = rate * (1 + 0.0001 * record["repetition"])
        record["metrics"]["ttft_s"] = 0.5 * (1 + 0.0001 * record["repetition"])
        if mutate_more:
            mutate_more(record)

    directory = publishable_campaign(data_dir, plan, mutate=mutate).parent
    # A campaign id of its own, as ``--new-campaign`` registers: <name>-<nonce>-<hash>.
    directory.rename(directory.with_name(directory.name.replace("-", f"-{data_dir.name}-", 1)))
    (campaign,), issues = read_campaigns(data_dir)
    assert issues == [] and isinstance(campaign, Campaign)
    return make_report(campaign)


def test_versions_sort_naturally():
    versions = ["xllamacpp 2026.10.11549 b2", "xllamacpp 2026.4.8672 b9", "xllamacpp 2026.4"]
    assert sorted(versions, key=natural_key) == [
        "xllamacpp 2026.4",
        "xllamacpp 2026.4.8672 b9",
        "xllamacpp 2026.10.11549 b2",
    ]


@pytest.fixture(scope="module")
def series_reports(tmp_path_factory) -> list[Report]:
    root = tmp_path_factory.mktemp("series")
    return [
        build(root / "c", "xllamacpp 2026.10.11549", 70.0, failed=2),
        build(root / "a", "xllamacpp 2026.4.8672", 100.0),
        build(root / "b", "xllamacpp 2026.5.9000", 100.5),
    ]


def test_builds_are_ordered_by_version_with_medians_and_failed_trials(series_reports):
    series = build_series(series_reports, "engine_build")
    assert [b.factor_value for b in series.builds] == [
        "xllamacpp 2026.4.8672 b1",
        "xllamacpp 2026.5.9000 b1",
        "xllamacpp 2026.10.11549 b1",
    ]
    assert [b.campaign_id.split("-")[1] for b in series.builds] == ["a", "b", "c"]
    last = series.builds[-1].cell("off", "short")
    assert last.failed == 2 and last.figures["gen_tps"].n == 2
    assert last.figures["gen_tps"].median == pytest.approx(70.0, rel=1e-3)
    assert last.figures["ttft_s"].median == pytest.approx(0.5, rel=1e-3)
    q1, q3 = series.builds[0].cell("on", "padded").figures["gen_tps"].quartiles or (0, 0)
    assert 100.0 <= q1 < q3 <= 100.04
    assert [(c.condition_id, c.input_id) for c in series.builds[0].cells] == [
        ("off", "short"),
        ("off", "padded"),
        ("on", "short"),
        ("on", "padded"),
    ]


def test_each_step_has_verdicts_and_says_whether_only_the_build_differs(series_reports):
    series = build_series(series_reports, "engine_build")
    first, second = series.steps
    assert (first.previous, first.current, second.current) == tuple(
        b.campaign_id for b in series.builds
    )
    assert first.setup.factor_differs and first.setup.factor_alone
    verdicts = {(c.condition_id, c.input_id, c.metric): c.verdict for c in second.cells}
    assert verdicts[("on", "short", "gen_tps")].verdict == "slower"
    assert verdicts[("on", "short", "ttft_s")].verdict == "no change"
    # Two failed of four: the build has too few values for a verdict on that input.
    assert verdicts[("off", "short", "gen_tps")].reason == "too_few"
    assert {c.verdict.verdict for c in first.cells} == {"no change"}  # 0.5 % < 2 %
    found = listed(series)
    slower = regressions(series)
    assert len(slower) == 3 and found[:3] == slower
    assert {f.cell.verdict.verdict for f in found[3:]} <= {"no change", "inconclusive"}


def test_a_step_names_what_else_differs(tmp_path, series_reports):
    def other_platform(record: dict) -> None:
        record["provenance"]["host"]["platform"] = "Linux 6.9.0 x86_64"

    other = build(tmp_path / "d", "xllamacpp 2026.11.1", 100.0, mutate_more=other_platform)
    series = build_series([*series_reports, other], "engine_build")
    last = series.steps[-1]
    assert last.setup.factor_differs and last.setup.differing == ("platform",)
    assert not last.setup.factor_alone


def test_the_campaigns_of_a_plan_that_declares_a_series_are_one_series(tmp_path, series_reports):
    plan = make_plan(repetitions=4, series=SeriesSpec(factor="engine_build"))
    later = build(tmp_path / "f", "xllamacpp 2026.12.2", 100.0, plan=plan)
    earlier = build(tmp_path / "e", "xllamacpp 2026.12.1", 100.0, plan=plan)
    # The campaigns of PLAN declare no series: they are no series.
    (series,) = make_series([*series_reports, later, earlier])
    assert (series.plan.name, series.factor) == ("unit", "engine_build")
    assert series.plan_sha256 == later.campaign.plan_sha256
    assert [b.campaign_id for b in series.builds] == [
        earlier.campaign.campaign_id,
        later.campaign.campaign_id,
    ]
    assert len(series.steps) == 1 and regressions(series) == []
    (alone,) = make_series([later])
    assert len(alone.builds) == 1 and alone.steps == ()
