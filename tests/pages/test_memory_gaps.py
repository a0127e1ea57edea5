"""No empty memory table: a condition without memory figures is named with the reason."""

from __future__ import annotations

from sitegen.commands.build import render_site
from sitegen.plan.plan_models import ConditionSpec
from sitegen.statistics.system import memory_gaps
from tests.builtsites import rendered_page
from tests.conftest import make_plan
from tests.sitefixtures import PROJECT, publishable_campaign, report_address


def test_memory_gaps_name_the_reason():
    plan = make_plan(
        conditions=[
            ConditionSpec(id="local", context_capacity=512),
            ConditionSpec(
                id="remote",
                context_capacity=512,
                engine_options={"base_url": "http://gpu-node:8080"},
            ),
            ConditionSpec(
                id="here", context_capacity=512, engine_options={"base_url": "http://127.0.0.1:9"}
            ),
        ]
    )
    gaps = memory_gaps(plan, {"local"}, ["local", "remote", "here"])
    assert gaps == {"remote": "remote-server", "here": "no-probe"}


def test_a_campaign_without_memory_figures_says_so_instead_of_an_empty_table(tmp_path):
    def no_memory(record: dict) -> None:
        record["peak_memory"] = []

    slug = report_address(publishable_campaign(tmp_path / "data", mutate=no_memory).parent)
    rendered = render_site(tmp_path / "data", PROJECT)
    for suffix, words in (("", "メモリは未測定です"), (".en", "memory not measured")):
        html = rendered_page(rendered, f"reports/{slug}/speed{suffix}.md")
        assert "sg-memory-table" not in html
        assert html.count(words) == 2  # both conditions
