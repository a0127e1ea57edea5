"""Reports live at ``reports/<plan name>/``; two published campaigns of plans with the
same name are refused, naming both."""

from __future__ import annotations

import pytest

from sitegen.build import build_site
from sitegen.errors import DataError
from tests.conftest import make_plan
from tests.sitefixtures import PROJECT, publishable_campaign


def test_the_report_address_is_the_plan_name(tmp_path):
    campaign = publishable_campaign(tmp_path / "data", make_plan(name="h100-mtp")).parent
    build_site(tmp_path / "data", tmp_path / "site", PROJECT, version="v1")
    reports = tmp_path / "site" / "v" / "v1" / "reports"
    assert [p.name for p in reports.iterdir()] == ["h100-mtp"]
    method = (reports / "h100-mtp" / "method" / "index.html").read_text(encoding="utf-8")
    assert campaign.name.rsplit("-", 1)[1] in method  # the plan hash stays on the method page


def test_two_published_campaigns_with_one_plan_name_are_refused_naming_both(tmp_path):
    first = publishable_campaign(tmp_path / "data", make_plan(repetitions=2)).parent
    second = publishable_campaign(tmp_path / "data", make_plan(repetitions=3)).parent
    with pytest.raises(DataError) as caught:
        build_site(tmp_path / "data", tmp_path / "site", PROJECT, version="v1")
    message = str(caught.value)
    assert first.name in message and second.name in message and "reports/unit/" in message
    assert not (tmp_path / "site").exists()
    (first / "annotations.yaml").write_text("publish: false\n", encoding="utf-8")
    assert build_site(tmp_path / "data", tmp_path / "site", PROJECT, version="v1").outcome == (
        "published"
    )
