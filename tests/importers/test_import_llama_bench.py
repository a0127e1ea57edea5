"""llama-bench's ``-o json`` and ``-o jsonl``: real runs of llama-bench built from llama.cpp
0c1e570, each repetition one measurement."""

from __future__ import annotations

import json

import pytest

from sitegen.importers import llama_bench
from sitegen.importers.reading import SourceFile
from tests.importers.sources import as_file, fixture, fixture_json, problem

ARRAY = "llama-bench/llama-bench.json"  # -p 16 -n 8 -pg 16,8 -r 3 -t 1,2
LINES = "llama-bench/llama-bench.jsonl"  # -p 16 -n 8 -r 2 -t 1


@pytest.fixture(scope="module")
def imported():
    return llama_bench.parse(fixture(ARRAY))


def test_the_build_model_and_backend_come_from_the_file(imported):
    source = imported.source
    assert (source.tool, source.tool_version) == ("llama-bench", "1 (0c1e570)")
    assert (source.model, source.backend) == ("SmolLM2-135M-Instruct.Q4_1.gguf", "CPU")
    assert source.stated["model_type"] == "llama 256M Q4_1"
    assert source.stated["n_batch"] == "2048" and source.stated["type_k"] == "f16"
    assert "n_threads" not in source.stated  # it differs between the configurations


def test_each_repetition_is_one_measurement_of_its_test(imported):
    assert len(imported.measurements) == 6 * 3
    assert [m.measure for m in imported.measurements[::3]] == ["pp16", "tg8", "pp16+tg8"] * 2
    first = imported.measurements[0]
    assert (first.location, first.status) == ("[0].samples_ts[0]", "ok")
    assert first.tokens_per_s == 121.382
    assert first.duration_s == 131815740 / 1e9
    assert (first.prompt_tokens, first.output_tokens) == (16, 0)
    both = imported.measurements[16]
    assert (both.location, both.measure, both.tokens_per_s) == (
        "[5].samples_ts[1]",
        "pp16+tg8",
        156.055,
    )
    assert (both.prompt_tokens, both.output_tokens, both.duration_s) == (16, 8, 0.153792397)


def test_configurations_are_grouped_by_the_settings_that_differ(imported):
    assert [m.group for m in imported.measurements[::3]] == ["n_threads=1"] * 3 + [
        "n_threads=2"
    ] * 3


def test_llama_bench_has_no_request_timings(imported):
    first = imported.measurements[0]
    assert (first.ttft_s, first.e2e_s, first.started_at, first.output_text) == (None,) * 4


def test_json_lines_of_one_configuration_are_one_group():
    lines = llama_bench.parse(fixture(LINES))
    assert [(m.location, m.group, m.measure) for m in lines.measurements] == [
        ("line 1, samples_ts[0]", None, "pp16"),
        ("line 1, samples_ts[1]", None, "pp16"),
        ("line 2, samples_ts[0]", None, "tg8"),
        ("line 2, samples_ts[1]", None, "tg8"),
    ]
    assert lines.measurements[3].tokens_per_s == 58.3602
    assert lines.source.stated["n_threads"] == "1"


def test_a_context_depth_is_part_of_the_test_name():
    tests = fixture_json(ARRAY)
    tests[1]["n_depth"] = 512
    assert llama_bench.parse(as_file("b.json", tests)).measurements[3].measure == "tg8 @ d512"


def test_the_model_path_is_cut_to_its_file_name():
    tests = fixture_json(ARRAY)
    for test in tests:
        test["model_filename"] = "/srv/models/SmolLM2-135M-Instruct.Q4_1.gguf"
    imported = llama_bench.parse(as_file("b.json", tests))
    assert imported.source.model == "SmolLM2-135M-Instruct.Q4_1.gguf"


@pytest.mark.parametrize(
    ("edit", "expected"),
    [
        (
            lambda t: t[2]["samples_ns"].pop(),
            "b.json [2] → samples_ts: 3 entries, but samples_ns has 2",
        ),
        (
            lambda t: t[1]["samples_ts"].__setitem__(0, -1),
            "b.json [1] → samples_ts[0]: negative (-1)",
        ),
        (
            lambda t: t[0]["samples_ns"].__setitem__(2, 1.5),
            "b.json [0] → samples_ns[2]: expected a whole number",
        ),
        (lambda t: t[3].pop("n_gen"), "b.json [3] → n_gen: missing"),
        (lambda t: t[0].update(n_prompt=0), "b.json [0] → n_prompt: 0, and n_gen is 0"),
        (
            lambda t: t.__setitem__(4, "tg8"),
            "b.json [4]: expected a JSON object (one llama-bench test)",
        ),
    ],
)
def test_a_malformed_test_is_refused_naming_entry_and_field(edit, expected):
    tests = fixture_json(ARRAY)
    edit(tests)
    assert expected in problem(lambda: llama_bench.parse(as_file("b.json", tests)))


def test_empty_output_is_refused():
    assert "b.json: no tests" in problem(lambda: llama_bench.parse(SourceFile("b.json", b"[]")))
    assert "b.json: the file is empty" in problem(
        lambda: llama_bench.parse(SourceFile("b.json", b"\n"))
    )
    broken = SourceFile("b.jsonl", fixture(LINES).data + json.dumps({"n_prompt": 1})[:-3].encode())
    assert "b.jsonl line 3: not valid JSON" in problem(lambda: llama_bench.parse(broken))
