"""A comparison page names what a customer knows: each campaign by its report's title (a
title two campaigns share followed by its place), each condition by its label in the
page's language (else a description of its settings, as report pages), an imported
campaign's conditions by their declared labels, and says with those names why a ratio is
not shown. Condition ids, campaign folders and plan names stay in the data attributes
(and the downloads), never in the text. Renders without mkdocs."""

from __future__ import annotations

import re

import pytest

from sitegen.cli import main
from sitegen.commands.build import render_site
from sitegen.core.text import Bilingual
from sitegen.plan.labels import condition_labels
from sitegen.plan.plan_models import ConditionSpec, SpeculativeSpec
from tests.builtsites import rendered_page
from tests.conftest import make_plan
from tests.importers.sources import FIXTURES
from tests.pages.test_comparison import on_host, project_with
from tests.sitefixtures import publishable_campaign

LABEL_A = {"ja": "先読み短め", "en": "lookahead, short drafts"}
LABEL_B = {"ja": "先読み（別名）", "en": "lookahead, other name"}
TITLE_A = {"ja": "甲ホストの測定", "en": "Host A run"}
TITLE_B = {"ja": "乙ホストの測定", "en": "Host B run"}
IMPORTED = {"ja": "単独", "en": "alone"}
IDS = ("off", "mtp3", "gpu-a", "gpu-b", "http-c", "solo")
"""Condition ids, campaign folders (the plans' names) and the imported campaign's name."""

