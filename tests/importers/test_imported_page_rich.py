"""The imported page is at least as informative as the tool's own report: the tool's
run-level figures (as it states them) beside sitegen's per-request rate, percentiles of
TTFT, TPOT, ITL and end-to-end time, the measured reports' charts, and CSV and Parquet
downloads with SHA256SUMS, signed. Imported campaigns go through the build's one read →
validate → redact → summarize. Imports the real fixtures and renders the page alone: fast."""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import re
import shutil
from html import unescape
from pathlib import Path

import pandas as pd
import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from sitegen.cli import main
from sitegen.core.project import packaged_theme
from sitegen.core.signing import Signer, signature_problem
from sitegen.core.string_catalog import load_strings
from sitegen.pages.directives import PageContext, directive_functions, html_environment
from sitegen.pages.i18n import Catalog
from sitegen.pages.render import check_rendered, imported_page, make_imported_downloads
from sitegen.records.campaign import read_campaigns
from sitegen.records.redact import Redactor, RedactPolicy, redact
from sitegen.statistics.imported_report import ImportedReport, make_imported_report
from sitegen.statistics.summarize import summarize
from sitegen.validation import check_page, validate_campaigns
from sitegen.validation.page_facts import read_page
from tests.importers.sources import FIXTURES

HARDWARE = """\
hardware:
  devices: [{kind: cpu, name: "Test CPU", count: 1}]
engine: {name: llama.cpp, version: "xllamacpp 2026.10.11549"}
model: {name: SmolLM2-135M-Instruct, quantization: GGUF Q4_1}
"""


def _condition(cid: str, label: str, source: str) -> str:
    return (
        f"  - id: {cid}\n    label: {{ja: '{label}', en: '{label}'}}\n"
        f"    sources: [{source}]\n    speculative: {{mode: off}}\n"
    )


def _import(workdir: Path, fmt: str, files: list[str], conditions: str, name: str):
    (workdir / f"{name}.yaml").write_text(
        HARDWARE + "conditions:\n" + conditions + "baseline: c1\n"
    )
    argv = ["import", fmt, *files, "--declare", f"{name}.yaml", "--campaign", name]
    assert main(argv) == 0
    campaigns, issues = read_campaigns(workdir / "data")
    assert issues == []
    (campaign,) = [c for c in campaigns if c.slug == name]
    return make_imported_report(campaign)


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for sub in ("guidellm", "vllm"):
        shutil.copytree(FIXTURES / sub, tmp_path / sub)
    packed = tmp_path / "guidellm" / "benchmarks.json.gz"
    (tmp_path / "guidellm" / "benchmarks.json").write_bytes(gzip.decompress(packed.read_bytes()))
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.fixture
def guidellm_report(workdir: Path) -> ImportedReport:
    conditions = _condition(
        "c1", "single stream", "{file: guidellm/benchmarks.json, group: 'benchmarks[0]'}"
    ) + _condition(
        "c2", "paired streams", "{file: guidellm/benchmarks.json, group: 'benchmarks[1]'}"
    )
    return _import(workdir, "guidellm", ["guidellm/benchmarks.json"], conditions, "g")


def _render(report: ImportedReport, lang: str) -> tuple[str, str]:
    catalog = Catalog(lang, load_strings(packaged_theme()))
    env = html_environment(str(packaged_theme() / "partials"))
    files = make_imported_downloads(report)
    html = str(
        directive_functions(PageContext(env, catalog, downloads=files, imported=report))[
            "imported_report"
        ]()
    )
    return html, unescape(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html)))


def _guidellm_metrics(workdir: Path) -> list[dict]:
    report = json.loads((workdir / "guidellm/benchmarks.json").read_text())
    return [b["metrics"] for b in report["benchmarks"]]


