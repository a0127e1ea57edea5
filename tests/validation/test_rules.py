"""Each caveat rule with a passing and a failing case.

Page rules are checked on the rendered pages of a campaign (fake-engine records
relabelled as a real engine); a failing case removes or alters what a directive
rendered. Data rules are checked on records and annotations.
"""

from __future__ import annotations

import contextlib
import json
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from sitegen.commands.build import render_site
from sitegen.core.errors import DataError
from sitegen.importers.import_campaign import import_campaign
from sitegen.pages.render import check_rendered
from sitegen.plan.plan_models import ConditionSpec, InputSpec, SpeculativeSpec
from sitegen.validation import validate_campaigns
from sitegen.validation.rules import load_rules
from tests.conftest import make_plan
from tests.importers.sources import FIXTURES
from tests.sitefixtures import copy_project, project_page, publishable_campaign, resign
from tests.statistics.test_quality_records import quality_plan

PROJECT = Path(__file__).resolve().parents[2]


def publishable(data_dir: Path, plan, mutate=None) -> Path:
    """A fake-engine campaign relabelled as a real engine's; returns its directory."""
    return publishable_campaign(data_dir, plan, mutate=mutate).parent


def annotate(directory: Path, **fields) -> None:
    (directory / "annotations.yaml").write_text(yaml.safe_dump(fields, allow_unicode=True))


def rule_ids(error: DataError) -> set[str]:
    return {issue.rule for issue in error.issues}


LOAD = {"profile": "poisson", "rates": [40.0, 80.0], "requests": 3, "seed": 1}
"""The speed campaign's open-loop load runs (short: the fake engine answers at once)."""


@pytest.fixture(scope="module")
def checked(tmp_path_factory):
    """Speed and quality campaigns with a threshold claim, a curated example, a
    post-hoc analysis and load runs with latency targets, all valid."""
    data = tmp_path_factory.mktemp("rules") / "data"
    speed = publishable(data, make_plan(load=LOAD, slo={"ttft_p95_s": 5.0, "e2e_p95_s": 9.0}))
    annotate(
        speed,
        review="automated",
        reviewer="sitegen scorer",
        thresholds=[{"condition_id": "on", "above": 10.0}],
        curated_examples=[
            {"trial_id": "on/short/r0", "reason": {"ja": "短い回答", "en": "a short answer"}}
        ],
    )
    quality = publishable(data, quality_plan().model_copy(update={"name": "quality"}))
    annotate(
        quality,
        post_hoc=[
            {
                "label": "no-logic",
                "exclude_templates": ["logic.order"],
                "added_at": "2999-01-01",
                "reason": {"ja": "曖昧なテンプレート", "en": "ambiguous template"},
            }
        ],
    )
    import_vllm_run(data)
    return render_site(data, PROJECT)


def import_vllm_run(data: Path) -> None:
    """The real vLLM fixture imported as a campaign of its own."""
    declaration = data.parent / "decl.yaml"
    declaration.write_text(
        "hardware: {devices: [{kind: cpu, name: CPU, count: 1}]}\n"
        "engine: {name: llama.cpp, version: xllamacpp}\n"
        "model: {name: SmolLM2, quantization: Q4_1}\n"
        "conditions: [{id: off, label: {ja: なし, en: none}, speculative: {mode: off},\n"
        "  sources: [{file: vllm-serve.json}]}]\nbaseline: off\n"
    )
    shutil.copy(FIXTURES / "vllm" / "vllm-serve.json", data.parent / "vllm-serve.json")
    with contextlib.chdir(data.parent):
        import_campaign("vllm", [Path("vllm-serve.json")], declaration, "imported", data, "test")


def _page(checked, *, quality: bool, page: str, imported: bool = False) -> str:
    if imported:
        return f"reports/{checked.imported[0].slug}/{page}"
    slug = next(r.slug for r in checked.reports if (r.plan.quality is not None) == quality)
    return f"reports/{slug}/{page}"