DECLARATION = """\
title: {ja: '取り込んだ測定', en: 'Imported run'}
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


def _plan(name: str, title: dict[str, str], label: dict[str, str], renamed: bool = False):
    inputs = make_plan().inputs
    if renamed:  # matched by their text, not their ids
        inputs = [spec.model_copy(update={"id": f"{spec.id}-b"}) for spec in inputs]
    return make_plan(
        name=name,
        title=title,
        inputs=inputs,
        conditions=[
            ConditionSpec(id="off", context_capacity=512),
            ConditionSpec(
                id="mtp3",
                speculative=SpeculativeSpec(mode="ngram-simple", draft_max=4),
                context_capacity=512,
                label=Bilingual(**label),
            ),
        ],
    )


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """Host A and host B (B's inputs renamed, its ``mtp3`` labelled otherwise) compared with
    ``factor: devices`` (``gpus``); with an HTTP run titled like host A's and an imported
    campaign, with ``factor: engine`` (``hosts``)."""
    root = tmp_path_factory.mktemp("comparison-labels")
    data = root / "data"
    publishable_campaign(data, _plan("gpu-a", TITLE_A, LABEL_A), mutate=on_host("B200"))
    publishable_campaign(
        data, _plan("gpu-b", TITLE_B, LABEL_B, renamed=True), mutate=on_host("H100")
    )
    publishable_campaign(
        data,
        _plan("http-c", TITLE_A, LABEL_A),
        mutate=on_host("B200", "llamacpp-http", "http completion"),
    )
    (root / "vllm-serve.json").write_bytes((FIXTURES / "vllm" / "vllm-serve.json").read_bytes())
    (root / "solo.yaml").write_text(DECLARATION)
    argv = ["import", "vllm", str(root / "vllm-serve.json"), "--declare", str(root / "solo.yaml")]
    assert main([*argv, "--campaign", "solo", "--data", str(data)]) == 0
    title = {"ja": "ホスト比較", "en": "Hosts compared"}
    project = project_with(
        root,
        gpus={"id": "gpus", "title": title, "campaigns": ["gpu-a", "gpu-b"], "factor": "devices"},
        hosts={
            "id": "hosts",
            "title": title,
            "campaigns": ["gpu-a", "gpu-b", "http-c", "solo"],
            "factor": "engine",
        },
    )
    rendered = render_site(data, project)
    yield rendered
    rendered.scratch.cleanup()


def _page(site, comparison: str, lang: str) -> str:
    return rendered_page(site, f"compare/{comparison}/index{'' if lang == 'ja' else '.en'}.md")


def _text(html: str) -> str:
    """What a reader sees: the page without its tags (nor their attributes)."""
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html))


def _customer_part(html: str) -> str:
    return _text(html.split('<div class="sg-comparison">', 1)[1])


def _no_ids(text: str) -> None:
    for name in IDS:
        assert not re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])", text), name


@pytest.mark.parametrize("lang", ["ja", "en"])
@pytest.mark.parametrize("comparison", ["gpus", "hosts"])
def test_the_page_names_campaigns_and_conditions_never_their_ids(site, comparison, lang):
    html = _page(site, comparison, lang)
    text = _customer_part(html)
    _no_ids(text)
    assert "off: off" not in text and "mtp3: " not in text
    assert TITLE_A[lang] in text and TITLE_B[lang] in text
    # The headings: the first campaign's label, or a description of the settings.
    headings = [_text(h).strip() for h in re.findall(r"<h3>(.*?)</h3>", html)]
    off = condition_labels(_plan("gpu-a", TITLE_A, LABEL_A))["off"][lang]
    assert off == {"ja": "投機的デコーディングなし", "en": "no speculative decoding"}[lang]
    assert {h.split(" · ")[0] for h in headings if " · " in h} == {off, LABEL_A[lang]}
    # The marks keep the ids.
    marks = {"gpus": 'data-treatment="mtp3"', "hosts": 'data-differing="engine,interface,devices"'}
    assert marks[comparison] in html


@pytest.mark.parametrize("lang", ["ja", "en"])
def test_a_campaign_s_own_label_and_input_show_where_they_differ_from_the_row(site, lang):
    html = _page(site, "gpus", lang)
    rows = re.findall(r"<tr><td>(.*?)</td>", html)
    b_rows = [_text(r) for r in rows if TITLE_B[lang] in r]
    assert b_rows and all("short-b" in r or "padded-b" in r for r in b_rows)
    assert sum(LABEL_B[lang] in r for r in b_rows) == len(b_rows) // 2  # mtp3 rows only
    assert all(_text(r).strip() == TITLE_A[lang] for r in rows if TITLE_A[lang] in r)


@pytest.mark.parametrize("lang", ["ja", "en"])
def test_campaigns_sharing_a_title_are_told_apart_by_their_place(site, lang):
    text = _customer_part(_page(site, "hosts", lang))
    assert f"{TITLE_A[lang]} (1)" in text and f"{TITLE_A[lang]} (3)" in text
    assert f"{TITLE_B[lang]} (2)" not in text  # its title is its own
    assert f"{TITLE_A[lang]} (" not in _customer_part(_page(site, "gpus", lang))


@pytest.mark.parametrize("lang", ["ja", "en"])
def test_an_imported_campaign_shows_its_declared_labels(site, lang):
    html = _page(site, "hosts", lang)
    (table,) = re.findall(r'<table data-claim="imported-figure">.*?</table>', html, re.S)
    text = _text(table)
    assert IMPORTED[lang] in text and LABEL_A[lang] in text and LABEL_B[lang] in text
    _no_ids(text)


def test_what_blocks_a_ratio_names_the_campaigns_by_their_titles(site):
    reasons = {
        lang: [
            _text(span)
            for span in re.findall(
                r'<span data-caveat="C-CONFDIFF">(.*?)</span>', _page(site, "hosts", lang)
            )
        ]
        for lang in ("ja", "en")
    }
    a1, b, a3 = (f"“{TITLE_A['en']} (1)”", f"“{TITLE_B['en']}”", f"“{TITLE_A['en']} (3)”")
    configuration = f"Configuration comparison: {a1}, {b} and {a3} differ in these fields"
    same = f"Not shown to differ from {a1} in the declared factor (engine)"
    assert all(
        configuration in r and same in r and r.endswith(f"no ratio is shown: {b}.")
        for r in reasons["en"][:-1]
    )
    assert all(
        f"「{TITLE_A['ja']} (1)」、「{TITLE_B['ja']}」、「{TITLE_A['ja']} (3)」" in r
        for r in reasons["ja"][:-1]
    )
    for text in reasons["ja"] + reasons["en"]:
        _no_ids(text)


def test_an_unrecorded_field_names_the_campaign_that_did_not_record_it(tmp_path):
    from tests.pages.test_comparison import GPUS, gpu_campaigns

    data = gpu_campaigns(tmp_path, b200_driver=None, b200_recorded=False)
    site = render_site(data, project_with(tmp_path, gpus=GPUS))
    comparison = site.comparisons[0]
    assert all(row.unrecorded_by == ["b200x2"] for row in comparison.rows)
    en = _text(rendered_page(site, "compare/gpus/index.en.md"))
    assert "Not recorded by “Unit test (2)”, so the campaigns are not shown" in en
    ja = _text(rendered_page(site, "compare/gpus/index.md"))
    assert "「単体テスト (2)」は次の項目を記録していない" in ja
    assert "b200x2" not in _customer_part(rendered_page(site, "compare/gpus/index.md"))


def test_the_ids_stay_for_sitegen_check(site):
    hosts = next(c for c in site.comparisons if c.spec.id == "hosts")
    assert hosts.warnings and all(
        w.startswith(("off on input", "mtp3 on input")) for w in hosts.warnings
    )
