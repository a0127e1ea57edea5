"""Reports live at ``reports/<plan name>/``; two published campaigns of plans with the
same name are refused, naming both."""

from __future__ import annotations

import pytest

from sitegen.commands.build import render_site
from sitegen.core.errors import DataError
from tests.builtsites import rendered_page, rendered_reports
from tests.conftest import make_plan
from tests.sitefixtures import PROJECT, publishable_campaign


def test_the_report_address_is_the_plan_name(tmp_path):
    campaign = publishable_campaign(tmp_path / "data", make_plan(name="h100-mtp")).parent
    rendered = render_site(tmp_path / "data", PROJECT)
    assert rendered_reports(rendered) == {"h100-mtp"}
    method = rendered_page(rendered, "reports/h100-mtp/method.md")
    assert campaign.name.rsplit("-", 1)[1] in method  # the plan hash stays on the method page


def test_two_published_campaigns_with_one_plan_name_are_refused_naming_both(tmp_path):
    first = publishable_campaign(tmp_path / "data", make_plan(repetitions=2)).parent
    second = publishable_campaign(tmp_path / "data", make_plan(repetitions=3)).parent
    with pytest.raises(DataError) as caught:
        render_site(tmp_path / "data", PROJECT)
    message = str(caught.value)
    assert first.name in message and second.name in message and "reports/unit/" in message
    (first / "annotations.yaml").write_text(
        "publish: false\nunpublished_reason: {ja: 試し測り, en: a trial run}\n", encoding="utf-8"
    )
    assert rendered_reports(render_site(tmp_path / "data", PROJECT)) == {"unit"}