@dataclass(frozen=True)
class PageEdit:
    """Break what a directive rendered on one page of the valid site."""

    page: str
    old: str
    new: str
    quality: bool = False
    """On the quality campaign's pages (else the speed campaign's)."""
    imported: bool = False
    """On the imported campaign's page (every occurrence of ``old`` replaced)."""


@dataclass(frozen=True)
class AnnotationEdit:
    """Write these annotations into the speed campaign."""

    fields: dict


@dataclass(frozen=True)
class RecordEdit:
    """Change every record of a fresh speed campaign; ``field`` is named in the issue."""

    field: str
    mutate: Callable[[dict], None]
    plan: dict | None = None
    """Fields of the measured plan other than ``make_plan``'s (``None``: none)."""


@dataclass(frozen=True)
class ContentEdit:
    """Append this text to a content page of both languages."""

    page: str
    text: str


@dataclass(frozen=True)
class ProjectFile:
    """Write this file into a copy of the project."""

    path: str
    text: str


@dataclass(frozen=True)
class Tamper:
    """Change a signed file of the campaign after measuring, without signing it."""

    file: str


@dataclass(frozen=True)
class ImportedEdit:
    """Import a real fixture changed by ``edit``: refused at ``sitegen import`` (the same
    checks run again over imported records at every build)."""

    fixture: str
    edit: Callable[[bytes], bytes]


def _vllm(edit: Callable[[dict], None]) -> Callable[[bytes], bytes]:
    def change(data: bytes) -> bytes:
        result = json.loads(data)
        edit(result)
        return json.dumps(result).encode()

    return change


def _later_aiperf_record(data: bytes) -> bytes:
    """The first profiling record an hour later: outside the run window the summary states."""
    records = [json.loads(line) for line in data.decode().splitlines()]
    first = next(r for r in records if r["metadata"]["benchmark_phase"] == "profiling")
    first["metadata"]["request_start_ns"] += 3_600 * 10**9
    return "\n".join(json.dumps(r) for r in records).encode()


def _doubled(result: dict) -> None:
    count = len(result["ttfts"])
    for name, values in list(result.items()):
        if isinstance(values, list) and len(values) == count:
            result[name] = values + values


def _in_milliseconds_as_seconds(result: dict) -> None:
    result["ttfts"] = [t / 1000 for t in result["ttfts"]]
    result["latencies"] = [t / 1000 for t in result["latencies"]]
    result["itls"] = [[g / 1000 for g in gaps] for gaps in result["itls"]]


def _import_edited(tmp_path: Path, case: ImportedEdit) -> None:
    folder, name = case.fixture.split("/")
    files = [name] + (["profile_export_aiperf.json"] if folder == "aiperf" else [])
    for file in files:
        data = (FIXTURES / folder / file).read_bytes()
        (tmp_path / file).write_bytes(case.edit(data) if file == name else data)
    declaration = tmp_path / "decl.yaml"
    declaration.write_text(
        "hardware: {devices: [{kind: cpu, name: CPU, count: 1}]}\n"
        "engine: {name: llama.cpp, version: xllamacpp}\n"
        "model: {name: SmolLM2, quantization: Q4_1}\n"
        "conditions: [{id: off, label: {ja: なし, en: none}, speculative: {mode: off},\n"
        f"  sources: [{{file: {name}}}]}}]\nbaseline: off\n"
    )
    with contextlib.chdir(tmp_path):
        import_campaign(folder, [Path(f) for f in files], declaration, "x", tmp_path / "d", "t")


def _set_metrics_none(record: dict) -> None:
    if record["status"] == "ok":
        record["metrics"] = None


def _set_failed(reason: str):
    def mutate(record: dict) -> None:
        record.update(status="failed", failure_reason=reason, metrics=None)

    return mutate


def _set(path: str, value):
    def mutate(record: dict) -> None:
        target = record
        *parents, leaf = path.split(".")
        for key in parents:
            target = target[key]
        target[leaf] = value

    return mutate


