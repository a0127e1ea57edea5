"""The summary at a glance: cards first, each a claim the rules check like any other (a
card without its caveat is refused), the same figures as the sentences below them, a
baseline-only campaign with the cards of what it measured, and a glossary for the terms."""

from __future__ import annotations

import re

from sitegen.pages.render import check_rendered
from sitegen.plan.plan_models import ConditionSpec
from sitegen.statistics.latency import MIN_VALUES
from sitegen.validation.page_facts import read_page
from tests.conftest import make_plan
from tests.pages.test_observations import summary_pages
from tests.sitefixtures import publishable_campaign


def cards(page: str) -> str:
    return page[
        page.index('<div class="sg-kpis">') : page.index("</div>", page.index("truncation"))
    ]


def test_cards_lead_the_summary_and_carry_every_caveat(tmp_path):
    publishable_campaign(tmp_path, make_plan())
    en, ja, site = summary_pages(tmp_path)
    (report,) = site.reports
    for page in (en, ja):
        assert page.index('class="sg-kpis"') < page.index('class="sg-headline"')
    facts = read_page(cards(en))
    (card,) = facts.claims_of("speed-ratio")
    headline = next(r for r in report.headline if r.comparison.ratio is not None)
    assert card.attrs["data-treatment"] == headline.comparison.treatment
    assert f"{headline.comparison.ratio:.2f}×" in "".join(card.text)
    assert {"C-CONFDIFF", "C-CAPACITY", "C-ORDER", "C-UNITS", "C-HARDWARE", "C-SPREAD"} <= (
        facts.effective_caveats(card)
    )
    kinds = [claim.kind for claim in facts.claims]
    assert kinds.count("speed-table") == 2  # the rate off → on, the acceptance
    assert "latency-percentiles" in kinds
    # The full caveat is one hover away: every note carries it as its title.
    assert all(
        m.group(1).strip() for m in re.finditer(r'class="sg-kpi-note"[^>]*title="([^"]*)"', en)
    )
    # A card whose interval is taken away breaks C-SPREAD, like a sentence would.
    path = f"reports/{report.slug}/index.en.md"
    broken = {
        **site.docs,
        path: en.replace(
            'class="sg-kpi-sub" data-caveat="C-SPREAD"', 'class="sg-kpi-sub"', 1
        ).encode(),
    }
    assert "C-SPREAD" in {issue.rule for issue in check_rendered(broken, site.reports)}


def test_a_baseline_only_campaign_gets_cards_of_what_it_measured(tmp_path):
    plan = make_plan(conditions=[ConditionSpec(id="off", context_capacity=512)])
    publishable_campaign(tmp_path, plan)
    en, ja, _ = summary_pages(tmp_path)
    facts = read_page(cards(en))
    kinds = [claim.kind for claim in facts.claims]
    assert "speed-ratio" not in kinds
    assert "speed-table" in kinds and "latency-percentiles" in kinds
    assert "Requests that hit the output cap" in en and "出力上限に達したリクエスト" in ja


def test_p95_on_a_card_only_from_enough_requests(tmp_path):
    publishable_campaign(tmp_path, make_plan(repetitions=MIN_VALUES[95], warmups=0))
    en, _, _ = summary_pages(tmp_path)
    percentiles = {c.attrs["data-p"] for c in read_page(cards(en)).claims_of("percentile")}
    assert percentiles == {"50", "95"}
    few = tmp_path / "few"
    publishable_campaign(few, make_plan(repetitions=MIN_VALUES[95] - 1, warmups=0))
    en, _, _ = summary_pages(few)
    assert {c.attrs["data-p"] for c in read_page(cards(en)).claims_of("percentile")} == {"50"}
    assert "too few for a P95" in en


def test_the_method_page_defines_every_term_the_cards_use(tmp_path):
    publishable_campaign(tmp_path, make_plan())
    en, _, site = summary_pages(tmp_path)
    (report,) = site.reports
    method = site.docs[f"reports/{report.slug}/method.en.md"].decode()
    for term in re.findall(r'<abbr class="sg-term" title="[^"]+">([^<]+)</abbr>', en):
        assert f">{term}</dt>" in method
    assert 'id="term-itl"' in method and 'id="term-capacity"' in method
