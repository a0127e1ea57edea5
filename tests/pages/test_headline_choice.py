"""A headline a customer can quote: the plan chooses the pair, the input(s) and the metric
the summary leads with (and the page says whether it did), latency cards show off → on,
and a ratio whose interval includes 1× or that rests on too few trials is called
inconclusive with its interval on the cards, the home row and the history, never a large
point figure; badges never contradict each other."""

from __future__ import annotations

import json

import pytest
from pydantic import ValidationError

from sitegen.commands.build import render_site
from sitegen.core.errors import DataError
from sitegen.pages.i18n import load_catalogs
from sitegen.plan.plan_file import canonical_plan_json, plan_sha256
from sitegen.plan.plan_models import HeadlineSpec
from sitegen.publish.archive import PublishedVersion
from sitegen.publish.changelog import headline_figures
from sitegen.publish.history import history_files
from sitegen.statistics.headlines import MIN_RATIO_TRIALS
from sitegen.statistics.latency import MIN_VALUES
from sitegen.validation.page_facts import read_page
from tests.builtsites import rendered_page
from tests.conftest import make_plan
from tests.pages.test_kpi_cards import cards
from tests.pages.test_observations import summary_pages
from tests.sitefixtures import PROJECT, copy_project, project_page, publishable_campaign, sweep_plan


def _ratio_cards(page: str) -> list:
    return read_page(cards(page)).claims_of("speed-ratio")


def test_the_plan_chooses_the_pair_the_cards_lead_with(tmp_path):
    plan = sweep_plan(headline=HeadlineSpec(baseline="off-t0", treatment="ng4-t0"))
    publishable_campaign(tmp_path, plan)
    en, ja, _ = summary_pages(tmp_path)
    (card,) = _ratio_cards(en)
    # Plan order would lead with draft length 2 (ng2-t0); the plan chose 4.
    assert card.attrs["data-treatment"] == "ng4-t0"
    # The pair is named by what readers call its conditions, never by their ids.
    chosen = "n-gram lookup (ngram-simple), drafts of up to 4 tokens · temperature 0"
    assert f"Headline chosen in the plan: {chosen}" in en and "every input (q)" in en
    assert "計画で選んだ見出し：n-gram 参照（ngram-simple）、ドラフト最大 4 トークン・温度 0" in ja
    assert "No headline chosen" not in en


def test_the_plan_chooses_one_input_or_every_input(tmp_path):
    every = tmp_path / "every"
    publishable_campaign(every, make_plan(headline=HeadlineSpec(baseline="off", treatment="on")))
    en, ja, _ = summary_pages(every)
    assert [c.attrs["data-input"] for c in _ratio_cards(en)] == ["short", "padded"]
    assert [c.attrs["data-input"] for c in _ratio_cards(ja)] == ["short", "padded"]
    one = tmp_path / "one"
    chosen = HeadlineSpec(baseline="off", treatment="on", input="padded")
    publishable_campaign(one, make_plan(headline=chosen))
    en, ja, _ = summary_pages(one)
    assert [c.attrs["data-input"] for c in _ratio_cards(en)] == ["padded"]
    assert "Headline chosen in the plan" in en and "input “padded”" in en
    assert "入力「padded」" in ja


def test_without_a_headline_the_summary_says_it_leads_with_the_first_pair(tmp_path):
    publishable_campaign(tmp_path, make_plan())
    en, ja, _ = summary_pages(tmp_path)
    assert "No headline chosen in the plan: the first pair in plan order" in en
    assert "計画で見出しは選ばれていません：計画順で比のある最初の組" in ja
    assert [c.attrs["data-input"] for c in _ratio_cards(en)] == ["short"]


