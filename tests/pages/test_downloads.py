"""Downloads: the CSV files are safe to open in a spreadsheet (formula-like text cells are
neutralised, line breaks inside a field never split a row) while JSON and Parquet keep the
exact text; numbers stay numbers."""

from __future__ import annotations

import csv
import gzip
import io
import json
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq
import pytest

from sitegen.pages import downloads
from sitegen.pages.downloads import DownloadFile, make_downloads, neutralise_cell
from sitegen.records.campaign import read_campaign
from sitegen.statistics.report import Report, make_report
from tests.builtsites import rendered_page
from tests.conftest import make_plan
from tests.sitefixtures import publishable_campaign, report_address

FORMULA_CASES = (
    '=HYPERLINK("http://x","y")',
    "+cmd|' /C calc'!A0",
    "-2+3",
    "@SUM(A1)",
    "\tx",
    "\rx",
    '＝HYPERLINK("http://x","y")',
    " =1+1",
    "\n=1+1",
    "\r\n@SUM(A1)",
    "\u3000＋cmd",
    "\u200b﹣2",
)
"""Text a spreadsheet would run, full-width or after blanks, line breaks and invisible
characters included: each must come back as ``"'" + original``."""

PLAIN_CASES = (
    "a\rb",
    "a\r\nb",
    '"quoted"',
    "日本語の回答です。改行\nあり",
    "plain answer",
)
"""Text that must come back exactly."""

CASES = FORMULA_CASES + PLAIN_CASES

NEGATIVE_SEED = -7
NEGATIVE_TTFT = -0.25
NEGATIVE_DRAFT = -3


def _expected_csv_text(value: str) -> str:
    return "'" + value if value in FORMULA_CASES else value


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> tuple[Report, list[DownloadFile], dict[str, dict[str, str]]]:
    """A report whose records carry every case in ``text``, ``failure_reason`` and
    ``prompt`` (each field starting at a different case), one warm-up with negative
    numbers; the originals per trial."""
    originals: dict[str, dict[str, str]] = {}
    negatives: list[str] = []

    def hostile(record: dict) -> None:
        index = len(originals)
        fields = {
            "text": CASES[index % len(CASES)],
            "failure_reason": CASES[(index + 3) % len(CASES)],
            "prompt": CASES[(index + 7) % len(CASES)],
        }
        record.update(fields)
        originals[record["trial_id"]] = fields
        if record["role"] == "warmup" and not negatives:
            negatives.append(record["trial_id"])
            record["sampling"]["seed"] = NEGATIVE_SEED
            record["metrics"]["ttft_s"] = NEGATIVE_TTFT
            record["metrics"]["draft_proposed"] = NEGATIVE_DRAFT

    # Enough trials for every case to reach each field.
    plan = make_plan(repetitions=4)
    path = publishable_campaign(tmp_path_factory.mktemp("downloads") / "data", plan, mutate=hostile)
    assert len(originals) >= len(CASES) and negatives
    issues: list = []
    campaign = read_campaign(path.parent, issues)
    assert campaign is not None and issues == []
    report = make_report(campaign)
    scratch = tmp_path_factory.mktemp("scratch")
    return report, make_downloads(report, scratch), originals


def _file(files: list[DownloadFile], name: str) -> bytes:
    return next(f for f in files if f.name == name).read_bytes()


def _text_columns(frame: pd.DataFrame) -> list[str]:
    return [
        c
        for c in frame.columns
        if pd.api.types.is_object_dtype(frame[c]) or isinstance(frame[c].dtype, pd.StringDtype)
    ]


def _texts(column: pd.Series) -> list[object]:
    return [None if pd.isna(v) else v for v in column]