def test_the_run_level_figures_are_the_ones_guidellm_states(workdir, guidellm_report):
    metrics = _guidellm_metrics(workdir)
    assert [r.condition_id for r in guidellm_report.run] == ["c1", "c2"]
    for run, stated in zip(guidellm_report.run, metrics, strict=True):
        figures = run.figures
        assert figures["requests_per_s"].stated and figures["output_tokens_per_s"].stated
        assert (
            figures["requests_per_s"].value == stated["requests_per_second"]["successful"]["mean"]
        )
        assert (
            figures["output_tokens_per_s"].value
            == stated["output_tokens_per_second"]["successful"]["mean"]
        )
        totals = stated["request_totals"]
        assert figures["error_rate"].value == pytest.approx(
            (totals["errored"] + totals["incomplete"]) / totals["total"]
        )
        # sitegen's per-request rate stands beside them, over the same requests.
        assert run.gen_tps.n == totals["successful"]


def test_the_page_prints_both_rates_with_their_definitions_in_both_languages(guidellm_report):
    for lang in ("ja", "en"):
        html, text = _render(guidellm_report, lang)
        facts = read_page(html)
        assert check_page("g", facts) == []
        (run,) = [c for c in facts.claims_of("imported-figure") if "run-figures" in str(c.attrs)]
        assert "C-IMPORTED" in facts.effective_caveats(run)
        assert "3.64" in text and "29.08" in text and "33.3%" in text  # GuideLLM's figures
        assert "84.88" in text  # sitegen's per-request generation rate, median
        assert "metrics.requests_per_second.successful.mean" in text
    _, text = _render(guidellm_report, "en")
    assert "They differ because run throughput adds up concurrent streams" in text


def test_percentiles_follow_the_measured_reports_rules(guidellm_report):
    latency = guidellm_report.latency
    assert set(latency["metric"]) == {"ttft_s", "tpot_s", "e2e_s"}  # GuideLLM: no chunk gaps
    # Two requests per condition: P50 only; P90 and beyond need more values (C-TAIL).
    assert latency["p50"].notna().all() and latency["p90"].isna().all()
    ttft = latency[(latency["condition_id"] == "c1") & (latency["metric"] == "ttft_s")].iloc[0]
    assert ttft["mean"] * 1000 == pytest.approx(174.5603084564209)  # GuideLLM's mean TTFT
    for lang in ("ja", "en"):
        html, text = _render(guidellm_report, lang)
        assert 'data-caveat="C-TAIL"' in html and 'data-observation="max-instead"' in html
    assert "No ITL: the files of GuideLLM 0.8.1 keep" in text


def test_vllm_figures_are_its_stated_throughputs_and_its_itl_comes_from_chunk_gaps(workdir):
    report = _import(
        workdir,
        "vllm",
        ["vllm/vllm-serve.json"],
        _condition("c1", "plain", "{file: vllm/vllm-serve.json}"),
        "v",
    )
    stated = json.loads((workdir / "vllm/vllm-serve.json").read_text())
    (run,) = report.run
    assert run.figures["requests_per_s"].value == stated["request_throughput"]
    assert run.figures["output_tokens_per_s"].value == stated["output_throughput"]
    assert run.figures["error_rate"].value == pytest.approx(1 / 3)
    itl = report.latency[report.latency["metric"] == "itl_s"].iloc[0]
    assert itl["mean"] * 1000 == pytest.approx(stated["mean_itl_ms"])
    assert itl["p50"] * 1000 == pytest.approx(stated["median_itl_ms"])
    html, text = _render(report, "en")
    assert check_page("v", read_page(html)) == [] and "No ITL" not in text


def test_the_charts_of_measured_reports_are_drawn_from_the_imported_records(guidellm_report):
    for lang in ("ja", "en"):
        html, _ = _render(guidellm_report, lang)
        specs = re.findall(
            r'<script type="application/json" class="sg-chart-spec"[^>]*>(.*?)</script>', html, re.S
        )
        kinds = re.findall(r'data-chart-kind="(\w+)"', html)
        assert kinds == ["trials", "cdf"] and len(specs) == 2
        trials, cdf = (json.loads(s) for s in specs)
        points = [y for trace in trials["data"] for y in trace["y"] if "·" in trace["name"]]
        assert len(cdf["data"]) == 2 and points


