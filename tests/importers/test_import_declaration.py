"""``DECL.yaml``: what the user declares, validated with one-line errors, and the mapping of
source groups to conditions, which never guesses."""

from __future__ import annotations

import pytest

from sitegen.core.errors import ConfigError, DataError
from sitegen.importers import aiperf, guidellm
from sitegen.importers.declaration import assign_conditions, load_declaration
from sitegen.records.import_declaration import ImportDeclaration, SourceGroup
from tests.importers.sources import fixture, problem

DECLARATION = """\
title: {ja: インポートしたベンチマーク, en: Imported benchmark}
hardware:
  devices:
    - {kind: cpu, name: AMD EPYC 9654, count: 1, memory_gib: 24}
engine: {name: llama.cpp, version: xllamacpp 2026.10.11549}
model: {name: SmolLM2-135M-Instruct, quantization: GGUF Q4_1}
context_capacity: 1024
sampling: {temperature: 0}
conditions:
  - id: single-stream
    label: {ja: 単一ストリーム, en: single stream}
    sources: [{file: guidellm/benchmarks.json, group: "benchmarks[0]"}]
    speculative: {mode: off}
  - id: paired-streams
    label: {ja: 並行ストリーム, en: paired streams}
    sources:
      - {file: guidellm/benchmarks.json, group: "benchmarks[1]"}
      - {file: aiperf/profile_export.jsonl}
    speculative: {mode: ngram-simple, draft_max: 8, ngram_size: 3}
baseline: single-stream
"""


def _write(tmp_path, text: str):
    path = tmp_path / "decl.yaml"
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture
def declaration(tmp_path) -> ImportDeclaration:
    return load_declaration(_write(tmp_path, DECLARATION))


@pytest.fixture(scope="module")
def sources():
    return [
        guidellm.parse(fixture("guidellm/benchmarks.json.gz")),
        aiperf.parse(fixture("aiperf/profile_export.jsonl")),
    ]


def test_a_declaration_loads_with_off_kept_as_a_mode(declaration):
    assert declaration.conditions[0].speculative.mode == "off"
    assert declaration.hardware.devices[0].name == "AMD EPYC 9654"
    assert declaration.baseline == "single-stream"


def test_what_is_not_declared_stays_absent(declaration):
    assert declaration.sampling.temperature == 0
    assert (declaration.sampling.top_p, declaration.sampling.top_k) == (None, None)
    assert declaration.sampling.seed is None
    assert declaration.engine.build is None and declaration.model.file_sha256 is None
    assert declaration.hardware.interconnect is None and declaration.csv is None


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        (
            "engine: {name: llama.cpp, version: xllamacpp 2026.10.11549}\n",
            "",
            "decl.yaml → engine: Field required",
        ),
        ("speculative: {mode: off}", "speculative: {}", "speculative.mode must be declared"),
        ("baseline: single-stream", "baseline: three", "baseline 'three' is not a condition"),
        ("quantization: GGUF Q4_1", "quantization: GGUF Q4_1, licence: x", "model.licence: Extra"),
        ("count: 1,", "count: 0,", "hardware.devices.0.count: Input should be greater than"),
        ("context_capacity: 1024", "context_capacity: lots", "context_capacity: Input should be"),
        ("temperature: 0", "temperature: -1", "sampling.temperature: Input should be greater"),
        (
            "- {file: aiperf/profile_export.jsonl}",
            '- {file: guidellm/benchmarks.json, group: "benchmarks[0]"}',
            "named by conditions 'single-stream' and 'paired-streams'",
        ),
        (
            "id: paired-streams",
            "id: single-stream",
            "condition id 'single-stream' is declared more than once",
        ),
        ("en: single stream", "en: ''", "conditions.0.label.en: String should have at least 1"),
    ],
)
def test_a_bad_declaration_is_refused_in_one_line_naming_the_field(tmp_path, old, new, expected):
    assert old in DECLARATION
    path = _write(tmp_path, DECLARATION.replace(old, new))
    found = problem(lambda: load_declaration(path))
    assert found.startswith(f"[schema] {path}")
    assert expected in found


def test_a_file_that_is_not_yaml_is_refused_in_one_line(tmp_path):
    path = _write(tmp_path, "conditions: [\n")
    with pytest.raises(ConfigError) as caught:
        load_declaration(path)
    assert "\n" not in str(caught.value) and "not valid yaml" in str(caught.value)


def test_every_source_group_gets_its_declared_condition(declaration, sources):
    assigned = assign_conditions(declaration, sources, "decl.yaml")
    assert {key: condition.id for key, condition in assigned.items()} == {
        SourceGroup("guidellm/benchmarks.json", "benchmarks[0]"): "single-stream",
        SourceGroup("guidellm/benchmarks.json", "benchmarks[1]"): "paired-streams",
        SourceGroup("aiperf/profile_export.jsonl", None): "paired-streams",
    }


def _without(text: str, line: str) -> str:
    assert line in text
    return text.replace(line, "")


def test_a_group_no_condition_names_is_refused_by_name(tmp_path, sources):
    text = _without(DECLARATION, "      - {file: aiperf/profile_export.jsonl}\n")
    declaration = load_declaration(_write(tmp_path, text))
    assert problem(lambda: assign_conditions(declaration, sources, "decl.yaml")) == (
        "[schema] decl.yaml → conditions: file 'aiperf/profile_export.jsonl' is in no "
        "condition's sources: declare which condition it is (the import does not guess); "
        'add to that condition\'s sources: - {file: "aiperf/profile_export.jsonl"}'
    )


def test_a_declared_group_that_no_file_holds_is_refused(tmp_path, sources):
    text = DECLARATION.replace("benchmarks[1]", "benchmarks[7]")
    declaration = load_declaration(_write(tmp_path, text))
    with pytest.raises(DataError) as caught:
        assign_conditions(declaration, sources, "decl.yaml")
    assert [str(issue) for issue in caught.value.issues] == [
        "[schema] decl.yaml → conditions: file 'guidellm/benchmarks.json' group 'benchmarks[1]' "
        "is in no condition's sources: declare which condition it is (the import does not guess); "
        'add to that condition\'s sources: - {file: "guidellm/benchmarks.json", '
        'group: "benchmarks[1]"}',
        "[schema] decl.yaml → conditions.paired-streams.sources: file 'guidellm/benchmarks.json' "
        "group 'benchmarks[7]' is not among the imported sources: the file holds groups "
        "benchmarks[0], benchmarks[1]",
    ]


def test_a_whole_file_is_not_taken_for_its_groups(tmp_path, sources):
    text = DECLARATION.replace(', group: "benchmarks[0]"', "").replace(
        '      - {file: guidellm/benchmarks.json, group: "benchmarks[1]"}\n', ""
    )
    declaration = load_declaration(_write(tmp_path, text))
    with pytest.raises(DataError) as caught:
        assign_conditions(declaration, sources, "decl.yaml")
    assert "file 'guidellm/benchmarks.json' is not among the imported sources: the file holds " in (
        caught.value.issues[-1].message
    )


def test_a_file_of_one_group_named_with_a_group_is_refused(tmp_path, sources):
    text = DECLARATION.replace(
        "{file: aiperf/profile_export.jsonl}", "{file: aiperf/profile_export.jsonl, group: x}"
    )
    declaration = load_declaration(_write(tmp_path, text))
    with pytest.raises(DataError) as caught:
        assign_conditions(declaration, sources, "decl.yaml")
    assert caught.value.issues[-1].message.endswith("the file is one group: name no group")
