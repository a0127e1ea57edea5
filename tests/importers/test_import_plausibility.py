"""Plausibility (C-TIMELINE, C-LATORDER, C-DUPLICATE, C-BOUNDS, C-MAGNITUDE) and bounded
input: each manipulated family of source files is refused in one line naming the file, the
record and the field; the real fixtures still import."""

from __future__ import annotations

import copy
import gzip
import json
import re
import shutil
from datetime import UTC, datetime
from pathlib import Path

import pytest

from sitegen.core.errors import DataError
from sitegen.importers import aiperf, csv_columns, guidellm, limits, llama_bench, vllm
from sitegen.importers.import_campaign import import_campaign, read_source
from sitegen.importers.reading import SourceFile
from sitegen.records.import_declaration import CsvMapping, ImportDeclaration
from sitegen.records.import_source import ImportedSource
from sitegen.validation.plausibility import implausible, refuse_implausible
from tests.importers.sources import FIXTURES, as_file, fixture, fixture_json, problem

NOW = datetime(2026, 12, 4, tzinfo=UTC)
"""The import time of these tests (the fixtures were measured on 2026-12-01)."""


def declaration(kind: str = "gpu") -> ImportDeclaration:
    return ImportDeclaration.model_validate(
        {
            "hardware": {"devices": [{"kind": kind, "name": "Test device", "count": 1}]},
            "engine": {"name": "llama.cpp", "version": "xllamacpp"},
            "model": {"name": "SmolLM2", "quantization": "Q4_1"},
            "conditions": [
                {
                    "id": "off",
                    "label": {"ja": "なし", "en": "none"},
                    "speculative": {"mode": "off"},
                    "sources": [{"file": "x"}],
                }
            ],
            "baseline": "off",
        }
    )


CSV_MAPPING = {
    "group": {"column": "config"},
    "started_at": {"column": "start_unix_ms", "unit": "unix-ms"},
    "ttft_s": {"column": "first_token_latency", "unit": "ms"},
    "e2e_s": {"column": "e2e_latency", "unit": "ms"},
    "prompt_tokens": {"column": "prompt_tokens"},
    "output_tokens": {"column": "completion_tokens"},
    "output_text": {"column": "answer"},
    "error": {"column": "error"},
}


def csv_source(text: str, **units: str) -> ImportedSource:
    columns = copy.deepcopy(CSV_MAPPING)
    for field, unit in units.items():
        columns[field]["unit"] = unit
    mapping = CsvMapping.model_validate({"columns": columns})
    return csv_columns.parse(SourceFile("requests.csv", text.encode()), mapping)


CSV_TEXT = (FIXTURES / "csv" / "requests.csv").read_text()


def refused(source: ImportedSource, kind: str = "gpu") -> str:
    """The one problem the plausibility checks refuse ``source`` with, as printed."""
    return problem(
        lambda: refuse_implausible([(source.source, source.measurements)], declaration(kind), NOW)
    )


def first_refusal(source: ImportedSource, kind: str = "gpu") -> str:
    """The first of the problems ``source`` is refused with (one line each)."""
    with pytest.raises(DataError) as caught:
        refuse_implausible([(source.source, source.measurements)], declaration(kind), NOW)
    assert all("\n" not in str(issue) for issue in caught.value.issues)
    return str(caught.value.issues[0])


def real_fixtures() -> list[ImportedSource]:
    return [
        guidellm.parse(fixture("guidellm/benchmarks.json.gz")),
        vllm.parse(fixture("vllm/vllm-serve.json")),
        aiperf.parse(
            fixture("aiperf/profile_export.jsonl"), fixture("aiperf/profile_export_aiperf.json")
        ),
        llama_bench.parse(fixture("llama-bench/llama-bench.json")),
        llama_bench.parse(fixture("llama-bench/llama-bench.jsonl")),
        csv_source(CSV_TEXT),
    ]


@pytest.mark.parametrize("kind", ["cpu", "gpu", "accelerator"])
def test_every_real_fixture_is_plausible_on_every_device_kind(kind):
    for source in real_fixtures():
        assert implausible([(source.source, source.measurements)], declaration(kind), NOW) == []


def test_the_guidellm_benchmark_window_is_stated_for_the_check():
    stated = guidellm.parse(fixture("guidellm/benchmarks.json.gz")).source.stated
    assert float(stated["benchmarks[0].start_time"]) == pytest.approx(1796141599.2365315)


# --- C-BOUNDS ---------------------------------------------------------------------------


def vllm_edit(edit) -> ImportedSource:
    result = fixture_json("vllm/vllm-serve.json")
    edit(result)
    return vllm.parse(as_file("vllm-serve.json", result))


