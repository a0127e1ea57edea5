"""NVIDIA AIPerf's per-record export with its summary: a real AIPerf 0.13.0 run."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from sitegen.importers import aiperf
from sitegen.importers.reading import SourceFile
from tests.importers.sources import FIXTURES, fixture, imported_report, problem

RECORDS = "aiperf/profile_export.jsonl"
SUMMARY = "aiperf/profile_export_aiperf.json"


@pytest.fixture(scope="module")
def imported():
    return aiperf.parse(fixture(RECORDS), fixture(SUMMARY))


def test_the_summary_states_version_server_model_and_load(imported):
    source = imported.source
    assert (source.format, source.tool, source.tool_version) == (
        "aiperf",
        "NVIDIA AIPerf",
        "0.13.0",
    )
    assert (source.file, source.size_bytes) == (RECORDS, 6415)
    assert source.target == "http://127.0.0.1:38989"
    assert source.model == "SmolLM2-135M-Instruct"
    assert source.backend == "chat streaming"
    assert source.stated["benchmark_id"] == "5d7353554ea8"
    assert [(m.concurrency, m.load_pattern) for m in imported.measurements] == [
        (1, "concurrency")
    ] * 3


def test_milliseconds_become_seconds(imported):
    first = imported.measurements[0]
    assert (first.location, first.status, first.warmup) == ("line 1", "ok", False)
    assert first.started_at == "2026-12-01T16:14:57.007947+00:00"  # request_start_ns
    assert first.ttft_s == 25.349581 / 1000
    assert first.e2e_s == 156.915119 / 1000
    assert first.inter_chunk_latencies_s == [
        gap / 1000
        for gap in (24.504655, 17.917109999999997, 29.103092, 8.623642)
        + (15.302311999999999, 24.236096, 11.878630999999999)
    ]
    assert (first.prompt_tokens, first.output_tokens) == (35, 8)  # the server's usage counts


def test_aiperf_keeps_no_text_and_no_group(imported):
    first = imported.measurements[0]
    assert (first.output_text, first.prompt_text, first.request_body) == (None, None, None)
    assert first.group is None and first.last_token_s is None and first.request_rate is None


def test_an_error_record_is_failed_with_the_server_s_message(imported):
    failed = imported.measurements[2]
    assert (failed.location, failed.status) == ("line 3", "failed")
    assert failed.error.startswith('400 Bad Request: {"error":{"code":400,"message":"request (1533')
    assert (failed.ttft_s, failed.e2e_s, failed.prompt_tokens) == (None, None, None)


def test_the_records_keep_no_finish_reason_and_no_output_cap(imported):
    # Each record's metrics: output_sequence_length 8 tokens is the output's length (as
    # output_token_count and usage_completion_tokens); the max_tokens sent (--osl 8) shows
    # only as osl_mismatch_diff_pct 0.0 %. No record says why its generation stopped.
    lines = fixture(RECORDS).data.decode().splitlines()
    assert "finish" not in "".join(lines) and "max_tokens" not in "".join(lines)
    metrics = [json.loads(line).get("metrics", {}) for line in lines]
    assert [
        (m["output_sequence_length"]["value"], m["osl_mismatch_diff_pct"]["value"])
        for m in metrics[:2]
    ] == [(8, 0.0), (8, 0.0)]
    assert "output_sequence_length" not in metrics[2]  # the refused request
    assert [(m.finish_reason, m.output_cap) for m in imported.measurements] == [(None, None)] * 3


def test_the_report_counts_no_truncation_it_cannot_know(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    shutil.copytree(FIXTURES / "aiperf", Path("aiperf"))
    report = imported_report("aiperf", [RECORDS, SUMMARY], {"c1": f"[{{file: {RECORDS}}}]"})
    (row,) = report.rows
    assert (row.ok, row.truncated, row.truncation_known) == (2, None, 0)
    assert not report.shows_truncation
    assert dict(report.refused)["truncation"] == "finish_reason"


def test_without_its_summary_the_version_and_load_stay_absent():
    alone = aiperf.parse(fixture(RECORDS))
    assert (alone.source.tool_version, alone.source.target, alone.source.model) == (None,) * 3
    assert alone.measurements[0].concurrency is None
    assert alone.measurements[0].ttft_s == 25.349581 / 1000


def test_a_summary_of_another_run_is_refused():
    records = fixture(RECORDS)
    two = SourceFile(records.name, b"\n".join(records.data.splitlines()[:2]))
    assert "completed_request_count.avg: 3 requests, but the records file holds 2" in problem(
        lambda: aiperf.parse(two, fixture(SUMMARY))
    )


def _line(edit) -> SourceFile:
    record = json.loads(fixture(RECORDS).data.splitlines()[0])
    edit(record)
    return SourceFile("p.jsonl", b"\n" + json.dumps(record).encode())


@pytest.mark.parametrize(
    ("edit", "expected"),
    [
        (
            lambda r: r["metrics"]["time_to_first_token"].update(unit="furlongs"),
            "p.jsonl line 2 → metrics.time_to_first_token.unit: 'furlongs' is not a time unit",
        ),
        (
            lambda r: r["metrics"]["request_latency"].update(value=-3),
            "p.jsonl line 2 → metrics.request_latency.value: negative (-3)",
        ),
        (
            lambda r: r["metrics"]["inter_chunk_latency"]["value"].__setitem__(1, None),
            "p.jsonl line 2 → metrics.inter_chunk_latency.value[1]: expected a number, got null",
        ),
        (
            lambda r: r["metrics"]["usage_prompt_tokens"].update(unit="ms"),
            "p.jsonl line 2 → metrics.usage_prompt_tokens.unit: expected 'tokens'",
        ),
        (
            lambda r: r["metadata"].update(benchmark_phase="cooldown"),
            "p.jsonl line 2 → metadata.benchmark_phase: unknown phase 'cooldown'",
        ),
        (lambda r: r.pop("metadata"), "p.jsonl line 2 → metadata: missing"),
    ],
)
def test_a_malformed_record_is_refused_naming_its_line_and_field(edit, expected):
    assert expected in problem(lambda: aiperf.parse(_line(edit)))


def test_a_line_that_is_not_json_is_named():
    broken = SourceFile("p.jsonl", fixture(RECORDS).data + b"{not json\n")
    assert "p.jsonl line 4: not valid JSON" in problem(lambda: aiperf.parse(broken))


def test_a_warmup_record_is_marked():
    warm = _line(lambda r: r["metadata"].update(benchmark_phase="warmup"))
    assert aiperf.parse(warm).measurements[0].warmup is True
