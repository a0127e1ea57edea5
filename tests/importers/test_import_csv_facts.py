"""A real benchmark's table through `sitegen import csv`: inputs kept apart (ratios per input,
never pooled), truncations at the output cap counted, per-request draft acceptance and peak
memory, a tool's own rate shown as the tool's, and facts declared `unknown` shown as not
declared — nothing invented. Imports only, and the imported page rendered alone: fast."""

from __future__ import annotations

import json
import re
import shutil
from html import unescape
from pathlib import Path

import pytest

from sitegen.cli import main
from sitegen.core.project import packaged_theme
from sitegen.core.string_catalog import load_strings
from sitegen.importers import csv_columns, guidellm
from sitegen.importers.declaration import assign_conditions, load_declaration
from sitegen.importers.reading import SourceFile
from sitegen.pages.directives import PageContext, directive_functions, html_environment
from sitegen.pages.i18n import Catalog
from sitegen.records.campaign import read_campaigns
from sitegen.records.import_declaration import SourceGroup
from sitegen.records.layout import CAMPAIGNS_DIR
from sitegen.statistics.imported_report import ImportedReport, make_imported_report
from sitegen.statistics.overview import imported_rows
from sitegen.validation import check_page
from sitegen.validation.page_facts import read_page
from tests.importers.sources import FIXTURES, fixture, problem

DECLARED = """\
title: {ja: "MTP あり・なし", en: "MTP off and on"}
hardware:
  devices: [{kind: gpu, name: "NVIDIA H200", count: unknown, memory_gib: unknown}]
  interconnect: unknown
engine: {name: vLLM, version: unknown, build: unknown}
model: {name: Qwen3-Next, quantization: unknown, file_sha256: unknown}
context_capacity: unknown
sampling: {temperature: 0, seed: unknown}
conditions:
  - id: off
    label: {ja: "MTP なし", en: "MTP off"}
    sources: [{file: bench.csv, group: "off"}]
    speculative: {mode: off}
  - id: mtp
    label: {ja: "MTP あり", en: "MTP on"}
    sources: [{file: bench.csv, group: "mtp"}]
    speculative: {mode: draft-mtp, draft_max: unknown}
baseline: off
"""

COLUMNS = """\
csv:
  columns:
    group: {column: config}
    input: {column: input}
    ttft_s: {column: ttft_ms, unit: ms}
    last_token_s: {column: last_ms, unit: ms}
    output_tokens: {column: out}
    finish_reason: {column: finish}
    output_cap: {column: max_tokens}
    draft_tokens: {column: proposed}
    accepted_tokens: {column: accepted}
    peak_memory_mib: {column: peak_gib, unit: GiB}
"""

# Per input, MTP on is 1.5× (8K) and 1.2× (32K) the rate of MTP off; pooled over both
# inputs, the medians would give another ratio altogether.
RATES = {("off", "8K"): 100.0, ("mtp", "8K"): 150.0, ("off", "32K"): 50.0, ("mtp", "32K"): 60.0}


def _table() -> str:
    rows = ["config,input,ttft_ms,last_ms,out,finish,max_tokens,proposed,accepted,peak_gib"]
    for (config, size), rate in RATES.items():
        for i in range(4):
            out = 101 if i else 128  # the first request of each stops at the cap
            finish = "length" if not i else "stop"
            speed = rate * (1 + 0.01 * i)
            last = 200 + (out - 1) / speed * 1000
            draft = "40,30" if config == "mtp" else ","
            rows.append(f"{config},{size},200,{last:.6f},{out},{finish},128,{draft},70.5")
    return "\n".join(rows) + "\n"


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _import(workdir: Path, table: str, declared: str, name: str = "bench") -> ImportedReport:
    (workdir / "bench.csv").write_text(table)
    (workdir / "d.yaml").write_text(declared)
    argv = ["import", "csv", "bench.csv", "--declare", "d.yaml", "--campaign", name]
    assert main(argv) == 0
    campaigns, issues = read_campaigns(workdir / "data")
    assert issues == []
    (campaign,) = [c for c in campaigns if c.slug == name]
    return make_imported_report(campaign)


def _render(report: ImportedReport, lang: str) -> tuple[str, str]:
    catalog = Catalog(lang, load_strings(packaged_theme()))
    env = html_environment(str(packaged_theme() / "partials"))
    html = str(directive_functions(PageContext(env, catalog, imported=report))["imported_report"]())
    return html, unescape(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html)))


@pytest.fixture
def report(workdir: Path) -> ImportedReport:
    return _import(workdir, _table(), DECLARED + COLUMNS)


