"""A headline a customer can quote: conditions read as their labels (or a description of
their settings), never ``id: id``, the ids kept for the downloads and the method page;
every campaign on the home page, a quality-only one with its verdict; the engine and
device columns say what was measured (a CPU as a CPU, a build once, an unknown build as
not recorded); an imported row with one condition claims no baseline; history dated by
each report's own records; imported reports in the changelog. Renders without mkdocs."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from sitegen.cli import main
from sitegen.commands.build import render_site
from sitegen.core.text import Bilingual
from sitegen.plan.labels import condition_labels
from sitegen.plan.plan_file import canonical_plan_json, plan_sha256
from sitegen.plan.plan_models import ConditionSpec, SpeculativeSpec
from sitegen.publish.archive import PublishedVersion
from sitegen.publish.changelog import compare, headline_figures
from sitegen.publish.history import history_rows
from sitegen.validation import check_page
from sitegen.validation.figure_checks import author_figure_issues
from sitegen.validation.page_facts import read_page
from tests.builtsites import rendered_page
from tests.conftest import make_plan
from tests.importers.sources import FIXTURES
from tests.sitefixtures import PROJECT, publishable_campaign, report_address
from tests.statistics.test_quality_records import quality_plan

ON_LABEL = {"ja": "n-gram 投機", "en": "n-gram speculation"}


def labelled_plan():
    return make_plan(
        name="labelled",
        conditions=[
            ConditionSpec(id="off", context_capacity=512),
            ConditionSpec(
                id="on",
                speculative=SpeculativeSpec(mode="ngram-simple", draft_max=4),
                context_capacity=512,
                label=Bilingual(**ON_LABEL),
            ),
        ],
    )


def _on_cpu_build_b9745(record: dict) -> None:
    """A llama.cpp CPU run (the fake engine's device is the CPU): its version is its
    build."""
    record["provenance"]["engine"]["version"] = "b9745"
    record["provenance"]["engine"]["build"] = "b9745"


def _unknown_build(record: dict) -> None:
    record["provenance"]["engine"]["build"] = "b0-unknown"


DECLARATION = """\
hardware:
  devices: [{kind: cpu, name: "Test CPU", count: 1}]
engine: {name: llama.cpp, version: "xllamacpp 2026.10.11549"}
model: {name: SmolLM2-135M-Instruct, quantization: GGUF Q4_1}
conditions:
  - id: only
    label: {ja: '単独', en: 'alone'}
    sources: [{file: vllm-serve.json}]
    speculative: {mode: off}
baseline: only
"""


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    root = tmp_path_factory.mktemp("labels")
    data = root / "data"
    labelled = publishable_campaign(data, labelled_plan(), mutate=_on_cpu_build_b9745)
    quality = publishable_campaign(data, quality_plan(), mutate=_unknown_build)
    (root / "vllm-serve.json").write_bytes((FIXTURES / "vllm" / "vllm-serve.json").read_bytes())
    (root / "solo.yaml").write_text(DECLARATION)
    argv = ["import", "vllm", str(root / "vllm-serve.json"), "--declare", str(root / "solo.yaml")]
    assert main([*argv, "--campaign", "solo", "--data", str(data)]) == 0
    rendered = render_site(data, PROJECT)
    yield rendered, report_address(labelled.parent), report_address(quality.parent)
    rendered.scratch.cleanup()


def _page(site, path: str, lang: str) -> str:
    return rendered_page(site[0], path if lang == "ja" else path.replace(".md", ".en.md"))


def _text(html: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html))


def _row(home: str, report: str) -> str:
    rows = re.findall(r"<tr [^>]*data-report=\"" + re.escape(report) + r"\".*?</tr>", home, re.S)
    assert rows, report
    return " ".join(_text(r) for r in rows)


@pytest.mark.parametrize("lang", ["ja", "en"])
def test_report_pages_show_condition_labels_never_ids(site, lang):
    page = _text(_page(site, f"reports/{site[1]}/index.md", lang))
    described = condition_labels(labelled_plan())
    assert ON_LABEL[lang] in page
    # Without a label: a description of its settings.
    assert described["off"][lang] in page
    assert described["off"]["en"] == "no speculative decoding"
    assert "off: off" not in page and "on: ngram-simple" not in page


@pytest.mark.parametrize("lang", ["ja", "en"])
def test_the_ids_stay_on_the_method_page_beside_the_labels(site, lang):
    method = _page(site, f"reports/{site[1]}/method.md", lang)
    assert "<code>on</code>" in method and ON_LABEL[lang] in method


def test_the_downloads_keep_the_condition_ids(site):
    report = next(r for r in site[0].reports if r.slug == site[1])
    assert set(report.summary["condition_id"]) == {"off", "on"}
    assert {r["condition_id"] for r in report.summary_records} == {"off", "on"}


def test_a_plan_without_labels_keeps_its_hash():
    plan = make_plan()
    assert '"label"' not in canonical_plan_json(plan)
    labelled = plan.model_copy(
        update={
            "conditions": [
                plan.conditions[0].model_copy(update={"label": Bilingual(ja="なし", en="none")}),
                plan.conditions[1],
            ]
        }
    )
    assert plan_sha256(labelled) != plan_sha256(plan)
    assert plan_sha256(make_plan()) == plan_sha256(plan)


def test_a_figure_in_a_condition_label_is_refused():
    plan = labelled_plan()
    bad = plan.model_copy(
        update={
            "conditions": [
                plan.conditions[0],
                plan.conditions[1].model_copy(
                    update={"label": Bilingual(ja="二倍速い", en="3× faster")}
                ),
            ]
        }
    )
    issues = author_figure_issues(bad, "plan.json")
    assert {i.location for i in issues} == {
        "plan.json → conditions.1.label.ja",
        "plan.json → conditions.1.label.en",
    }
    assert author_figure_issues(plan, "plan.json") == []


def test_conditions_without_labels_are_told_apart_by_their_settings():
    plan = make_plan(
        conditions=[
            ConditionSpec(id="small", context_capacity=512),
            ConditionSpec(id="large", context_capacity=4096),
        ]
    )
    labels = condition_labels(plan)
    assert labels["small"]["en"] == "no speculative decoding · context 512"
    assert labels["large"]["en"] == "no speculative decoding · context 4,096"
    assert labels["large"]["ja"] == "投機的デコーディングなし・コンテキスト 4,096"


@pytest.mark.parametrize("lang", ["ja", "en"])
def test_a_quality_only_campaign_is_on_the_home_page_with_its_verdict(site, lang):
    home = _page(site, "index.md", lang)
    facts = read_page(home)
    (claim,) = [c for c in facts.claims_of("accuracy") if c.attrs["data-report"] == site[2]]
    assert "C-TRUNC" in facts.effective_caveats(claim)
    assert check_page("overview", facts) == []
    row = _row(home, site[2])
    assert re.search(r'data-report="' + site[2] + r'".*?data-verdict="\w+"', home, re.S)
    assert {"en": "margin", "ja": "許容幅"}[lang] in row, row


@pytest.mark.parametrize("lang", ["ja", "en"])
def test_a_cpu_is_called_a_cpu_and_the_build_is_printed_once(site, lang):
    home = _page(site, "index.md", lang)
    row = _row(home, site[1])
    assert "CPU: 1× fake cpu" in row
    assert "b9745 b9745" not in row and "b9745" in row
    assert "GPUs and split" not in home and "GPU と分割" not in home


@pytest.mark.parametrize("lang", ["ja", "en"])
def test_an_unknown_build_reads_not_recorded(site, lang):
    home = _page(site, "index.md", lang)
    row = _row(home, site[2])
    assert "b0-unknown" not in home
    assert {"en": "build not recorded", "ja": "ビルド記録なし"}[lang] in row


@pytest.mark.parametrize("lang", ["ja", "en"])
def test_an_imported_row_with_one_condition_claims_no_baseline(site, lang):
    home = _page(site, "index.md", lang)
    row = _row(home, "solo")
    assert "baseline: the imported speed-ups" not in row and "取り込んだ倍率はこの条件" not in row
    assert {"en": "no other condition", "ja": "比べる別の条件"}[lang] in row
    assert {"en": "alone", "ja": "単独"}[lang] in row


def test_history_dates_each_report_by_its_own_latest_record(site):
    figures = headline_figures(site[0].reports, site[0].imported)
    report = next(r for r in site[0].reports if r.slug == site[1])
    own = report.campaign.latest_start.date().isoformat()
    entry = next(f for f in figures.values() if f["address"] == site[1])
    assert entry["data_date"] == own
    # The version's latest record is later: the report keeps its own date.
    version = PublishedVersion(
        "v2", int(report.campaign.latest_start.timestamp()) + 86_400 * 35, figures
    )
    (row,) = history_rows([], version, site[1])
    assert row.date == own
    # A version that did not record it: the version's date, as before.
    old = {k: {key: v for key, v in f.items() if key != "data_date"} for k, f in figures.items()}
    (row,) = history_rows([], PublishedVersion("v1", version.data_epoch, old), site[1])
    assert row.date != own


def test_an_imported_report_is_in_the_changelog(site):
    figures = headline_figures(site[0].reports, site[0].imported)
    (imported,) = [k for k, f in figures.items() if f.get("imported")]
    assert figures[imported]["address"] == "solo" and figures[imported]["records"] > 0
    before = {k: f for k, f in figures.items() if k != imported}
    changes = compare(PublishedVersion("v1", 0, before), figures)
    assert changes.added == [imported]
    assert changes.addresses[imported] == "solo"
    # Its records changing is a change too.
    moved = {**figures, imported: {**figures[imported], "records_sha256": "0" * 64}}
    assert [r[0] for r in compare(PublishedVersion("v1", 0, moved), figures).records] == [imported]


def test_the_imported_declaration_already_requires_labels(tmp_path: Path):
    (tmp_path / "vllm-serve.json").write_bytes((FIXTURES / "vllm" / "vllm-serve.json").read_bytes())
    (tmp_path / "d.yaml").write_text(
        DECLARATION.replace("    label: {ja: '単独', en: 'alone'}\n", "")
    )
    argv = [
        "import",
        "vllm",
        str(tmp_path / "vllm-serve.json"),
        "--declare",
        str(tmp_path / "d.yaml"),
    ]
    assert main([*argv, "--campaign", "solo", "--data", str(tmp_path / "data")]) != 0