def _other_build_for(condition_id: str):
    """A series campaign whose condition ``condition_id`` ran on another engine build."""

    def mutate(record: dict) -> None:
        if record["condition_id"] == condition_id:
            record["provenance"]["engine"]["version"] += ".1"

    return mutate


FAILING_CASES = {
    "C-TRUNC": PageEdit("quality.md", 'data-caveat="C-TRUNC"', "", quality=True),
    "C-EXAMPLE": PageEdit("examples.md", 'data-caveat="C-EXAMPLE"', ""),
    "C-CONFDIFF": PageEdit("index.md", 'data-factor-only="true"', 'data-factor-only="false"'),
    "C-LENGTH": PageEdit(
        "speed.md",
        'data-claim="speed-table"',
        'data-claim="speed-table"><div data-claim="completion-time" data-lengths-differ="true" '
        'data-time-ratio="0.50"></div',
    ),
    "C-CAPACITY": PageEdit("speed.md", 'data-caveat="C-CAPACITY"', ""),
    "C-THRESHOLD": PageEdit("index.md", 'data-caveat="C-THRESHOLD"', ""),
    "C-EXCLUDED": PageEdit("index.md", 'data-warmup="2"', 'data-warmup="0"'),
    "C-POSTHOC": PageEdit("quality.md", 'data-primary="true"', "", quality=True),
    "C-ORDER": PageEdit("index.md", 'data-caveat="C-ORDER"', ""),
    "C-UNITS": PageEdit("speed.md", 'data-caveat="C-UNITS"', ""),
    "C-REVIEW": PageEdit("index.md", 'data-caveat="C-REVIEW"', ""),
    "C-HARDWARE": PageEdit("index.md", 'data-caveat="C-HARDWARE"', ""),
    "C-ENGINE": RecordEdit("→ provenance.engine.id", _set("provenance.engine.id", "fake")),
    "C-PLANNED": RecordEdit("→ condition_id", _set("condition_id", "nope")),
    "C-RECORD": RecordEdit("→ metrics", _set_metrics_none),
    "C-USABLE": RecordEdit("(campaign", _set_failed("the server went away")),
    "C-MODELID": RecordEdit(
        "→ provenance.model.sha256", _set("provenance.model.sha256", "unknown-remote")
    ),
    "C-SIGNED": Tamper("records.jsonl"),
    "C-FIGURE": ContentEdit("report/index.md", "MTP makes generation 2× faster."),
    "C-SPECHEALTH": PageEdit("index.md", 'data-healthy="true"', 'data-healthy="false"'),
    "C-SPREAD": PageEdit("index.md", 'data-ci="', 'data-cx="'),
    "C-TAIL": PageEdit(
        "speed.md", 'data-claim="percentile" data-p="50"', 'data-claim="percentile" data-p="99"'
    ),
    "C-IMPORTED": PageEdit(
        "index.md", 'data-caveat="C-IMPORTED"', 'data-caveat="C-NONE"', imported=True
    ),
    "C-LOAD": PageEdit("speed.md", 'data-caveat="C-LOAD"', ""),
    "C-UNPUBLISHED": PageEdit("method.md", 'data-caveat="C-UNPUBLISHED"', ""),
    "C-TIMELINE": ImportedEdit("aiperf/profile_export.jsonl", _later_aiperf_record),
    "C-LATORDER": ImportedEdit(
        "vllm/vllm-serve.json", _vllm(lambda r: r["latencies"].__setitem__(0, r["ttfts"][0] / 2))
    ),
    "C-DUPLICATE": ImportedEdit("vllm/vllm-serve.json", _vllm(_doubled)),
    "C-BOUNDS": ImportedEdit(
        "vllm/vllm-serve.json", _vllm(lambda r: r["output_lens"].__setitem__(0, 10**15))
    ),
    "C-MAGNITUDE": ImportedEdit("vllm/vllm-serve.json", _vllm(_in_milliseconds_as_seconds)),
    "C-COST": ProjectFile(
        "content/prices.yaml",
        "currency: USD\nprices:\n  - device: fake cpu\n    per_hour: 0\n"
        "    source: {ja: 価格表, en: price list}\n    as_of: 2026-01-15\n",
    ),
    "C-SERIES": RecordEdit(
        "→ provenance.engine.version, provenance.engine.build",
        _other_build_for("on"),
        plan={"series": {"factor": "engine_build"}},
    ),
}
"""One failing case per rule of the catalog (more cases follow below)."""


