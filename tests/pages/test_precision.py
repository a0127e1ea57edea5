"""Precision and limits beside every figure (issue 12).

The campaign carries the seed report's published per-trial generation rates (H100×2,
llama.cpp), so the rendered pages must print the seed's medians to the digit: tok/s with 2
decimals, a ratio as × with 2 decimals and a signed percentage with 1 decimal, the same
figure on the summary, in the speed table and in ``speed_summary.csv``.
"""

from __future__ import annotations

import csv
import io
import re
from pathlib import Path

import pytest

from sitegen.commands.build import render_site
from sitegen.core.project import packaged_theme
from sitegen.pages.i18n import load_catalogs
from sitegen.plan.plan_models import ConditionSpec, DocumentSpec, InputSpec, SpeculativeSpec
from tests.builtsites import unmarked
from tests.conftest import make_plan
from tests.sitefixtures import PROJECT, publishable_campaign, report_address
from tests.statistics.test_quality_records import quality_plan

SEED_RATES = {
    ("off", "in8k"): [41.28, 51.22, 51.15],
    ("on", "in8k"): [61.52, 62.27, 62.78],
    ("off", "in32k"): [49.72, 49.73, 49.77],
    ("on", "in32k"): [55.77, 53.99, 57.01],
}
"""Per-trial tok/s of the seed report, 8,193- and 32,768-token inputs, MTP off / on."""

EXPECTED = {
    # input: (off median, on median, en ratio, ja ratio)
    "in8k": ("51.15", "62.27", "1.22× (+21.7%)", "1.22倍（+21.7%）"),
    # 55.77 / 49.73 = 1.12146 → +12.1 %. The seed report says +12.2 %: it divided the
    # unrounded medians; from the published 2-decimal values the change is +12.1 %.
    "in32k": ("49.73", "55.77", "1.12× (+12.1%)", "1.12倍（+12.1%）"),
}
RANGES = ["41.28–51.22", "61.52–62.78", "49.72–49.77", "53.99–57.01"]

DRAFTS = [(10, 20), (30, 40), (5, 40)]
"""(accepted, proposed) per repetition of the drafting condition: pooled 45/100 = 45.0 %,
per-trial rates 50 %, 75 %, 12.5 % → median 50.0 %."""

CAP, CAPACITY = 16, 65536


def _seed_plan():
    return make_plan(
        conditions=[
            ConditionSpec(id="off", context_capacity=CAPACITY),
            ConditionSpec(
                id="on",
                speculative=SpeculativeSpec(mode="draft-mtp", draft_max=3),
                context_capacity=CAPACITY,
            ),
        ],
        inputs=[
            InputSpec(id="in8k", text="q one", target_prompt_tokens=8193, max_output_tokens=CAP),
            InputSpec(id="in32k", text="q two", target_prompt_tokens=32768, max_output_tokens=CAP),
        ],
    )


def _seed_rates(record: dict) -> None:
    """Give each measured trial the seed's rate, consistently: generation_s is the span
    that rate implies for the record's own token count (the build checks it within 1 %)."""
    if record["role"] != "measured" or record["status"] != "ok":
        return
    condition, input_id, repetition = record["trial_id"].split("/")
    index = int(repetition.removeprefix("r"))
    metrics = record["metrics"]
    rate = SEED_RATES[(condition, input_id)][index]
    metrics["gen_tps"] = rate
    metrics["generation_s"] = (metrics["generated_tokens"] - 1) / rate
    if condition == "on":
        metrics["draft_accepted"], metrics["draft_proposed"] = DRAFTS[index]


def _text(body: str | bytes | Path) -> str:
    """A docs entry as text: pages are bytes, downloads a file in the build's scratch."""
    if isinstance(body, Path):
        body = body.read_bytes()
    return body.decode("utf-8-sig") if isinstance(body, bytes) else body


@pytest.fixture(scope="module")
def seed_site(tmp_path_factory):
    data = tmp_path_factory.mktemp("precision") / "data"
    records = publishable_campaign(data, _seed_plan(), mutate=_seed_rates)
    site = render_site(data, PROJECT)
    slug = report_address(records.parent)
    yield {
        name: _text(site.docs[f"reports/{slug}/{path}"])
        for name, path in {
            "summary.ja": "index.md",
            "summary.en": "index.en.md",
            "speed.ja": "speed.md",
            "speed.en": "speed.en.md",
            "csv": "downloads/speed_summary.csv",
        }.items()
    }
    site.scratch.cleanup()


def _speed_table(page: str) -> str:
    """The speed summary's tables: the rates, then the limits they were measured under."""
    start = page.index('data-claim="speed-table"')
    return page[start : page.index('<p class="sg-caveat">', start)]


@pytest.mark.parametrize("lang", ["ja", "en"])
def test_summary_prints_the_seed_medians_and_ratios(seed_site, lang):
    summary = unmarked(seed_site[f"summary.{lang}"])
    for off, on, ratio_en, ratio_ja in EXPECTED.values():
        assert f"{off} tokens/s" in summary and f"{on} tokens/s" in summary
        assert (ratio_ja if lang == "ja" else ratio_en) in summary
    assert "51.1 tokens/s" not in summary and "62.3 tokens/s" not in summary