def test_each_input_is_its_own_record_input_and_its_own_ratio_never_pooled(report):
    records = report.campaign.records
    assert {r.input_id for r in records} == {"8k", "32k"}
    assert records[0].trial_id == "off/8k/r0" and records[4].trial_id == "mtp/8k/r0"
    ratios = {c.input_id: c for c in report.comparisons}
    assert set(ratios) == {"8k", "32k"}  # one per input, none over both
    assert ratios["8k"].metric == "gen_tps" and ratios["8k"].differing == ()
    assert ratios["8k"].ratio == pytest.approx(1.5, rel=1e-3)
    assert ratios["32k"].ratio == pytest.approx(1.2, rel=1e-3)
    # The home page and the overview take the same per-input rows.
    shown = {(r.row.condition_id, r.row.input_id): r.comparison for r in imported_rows(report)}
    assert shown[("mtp", "8k")].ratio == ratios["8k"].ratio
    assert shown[("mtp", "32k")].ratio == ratios["32k"].ratio
    for lang in ("ja", "en"):
        html, _ = _render(report, lang)
        claims = read_page(html).claims_of("imported-ratio")
        assert sorted(c.attrs["data-input"] for c in claims) == ["32k", "8k"]


def test_truncations_at_the_output_cap_are_counted_per_row_and_shown(report):
    assert {(r.condition_id, r.input_id): r.truncated for r in report.rows} == {
        key: 1 for key in (("off", "8k"), ("mtp", "8k"), ("off", "32k"), ("mtp", "32k"))
    }
    assert all(r.truncation_known == 4 for r in report.rows)
    assert "truncation" not in dict(report.refused)
    html, text = _render(report, "en")
    assert html.count('data-truncated="1"') == 4 and "1 of 4" in text
    assert 'data-observation="truncation"' in html and 'data-caveat="C-TRUNC"' in html
    assert "Stopped at the output cap" in text
    _, text = _render(report, "ja")
    assert "4 件中 1 件" in text and "出力上限で終了" in text


def test_per_request_acceptance_and_peak_memory_are_figures_not_refusals(report):
    mtp = next(r for r in report.rows if r.condition_id == "mtp" and r.input_id == "8k")
    off = next(r for r in report.rows if r.condition_id == "off" and r.input_id == "8k")
    assert mtp.figures["acceptance"].median == pytest.approx(0.75)
    assert not off.figures["acceptance"].present  # no drafts proposed: no acceptance
    assert mtp.figures["peak_memory_mib"].median == pytest.approx(70.5 * 1024)
    refused = dict(report.refused)
    assert "acceptance_per_trial" not in refused and "memory" not in refused
    _, text = _render(report, "en")
    assert "75.0%" in text and "70.50" in text


def test_facts_declared_unknown_show_as_not_declared_and_nothing_is_invented(report):
    declaration = report.registration.declaration
    assert declaration.engine.version is None and declaration.engine.build is None
    assert declaration.model.quantization is None and declaration.context_capacity is None
    mtp = declaration.conditions[1].speculative
    assert (mtp.mode, mtp.draft_max, mtp.label) == ("draft-mtp", None, "draft-mtp")
    # The overview's engine line names the engine only, never a placeholder twice.
    setup = next(r.setup for r in imported_rows(report) if r.row.condition_id == "mtp")
    assert setup.engine == "vLLM" and setup.model == "Qwen3-Next" and setup.devices == "NVIDIA H200"
    for lang, word in (("en", "not declared"), ("ja", "申告なし")):
        html, text = _render(report, lang)
        declared = text[text.index("MTP off" if lang == "en" else "公開者の申告") :]
        assert declared.count(word) >= 9
        for invented in ("unknown", "None", "not stated not stated", "0.00 s"):
            assert invented not in text, invented
        assert check_page("bench", read_page(html)) == []
    # The registration keeps the unknowns as null: nothing stands in for them.
    registration = json.loads((Path("data") / CAMPAIGNS_DIR / "bench/import.json").read_text())
    assert registration["declaration"]["engine"] == {"name": "vLLM", "version": None, "build": None}


def test_a_tool_rate_column_is_the_tool_s_figure_and_invents_no_times(workdir):
    table = "config,input,tool_tps\n" + "".join(
        f"{config},8K,{rate + i}\n" for config, rate in (("off", 40), ("mtp", 60)) for i in range(3)
    )
    columns = (
        "csv:\n  columns:\n    group: {column: config}\n    input: {column: input}\n"
        "    tool_tokens_per_s:\n      column: tool_tps\n"
        "      definition: {ja: 出力トークン数 ÷ リクエスト全体の時間, "
        "en: output tokens over the whole request time}\n"
    )
    report = _import(workdir, table, DECLARED + columns)
    record = report.campaign.records[0]
    assert record.measurement.tool_tokens_per_s == 40
    assert (record.measurement.ttft_s, record.measurement.last_token_s) == (None, None)
    assert (record.generation_s, record.gen_tps) == (None, None)
    (comparison,) = report.comparisons
    assert comparison.metric == "tool_tokens_per_s" and comparison.ratio == pytest.approx(61 / 41)
    assert {"ttft", "gen_tps"} <= set(dict(report.refused))
    html, text = _render(report, "en")
    assert "the tool's rate (tokens/s, by the tool's definition)" in text
    assert "output tokens over the whole request time" in text
    assert re.search(r"(?<![\d.])0\.00", text) is None  # no TTFT of zero: not recorded
    assert text.count("not recorded (imported from CSV)") >= 6
    assert 'data-metric="tool_tokens_per_s"' in html
    _, text = _render(report, "ja")
    assert "ツール自身の速度" in text and "出力トークン数 ÷ リクエスト全体の時間" in text