def test_downloads_are_csv_and_parquet_with_checksums_and_parse(guidellm_report):
    files = {f.name: f for f in make_imported_downloads(guidellm_report)}
    for table in ("imported_records", "imported_summary", "run_figures", "latency_percentiles"):
        csv = pd.read_csv(io.BytesIO(files[f"{table}.csv"].read_bytes()), encoding="utf-8-sig")
        parquet = pd.read_parquet(io.BytesIO(files[f"{table}.parquet"].read_bytes()))
        assert len(csv) == len(parquet) > 0 and list(csv.columns) == list(parquet.columns)
    assert len(pd.read_csv(io.BytesIO(files["imported_records.csv"].data))) == 6
    run = pd.read_parquet(io.BytesIO(files["run_figures.parquet"].data))
    assert run["output_tokens_per_s"].tolist() == [
        r.figures["output_tokens_per_s"].value for r in guidellm_report.run
    ]
    sums = files["SHA256SUMS"].data.decode().splitlines()
    listed = dict(reversed(line.split("  ")) for line in sums)
    assert set(listed) == set(files) - {"SHA256SUMS"}
    for name, digest in listed.items():
        assert hashlib.sha256(files[name].read_bytes()).hexdigest() == digest
    html, _ = _render(guidellm_report, "en")
    assert 'href="reports/g/downloads/run_figures.parquet"' in html


def test_both_language_pages_pass_the_build_s_page_checks(guidellm_report):
    docs = {
        imported_page(guidellm_report, lang): _render(guidellm_report, lang)[0].encode()
        for lang in ("ja", "en")
    }
    assert check_rendered(docs, [], [], [guidellm_report]) == []


def test_measured_and_imported_campaigns_are_read_validated_and_redacted_as_one(
    workdir: Path, guidellm_report: ImportedReport
):
    campaigns, issues = read_campaigns(workdir / "data")
    assert issues == [] and [c.imported for c in campaigns] == [True]
    assert validate_campaigns(campaigns) == []
    (published,) = [redact(c, Redactor(RedactPolicy())) for c in campaigns]
    # GuideLLM states the server's address: published as a label, as a measured one's is.
    assert {s.target for s in campaigns[0].registration.sources} == {"http://127.0.0.1:38989"}
    (target,) = {s.target for s in published.registration.sources}
    assert target.startswith("http://localhost:port-") and "38989" not in target
    report = summarize(published)
    assert report.campaign is published and report.rows == guidellm_report.rows
    downloads = make_imported_downloads(report)
    assert all(b"38989" not in f.content for f in downloads)
    # The data in data/ keeps what the tool wrote.
    assert b"38989" in (campaigns[0].directory / "import.json").read_bytes()


def test_an_imported_reports_checksums_are_signed(guidellm_report: ImportedReport, tmp_path):
    signer = Signer(Ed25519PrivateKey.generate(), tmp_path / "key.pem")
    files = {f.name: f for f in make_imported_downloads(guidellm_report, signer)}
    sums, signature = files["SHA256SUMS"].content, files["SHA256SUMS.sig"].content
    assert signature_problem(sums, signature, signer.public_key, "SHA256SUMS.sig") is None
    listed = {line.split("  ")[1] for line in sums.decode().splitlines()}
    assert listed == set(files) - {"SHA256SUMS", "SHA256SUMS.sig"}
    assert "changed after it was signed" in signature_problem(
        sums + b"x", signature, signer.public_key, "SHA256SUMS.sig"
    )


def test_each_run_row_states_the_concurrency_the_tool_ran_with(workdir, guidellm_report):
    stated = [
        json.loads((workdir / "guidellm/benchmarks.json").read_text())["benchmarks"][i]["config"][
            "strategy"
        ]["streams"]
        for i in (0, 1)
    ]
    assert [run.concurrency for run in guidellm_report.run] == stated == [1, 2]
    _, text = _render(guidellm_report, "en")
    assert "single stream concurrency 1, as the tool states it" in text
    assert "paired streams concurrency 2, as the tool states it" in text
    assert "Completed requests/s over the run" in text and "failed ones are not counted" in text
    _, text = _render(guidellm_report, "ja")
    assert "同時実行数 2（ツールの記載）" in text


def test_conditions_that_differ_in_load_are_not_also_said_to_differ_in_their_group(
    guidellm_report,
):
    (comparison,) = guidellm_report.comparisons
    assert comparison.differing == ("concurrency",)