def test_every_rule_of_the_catalog_has_a_failing_case():
    assert set(FAILING_CASES) == {r.id for r in load_rules()}


def test_every_rule_passes_on_valid_campaigns(checked):
    assert check_rendered(checked.docs, checked.reports, imported=checked.imported) == []
    assert validate_campaigns([r.campaign for r in checked.reports]) == []


@pytest.mark.parametrize("rule", [r.id for r in load_rules()])
def test_every_rule_fails_on_its_case(checked, tmp_path, rule):
    case = FAILING_CASES[rule]
    if isinstance(case, PageEdit):
        path = _page(checked, quality=case.quality, page=case.page, imported=case.imported)
        html = checked.docs[path].decode()
        assert case.old in html, f"{rule}: the directive should render {case.old}"
        broken = dict(checked.docs)
        broken[path] = html.replace(case.old, case.new, -1 if case.imported else 1).encode()
        found = check_rendered(broken, checked.reports, imported=checked.imported)
        assert rule in {issue.rule for issue in found}
        assert any(path in issue.location for issue in found if issue.rule == rule)
        return
    if isinstance(case, ImportedEdit):
        with pytest.raises(DataError) as caught:
            _import_edited(tmp_path, case)
        assert rule in rule_ids(caught.value)
        return
    plan = make_plan(**(case.plan or {})) if isinstance(case, RecordEdit) else make_plan()
    directory = publishable(tmp_path / "data", plan, getattr(case, "mutate", None))
    project = PROJECT
    if isinstance(case, AnnotationEdit):
        annotate(directory, **case.fields)
    if isinstance(case, Tamper):
        tampered = directory / case.file
        tampered.write_text(tampered.read_text().replace('"gen_tps": ', '"gen_tps": 1', 1))
    if isinstance(case, ProjectFile):
        project = copy_project(tmp_path / "project")
        (project / case.path).write_text(case.text)
    if isinstance(case, ContentEdit):
        project = copy_project(tmp_path / "project")
        for lang in ("ja", "en"):
            page = project_page(project, f"{lang}/{case.page}")
            page.write_text(page.read_text() + "\n" + case.text + "\n")
    with pytest.raises(DataError) as caught:
        render_site(tmp_path / "data", project)
    assert rule in rule_ids(caught.value)
    if isinstance(case, RecordEdit):
        assert case.field in str(caught.value)


def test_goodput_must_name_the_declared_targets(checked):
    """C-LOAD: goodput against other targets than the plan's slo is refused."""
    path = _page(checked, quality=False, page="speed.md")
    html = checked.docs[path].decode()
    assert 'data-claim="goodput" data-slo="ttft_p95_s=5 e2e_p95_s=9"' in html
    broken = dict(checked.docs)
    broken[path] = html.replace(
        'data-claim="goodput" data-slo="ttft_p95_s=5 e2e_p95_s=9"',
        'data-claim="goodput" data-slo="ttft_p95_s=50"',
        1,
    ).encode()
    found = check_rendered(broken, checked.reports, imported=checked.imported)
    assert [i.rule for i in found] == ["C-LOAD"] and "the plan declares" in found[0].message