def test_a_tool_rate_column_needs_its_definition(workdir):
    columns = "csv:\n  columns:\n    group: {column: config}\n    tool_tokens_per_s: {column: t}\n"
    (workdir / "d.yaml").write_text(DECLARED + columns)
    assert "columns.tool_tokens_per_s needs its definition" in problem(
        lambda: load_declaration(workdir / "d.yaml")
    )


def test_conditions_with_different_models_get_no_ratio(workdir):
    declared = DECLARED.replace(
        "    speculative: {mode: draft-mtp, draft_max: unknown}\n",
        "    speculative: {mode: draft-mtp, draft_max: unknown}\n"
        "    model: {name: Qwen3-Next-FP8, quantization: FP8}\n",
    )
    report = _import(workdir, _table(), declared + COLUMNS)
    assert all(c.ratio is None and "model" in c.differing for c in report.comparisons)
    setup = next(r.setup for r in imported_rows(report) if r.row.condition_id == "mtp")
    assert setup.model == "Qwen3-Next-FP8 · FP8"
    _, text = _render(report, "en")
    assert "the declared model" in text and "Qwen3-Next-FP8" in text


def test_a_declaration_without_a_model_needs_each_condition_s(tmp_path):
    path = tmp_path / "d.yaml"
    path.write_text(
        DECLARED.replace(
            "model: {name: Qwen3-Next, quantization: unknown, file_sha256: unknown}\n", ""
        )
    )
    assert "model: declare the model, or each condition's model (none for 'off', 'mtp')" in (
        problem(lambda: load_declaration(path))
    )


def test_a_speculative_mode_without_its_draft_length_is_refused(tmp_path):
    path = tmp_path / "d.yaml"
    path.write_text(DECLARED.replace("draft_max: unknown", "ngram_size: 3"))
    assert "needs draft_max (the maximum draft length, or unknown)" in problem(
        lambda: load_declaration(path)
    )


def _one_benchmark(tmp_path: Path) -> Path:
    report = json.loads(fixture("guidellm/benchmarks.json.gz").data)
    report["benchmarks"] = report["benchmarks"][:1]
    path = tmp_path / "one.json"
    path.write_text(json.dumps(report))
    return path


def test_a_guidellm_file_of_one_benchmark_maps_without_a_group(tmp_path):
    path = _one_benchmark(tmp_path)
    (tmp_path / "d.yaml").write_text(
        DECLARED.split("conditions:")[0]
        + "conditions:\n  - id: off\n    label: {ja: なし, en: none}\n"
        "    sources: [{file: one.json}]\n    speculative: {mode: off}\nbaseline: off\n"
    )
    declaration = load_declaration(tmp_path / "d.yaml")
    source = guidellm.parse(SourceFile("one.json", path.read_bytes()))
    assigned = assign_conditions(declaration, [source], "d.yaml")
    assert {key: c.id for key, c in assigned.items()} == {
        SourceGroup("one.json", "benchmarks[0]"): "off"
    }


def test_an_unmapped_group_is_refused_with_the_yaml_that_maps_it(workdir):
    shutil.copy(FIXTURES / "csv/requests.csv", workdir / "requests.csv")
    (workdir / "d.yaml").write_text(
        DECLARED.split("conditions:")[0]
        + "conditions:\n  - id: s1\n    label: {ja: 一, en: first}\n"
        "    sources: [{file: requests.csv, group: streams-1}]\n    speculative: {mode: off}\n"
        "baseline: s1\ncsv:\n  columns:\n    group: {column: config}\n"
    )
    declaration = load_declaration(workdir / "d.yaml")
    data = (workdir / "requests.csv").read_bytes()
    source = csv_columns.parse(SourceFile("requests.csv", data), declaration.csv)
    found = problem(lambda: assign_conditions(declaration, [source], "d.yaml"))
    assert found.endswith(
        'add to that condition\'s sources: - {file: "requests.csv", group: "streams-2"}'
    )


@pytest.mark.slow  # publishes a site
def test_the_home_page_shows_one_ratio_per_input_and_checks_clean(tmp_path, monkeypatch):
    from sitegen.commands.build import build_site
    from sitegen.commands.init_project import init_project

    project = tmp_path / "proj"
    init_project(project)
    monkeypatch.chdir(project)
    _import(project, _table(), DECLARED + COLUMNS)
    build_site(project / "data", project / "site", project)
    (version,) = [p for p in (project / "site" / "v").iterdir() if p.is_dir()]
    for page in ("index.html", "en/index.html", "reports/bench/index.html"):
        html = (version / page).read_text()
        facts = read_page(html)
        assert check_page(page, facts) == []
        ratios = [c for c in facts.claims_of("imported-ratio") if c.attrs["data-input"]]
        assert sorted(c.attrs["data-input"] for c in ratios) == ["32k", "8k"], page
    home = unescape(re.sub(r"<[^>]+>", " ", (version / "en/index.html").read_text()))
    assert "1.50×" in home and "1.20×" in home
    assert "not stated not stated" not in home and "unknown" not in home
