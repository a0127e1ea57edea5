"""A plain CSV read through the declared column mapping."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from sitegen.importers import csv_columns
from sitegen.importers.reading import SourceFile
from sitegen.records.import_declaration import CsvMapping
from tests.importers.sources import fixture, problem

TABLE = "csv/requests.csv"
MAPPING = CsvMapping.model_validate(
    {
        "columns": {
            "group": {"column": "config"},
            "started_at": {"column": "start_unix_ms", "unit": "unix-ms"},
            "ttft_s": {"column": "first_token_latency", "unit": "ms"},
            "e2e_s": {"column": "e2e_latency", "unit": "ms"},
            "prompt_tokens": {"column": "prompt_tokens"},
            "output_tokens": {"column": "completion_tokens"},
            "output_text": {"column": "answer"},
            "error": {"column": "error"},
        }
    }
)


@pytest.fixture(scope="module")
def imported():
    return csv_columns.parse(fixture(TABLE), MAPPING)


def test_each_row_is_a_measurement_located_by_its_first_line(imported):
    # The fifth row's answer holds two line breaks, so the sixth starts on line 9.
    assert [(m.location, m.group, m.status) for m in imported.measurements] == [
        ("line 2", "streams-1", "ok"),
        ("line 3", "streams-1", "ok"),
        ("line 4", "streams-1", "failed"),
        ("line 5", "streams-2", "ok"),
        ("line 6", "streams-2", "ok"),
        ("line 9", "streams-2", "failed"),
    ]
    assert imported.source.tool_version is None and imported.source.format == "csv"


def test_declared_units_become_seconds(imported):
    second = imported.measurements[1]
    assert second.ttft_s == 184.795 / 1000
    assert second.e2e_s == 260.804 / 1000
    assert second.started_at == "2026-12-01T16:13:19.496547+00:00"
    assert (second.prompt_tokens, second.output_tokens) == (37, 8)
    assert second.output_text == "Le Grand Paris, la France, est"
    assert imported.measurements[4].output_text == "The primary colours are: \n\nRed"


def test_empty_cells_and_unmapped_fields_stay_absent(imported):
    failed = imported.measurements[2]
    assert failed.error == "400 Bad Request"
    assert (failed.ttft_s, failed.e2e_s, failed.prompt_tokens, failed.output_text) == (None,) * 4
    assert imported.measurements[0].last_token_s is None  # no column declared for it
    assert imported.measurements[0].error is None


def _table(text: str) -> SourceFile:
    return SourceFile("t.csv", text.encode())


HEADER = "config,start_unix_ms,first_token_latency,e2e_latency,prompt_tokens,completion_tokens,answer,error\n"


@pytest.mark.parametrize(
    ("rows", "expected"),
    [
        ("a,1,x,2,3,4,t,\n", "t.csv line 2 → first_token_latency: expected a number, got 'x'"),
        ("a,1,-5,2,3,4,t,\n", "t.csv line 2 → first_token_latency: expected a finite number ≥ 0"),
        ("a,1,2,3,3.5,4,t,\n", "t.csv line 2 → prompt_tokens: expected a whole number, got '3.5'"),
        ("a,1,2,3\n", "t.csv line 2: 4 cells, but the header has 8 columns"),
        (",1,2,3,3,4,t,\n", "t.csv line 2 → config: empty: every row needs its group"),
        ("a,1,2,3,3,4,t,\nb,1,nan,3,3,4,t,\n", "t.csv line 3 → first_token_latency"),
    ],
)
def test_a_malformed_row_is_refused_naming_its_line_and_column(rows, expected):
    assert expected in problem(lambda: csv_columns.parse(_table(HEADER + rows), MAPPING))


def test_a_declared_column_missing_from_the_header_is_named():
    assert "t.csv line 1 → config: no such column (declared for group)" in problem(
        lambda: csv_columns.parse(_table("start_unix_ms\n1\n"), MAPPING)
    )


def test_an_empty_file_is_refused():
    assert "t.csv: the file is empty" in problem(lambda: csv_columns.parse(_table(""), MAPPING))


def test_an_iso_time_needs_its_offset():
    mapping = CsvMapping.model_validate(
        {"columns": {"started_at": {"column": "t", "unit": "iso8601"}}}
    )
    utc = csv_columns.parse(_table("t\n2026-12-01T17:00:00+01:00\n"), mapping)
    assert utc.measurements[0].started_at == "2026-12-01T16:00:00.000000+00:00"
    assert "t.csv line 2 → t: '2026-12-01T17:00:00' has no UTC offset" in problem(
        lambda: csv_columns.parse(_table("t\n2026-12-01T17:00:00\n"), mapping)
    )


@pytest.mark.parametrize(
    ("columns", "expected"),
    [
        ({"ttft_s": {"column": "a"}}, "columns.ttft_s.unit must be s, ms, us or ns"),
        ({"started_at": {"column": "a", "unit": "ms"}}, "columns.started_at.unit must be unix-s"),
        ({"prompt_tokens": {"column": "a", "unit": "ms"}}, "columns.prompt_tokens takes no unit"),
        (
            {"ttft_s": {"column": "a", "unit": "s"}, "e2e_s": {"column": "a", "unit": "s"}},
            "column 'a' is mapped to more than one field",
        ),
        ({"tpot_s": {"column": "a", "unit": "s"}}, "Input should be 'started_at'"),
    ],
)
def test_a_mapping_without_its_units_is_refused(columns, expected):
    with pytest.raises(ValidationError, match=expected):
        CsvMapping.model_validate({"columns": columns})
