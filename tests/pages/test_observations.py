"""No figure from a missing value, a rounding or absent evidence: where a ratio or a count
cannot be given, the summary page states what was observed (medians, n) instead."""

from __future__ import annotations

from pathlib import Path

import yaml

from sitegen.commands.build import render_site
from sitegen.pages.render import check_rendered
from tests.conftest import make_plan
from tests.sitefixtures import PROJECT, publishable_campaign


def summary_pages(data: Path, annotations: dict | None = None) -> tuple[str, str, object]:
    """The en and ja summary pages of the one campaign under ``data``, and the site."""
    if annotations is not None:
        (directory,) = (data / "campaigns").iterdir()
        (directory / "annotations.yaml").write_text(yaml.safe_dump(annotations))
    site = render_site(data, PROJECT)
    (report,) = site.reports
    docs = site.docs
    return (
        docs[f"reports/{report.slug}/index.en.md"].decode(),
        docs[f"reports/{report.slug}/index.md"].decode(),
        site,
    )


def no_figure_from_nothing(page: str) -> None:
    assert "-×" not in page and "- %" not in page and "-倍" not in page
    assert "0 of 0" not in page


def test_a_missing_median_is_an_observation_never_a_dash_ratio(tmp_path):
    def no_rate(record: dict) -> None:
        if record["condition_id"] == "on" and record["input_id"] == "short" and record["metrics"]:
            record["metrics"]["gen_tps"] = None

    publishable_campaign(tmp_path, make_plan(), mutate=no_rate)
    en, ja, _ = summary_pages(tmp_path)
    no_figure_from_nothing(en)
    no_figure_from_nothing(ja)
    assert (
        "no generation rate was measured for n-gram lookup (ngram-simple), drafts of up to 4 tokens"
        in en
    )
    assert 'data-observation="no-rate"' in ja
    # padded keeps its ratio, in the headline and on the card that leads the summary
    assert en.count('data-claim="speed-ratio"') == 2
    assert (
        en.count(
            'data-claim="speed-ratio" data-factor-only="true" data-healthy="true" data-treatment="on" data-input="padded"'
        )
        == 2
    )


def test_one_trial_a_side_states_medians_and_n_without_a_ratio(tmp_path):
    publishable_campaign(tmp_path, make_plan(repetitions=1))
    en, ja, site = summary_pages(tmp_path)
    assert 'data-claim="speed-ratio"' not in en and 'data-claim="speed-ratio"' not in ja
    assert en.count('data-observation="no-interval"') == 2
    assert "(n=1)" in en and "at least 2 trials on each side" in en
    assert all(c.ratio is None for c in site.reports[0].comparisons)


def test_an_input_without_drafts_is_not_made_healthy_by_another(tmp_path):
    """The audit's case: drafts pooled over inputs made an input with 0 drafts in all its
    trials look healthy, and its 1.04× published as the declared factor's effect."""

    def none_on_short(record: dict) -> None:
        if record["condition_id"] == "on" and record["input_id"] == "short" and record["metrics"]:
            record["metrics"].update(draft_proposed=0, draft_accepted=0)

    publishable_campaign(tmp_path, make_plan(), mutate=none_on_short)
    en, _, site = summary_pages(tmp_path)
    ratios = {c.input_id: c.ratio for c in site.reports[0].comparisons}
    assert ratios["short"] is None and ratios["padded"] is not None
    assert 'data-claim="speculation-health" data-treatment="on" data-input="short"' in en
    assert 'data-claim="speed-ratio" data-factor-only="true" data-healthy="true" ' in en


def test_absent_draft_counts_are_stated_never_a_ratio(tmp_path):
    """The audit's case: an engine that reports no draft counts got 0.60× as the effect of
    speculation."""

    def no_counts(record: dict) -> None:
        if record["condition_id"] == "on" and record["metrics"]:
            record["metrics"].update(draft_proposed=None, draft_accepted=None)

    publishable_campaign(tmp_path, make_plan(), mutate=no_counts)
    en, ja, site = summary_pages(tmp_path)
    assert all(c.ratio is None for c in site.reports[0].comparisons)
    assert 'data-claim="speed-ratio"' not in en
    assert en.count("its engine reported no draft counts (3 trials)") == 2
    assert ja.count("エンジンがドラフト数を報告していません") == 2


def test_a_threshold_keeps_its_declared_precision_and_exact_bound(tmp_path):
    """The audit's case: ``above: 49.96`` printed as "above 50.0 … in 3 of 3" while a trial
    ran at 49.97."""
    rates = iter([49.97, 50.5, 51.0, 49.5, 49.96, 50.0])

    def near_the_bound(record: dict) -> None:
        if record["condition_id"] == "off" and record["role"] == "measured":
            metrics = record["metrics"]
            metrics["gen_tps"] = next(rates)
            metrics["generation_s"] = (metrics["generated_tokens"] - 1) / metrics["gen_tps"]

    publishable_campaign(tmp_path, make_plan(), mutate=near_the_bound)
    annotations = {"thresholds": [{"condition_id": "off", "input_id": "short", "above": 49.96}]}
    en, ja, site = summary_pages(tmp_path, annotations)
    assert "above 49.96 tokens/s in 3 of 3 trials" in en and "above 50.0" not in en
    assert "49.96 tokens/s を超えたのは 3 回中 3 回" in ja
    (result,) = site.reports[0].thresholds
    assert (result.k, result.n, result.above_decimals) == (3, 3, 2)


def test_a_threshold_without_usable_trials_is_an_observation(tmp_path):
    def no_rate(record: dict) -> None:
        if record["condition_id"] == "off" and record["metrics"]:
            record["metrics"]["gen_tps"] = None

    publishable_campaign(tmp_path, make_plan(), mutate=no_rate)
    annotations = {"thresholds": [{"condition_id": "off", "above": 50}]}
    en, ja, site = summary_pages(tmp_path, annotations)
    no_figure_from_nothing(en)
    assert "no usable trial has a generation rate, so nothing was observed against 50" in en
    assert "in 0 of" not in en and "0 回中" not in ja
    warnings = site.reports[0].observation_warnings
    assert "threshold gen_tps above 50.0 for off on input all: no usable trials" in " ".join(
        warnings
    )


def test_an_interval_that_is_not_one_is_refused(tmp_path):
    publishable_campaign(tmp_path, make_plan())
    en, _, site = summary_pages(tmp_path)
    (report,) = site.reports
    path = f"reports/{report.slug}/index.en.md"
    start = en.index('data-ci="') + len('data-ci="')
    interval = en[start : en.index('"', start)]
    for fake in ("none", "", "1.1–", "n/a"):
        broken = en.replace(f'data-ci="{interval}"', f'data-ci="{fake}"', 1)
        issues = check_rendered({**site.docs, path: broken.encode()}, site.reports)
        assert "C-SPREAD" in {i.rule for i in issues}, fake
    assert check_rendered(site.docs, site.reports) == []
