"""`sitegen import` end to end on the real fixtures: a signed campaign that `verify` checks,
nothing invented in its records, refusals that name the problem and leave nothing behind,
and the pages a build makes of it (every figure marked imported, absent fields not
recorded, ratios only where the declaration allows)."""

from __future__ import annotations

import gzip
import json
import re
import shutil
from pathlib import Path

import pytest

from sitegen.cli import main
from sitegen.commands.build import build_site
from sitegen.commands.init_project import init_project
from sitegen.records.imported_campaign import ImportedRecord
from sitegen.records.layout import CAMPAIGNS_DIR
from sitegen.validation import check_page
from sitegen.validation.page_facts import read_page
from tests.builtsites import published_file, published_folder
from tests.importers.sources import FIXTURES
from tests.links import broken_internal_links

HARDWARE = """\
hardware:
  devices: [{kind: cpu, name: "Test CPU", count: 1}]
engine: {name: llama.cpp, version: "xllamacpp 2026.10.11549"}
model: {name: SmolLM2-135M-Instruct, quantization: GGUF Q4_1}
"""


def condition(cid: str, label: str, sources: str, spec: str = "{mode: off}") -> str:
    return (
        f"  - id: {cid}\n    label: {{ja: '{label}', en: '{label}'}}\n"
        f"    sources: {sources}\n    speculative: {spec}\n"
    )


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A project with every fixture beside it; commands run inside it."""
    init_project(tmp_path / "proj")
    for sub in ("guidellm", "vllm", "aiperf", "llama-bench", "csv"):
        shutil.copytree(FIXTURES / sub, tmp_path / "proj" / sub)
    guidellm = tmp_path / "proj" / "guidellm" / "benchmarks.json.gz"
    (tmp_path / "proj" / "guidellm" / "benchmarks.json").write_bytes(
        gzip.decompress(guidellm.read_bytes())
    )
    monkeypatch.chdir(tmp_path / "proj")
    return tmp_path / "proj"


def run(*argv: str) -> int:
    return main(list(argv))


def declare(path: Path, conditions: str, baseline: str, extra: str = "") -> Path:
    path.write_text(HARDWARE + "conditions:\n" + conditions + f"baseline: {baseline}\n" + extra)
    return path


def records(directory: Path) -> list[ImportedRecord]:
    lines = (directory / "records.jsonl").read_text().splitlines()
    return [ImportedRecord.model_validate_json(line) for line in lines]


def test_guidellm_import_is_signed_and_invents_nothing(workdir: Path, capsys) -> None:
    decl = declare(
        workdir / "d.yaml",
        condition(
            "c1", "single stream", "[{file: guidellm/benchmarks.json, group: 'benchmarks[0]'}]"
        )
        + condition(
            "c2", "paired streams", "[{file: guidellm/benchmarks.json, group: 'benchmarks[1]'}]"
        ),
        "c1",
    )
    assert (
        run(
            "import",
            "guidellm",
            "guidellm/benchmarks.json.gz",
            "--declare",
            str(decl),
            "--campaign",
            "g",
        )
        == 0
    )
    assert "imported 6 record(s)" in capsys.readouterr().out
    directory = workdir / "data" / CAMPAIGNS_DIR / "g"
    assert sorted(
        p.relative_to(directory).as_posix() for p in directory.rglob("*") if p.is_file()
    ) == ["import.json", "manifest.json", "records.jsonl", "sources/guidellm/benchmarks.json"]
    # The kept source is the decompressed file, byte for byte.
    assert (directory / "sources/guidellm/benchmarks.json").read_bytes() == (
        workdir / "guidellm/benchmarks.json"
    ).read_bytes()
    found = records(directory)
    assert [r.trial_id for r in found[:3]] == ["c1/requests/r0", "c1/requests/r1", "c1/requests/r2"]
    first = found[0]
    assert first.origin.tool == "GuideLLM" and first.origin.tool_version == "0.8.1"
    assert first.origin.location == "benchmarks[0].requests.successful[0]"
    # Fields GuideLLM does not hold stay absent: no chunk times, no prompt text.
    assert first.measurement.inter_chunk_latencies_s is None
    assert first.measurement.prompt_text is None
    # sitegen's generation rate, from the source's own times and counts.
    m = first.measurement
    assert first.gen_tps == pytest.approx((m.output_tokens - 1) / (m.last_token_s - m.ttft_s))
    assert sum(r.status == "failed" for r in found) == 2
    assert run("verify", str(directory)) == 0
    # Altering an imported source is found, the file named.
    with (directory / "sources/guidellm/benchmarks.json").open("ab") as handle:
        handle.write(b" ")
    assert run("verify", str(directory)) == 1
    assert "sources/guidellm/benchmarks.json: changed" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("declaration", "expected"),
    [
        # An unmapped group is named, never guessed.
        (
            condition("c1", "first", "[{file: guidellm/benchmarks.json, group: 'benchmarks[0]'}]"),
            "group 'benchmarks[1]' is in no condition's sources",
        ),
        # A group that is not in the file.
        (
            condition("c1", "first", "[{file: guidellm/benchmarks.json, group: 'benchmarks[0]'}]")
            + condition(
                "c2", "second", "[{file: guidellm/benchmarks.json, group: 'benchmarks[1]'}]"
            )
            + condition(
                "c3", "third", "[{file: guidellm/benchmarks.json, group: 'benchmarks[7]'}]"
            ),
            "group 'benchmarks[7]' is not among the imported sources",
        ),
    ],
)
def test_an_undeclared_or_unknown_group_is_refused_and_nothing_is_written(
    workdir: Path, capsys, declaration: str, expected: str
) -> None:
    decl = declare(workdir / "d.yaml", declaration, "c1")
    code = run(
        "import", "guidellm", "guidellm/benchmarks.json", "--declare", str(decl), "--campaign", "g"
    )
    err = capsys.readouterr().err
    assert code == 1 and expected in err and "d.yaml → conditions" in err
    assert not (workdir / "data" / CAMPAIGNS_DIR).exists() or not any(
        (workdir / "data" / CAMPAIGNS_DIR).iterdir()
    )


def test_a_missing_declaration_is_named_not_filled_in(workdir: Path, capsys) -> None:
    decl = workdir / "d.yaml"
    decl.write_text(
        HARDWARE.replace(
            "model: {name: SmolLM2-135M-Instruct, quantization: GGUF Q4_1}\n",
            "model: {name: SmolLM2-135M-Instruct}\n",
        )
        + "conditions:\n"
        + condition("c1", "first", "[{file: vllm/vllm-serve.json}]")
        + "baseline: c1\n"
    )
    assert (
        run("import", "vllm", "vllm/vllm-serve.json", "--declare", str(decl), "--campaign", "v")
        == 1
    )
    err = capsys.readouterr().err
    assert "d.yaml → model.quantization: Field required" in err
    assert not (workdir / "data").exists()


def test_bad_command_lines_are_one_line_each(workdir: Path, capsys) -> None:
    decl = declare(
        workdir / "d.yaml", condition("c1", "first", "[{file: vllm/vllm-serve.json}]"), "c1"
    )
    assert run("import", "vllm", "nope.json", "--declare", str(decl), "--campaign", "v") == 2
    assert "nope.json: no such file" in capsys.readouterr().err
    assert (
        run(
            "import",
            "vllm",
            "vllm/vllm-serve.json",
            "--declare",
            str(decl),
            "--campaign",
            "Bad Name",
        )
        == 2
    )
    assert "--campaign 'Bad Name'" in capsys.readouterr().err
    assert (
        run("import", "vllm", "vllm/vllm-serve.json", "--declare", str(decl), "--campaign", "v")
        == 0
    )
    assert (
        run("import", "vllm", "vllm/vllm-serve.json", "--declare", str(decl), "--campaign", "v")
        == 2
    )
    assert "a campaign is never changed" in capsys.readouterr().err
    # A GuideLLM file read as vLLM: the file, the record and the field are named.
    assert (
        run("import", "vllm", "guidellm/benchmarks.json", "--declare", str(decl), "--campaign", "w")
        == 1
    )
    assert "guidellm/benchmarks.json" in capsys.readouterr().err


def _page_text(site: Path, campaign: str, lang: str) -> tuple[str, str]:
    (version,) = [p for p in (site / "v").iterdir() if p.is_dir()]
    prefix = "en/" if lang == "en" else ""
    html = (version / f"{prefix}reports/{campaign}/index.html").read_text()
    text = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html))
    return html, text


@pytest.mark.slow  # publishes a site
def test_pages_mark_every_figure_and_refuse_what_the_source_lacks(workdir: Path) -> None:
    # Two copies of one vLLM run declared as off and ngram: a ratio with its interval.
    for side in ("a", "b"):
        (workdir / side).mkdir()
        shutil.copy(workdir / "vllm/vllm-serve.json", workdir / side / "vllm-serve.json")
    run(
        "import",
        "vllm",
        "a/vllm-serve.json",
        "b/vllm-serve.json",
        "--campaign",
        "vl",
        "--declare",
        str(
            declare(
                workdir / "v.yaml",
                condition("off", "<b>off</b>", "[{file: a/vllm-serve.json}]")
                + condition(
                    "ngram",
                    "ngram",
                    "[{file: b/vllm-serve.json}]",
                    "{mode: ngram-simple, draft_max: 8}",
                ),
                "off",
            )
        ),
    )
    run(
        "import",
        "llama-bench",
        "llama-bench/llama-bench.json",
        "--campaign",
        "lb",
        "--declare",
        str(
            declare(
                workdir / "l.yaml",
                condition(
                    "t1",
                    "single thread",
                    "[{file: llama-bench/llama-bench.json, group: n_threads=1}]",
                )
                + condition(
                    "t2",
                    "more threads",
                    "[{file: llama-bench/llama-bench.json, group: n_threads=2}]",
                ),
                "t1",
            )
        ),
    )
    run(
        "import",
        "csv",
        "csv/requests.csv",
        "--campaign",
        "cs",
        "--declare",
        str(
            declare(
                workdir / "c.yaml",
                condition("s1", "first", "[{file: csv/requests.csv, group: streams-1}]")
                + condition("s2", "second", "[{file: csv/requests.csv, group: streams-2}]"),
                "s1",
                "csv:\n  columns:\n    group: {column: config}\n"
                "    ttft_s: {column: first_token_latency, unit: ms}\n"
                "    output_tokens: {column: completion_tokens}\n    error: {column: error}\n",
            )
        ),
    )
    result = build_site(workdir / "data", workdir / "site", workdir)
    assert result.campaigns == 3
    assert broken_internal_links(workdir / "site") == []
    for lang in ("ja", "en"):
        for campaign in ("vl", "lb", "cs"):
            html, _ = _page_text(workdir / "site", campaign, lang)
            facts = read_page(html)
            assert check_page(campaign, facts) == []
            kinds = {c.kind for c in facts.claims}
            assert "imported-figure" in kinds
            for claim in facts.claims:
                if claim.kind.startswith("imported"):
                    assert "C-IMPORTED" in facts.effective_caveats(claim)
    html, text = _page_text(workdir / "site", "vl", "en")
    assert "Imported from vLLM bench serve (version not stated), not measured by sitegen." in text
    assert "&lt;b&gt;off&lt;/b&gt;" in html and "<b>off</b>" not in html
    (ratio,) = read_page(html).claims_of("imported-ratio")
    assert "1.00×" in "".join(ratio.text) and "C-SPREAD" in read_page(html).effective_caveats(ratio)
    # llama-bench: separate pp/tg tests, no end-to-end latency; same factor on both sides.
    html, text = _page_text(workdir / "site", "lb", "en")
    assert 'data-refused="e2e"' in html and "No end-to-end latency" in text
    assert not read_page(html).claims_of("imported-ratio")
    assert len(read_page(html).claims_of("configuration-comparison")) == 3
    assert "llama-bench times prompt processing (pp) and generation (tg)" in text
    # CSV without token times: no generation rate, shown as not recorded.
    html, text = _page_text(workdir / "site", "cs", "en")
    assert "not recorded (imported from CSV)" in text
    assert 'data-refused="gen_tps"' in html and 'data-refused="e2e"' in html
    # The records download is the imported records, as signed.
    (version,) = [p for p in (workdir / "site" / "v").iterdir() if p.is_dir()]
    download = published_file(version, "reports/cs/downloads/records.jsonl")
    assert [json.loads(line)["trial_id"] for line in download.read_text().splitlines()][:2] == [
        "s1/requests/r0",
        "s1/requests/r1",
    ]
    home = (version / "en/index.html").read_text()
    assert 'href="reports/lb/"' in home and "imported" in home
    # The overview shows each imported speed-up with its interval and source, or why not.
    for page in (home, (version / "en/overview/index.html").read_text()):
        facts = read_page(page)
        (ratio,) = [c for c in facts.claims_of("imported-ratio") if c.attrs["data-report"] == "vl"]
        row = re.search(r'<tr data-claim="imported-ratio".*?</tr>', page, re.S).group()
        shown = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", row))
        assert "1.00×" in shown and "95% interval 0.98–1.02×" in shown
        assert (
            "Imported from vLLM bench serve (version not stated), not measured by sitegen." in shown
        )
        assert {"C-SPREAD", "C-CONFDIFF", "C-IMPORTED"} <= facts.effective_caveats(ratio)
        assert check_page("overview", facts) == []
        text = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", page))
        assert "baseline: the imported speed-ups are measured against it" in text
        # llama-bench and CSV: the same declared factor on both sides.
        assert "no ratio: configuration comparison" in text
        assert "differ in the source group (the declared speculative decoding" in page
        assert "see its report" not in text


def test_a_page_without_the_imported_caveat_breaks_the_rule() -> None:
    facts = read_page('<div data-claim="imported-figure"><p>84.88</p></div>')
    issues = check_page("p.md", facts)
    assert [i.rule for i in issues] == ["C-IMPORTED"]


@pytest.mark.slow  # publishes a site
def test_own_downloads_round_trip_to_the_same_figures(tmp_path: Path, monkeypatch) -> None:
    """A published report's downloads imported and built again: every figure the same."""
    from tests.sitefixtures import publishable_campaign, report_address

    project = tmp_path / "proj"
    init_project(project)
    campaign = publishable_campaign(tmp_path / "data").parent
    slug = report_address(campaign)
    first = build_site(tmp_path / "data", tmp_path / "site-a", project, version="a")
    a = tmp_path / "site-a" / "v" / first.version
    downloads = published_folder(a, f"reports/{slug}/downloads")
    monkeypatch.chdir(tmp_path)
    own = [str(downloads[name]) for name in ("records.jsonl.gz", "plan.json", "manifest.json")]
    assert run("import", "sitegen", *own, "--campaign", campaign.name, "--data", "again") == 0
    assert run("verify", str(tmp_path / "again" / CAMPAIGNS_DIR / campaign.name)) == 0
    second = build_site(tmp_path / "again", tmp_path / "site-b", project, version="a")
    b = tmp_path / "site-b" / "v" / second.version
    tables = sorted(name for name in downloads if name.endswith((".csv", ".parquet")))
    assert "trials.csv" in tables and "speed_summary.csv" in tables
    again = published_folder(b, f"reports/{slug}/downloads")
    for name in tables:
        assert again[name].read_bytes() == downloads[name].read_bytes(), name
    pages = sorted(p.relative_to(a) for p in (a / "reports" / slug).rglob("index.html"))
    assert len(pages) >= 4
    for page in pages:
        if "data" in page.parts:  # the data page lists the new manifest's digests
            continue
        figures_a = read_page((a / page).read_text()).figures()
        assert read_page((b / page).read_text()).figures() == figures_a, page
    # A plan that is not the records' plan is refused.
    other = tmp_path / "plan.json"
    other.write_bytes(downloads["plan.json"].read_bytes() + b" ")
    assert run("import", "sitegen", own[0], str(other), own[2], "--campaign", "x") == 1