def test_output_tokens_of_ten_to_the_fifteenth_are_refused():
    source = vllm_edit(lambda r: r["output_lens"].__setitem__(0, 10**15))
    line = refused(source)
    assert line.startswith("[C-BOUNDS] vllm-serve.json index 0 → output_tokens: 1e+15 tokens")
    assert "hardware.devices" in line


def test_a_one_nanosecond_generation_is_refused():
    source = vllm_edit(lambda r: r["itls"].__setitem__(0, [1e-9]))
    line = refused(source)
    assert "[C-BOUNDS] vllm-serve.json index 0 → output_tokens: 7e+09 output tokens/s" in line


def test_1e308_tokens_are_refused_in_a_csv_and_in_json():
    rows = CSV_TEXT.splitlines()
    rows[1] = rows[1].replace(",35,8,", ",35,1e308,")
    line = refused(csv_source("\n".join(rows) + "\n"))
    assert line.startswith("[C-BOUNDS] requests.csv line 2 → output_tokens: 1e+308 tokens")
    too_large = problem(lambda: vllm_edit(lambda r: r["output_lens"].__setitem__(0, 1e308)))
    assert "index 0 → output_lens[0]: 1e+308 is larger than any count" in too_large


def test_a_cpu_rate_a_gpu_could_reach_is_refused_on_a_cpu():
    source = vllm_edit(lambda r: r["itls"].__setitem__(0, [0.001] * 7))  # 1,000 tok/s
    assert implausible([(source.source, source.measurements)], declaration("gpu"), NOW) == []
    source = vllm_edit(lambda r: r["itls"].__setitem__(0, [0.0001] * 7))  # 10,000 tok/s
    assert "C-BOUNDS" in refused(source, "cpu")


# --- C-LATORDER -------------------------------------------------------------------------


def test_an_end_to_end_time_shorter_than_the_first_token_is_refused():
    source = vllm_edit(lambda r: r["latencies"].__setitem__(0, r["ttfts"][0] / 2))
    line = refused(source)
    assert line.startswith("[C-LATORDER] vllm-serve.json index 0 → e2e_s:")
    assert "shorter than ttft_s" in line


# --- C-TIMELINE -------------------------------------------------------------------------


def test_a_start_in_the_year_3000_is_refused():
    rows = CSV_TEXT.splitlines()
    rows[3] = rows[3].replace("1796141599", "32503680000", 1)
    line = refused(csv_source("\n".join(rows) + "\n"))
    assert line.startswith("[C-TIMELINE] requests.csv line 4 → started_at: 3000-01-01")
    assert "after the import" in line


def test_a_start_before_2000_is_refused():
    rows = CSV_TEXT.splitlines()
    rows[2] = rows[2].replace("1796141599", "0000000599", 1)
    assert "before 2000-01-01" in refused(csv_source("\n".join(rows) + "\n"))


def test_a_request_outside_the_stated_run_window_is_refused():
    lines = fixture("aiperf/profile_export.jsonl").data.decode().splitlines()
    records = [json.loads(line) for line in lines]
    profiling = next(
        i for i, r in enumerate(records) if r["metadata"]["benchmark_phase"] == "profiling"
    )
    records[profiling]["metadata"]["request_start_ns"] += 3_600 * 10**9  # an hour later
    data = "\n".join(json.dumps(r) for r in records).encode()
    source = aiperf.parse(
        SourceFile("profile_export.jsonl", data), fixture("aiperf/profile_export_aiperf.json")
    )
    line = refused(source)
    assert line.startswith(f"[C-TIMELINE] profile_export.jsonl line {profiling + 1} → started_at")
    assert "outside the run's stated window" in line


# --- C-DUPLICATE ------------------------------------------------------------------------


def test_duplicated_csv_rows_are_refused_not_counted_twice():
    rows = CSV_TEXT.splitlines()
    line = first_refusal(csv_source("\n".join(rows + rows[1:]) + "\n"))
    assert re.match(r"\[C-DUPLICATE\] requests\.csv line \d+: identical to line 2 in every", line)


def test_duplicated_vllm_requests_are_refused():
    def double(result):
        for name in ("ttfts", "itls", "latencies", "input_lens", "output_lens", "errors"):
            result[name] += result[name]
        for name in ("generated_texts", "start_times"):
            if name in result:
                result[name] += result[name]

    with pytest.raises(DataError) as caught:
        refuse_implausible(
            [(s.source, s.measurements) for s in [vllm_edit(double)]], declaration(), NOW
        )
    assert {issue.rule for issue in caught.value.issues} == {"C-DUPLICATE"}