def test_c_length_reproduces_the_004_confound(tmp_path):
    """004: "MTP halved the time" while tok/s was 16.57 vs 16.24 and the answers were
    8,604 vs 4,083 tokens long. A time ratio is refused; equal lengths allow it."""
    project = copy_project(tmp_path / "project")
    for lang in ("ja", "en"):
        speed = project_page(project, f"{lang}/report/speed.md")
        speed.write_text(speed.read_text() + '\n{{ completion_time("short", ratio=True) }}\n')

    def confound(record):
        metrics = record["metrics"]
        if metrics and record["role"] == "measured" and record["input_id"] == "short":
            on = record["condition_id"] == "on"
            metrics["generated_tokens"] = 4083 if on else 8604
            metrics["gen_tps"] = 16.57 if on else 16.24
            metrics["e2e_s"] = (4083 if on else 8604) / metrics["gen_tps"]
            metrics["generation_s"] = (metrics["generated_tokens"] - 1) / metrics["gen_tps"]

    publishable(tmp_path / "bad", make_plan(), confound)
    with pytest.raises(DataError) as caught:
        render_site(tmp_path / "bad", project)
    assert "C-LENGTH" in rule_ids(caught.value)
    assert "8,604" in str(caught.value) and "completion_time('short', ratio=True)" in str(
        caught.value
    )

    def same_length(record):
        if record["metrics"]:
            record["metrics"]["generated_tokens"] = 4000
            record["metrics"]["generation_s"] = 3999 / record["metrics"]["gen_tps"]

    publishable(tmp_path / "good", make_plan(), same_length)
    site = render_site(tmp_path / "good", project)
    speed_page = next(v for k, v in site.docs.items() if k.endswith("/speed.md")).decode()
    assert 'data-claim="completion-time"' in speed_page and "倍" in speed_page


def test_configuration_comparison_prints_no_ratio(tmp_path):
    plan = make_plan(
        conditions=[
            ConditionSpec(id="off", context_capacity=512),
            ConditionSpec(
                id="on",
                context_capacity=4096,
                speculative=SpeculativeSpec(mode="ngram-simple", draft_max=4),
            ),
        ]
    )
    publishable(tmp_path, plan)
    site = render_site(tmp_path, PROJECT)
    summary = next(
        v for k, v in site.docs.items() if k.endswith("/index.en.md") and "reports/" in k
    ).decode()
    assert 'data-claim="configuration-comparison" data-differing="context_capacity"' in summary
    assert 'data-claim="speed-ratio"' not in summary
    comparison = summary.split('data-claim="configuration-comparison"')[1].split("</li>")[0]
    assert "×" not in comparison and "context_capacity" in comparison


ANNOTATION_CASES = {
    "C-EXAMPLE": AnnotationEdit(
        {"curated_examples": [{"trial_id": "on/short/r9", "reason": {"ja": "x", "en": "x"}}]}
    ),
    "C-THRESHOLD": AnnotationEdit({"thresholds": [{"condition_id": "nope", "above": 5}]}),
    "C-POSTHOC": AnnotationEdit(
        {
            "post_hoc": [
                {
                    "label": "x",
                    "exclude_templates": ["logic.order"],
                    "added_at": "2000-01-01",
                    "reason": {"ja": "x", "en": "x"},
                }
            ]
        }
    ),
}


@pytest.mark.parametrize("rule", sorted(ANNOTATION_CASES))
def test_data_rule_fails_on_bad_annotations(tmp_path, rule):
    directory = publishable(tmp_path, make_plan())
    render_site(tmp_path, PROJECT)  # passing case: no annotations
    annotate(directory, **ANNOTATION_CASES[rule].fields)
    with pytest.raises(DataError) as caught:
        render_site(tmp_path, PROJECT)
    assert rule in rule_ids(caught.value)
    assert "annotations.yaml" in str(caught.value)


@pytest.mark.parametrize(
    ("rule", "field"),
    [("C-CAPACITY", "prompt_tokens"), ("C-HARDWARE", "provenance.host.devices")],
)
def test_data_rule_fails_on_bad_records(tmp_path, rule, field):
    def strip(record):
        if field == "prompt_tokens":
            record["prompt_tokens"] = None
        else:
            record["provenance"]["host"]["devices"] = []

    publishable(tmp_path, make_plan(), strip)
    with pytest.raises(DataError) as caught:
        render_site(tmp_path, PROJECT)
    assert rule in rule_ids(caught.value)
    assert f"→ {field}" in str(caught.value)


