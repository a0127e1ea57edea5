"""One registry of author-controlled strings (``sitegen.core.author_fields``): every string
field of every model a build or an import reads is author text (C-FIGURE reads it) or
declared safe, and a new field that is neither fails here, naming the model and the field.

The corpus crosses every registered author field of a filled-in instance of each root
(plan, annotations, import declaration and registration, site settings with their
redaction labels, sources, comparison specs) with the detector's families of figures: each
attempt is refused naming the file and the field. Legitimate values (names with digits,
real declarations and example plans) pass. Records written by engines and importers are
measured data, not author text: the enumeration never enters them."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Annotated

import pytest
import yaml
from pydantic import BaseModel

from sitegen.core.author_fields import (
    AUTHOR_TEXT,
    AuthorText,
    NotProse,
    author_texts,
    classify,
    measured,
    unclassified_fields,
)
from sitegen.core.comparison_spec import ComparisonSpec
from sitegen.core.errors import ConfigError, DataError
from sitegen.core.price_list import PriceList
from sitegen.core.site_settings import RedactPolicy, SiteSettings
from sitegen.core.source_list import SourceList
from sitegen.core.strict_model import StrictModel
from sitegen.core.text import Bilingual
from sitegen.importers.declaration import parse_declaration
from sitegen.importers.import_campaign import refuse_figures
from sitegen.plan.plan_file import _PlanYamlLoader, load_plan
from sitegen.plan.plan_models import Plan
from sitegen.records.annotations import Annotations
from sitegen.records.import_declaration import ImportDeclaration
from sitegen.records.import_source import ImportedMeasurement, SourceInfo
from sitegen.records.imported_campaign import ImportedRecord, ImportRegistration
from sitegen.records.record_models import Provenance, TrialRecord
from sitegen.validation import check_project
from sitegen.validation.figure_checks import (
    author_figure_issues,
    author_roots,
)
from sitegen.validation.host_labels import hardware_named
from sitegen.validation.rules import registered_checks
from tests.importers.test_import_declaration import DECLARATION
from tests.sitefixtures import PROJECT, copy_project

ROOTS = tuple(author_roots().values())

# --- the enumeration ----------------------------------------------------------------


def test_every_string_field_is_author_text_or_declared_safe():
    assert unclassified_fields(ROOTS) == []


def test_the_roots_are_every_model_a_build_or_an_import_reads():
    assert set(ROOTS) == {
        Plan,
        Annotations,
        ImportDeclaration,
        ImportRegistration,
        SiteSettings,
        RedactPolicy,
        SourceList,
        PriceList,
        ComparisonSpec,
    }


def test_the_registry_is_what_the_docs_count():
    fields, models = classify(ROOTS)
    author = [f for f in fields if isinstance(f.declared, AuthorText)]
    safe = [f for f in fields if isinstance(f.declared, NotProse)]
    assert len(author) >= 30 and len(safe) >= 25 and len(models) >= 40
    # Each kind of safe field says why.
    assert all(f.declared.why for f in safe)


@pytest.mark.parametrize(
    "model", [TrialRecord, Provenance, ImportedRecord, ImportedMeasurement, SourceInfo]
)
def test_records_written_by_engines_and_importers_are_measured_data(model):
    """What an engine returned or a source file holds is measured data: it says so, and the
    enumeration and the walker never enter it (its figures are the data)."""
    assert measured(model)
    _, reached = classify(ROOTS)
    assert model not in reached


class _Unmarked(StrictModel):
    note: str
    """A new field nobody declared."""


class _Marked(StrictModel):
    title: Annotated[str, AUTHOR_TEXT]
    items: dict[str, list[_Unmarked]] = {}
    extra: tuple[str, ...] = ()


def test_a_new_unmarked_field_fails_naming_the_model_and_field():
    assert unclassified_fields((_Marked,)) == [
        "_Marked.items{key}",
        "_Unmarked.note",
        "_Marked.extra[]",
    ]


# --- the corpus -----------------------------------------------------------------------

FAMILIES = {
    "ascii": "runs at 62.27 tok/s",
    "multiplier": "Speculation is 3× faster",
    "word-en": "twice as fast",
    "word-ja": "二倍速い",
    "lookalike": "I.5x faster",
    "kanji-unit": "五秒で応答",
}
"""One attempt per family of the detector."""

BILINGUAL = {"ja": "標準", "en": "standard"}

PLAN = {
    "name": "campaign",
    "title": {"ja": "推論の比較", "en": "Inference compared"},
    "model": {"name": "gemma-3-270m", "source": "/models/m.gguf", "quantization": "Q4_K_M"},
    "conditions": [
        {"id": "off", "context_capacity": 4096, "label": {"ja": "投機なし", "en": "no drafts"}},
        {
            "id": "mtp",
            "context_capacity": 4096,
            "speculative": {"mode": "draft", "draft_max": 4, "draft_model": "/m/d.gguf"},
            "model": {"name": "Qwen2.5-7B", "source": "/m/q.gguf", "quantization": "FP8"},
        },
    ],
    "inputs": [{"id": "short", "text": "Answer in 3 words.", "max_output_tokens": 32}],
    "quality": {
        "suite_id": "ja-business",
        "per_template": 1,
        "suite_seed": 0,
        "suite_sha256": "0" * 64,
        "documents": [
            {"task_id": "doc", "n_records": 5, "seed": 1, "max_output_tokens": 64},
        ],
        "max_output_tokens": 64,
        "off_condition": "off",
        "on_condition": "mtp",
    },
}
ANNOTATIONS = {
    "review": "human",
    "reviewer": "A. Reviewer",
    "curated_examples": [{"trial_id": "off/short/r0", "reason": BILINGUAL}],
    "post_hoc": [
        {
            "label": "no-tables",
            "exclude_templates": ["t"],
            "reason": BILINGUAL,
            "added_at": "2030-01-01",
        }
    ],
}
DECLARED = yaml.load(DECLARATION, Loader=_PlanYamlLoader) | {
    "hardware": {
        "devices": [{"kind": "gpu", "name": "NVIDIA H100 SXM5", "count": 2}],
        "interconnect": "NVLink (NV18)",
    },
    "engine": {"name": "vLLM", "version": "0.11.0", "build": "b6123"},
}
SETTINGS = {
    "title": BILINGUAL,
    "site_description": "Benchmarks of speculative decoding",
    "site_author": "The team",
    "copyright": "© 2025–2026 Example Inc.",
    "repo_name": "example/bench",
    "extra": {
        "social": [
            {"icon": "fontawesome/brands/github", "link": "https://github.com/x", "name": "Code"}
        ]
    },
    "redact": {"hosts": {"vm": "node A"}},
}
SOURCES = {
    "sources": [{"id": "card", "title": "Model card", "publisher": "Vendor", "date": "2025-01-01"}]
}
COMPARISON = {"id": "across", "title": BILINGUAL, "campaigns": ["a", "b"]}
PRICES = {
    "currency": "USD",
    "prices": [
        {"device": "NVIDIA H200", "per_hour": 3.5, "source": BILINGUAL, "as_of": "2026-01-15"}
    ],
}


def _registration() -> ImportRegistration:
    return ImportRegistration(
        name="imported",
        format="guidellm",
        imported_at="2030-01-01T00:00:00.000+00:00",
        sitegen_version="1.0",
        declaration=ImportDeclaration.model_validate(DECLARED),
        sources=[
            SourceInfo(
                format="guidellm", tool="GuideLLM", tool_version="0.3", file="b.json",
                sha256="0" * 64, size_bytes=1, target="http://10.0.0.1:8000",
                stated={"rate": "62.27 tok/s"},  # measured data: never read as author text
            )
        ],
    )  # fmt: skip


INSTANCES: dict[str, tuple[str, BaseModel]] = {
    "plan": ("data/campaigns/c/plan.json", Plan.model_validate(PLAN)),
    "annotations": ("data/campaigns/c/annotations.yaml", Annotations.model_validate(ANNOTATIONS)),
    "declaration": ("DECL.yaml", ImportDeclaration.model_validate(DECLARED)),
    "registration": ("data/campaigns/imported/import.json", _registration()),
    "settings": ("mkdocs.yml", SiteSettings.model_validate(SETTINGS)),
    "sources": ("content/sources.yaml", SourceList.model_validate(SOURCES)),
    "prices": ("content/prices.yaml", PriceList.model_validate(PRICES)),
    "comparison": ("content/comparisons/across.yaml", ComparisonSpec.model_validate(COMPARISON)),
}
"""A filled-in instance of each root: every optional author field holds a value."""


def _with_unpublished_reason(annotations: Annotations) -> Annotations:
    return annotations.model_copy(update={"unpublished_reason": annotations.post_hoc[0].reason})


INSTANCES["annotations"] = (
    INSTANCES["annotations"][0],
    _with_unpublished_reason(INSTANCES["annotations"][1]),
)


def replaced(value: object, path: list[str], text: str) -> object:
    """``value`` with the field at ``path`` replaced by ``text``, nothing validated (an id's
    pattern would refuse most attempts before C-FIGURE sees them)."""
    if not path:
        return text
    head, rest = path[0], path[1:]
    if isinstance(value, BaseModel):
        return value.model_copy(update={head: replaced(getattr(value, head), rest, text)})
    if isinstance(value, list):
        i = int(head)
        return [*value[:i], replaced(value[i], rest, text), *value[i + 1 :]]
    if isinstance(value, dict):
        return {**value, head: replaced(value[head], rest, text)}
    raise AssertionError(f"cannot descend into {value!r} at {head}")


REGISTERED = [
    (root, field.path)
    for root, (_, instance) in INSTANCES.items()
    for field in author_texts(instance)
]
"""Every registered author field of the filled-in instances."""


def test_the_instances_fill_every_registered_author_field():
    fields, _ = classify(ROOTS)
    declared_author = {f.model for f in fields if isinstance(f.declared, AuthorText)}
    walked = {
        type_name
        for _, (_, instance) in INSTANCES.items()
        for type_name in _models_with_author_values(instance)
    }
    assert declared_author <= walked, declared_author - walked
    assert len(REGISTERED) >= 50


def _models_with_author_values(model: BaseModel) -> set[str]:
    """Names of the models whose author fields ``model`` fills."""
    names = set()
    for field in author_texts(model):
        node: object = model
        for part in field.path.split(".")[:-1]:
            node = (
                node[int(part)]
                if isinstance(node, list)
                else (node[part] if isinstance(node, dict) else getattr(node, part))
            )
            if isinstance(node, BaseModel):
                names.add(type(node).__name__)
        if isinstance(node, BaseModel):
            names.add(type(node).__name__)
    return names


@pytest.mark.parametrize("family", FAMILIES, ids=FAMILIES)
@pytest.mark.parametrize(("root", "path"), REGISTERED, ids=[f"{r}:{p}" for r, p in REGISTERED])
def test_a_figure_in_an_author_field_is_refused_naming_file_and_field(root, path, family):
    where, instance = INSTANCES[root]
    attempt = replaced(instance, path.split("."), FAMILIES[family])
    issues = author_figure_issues(attempt, where)
    assert [i.location for i in issues] == [f"{where} → {path}"], issues
    assert issues[0].rule == "C-FIGURE" and "\n" not in str(issues[0])


@pytest.mark.parametrize("root", INSTANCES)
def test_the_filled_in_instances_pass(root):
    where, instance = INSTANCES[root]
    assert author_figure_issues(instance, where) == []


# --- legitimate values ------------------------------------------------------------------

NAMES = [
    "H100", "NVIDIA H100 SXM5", "AMD EPYC 9654", "NVIDIA H100 80GB HBM3", "Qwen2.5-7B",
    "gemma-3-270m", "Llama 3.1 8B", "Llama-3.1-8B-Instruct", "SmolLM2-135M-Instruct",
    "GLM-5.3-Flash", "EXL3 sc_3.10bpw", "GGUF UD-IQ3_XXS", "GGUF Q4_K_M", "AWQ 4-bit", "FP8",
    "none", "xllamacpp 2026.10.11549", "0.11.0", "v0.9.2-rc1", "b6123",
    "sha256:3f2a9c1d5e", "NVLink 4 (NV18)", "PCIe", "llama.cpp", "vLLM",
]  # fmt: skip


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize(
    "path",
    [
        "hardware.devices.0.name",
        "hardware.interconnect",
        "engine.version",
        "engine.build",
        "model.name",
        "model.quantization",
    ],
)
def test_names_with_digits_pass(name, path):
    declaration = replaced(INSTANCES["declaration"][1], path.split("."), name)
    assert author_figure_issues(declaration, "DECL.yaml") == []


NOT_NAMES = ["3× faster", "62.27", "Qwen 62 tok/s", "twice as fast", "I.5x", "五秒", "x2 speed"]


@pytest.mark.parametrize("text", NOT_NAMES)
def test_a_name_that_states_a_figure_is_refused(text):
    declaration = replaced(INSTANCES["declaration"][1], ["model", "name"], text)
    assert [i.location for i in author_figure_issues(declaration, "D")] == ["D → model.name"]


def test_the_real_declarations_and_example_plans_pass():
    declaration = parse_declaration(yaml.load(DECLARATION, Loader=_PlanYamlLoader), "decl.yaml")
    assert author_figure_issues(declaration, "decl.yaml") == []
    plans = 0
    for path in sorted((PROJECT / "examples" / "plans").glob("*.yaml")):
        try:
            plan = load_plan(path)
        except ConfigError:  # a fleet plan, not a campaign plan
            continue
        plans += 1
        assert author_figure_issues(plan, str(path)) == [], path
    assert plans >= 3


# --- the checks the build and the import run --------------------------------------------


def test_the_import_refuses_a_figure_in_the_title_before_writing(tmp_path):
    declaration = ImportDeclaration.model_validate(
        DECLARED | {"title": {"ja": "投機は三倍速い", "en": "Speculation is 3× faster"}}
    )
    with pytest.raises(DataError) as caught:
        refuse_figures(declaration, tmp_path / "DECL.yaml", "bench")
    assert [i.location for i in caught.value.issues] == [
        f"{tmp_path / 'DECL.yaml'} → title.ja",
        f"{tmp_path / 'DECL.yaml'} → title.en",
    ]
    with pytest.raises(DataError) as caught:
        refuse_figures(ImportDeclaration.model_validate(DECLARED), tmp_path / "D", "3x-faster")
    assert caught.value.issues[0].location == "--campaign 3x-faster"


def test_a_build_refuses_a_figure_an_imported_campaign_declared(tmp_path):
    registration = _registration()
    title = {"ja": "三倍速い", "en": "Speculation is 3× faster"}
    declared = registration.declaration.model_copy(update={"title": Bilingual(**title)})
    campaign = SimpleNamespace(
        directory=tmp_path / "imported",
        registration=registration.model_copy(update={"declaration": declared}),
        annotations=Annotations(),
    )
    (declared_figures,) = [
        c.function for c in registered_checks("campaign") if c.imported and c.rule_id == "C-FIGURE"
    ]
    assert [i.location for i in declared_figures(campaign)] == [
        f"{tmp_path / 'imported' / 'import.json'} → declaration.title.ja",
        f"{tmp_path / 'imported' / 'import.json'} → declaration.title.en",
    ]


def _project_with_hosts(tmp_path: Path, hosts: dict[str, str]) -> tuple[Path, Path]:
    project = copy_project(tmp_path / "project")
    path = project / "mkdocs.yml"
    settings = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    path.write_text(yaml.safe_dump(settings | {"redact": {"hosts": hosts}}), encoding="utf-8")
    return project, path


def test_a_redaction_label_with_a_figure_is_refused(tmp_path):
    project, path = _project_with_hosts(tmp_path, {"vm": "62.27 tok/s"})
    issues = [i for i in check_project(project) if i.rule == "C-FIGURE"]
    assert [i.location for i in issues] == [f"{path} → redact.hosts.vm"]


@pytest.mark.parametrize(
    ("label", "named"),
    [
        ("NVIDIA H200 node", "NVIDIA"),
        ("gpu-node", "gpu"),
        ("H100x8 box", "H100x8"),
        ("AMD MI300X", "MI300X"),
        ("cpu server", "cpu"),
        ("TPU v5e pod", "TPU v5e"),
        ("rtx-box", "rtx"),
        ("Xeon host", "Xeon"),
    ],
)
def test_a_host_label_that_names_hardware_is_refused(tmp_path, label, named):
    project, path = _project_with_hosts(tmp_path, {"vm": label})
    issues = [i for i in check_project(project) if i.rule == "C-HARDWARE"]
    assert [i.location for i in issues] == [f"{path} → redact.hosts.vm"]
    assert named in issues[0].message and "names a machine" in issues[0].message
    assert "\n" not in str(issues[0])


@pytest.mark.parametrize("label", ["node A", "host-3f2a9c", "turing", "rack-b", "gpubox"])
def test_a_host_label_that_names_a_machine_passes(tmp_path, label):
    assert hardware_named(label) == []
    project, _ = _project_with_hosts(tmp_path, {"vm": label})
    assert [i for i in check_project(project) if i.rule in ("C-HARDWARE", "C-FIGURE")] == []