def test_the_latency_card_shows_off_then_on_never_on_alone(tmp_path):
    publishable_campaign(tmp_path, make_plan())
    en, ja, _ = summary_pages(tmp_path)
    for page in (en, ja):
        (card,) = read_page(cards(page)).claims_of("latency-percentiles")
        assert card.attrs["data-conditions"] == "off,on"
        html = cards(page)
        start = html.index('data-claim="latency-percentiles"')
        section = html[start : html.index("</section>", start)]
        assert section.index('data-condition="off"') < section.index('data-condition="on"')
        assert (
            "latency/off/short/ttft_s/p50" in section and "latency/on/short/ttft_s/p50" in section
        )


def _no_change(record: dict) -> None:
    """Both conditions at the same rates (40, 50, 60 tok/s by repetition): a ratio of 1×
    whose interval includes 1×."""
    if record["role"] != "measured" or not record["metrics"]:
        return
    repetition = int(record["trial_id"].split("/r")[-1].split("/")[0])
    metrics = record["metrics"]
    metrics["gen_tps"] = 40.0 + 10 * (repetition % 3)
    metrics["generation_s"] = (metrics["generated_tokens"] - 1) / metrics["gen_tps"]


@pytest.fixture(scope="module")
def no_change(tmp_path_factory):
    data = tmp_path_factory.mktemp("no-change")
    publishable_campaign(data, make_plan(), mutate=_no_change)
    return summary_pages(data)


def test_an_interval_including_one_is_inconclusive_on_the_cards(no_change):
    en, ja, site = no_change
    (report,) = site.reports
    row = report.key_figures.headline
    assert row.crosses_one and row.inconclusive
    (card,) = _ratio_cards(en)
    assert card.attrs["data-verdict"] == "inconclusive"
    assert "Inconclusive" in "".join(card.text) and "includes 1.00×" in "".join(card.text)
    assert "結論不能" in cards(ja)
    # The interval is printed, the point figure is not.
    key = f"ratio/off/on/{row.comparison.input_id}/"
    assert f'data-figure="{key}low"' in cards(en) and f'data-figure="{key}ratio"' not in cards(en)


def test_an_interval_including_one_is_inconclusive_on_the_home_row(no_change):
    _, _, site = no_change
    for path, word in (("index.en.md", "inconclusive"), ("index.md", "結論不能")):
        facts = read_page(rendered_page(site, path))
        ratios = facts.claims_of("speed-ratio")
        assert ratios and all(c.attrs["data-verdict"] == "inconclusive" for c in ratios)
        assert all(word in "".join(c.text) for c in ratios)


def test_an_interval_including_one_is_inconclusive_in_the_history_data(no_change):
    _, _, site = no_change
    figures = headline_figures(site.reports)
    (entry,) = figures.values()
    assert entry["headline"]["inconclusive"] is True
    version = PublishedVersion(label="v1", data_epoch=0, figures=figures)
    files = history_files([version], load_catalogs(PROJECT))
    for lang, word in (("en", "inconclusive"), ("ja", "結論不能")):
        (path,) = [p for p in files if p.endswith(f"/{lang}.json")]
        data = json.loads(files[path])
        assert 'data-verdict="inconclusive"' in data["html"] and word in data["html"]
        assert data["data"][0]["marker"]["symbol"] == ["circle-open"]


def test_too_few_trials_on_a_side_is_inconclusive(tmp_path):
    assert MIN_RATIO_TRIALS == 3
    publishable_campaign(tmp_path, make_plan(repetitions=MIN_RATIO_TRIALS - 1, warmups=0))
    en, ja, site = summary_pages(tmp_path)
    row = site.reports[0].key_figures.headline
    assert row.too_few and row.inconclusive
    (card,) = _ratio_cards(en)
    assert card.attrs["data-verdict"] == "inconclusive"
    assert "n=2 on a side, under the 3 trials a quoted ratio needs" in cards(en)
    assert "片側 n=2" in cards(ja)
    method = site.docs[f"reports/{site.reports[0].slug}/method.en.md"].decode()
    assert 'id="term-inconclusive"' in method and "fewer than 3 trials" in method