@pytest.mark.parametrize("table", ["trials", "speed_summary"])
def test_csv_read_back_with_the_csv_module(built, table):
    report, files, _ = built
    frame = report.trials if table == "trials" else report.summary
    data = _file(files, f"{table}.csv")
    assert data.startswith(b"\xef\xbb\xbf")  # UTF-8 with BOM for spreadsheets
    rows = list(csv.reader(io.StringIO(data.decode("utf-8-sig"), newline="")))
    header, body = rows[0], rows[1:]
    assert header == list(frame.columns)
    assert len(body) == len(frame)  # no CR or LF inside a field split a row
    text = set(_text_columns(frame))
    for row, (_, expected) in zip(body, frame.iterrows(), strict=True):
        for name, cell in zip(header, row, strict=True):
            value = expected[name]
            if pd.isna(value):
                assert cell == "", (name, cell)
            elif name in text:
                assert cell == _expected_csv_text(value), (name, cell, value)
            elif isinstance(value, bool):
                assert cell == str(value)
            else:
                assert float(cell) == value, (name, cell, value)


@pytest.mark.parametrize("table", ["trials", "speed_summary"])
def test_csv_read_back_with_pandas(built, table):
    report, files, _ = built
    frame = report.trials if table == "trials" else report.summary
    text = _text_columns(frame)
    read = pd.read_csv(
        io.BytesIO(_file(files, f"{table}.csv")),
        encoding="utf-8-sig",
        dtype=dict.fromkeys(text, str),
        keep_default_na=False,
        na_values={c: [""] for c in frame.columns if c not in text},
    )
    assert list(read.columns) == list(frame.columns)
    assert len(read) == len(frame)
    for name in frame.columns:
        if name in text:
            expected = [_expected_csv_text(v) if isinstance(v, str) else "" for v in frame[name]]
            assert read[name].tolist() == expected, name
        elif frame[name].dtype == bool:
            assert read[name].tolist() == frame[name].tolist(), name
        else:
            pd.testing.assert_series_equal(
                read[name].astype("float64"),
                frame[name].astype("float64"),
                check_exact=True,
                check_names=False,
            )


def test_every_case_reaches_the_trials_csv_as_expected(built):
    report, files, originals = built
    data = _file(files, "trials.csv").decode("utf-8-sig")
    rows = list(csv.DictReader(io.StringIO(data, newline="")))
    assert len(rows) == len(originals) == len(report.trials)
    by_trial = {row["trial_id"]: row for row in rows}
    seen = set()
    for trial_id, fields in originals.items():
        original = fields["failure_reason"]
        assert by_trial[trial_id]["failure_reason"] == _expected_csv_text(original)
        seen.add(original)
        # Answer and prompt texts are not trials.csv columns; if one becomes one, it is
        # neutralised the same way.
        for name in ("text", "prompt"):
            if name in by_trial[trial_id]:
                assert by_trial[trial_id][name] == _expected_csv_text(fields[name])
    assert seen == set(CASES)
    for row in rows:  # no cell reads as a formula any more
        assert not neutralise_cell(row["failure_reason"]).startswith("''")


def test_numbers_stay_numbers(built):
    report, files, _ = built
    data = _file(files, "trials.csv").decode("utf-8-sig")
    rows = list(csv.DictReader(io.StringIO(data, newline="")))
    negative = [row for row in rows if row["seed"] == str(NEGATIVE_SEED)]
    assert len(negative) == 1
    assert negative[0]["ttft_s"] == str(NEGATIVE_TTFT)
    assert negative[0]["draft_proposed"] == str(NEGATIVE_DRAFT)
    # Numbers are written unquoted, text quoted.
    raw_lines = data.split("\n")
    assert any(f",{NEGATIVE_SEED}," in line for line in raw_lines)
    assert any(f",{NEGATIVE_TTFT}," in line for line in raw_lines)
    read = pd.read_csv(io.StringIO(data))
    row = read[read["trial_id"] == negative[0]["trial_id"]].iloc[0]
    assert row["seed"] == NEGATIVE_SEED and row["ttft_s"] == NEGATIVE_TTFT
    assert row["draft_proposed"] == NEGATIVE_DRAFT
    assert pd.api.types.is_integer_dtype(read["seed"])
    assert pd.api.types.is_float_dtype(read["ttft_s"])