@pytest.mark.slow  # publishes a site
def test_vllm_speculative_totals_are_a_pooled_acceptance_marked_as_such(workdir: Path) -> None:
    result = json.loads((workdir / "vllm/vllm-serve.json").read_text())
    result.update(
        spec_decode_num_drafts=40, spec_decode_draft_tokens=160, spec_decode_accepted_tokens=100
    )
    (workdir / "spec.json").write_text(json.dumps(result))
    decl = declare(
        workdir / "d.yaml",
        condition("mtp", "mtp", "[{file: spec.json}]", "{mode: draft-mtp, draft_max: 4}"),
        "mtp",
    )
    assert run("import", "vllm", "spec.json", "--declare", str(decl), "--campaign", "s") == 0
    build_site(workdir / "data", workdir / "site", workdir)
    html, text = _page_text(workdir / "site", "s", "en")
    (claim,) = read_page(html).claims_of("imported-acceptance")
    assert "62.5% of the proposed draft tokens accepted (100 of 160)" in "".join(claim.text)
    assert "pooled over the whole run" in text and "not a per-request figure" in text
    assert 'data-refused="acceptance_per_trial"' in html


@pytest.mark.slow  # publishes a site
def test_a_comparison_shows_which_side_was_imported_and_no_ratio(workdir: Path, capsys) -> None:
    from tests.sitefixtures import publishable_campaign, report_address

    measured = publishable_campaign(workdir / "data").parent
    decl = declare(
        workdir / "d.yaml", condition("off", "off", "[{file: vllm/vllm-serve.json}]"), "off"
    )
    assert (
        run("import", "vllm", "vllm/vllm-serve.json", "--declare", str(decl), "--campaign", "vl")
        == 0
    )
    comparisons = workdir / "content" / "comparisons"
    comparisons.mkdir(parents=True)
    (comparisons / "both.yaml").write_text(
        "id: both\ntitle: {ja: 測定と取り込み, en: measured and imported}\n"
        f"campaigns: [{report_address(measured)}, vl]\nfactor: engine\n"
    )
    build_site(workdir / "data", workdir / "site", workdir)
    (version,) = [p for p in (workdir / "site" / "v").iterdir() if p.is_dir()]
    for page, title in (
        ("compare/both/index.html", "単体テスト"),
        ("en/compare/both/index.html", "Unit test"),
    ):
        html = (version / page).read_text()
        facts = read_page(html)
        assert check_page(page, facts) == []
        (table,) = facts.claims_of("imported-figure")
        text = " ".join(table.text)
        # Campaigns by their titles (an imported one without a declared title: its name).
        assert "vl" in text and title in text and report_address(measured) not in text
        assert "C-IMPORTED" in facts.effective_caveats(table)
        assert not facts.claims_of("speed-ratio")
    text = re.sub(
        r"\s+", " ", re.sub(r"<[^>]+>", " ", (version / "en/compare/both/index.html").read_text())
    )
    assert "imported from vLLM bench serve (version not stated), not measured by sitegen" in text
    assert "measured by sitegen" in text and "No ratio across these rows" in text
    # The audit checks the measured report and says what it cannot of the imported one.
    capsys.readouterr()
    assert run("audit", str(workdir / "site")) == 0
    out = capsys.readouterr().out
    assert "reports/vl: its downloads checked against SHA256SUMS, its figures not" in out
    assert "ok: every figure" in out