def test_a_repeated_aiperf_request_id_is_refused():
    lines = fixture("aiperf/profile_export.jsonl").data.decode().splitlines()
    data = "\n".join([*lines, lines[-1]]).encode()
    line = problem(lambda: aiperf.parse(SourceFile("profile_export.jsonl", data)))
    assert line.startswith(
        f"[C-DUPLICATE] profile_export.jsonl line {len(lines) + 1} → metadata.x_request_id"
    )
    assert f"(first at line {len(lines)})" in line


def test_a_repeated_guidellm_request_id_is_refused():
    report = json.loads(fixture("guidellm/benchmarks.json.gz").data)
    requests = report["benchmarks"][0]["requests"]["successful"]
    requests[1]["request_id"] = requests[0]["request_id"]
    line = problem(lambda: guidellm.parse(as_file("b.json", report)))
    assert line.startswith("[C-DUPLICATE] b.json benchmarks[0].requests.successful[1] → request_id")


# --- C-MAGNITUDE ------------------------------------------------------------------------


def test_milliseconds_declared_as_seconds_are_refused():
    line = first_refusal(csv_source(CSV_TEXT, ttft_s="s", e2e_s="s"))
    assert line.startswith("[C-MAGNITUDE] requests.csv streams-1 → e2e_s: median generation")
    assert "look like milliseconds read as seconds" in line


def test_seconds_declared_as_milliseconds_are_refused():
    source = vllm_edit(
        lambda r: r.update(
            ttfts=[t / 1000 for t in r["ttfts"]],
            latencies=[t / 1000 for t in r["latencies"]],
            itls=[[g / 1000 for g in gaps] for gaps in r["itls"]],
        )
    )
    with pytest.raises(DataError) as caught:
        refuse_implausible([(source.source, source.measurements)], declaration("cpu"), NOW)
    assert {issue.rule for issue in caught.value.issues} >= {"C-MAGNITUDE"}


def test_a_ttft_column_in_milliseconds_declared_as_seconds_is_refused():
    # Times with the first token after the end: TTFT in ms, end-to-end in s.
    line = first_refusal(csv_source(CSV_TEXT.replace(",256.093,", ",0.256093,"), ttft_s="s"))
    assert "C-LATORDER" in line or "C-MAGNITUDE" in line


# --- bounded input ----------------------------------------------------------------------


def test_a_gzip_bomb_is_refused_naming_the_file(tmp_path, monkeypatch):
    monkeypatch.setattr(limits, "MAX_INFLATED_BYTES", 1 << 20)
    bomb = tmp_path / "run.json.gz"
    bomb.write_bytes(gzip.compress(b"0" * ((1 << 20) + 1)))
    line = problem(lambda: read_source(bomb))
    assert line.startswith(f"[input] {bomb}: inflates to more than 1 MiB")
    fine = tmp_path / "ok.json.gz"
    fine.write_bytes(gzip.compress(b"0" * (1 << 20)))
    assert len(read_source(fine).data) == 1 << 20


def test_a_file_that_is_not_gzip_is_refused_in_one_line(tmp_path):
    broken = tmp_path / "run.json.gz"
    broken.write_bytes(b"not gzip")
    assert "not a gzip file" in problem(lambda: read_source(broken))


NESTED = "[" * 100_000 + "]" * 100_000
SHALLOW_BUT_TOO_DEEP = "[" * 65 + "]" * 65


@pytest.mark.parametrize("nested", [NESTED, SHALLOW_BUT_TOO_DEEP])
@pytest.mark.parametrize(
    ("parse", "name"),
    [
        (guidellm.parse, "b.json"),
        (vllm.parse, "r.json"),
        (llama_bench.parse, "l.json"),
        (lambda f: aiperf.parse(f), "profile_export.jsonl"),
    ],
)
def test_deeply_nested_json_is_refused_by_every_json_importer(parse, name, nested):
    line = problem(lambda: parse(SourceFile(name, nested.encode())))
    assert line.startswith(f"[input] {name}")
    assert "JSON nested more than 64 levels deep" in line


def test_a_deeply_nested_aiperf_summary_or_jsonl_line_is_refused():
    records = fixture("aiperf/profile_export.jsonl")
    line = problem(lambda: aiperf.parse(records, SourceFile("s.json", NESTED.encode())))
    assert line.startswith("[input] s.json: JSON nested")
    data = records.data + b"\n" + ('{"a":' * 100 + "1" + "}" * 100).encode()
    line = problem(lambda: aiperf.parse(SourceFile("p.jsonl", data)))
    assert line.startswith("[input] p.jsonl line ")