def test_parquet_keeps_the_exact_text_and_numbers(built):
    report, files, originals = built
    for table, frame in (("trials", report.trials), ("speed_summary", report.summary)):
        read = pq.read_table(io.BytesIO(_file(files, f"{table}.parquet"))).to_pandas()
        assert list(read.columns) == list(frame.columns) and len(read) == len(frame)
        text = _text_columns(frame)
        for name in frame.columns:
            if name in text:
                assert _texts(read[name]) == _texts(frame[name]), name
            else:
                pd.testing.assert_series_equal(
                    read[name].astype("float64"),
                    frame[name].astype("float64"),
                    check_exact=True,
                    check_names=False,
                )
    trials = pq.read_table(io.BytesIO(_file(files, "trials.parquet"))).to_pandas()
    reasons = dict(zip(trials["trial_id"], trials["failure_reason"], strict=True))
    assert reasons == {t: f["failure_reason"] for t, f in originals.items()}
    assert NEGATIVE_SEED in trials["seed"].tolist()


def test_parquet_in_blocks_is_the_table_converted_at_once(tmp_path, monkeypatch):
    """A table longer than a row group is converted a block at a time, with the types of
    the whole table (its first block's text is missing throughout), and reads back as the
    table does written in one piece."""
    frame = pd.DataFrame(
        {
            "trial_id": pd.array([f"t{k}" for k in range(8)], dtype="str"),
            "failure_reason": [None] * 3 + ["=1+1", "ok", None, "\u3000x", "y"],
            "gen_tps": [float(k) / 3 for k in range(8)],
        }
    )
    downloads._write_parquet(frame, tmp_path / "whole.parquet")
    monkeypatch.setattr(downloads, "PARQUET_ROW_GROUP", 3)
    downloads._write_parquet(frame, tmp_path / "blocks.parquet")
    blocks, whole = (pq.ParquetFile(tmp_path / f"{n}.parquet") for n in ("blocks", "whole"))
    assert (blocks.num_row_groups, whole.num_row_groups) == (3, 1)
    assert blocks.schema_arrow == whole.schema_arrow
    assert str(whole.schema_arrow.field("failure_reason").type) in ("string", "large_string")
    assert blocks.read().equals(whole.read())
    pd.testing.assert_frame_equal(blocks.read().to_pandas(), frame)


def test_records_download_keeps_the_exact_text(built):
    _, files, originals = built
    lines = gzip.decompress(_file(files, "records.jsonl.gz")).split(b"\n")
    records = [json.loads(line) for line in lines if line]
    assert len(records) == len(originals)
    for record in records:
        for name, original in originals[record["trial_id"]].items():
            assert record[name] == original, (record["trial_id"], name)


def test_downloads_are_deterministic(built, tmp_path):
    report, files, _ = built
    again = make_downloads(report, tmp_path)
    assert [(f.name, f.read_bytes()) for f in again] == [(f.name, f.read_bytes()) for f in files]
    sums = _file(files, "SHA256SUMS").decode("ascii").splitlines()
    assert [line.split("  ")[1] for line in sums] == [f.name for f in files[:-1]]


def test_data_page_explains_the_csv_escaping(tmp_path):
    from sitegen.commands.build import render_site

    project = Path(__file__).resolve().parents[2]
    records = publishable_campaign(tmp_path / "data")
    rendered = render_site(tmp_path / "data", project)
    report = f"reports/{report_address(records.parent)}"
    ja = rendered_page(rendered, f"{report}/data.md")
    en_page = rendered_page(rendered, f"{report}/data.en.md")
    assert "表計算ソフトが数式として実行しないように" in ja
    assert "so spreadsheets do not run them as formulas" in en_page