@pytest.mark.parametrize("lang", ["ja", "en"])
def test_speed_table_and_download_agree_with_the_summary_to_the_digit(seed_site, lang):
    summary = unmarked(seed_site[f"summary.{lang}"])
    table = _speed_table(seed_site[f"speed.{lang}"])
    rows = list(csv.DictReader(io.StringIO(seed_site["csv"])))
    assert len(rows) == 4
    for row in rows:
        # The summary, the table and the download: the same median, rounded the same way.
        printed = f"{float(row['gen_tps_median']):.2f}"
        assert printed == EXPECTED[row["input_id"]][0 if row["condition_id"] == "off" else 1]
        assert f"{printed} tokens/s" in summary
        figure = f"speed/{row['condition_id']}/{row['input_id']}/gen_tps_median"
        assert f'<td class="sg-num"><span data-figure="{figure}">{printed}</span></td>' in table
    for span in RANGES:
        assert f'<td class="sg-num">{span}</td>' in unmarked(table)
    # Times in seconds with 2 decimals, rates with 2: no figure with 3 or more decimals.
    assert not re.findall(r"\d\.\d{3}", table)


def test_partials_print_the_cells_their_directives_make_and_build_no_figure_id():
    """A marked figure is a cell made once in Python (value, printed text, id): no partial
    joins an id into a ``data-figure`` or looks a figure up (an imported report's own
    ``figure`` macro prints its source tool's figures, which the audit does not recompute)."""
    for partial in sorted((packaged_theme() / "partials").glob("*.html")):
        text = partial.read_text(encoding="utf-8")
        assert "{{" not in "".join(re.findall(r'data-figure="([^"]*)"', text)), partial.name
        if "macro figure(" not in text:
            assert "figure(" not in text, partial.name


@pytest.mark.parametrize("lang", ["ja", "en"])
def test_acceptance_pooled_and_per_trial_median_labelled(seed_site, lang):
    t = load_catalogs(PROJECT)[lang].t
    shown = t(
        "acceptance.both",
        pooled=t("acceptance.pooled", rate="45.0", accepted="45", proposed="100"),
        median=t("acceptance.trial_median", rate="50.0", n="3"),
    )
    not_applicable = t("acceptance.not_applicable")
    for page in (seed_site[f"summary.{lang}"], _speed_table(seed_site[f"speed.{lang}"])):
        assert unmarked(page).count(shown) == 2  # the drafting condition on both inputs
        assert page.count(not_applicable) == 2  # speculative off on both inputs
        assert "-%" not in page and "nan" not in page.lower()
    rows = {
        (r["condition_id"], r["input_id"]): r for r in csv.DictReader(io.StringIO(seed_site["csv"]))
    }
    assert float(rows[("on", "in8k")]["acceptance"]) == pytest.approx(0.45)
    assert float(rows[("on", "in8k")]["acceptance_median"]) == pytest.approx(0.5)
    assert rows[("off", "in8k")]["acceptance"] == rows[("off", "in8k")]["acceptance_median"] == ""


@pytest.mark.parametrize("lang", ["ja", "en"])
def test_cap_capacity_and_filled_input_beside_every_speed_figure(seed_site, lang):
    t = load_catalogs(PROJECT)[lang].t
    summary = seed_site[f"summary.{lang}"]
    for filled in ("8,193", "32,768"):
        limits = t("caveat.limits", cap=CAP, capacity="65,536", prompt=filled)
        assert f'<span data-caveat="C-CAPACITY">{limits}</span>' in summary
    table = _speed_table(seed_site[f"speed.{lang}"])
    assert t("col.output_cap") in table
    assert table.count(f'<td class="sg-num">{CAP}</td>') == 4
    assert table.count("8,193 / 65,536") == 2 and table.count("32,768 / 65,536") == 2
    rows = list(csv.DictReader(io.StringIO(seed_site["csv"])))
    assert {int(r["max_output_tokens"]) for r in rows} == {CAP}


def test_quality_results_show_their_output_caps(tmp_path):
    document = DocumentSpec(task_id="doc", n_records=5, seed=2, max_output_tokens=48)
    plan = quality_plan(documents=[document], max_output_tokens=32)
    records = publishable_campaign(tmp_path / "data", plan)
    site = render_site(tmp_path / "data", PROJECT)
    slug = report_address(records.parent)
    for lang, suffix in (("ja", ""), ("en", ".en")):
        t = load_catalogs(PROJECT)[lang].t
        quality = _text(site.docs[f"reports/{slug}/quality{suffix}.md"])
        summary = _text(site.docs[f"reports/{slug}/index{suffix}.md"])
        problems = re.escape(t("quality.limits_problems")) + r' <span data-caveat="C-CAPACITY">'
        problems += re.escape(t("caveat.limits", cap=32, capacity=512, prompt="@")).replace(
            "@", r"[\d,–]+"
        )
        assert re.search(problems, summary) and re.search(problems, quality)
        documents = re.escape(t("quality.limits_document", task="doc") + " ")
        documents += r'<span data-caveat="C-CAPACITY">'
        documents += re.escape(t("caveat.limits", cap=48, capacity=512, prompt="@")).replace(
            "@", r"[\d,–]+"
        )
        assert re.search(documents, quality)
    site.scratch.cleanup()