def test_missing_review_declaration_is_refused(tmp_path):
    directory = publishable(tmp_path, make_plan())
    annotate(directory, review="human")  # a human review needs the reviewer's name
    with pytest.raises(DataError) as caught:
        render_site(tmp_path, PROJECT)
    assert "needs a reviewer" in str(caught.value)


def test_missing_translation_and_figure_parity(tmp_path):
    publishable(
        tmp_path / "data", make_plan(inputs=[InputSpec(id="short", text="q", max_output_tokens=8)])
    )
    project = copy_project(tmp_path / "project")
    en = project / "theme" / "i18n" / "en.yml"
    en.parent.mkdir(parents=True, exist_ok=True)
    en.write_text('page.speed: " "\npage.sped: "Speed"\n')
    with pytest.raises(DataError) as caught:
        render_site(tmp_path / "data", project)
    assert "en.yml → page.speed: blank" in str(caught.value)
    assert "en.yml → page.sped: not a key of sitegen's catalog" in str(caught.value)
    en.unlink()
    (project / "content" / "sources.yaml").write_text(
        "sources:\n  - {id: vendor, title: Vendor sheet, publisher: Vendor, date: 2025-01-01}\n"
    )
    for lang, figure in (("ja", "5 倍"), ("en", "2×")):
        summary = project_page(project, f"{lang}/report/index.md")
        summary.write_text(
            summary.read_text() + f'\nA claim: {{{{ literal("{figure}", source="vendor") }}}}\n'
        )
    with pytest.raises(DataError) as caught:
        render_site(tmp_path / "data", project)
    assert "ja and en pages carry different figures" in str(caught.value)


def _metrics(**values):
    def mutate(record: dict) -> None:
        if record["metrics"] and record["condition_id"] == "on":
            record["metrics"].update(values)

    return mutate


CONSISTENCY_CASES = {
    "accepted > proposed": ("C-RECORD", "metrics.draft_accepted", _metrics(draft_accepted=999)),
    "negative count": ("C-RECORD", "metrics.generated_tokens", _metrics(generated_tokens=-3)),
    "negative time": ("C-RECORD", "metrics.ttft_s", _metrics(ttft_s=-0.5)),
    "gen_tps forged": ("C-RECORD", "metrics.gen_tps", _metrics(gen_tps=999.0)),
    "speculative contradicts the condition": (
        "C-PLANNED",
        "speculative",
        lambda r: r.update(speculative={"mode": "off"}) if r["condition_id"] == "on" else None,
    ),
}


@pytest.mark.parametrize("case", sorted(CONSISTENCY_CASES))
def test_impossible_records_are_refused(tmp_path, case):
    rule, field, mutate = CONSISTENCY_CASES[case]
    publishable(tmp_path, make_plan(), mutate)
    with pytest.raises(DataError) as caught:
        render_site(tmp_path, PROJECT)
    assert rule in rule_ids(caught.value) and f"→ {field}" in str(caught.value)


def test_missing_planned_trials_are_counted_on_the_pages(tmp_path):
    directory = publishable(tmp_path, make_plan())
    records = (directory / "records.jsonl").read_text().splitlines(keepends=True)
    (directory / "records.jsonl").write_text("".join(records[:-2]))
    resign(directory)
    site = render_site(tmp_path, PROJECT)
    assert site.reports[0].excluded["missing"] == 2
    summary = next(
        v for k, v in site.docs.items() if k.endswith("/index.en.md") and "reports/" in k
    )
    assert 'data-planned="12" data-missing="2"' in summary.decode()
    assert "2 planned trial(s) have no record yet" in summary.decode()
    broken = {
        k: v.replace(b'data-missing="2"', b'data-missing="0"') if isinstance(v, bytes) else v
        for k, v in site.docs.items()
    }
    assert "C-EXCLUDED" in {i.rule for i in check_rendered(broken, site.reports)}
