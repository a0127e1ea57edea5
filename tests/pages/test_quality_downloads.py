"""Quality downloads: every quality table of a report is offered as CSV and Parquet beside
the trials, reads back as the table shown on the pages (numbers stay numbers, untrusted
text is spreadsheet-safe in CSV and exact in Parquet), and is described in both
languages on the data page."""

from __future__ import annotations

import csv
import io
import json

import pandas as pd
import pytest

from sitegen.core.project import packaged_theme
from sitegen.core.string_catalog import load_strings
from sitegen.pages.downloads import QUALITY_TABLES, make_downloads, quality_tables
from sitegen.plan.items import plan_items
from sitegen.records.campaign import read_campaign
from sitegen.statistics.report import make_report
from tests.sitefixtures import publishable_campaign
from tests.statistics.test_quality_records import quality_plan

NEGATIVE = -7
"""A wrong answer whose extracted text (``-7``) a spreadsheet would read as a formula."""


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """A quality report: right answers, except a negative number on one off answer and
    truncated on answers to another problem."""
    plan = quality_plan()
    items = plan_items(plan)

    def mutate(record: dict) -> None:
        item = items[record["input_id"]]
        text, finish = item.expected_json, "stop"
        first = record["input_id"] == "arithmetic-001" and record["repetition"] == 0
        if first and record["condition_id"] == "off":
            text = json.dumps({"answer": NEGATIVE})
        if record["input_id"] == "logic-003" and record["condition_id"] == "on":
            text, finish = text[:4], "length"
        record["text"] = text
        record["metrics"]["finish"] = finish
        record["metrics"]["answer_reached"] = True

    path = publishable_campaign(
        tmp_path_factory.mktemp("quality") / "data", plan=plan, mutate=mutate
    )
    campaign = read_campaign(path.parent, [])
    report = make_report(campaign)
    files = make_downloads(report, tmp_path_factory.mktemp("scratch"))
    return report, {f.name: f for f in files}


def _frames(report) -> dict[str, pd.DataFrame]:
    return dict(quality_tables(report))


def test_every_quality_table_is_offered_as_csv_and_parquet_and_checksummed(built):
    report, files = built
    assert list(_frames(report)) == list(QUALITY_TABLES)
    sums = files["SHA256SUMS"].read_bytes().decode("ascii")
    for table in QUALITY_TABLES:
        for kind in ("csv", "parquet"):
            file = files[f"{table}.{kind}"]
            assert file.table == table and file.kind == kind
            assert f"{file.sha256}  {file.name}\n" in sums
    names = list(files)
    assert names.index("trials.csv") < names.index("quality_outcomes.csv")


def test_quality_tables_read_back_with_pandas_as_computed(built):
    report, files = built
    for table, frame in _frames(report).items():
        parquet = pd.read_parquet(io.BytesIO(files[f"{table}.parquet"].read_bytes()))
        pd.testing.assert_frame_equal(
            parquet.reset_index(drop=True), frame.reset_index(drop=True), check_dtype=False
        )
        from_csv = pd.read_csv(io.BytesIO(files[f"{table}.csv"].read_bytes()), encoding="utf-8-sig")
        assert list(from_csv.columns) == list(frame.columns)
        assert len(from_csv) == len(frame)
    pairs = pd.read_csv(io.BytesIO(files["quality_pairs.csv"].read_bytes()), encoding="utf-8-sig")
    assert pairs.iloc[0].to_dict() == {
        "n_pairs": 12,
        "both": 9,
        "off_only": 2,
        "on_only": 1,
        "neither": 0,
    }


def test_the_per_problem_table_lets_a_reader_check_each_score(built):
    report, files = built
    items = plan_items(report.plan)
    rows = list(
        csv.DictReader(io.StringIO(files["quality_problems.csv"].read_bytes().decode("utf-8-sig")))
    )
    assert sorted(r["problem_id"] for r in rows) == sorted(
        i for i, item in items.items() if item.kind == "problem"
    )
    by_id = {r["problem_id"]: r for r in rows}
    first = by_id["arithmetic-001"]
    assert first["question"] == items["arithmetic-001"].problem.question
    assert json.loads(first["expected"]) == {"answer": items["arithmetic-001"].problem.answer.value}
    assert (first["correct_off"], first["correct_on"], first["discordant"]) == ("1", "2", "1")
    assert by_id["logic-003"]["on_truncated"] == "2"


def test_untrusted_answers_are_spreadsheet_safe_in_csv_and_exact_in_parquet(built):
    _, files = built
    rows = list(
        csv.DictReader(io.StringIO(files["quality_answers.csv"].read_bytes().decode("utf-8-sig")))
    )
    answered = {r["trial_id"]: r["answered"] for r in rows}
    assert answered["off/arithmetic-001/r0"] == f"'{NEGATIVE}"
    assert not answered["on/arithmetic-001/r0"].startswith("'")  # a plain number stays as is
    parquet = pd.read_parquet(io.BytesIO(files["quality_answers.parquet"].read_bytes()))
    exact = parquet.set_index("trial_id").loc["off/arithmetic-001/r0", "answered"]
    assert exact == str(NEGATIVE)
    by_trial = {r["trial_id"]: r for r in rows}
    assert by_trial["off/arithmetic-001/r0"]["outcome"] == "wrong"
    assert by_trial["on/logic-003/r1"]["outcome"] == "truncated"


def test_each_quality_table_is_described_in_both_languages():
    strings = load_strings(packaged_theme())
    for table in QUALITY_TABLES:
        label = strings[f"download.{table}"]
        assert label.ja and label.en and label.ja != label.en


def test_a_plan_without_documents_offers_no_document_tables(tmp_path):
    plan = quality_plan(documents=[])
    path = publishable_campaign(tmp_path / "data", plan=plan)
    report = make_report(read_campaign(path.parent, []))
    assert [name for name, _ in quality_tables(report)] == [
        t for t in QUALITY_TABLES if not t.startswith("document_")
    ]
