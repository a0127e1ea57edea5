"""docs/project.md, "Where to change what": each recipe adds a toy instance through exactly
the places it names, and the build picks it up."""

from __future__ import annotations

import dataclasses
import shutil
from pathlib import Path

import pytest
from pydantic import Field

import sitegen.core.project
from sitegen.commands.build import render_site
from sitegen.core.errors import ConfigError, DataError
from sitegen.engine.fake import FakeEngine
from sitegen.measure import run_campaign
from sitegen.pages import directives, render
from sitegen.pages.directives.common import render_partial
from sitegen.plan import engine_registry as registry
from sitegen.plan.engine_options import FakeOptions
from sitegen.records.campaign import read_campaigns
from sitegen.statistics.report import Report
from sitegen.validation import rules
from tests.conftest import make_plan
from tests.sitefixtures import PROJECT, copy_project, project_page, publishable_campaign


@pytest.fixture
def project(tmp_path) -> Path:
    return copy_project(tmp_path / "project")


@pytest.fixture
def data(tmp_path) -> Path:
    publishable_campaign(tmp_path / "data")
    return tmp_path / "data"


class ToyOptions(FakeOptions):
    """``toy``: a recipe test's engine."""

    words: int = Field(default=3, ge=1)
    """Words per answer."""


class ToyEngine(FakeEngine):
    """The fake engine's timing under another name, with its own options."""

    engine_id = "toy"
    options: ToyOptions

    def describe(self):
        described = super().describe()
        engine = described.engine.model_copy(update={"id": "toy"})
        return dataclasses.replace(described, engine=engine)


def test_add_an_engine(tmp_path, monkeypatch):
    # 1. the engine module; 2. its options model; 3. its row in ENGINES.
    toy = registry.EngineEntry(
        "toy",
        "tests.test_recipes:ToyEngine",
        "tests.test_recipes:ToyOptions",
        "toy engine (a fixed value)",
        publishable=True,
        description="a recipe test's engine",
    )
    monkeypatch.setitem(registry.ENGINES, "toy", toy)
    plan = make_plan(engine="toy")
    plan = plan.model_copy(
        update={
            "conditions": [
                c.model_copy(update={"engine_options": {"words": 5}}) for c in plan.conditions
            ]
        }
    )
    result = run_campaign(plan, tmp_path / "data")
    campaigns, issues = read_campaigns(tmp_path / "data")
    assert not issues and result.failed == 0
    assert {r.provenance.engine.id for r in campaigns[0].iter_full_records()} == {"toy"}
    assert render_site(tmp_path / "data", PROJECT).records == len(campaigns[0])
    bad = make_plan(engine="toy")
    bad = bad.model_copy(
        update={
            "conditions": [
                c.model_copy(update={"engine_options": {"wrds": 5}}) for c in bad.conditions
            ]
        }
    )
    with pytest.raises(ConfigError, match="'toy' has no option 'wrds'"):
        registry.validate_engine_options(bad)


def test_add_a_page(project, data, monkeypatch):
    # 1. content/<lang>/report/<page>.md in both languages; 2. REPORT_PAGES.
    for lang, heading in (("ja", "おもちゃ"), ("en", "Toy")):
        page = project / "content" / lang / "report" / "toy.md"
        page.parent.mkdir(parents=True, exist_ok=True)
        page.write_text(f"# {heading}\n")
    monkeypatch.setitem(render.REPORT_PAGES, "toy", lambda report: True)
    docs = render_site(data, project).docs
    assert any(path.endswith("/toy.md") for path in docs)
    assert any(path.endswith("/toy.en.md") for path in docs)


def test_add_a_statistic(project, data, tmp_path, monkeypatch):
    # 1. the statistic on Report (statistics/report.py); 2. a directive (a function of
    # pages/directives/, registered by name with @directive);
    # 3. its partial (sitegen/defaults/theme/partials/, here in a copy of the defaults).
    def toy_total_tokens(report: Report) -> int:
        return int(report.usable_speed_trials["generated_tokens"].sum())

    def toy_total(ctx: directives.PageContext):
        return render_partial(ctx, "toy.html", total=ctx.require_report().toy_total_tokens)

    monkeypatch.setattr(Report, "toy_total_tokens", property(toy_total_tokens), raising=False)
    monkeypatch.setitem(directives.DIRECTIVES, "toy_total", toy_total)
    defaults = tmp_path / "defaults"
    shutil.copytree(sitegen.core.project.DEFAULTS, defaults)
    monkeypatch.setattr(sitegen.core.project, "DEFAULTS", defaults)
    (defaults / "theme" / "partials" / "toy.html").write_text(
        '<p class="toy-total">{{ total|num }}</p>'
    )
    for lang in ("ja", "en"):
        speed = project_page(project, f"{lang}/report/speed.md")
        speed.write_text(speed.read_text() + "\n{{ toy_total() }}\n")
    site = render_site(data, project)
    expected = int(site.reports[0].usable_speed_trials["generated_tokens"].sum())
    page = next(v for k, v in site.docs.items() if k.endswith("/speed.md")).decode()
    assert f'<p class="toy-total">{expected:,}</p>' in page


def test_add_a_caveat_rule(project, data, tmp_path, monkeypatch):
    # 1. an entry of the rule catalog (validation/rules.yaml); 2. a registered check
    # (validation/campaign_checks.py, page_checks.py or report_checks.py, by its scope).
    catalog = tmp_path / "rules.yaml"
    catalog.write_text(
        rules.RULE_CATALOG.read_text(encoding="utf-8")
        + """  - id: C-TOY
    title: {ja: "おもちゃ", en: "Toy"}
    text: {ja: "試行は三つまで。", en: "At most three trials."}
    fix: {ja: "試行を減らすこと。", en: "Run fewer trials."}
"""
    )
    monkeypatch.setattr(rules, "RULE_CATALOG", catalog)
    monkeypatch.setattr(rules, "_CHECKS", list(rules.registered_checks()))
    rules.load_rules.cache_clear()

    @rules.check("C-TOY", "campaign")
    def _at_most_three_trials(campaign):
        if len(campaign) <= 3:
            return []
        return [rules.violation("C-TOY", str(campaign.records_path), "more than three")]

    try:
        with pytest.raises(DataError) as caught:
            render_site(data, project)
        assert "[C-TOY]" in str(caught.value) and "Run fewer trials." in str(caught.value)
        assert "C-TOY" in {r.id for r in rules.load_rules()}
    finally:
        rules.load_rules.cache_clear()