def test_a_conclusive_ratio_keeps_its_figure(tmp_path):
    publishable_campaign(tmp_path, make_plan())
    en, _, site = summary_pages(tmp_path)
    row = site.reports[0].key_figures.headline
    assert not row.inconclusive
    (card,) = _ratio_cards(en)
    assert card.attrs["data-verdict"] == "conclusive"
    assert f"{row.comparison.ratio:.2f}×" in "".join(card.text)


def test_no_badge_claims_enough_requests_beside_too_few_for_a_p95(tmp_path):
    publishable_campaign(tmp_path, make_plan(repetitions=MIN_VALUES[95] - 1, warmups=0))
    en, ja, _ = summary_pages(tmp_path)
    assert "too few for a P95" in cards(en)
    assert "percentiles from enough requests" not in cards(en)
    assert "十分な数からのパーセンタイル" not in cards(ja)
    assert f"a P95 needs {MIN_VALUES[95]} requests" in cards(en)
    enough = tmp_path / "enough"
    publishable_campaign(enough, make_plan(repetitions=MIN_VALUES[95], warmups=0))
    en, _, _ = summary_pages(enough)
    assert "percentiles from enough requests" in cards(en) and "too few" not in cards(en)


def test_a_plan_without_headline_keeps_its_hash():
    # The hashes of these plans before ``headline`` existed.
    assert plan_sha256(make_plan()) == (
        "7a247146c0c82ac285197c13afbb6fc027f0e80214b770cf879b4e36bc562466"
    )
    assert plan_sha256(sweep_plan()) == (
        "8aa50f9e6a712e1f7f9b50be460b7a79ee1a5e5f2cb4eeeea874e0c56d53b545"
    )
    assert '"headline"' not in canonical_plan_json(make_plan())
    chosen = make_plan(headline=HeadlineSpec(baseline="off", treatment="on"))
    assert plan_sha256(chosen) != plan_sha256(make_plan())


@pytest.mark.parametrize(
    ("headline", "message"),
    [
        ({"baseline": "off", "treatment": "nowhere"}, "headline.treatment is not a condition"),
        ({"baseline": "off", "treatment": "on", "input": "x"}, "headline.input is not"),
        ({"baseline": "on", "treatment": "on"}, "must be different conditions"),
        ({"baseline": "off", "treatment": "on", "metric": "ttft"}, "gen_tps"),
    ],
)
def test_a_headline_naming_what_the_plan_lacks_is_refused(headline, message):
    with pytest.raises(ValidationError, match=message):
        make_plan(headline=headline)


def _home_inputs(site, path: str = "index.en.md") -> list[str]:
    facts = read_page(rendered_page(site, path))
    return [c.attrs["data-input"] for c in facts.claims if c.attrs.get("data-report")]


def test_the_home_rows_follow_the_plans_chosen_input(tmp_path):
    chosen = HeadlineSpec(baseline="off", treatment="on", input="padded")
    publishable_campaign(tmp_path, make_plan(headline=chosen))
    _, _, site = summary_pages(tmp_path)
    assert _home_inputs(site) == ["padded"] and _home_inputs(site, "index.md") == ["padded"]


def test_an_overview_page_chooses_a_campaigns_headline(tmp_path):
    data = tmp_path / "data"
    publishable_campaign(data, make_plan())
    project = copy_project(tmp_path / "project")
    for lang in ("ja", "en"):
        page = project_page(project, f"{lang}/overview.md")
        page.write_text(
            page.read_text().replace(
                "{{ overview() }}",
                '{{ overview(headlines={"unit": {"baseline": "off", "treatment": "on", '
                '"input": "padded"}}) }}',
            )
        )
    site = render_site(data, project)
    try:
        assert _home_inputs(site, "overview/index.en.md") == ["padded"]
        assert _home_inputs(site) == ["short", "padded"]  # the home page chooses nothing
    finally:
        site.scratch.cleanup()
    page = project_page(project, "en/overview.md")
    page.write_text(page.read_text().replace('"padded"', '"nowhere"'))
    with pytest.raises(DataError, match=r"headlines\['unit'\]\.input: not a speed input id"):
        render_site(data, project)