def test_deeply_nested_guidellm_request_args_are_refused():
    report = json.loads(fixture("guidellm/benchmarks.json.gz").data)
    report["benchmarks"][0]["requests"]["successful"][0]["request_args"] = NESTED
    line = problem(lambda: guidellm.parse(as_file("b.json", report)))
    assert line.startswith("[input] b.json benchmarks[0].requests.successful[0] → request_args")


def test_an_aiperf_timestamp_of_1e30_ns_is_one_line_naming_the_record():
    lines = fixture("aiperf/profile_export.jsonl").data.decode().splitlines()
    record = json.loads(lines[0])
    record["metadata"]["request_start_ns"] = 1e30
    data = "\n".join([json.dumps(record), *lines[1:]]).encode()
    line = problem(lambda: aiperf.parse(SourceFile("p.jsonl", data)))
    assert line == (
        "[schema] p.jsonl line 1 → metadata.request_start_ns: "
        "1e+30 is larger than any count a tool writes"
    )


def test_out_of_range_unix_times_are_one_line_in_guidellm_and_csv():
    report = json.loads(fixture("guidellm/benchmarks.json.gz").data)
    report["benchmarks"][0]["requests"]["successful"][0]["info"]["timings"]["request_start"] = 1e30
    line = problem(lambda: guidellm.parse(as_file("b.json", report)))
    assert "successful[0] → info.timings.request_start: 1e+30 s is not a Unix time" in line
    rows = CSV_TEXT.splitlines()
    rows[1] = rows[1].replace("1796141599236.531", "1e300", 1)
    line = problem(lambda: csv_source("\n".join(rows) + "\n"))
    assert "requests.csv line 2 → start_unix_ms: 1e+297 s is not a Unix time" in line


# --- at import time and at build time ---------------------------------------------------


def test_sitegen_import_refuses_an_implausible_file_and_writes_nothing(tmp_path, monkeypatch):
    result = fixture_json("vllm/vllm-serve.json")
    result["output_lens"][0] = 10**15
    (tmp_path / "vllm-serve.json").write_text(json.dumps(result))
    decl = tmp_path / "decl.yaml"
    decl.write_text(
        "hardware: {devices: [{kind: cpu, name: CPU, count: 1}]}\n"
        "engine: {name: llama.cpp, version: xllamacpp}\n"
        "model: {name: SmolLM2, quantization: Q4_1}\n"
        "conditions: [{id: off, label: {ja: なし, en: none}, speculative: {mode: off},\n"
        "  sources: [{file: vllm-serve.json}]}]\nbaseline: off\n"
    )
    monkeypatch.chdir(tmp_path)
    line = problem(
        lambda: import_campaign(
            "vllm", [Path("vllm-serve.json")], decl, "run", tmp_path / "data", "test"
        )
    )
    assert line.startswith("[C-BOUNDS] vllm-serve.json index 0 → output_tokens")
    assert not (tmp_path / "data" / "campaigns" / "run").exists()


def test_a_build_rechecks_imported_records(tmp_path, monkeypatch):
    from sitegen.records.campaign import read_campaigns
    from sitegen.validation import plausibility, validate_campaigns

    shutil.copy(FIXTURES / "vllm" / "vllm-serve.json", tmp_path / "vllm-serve.json")
    decl = tmp_path / "decl.yaml"
    decl.write_text(
        "hardware: {devices: [{kind: cpu, name: CPU, count: 1}]}\n"
        "engine: {name: llama.cpp, version: xllamacpp}\n"
        "model: {name: SmolLM2, quantization: Q4_1}\n"
        "conditions: [{id: off, label: {ja: なし, en: none}, speculative: {mode: off},\n"
        "  sources: [{file: vllm-serve.json}]}]\nbaseline: off\n"
    )
    monkeypatch.chdir(tmp_path)
    import_campaign("vllm", [Path("vllm-serve.json")], decl, "run", tmp_path / "data", "test")
    campaigns, issues = read_campaigns(tmp_path / "data")
    assert issues == [] and validate_campaigns(campaigns) == []
    # Bounds tightened after the import: the same records are refused at the build.
    tight = plausibility.Bounds(output_tps=1.0, prompt_tps=1.0, tokens=10)
    monkeypatch.setattr(plausibility, "BOUNDS", dict.fromkeys(("cpu", "gpu", "default"), tight))
    found = validate_campaigns(campaigns)
    assert found and found[0].rule == "C-BOUNDS"
    assert "vllm-serve.json index 0 → " in found[0].location
