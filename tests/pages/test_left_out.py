"""Nothing left out unsaid, on the pages: every campaign a version does not publish
(``publish: false``, ``--skip``, or registered and since deleted) is listed with its id,
plan name and reason on the version's changelog, and those of a report's plan on its
method page, in both languages; the reasons are author text, never markup."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from sitegen.commands.build import render_site
from sitegen.core.errors import DataError
from sitegen.plan.plan_file import campaign_id, plan_sha256
from sitegen.plan.plan_models import Plan
from sitegen.publish.changelog import changelog_docs, compare
from sitegen.records.layout import PLAN_FILE
from sitegen.records.registrations import Registration, append_registration
from tests.builtsites import rendered_page
from tests.conftest import make_plan
from tests.sitefixtures import PROJECT, publishable_campaign

METHOD = {"ja": "reports/unit/method.md", "en": "reports/unit/method.en.md"}
CHANGELOG = {"ja": "changelog.md", "en": "changelog.en.md"}
CAUSE = {
    "ja": "注記で除外（publish: false）",
    "en": "left out by its annotations (publish: false)",
}


def _leave_out(directory: Path, ja: str, en: str) -> None:
    reason = {"publish": False, "unpublished_reason": {"ja": ja, "en": en}}
    (directory / "annotations.yaml").write_text(
        yaml.safe_dump(reason, allow_unicode=True), encoding="utf-8"
    )


def _changelog(rendered) -> dict[str, str]:
    docs = changelog_docs(compare(None, {}), rendered.catalogs, rendered.left_out)
    return {lang: docs[path].decode() for lang, path in CHANGELOG.items()}


def _row(page: str, campaign: str) -> str:
    start = page.index(f'<tr data-campaign="{campaign}"')
    return page[start : page.index("</tr>", start)]


@pytest.fixture(scope="module")
def left_out_site(tmp_path_factory):
    """Three campaigns of plan ``unit``: one published, one left out by its annotations,
    one registered and since deleted; and a campaign of plan ``other`` left out with
    ``--skip``."""
    data = tmp_path_factory.mktemp("left-out") / "data"
    published = publishable_campaign(data, make_plan(repetitions=3)).parent
    annotated = publishable_campaign(data, make_plan(repetitions=2)).parent
    _leave_out(annotated, "全試行の前に設定を誤った", "the engine was *misconfigured*")
    skipped = publishable_campaign(data, make_plan(name="other")).parent
    # Registered for the published campaign's plan, as measured: deleted since.
    plan = Plan.model_validate_json((published / PLAN_FILE).read_bytes())
    deleted = campaign_id(plan, "0badc0de")
    append_registration(
        data,
        Registration(
            campaign_id=deleted,
            plan_name=plan.name,
            plan_sha256=plan_sha256(plan),
            registered_at="2025-01-01T00:00:00.000+00:00",
        ),
    )
    rendered = render_site(data, PROJECT, {skipped.name: "measured on the wrong host"})
    names = {"published": published.name, "annotated": annotated.name}
    return rendered, names | {"skipped": skipped.name, "deleted": deleted}


def test_a_campaign_left_out_is_listed_with_its_reason(left_out_site):
    rendered, names = left_out_site
    assert {r.campaign.directory.name for r in rendered.reports} == {names["published"]}
    for lang, reason in (("ja", "全試行の前に設定を誤った"), ("en", "<em>misconfigured</em>")):
        for page in (rendered_page(rendered, METHOD[lang]), _changelog(rendered)[lang]):
            row = _row(page, names["annotated"])
            assert f"<code>{names['annotated']}</code>" in row and "<code>unit</code>" in row
            assert CAUSE[lang] in row and reason in row


def test_a_skipped_campaign_is_listed_on_the_changelog_not_on_another_plans_method_page(
    left_out_site,
):
    rendered, names = left_out_site
    changelog = _changelog(rendered)
    for lang, cause in (
        ("ja", "このビルドで除外（--skip）"),
        ("en", "left out of this build (--skip)"),
    ):
        row = _row(changelog[lang], names["skipped"])
        assert "<code>other</code>" in row and cause in row
        assert "measured on the wrong host" in row  # one text, as given, in both languages
        assert names["skipped"] not in rendered_page(rendered, METHOD[lang])
    assert 'data-left-out-count="3"' in changelog["en"]


def test_a_deleted_campaign_is_listed_as_discarded_beside_the_campaign_measured_again(
    left_out_site,
):
    rendered, names = left_out_site
    again = {
        "ja": f"同じ計画を {names['published']} として測り直しました。",
        "en": f"Its plan was measured again as {names['published']}.",
    }
    for lang in ("ja", "en"):
        for page in (rendered_page(rendered, METHOD[lang]), _changelog(rendered)[lang]):
            row = _row(page, names["deleted"])
            assert 'data-left-out="discarded"' in row and again[lang] in row


def test_the_method_page_says_when_no_campaign_of_its_plan_was_left_out(tmp_path):
    publishable_campaign(tmp_path / "data")
    rendered = render_site(tmp_path / "data", PROJECT)
    assert rendered.left_out == ()
    method = rendered_page(rendered, METHOD["en"])
    assert "none was left out or discarded" in method and "<tr data-campaign" not in method
    assert 'data-caveat="C-UNPUBLISHED"' in rendered_page(rendered, METHOD["ja"])
    changelog = _changelog(rendered)
    assert 'data-left-out-count="0"' in changelog["ja"]
    assert "除外・破棄したものはありません" in changelog["ja"]


def test_publish_false_without_a_reason_refuses_the_build(tmp_path):
    publishable_campaign(tmp_path / "data", make_plan(name="kept"))
    left = publishable_campaign(tmp_path / "data").parent
    (left / "annotations.yaml").write_text("publish: false\n", encoding="utf-8")
    with pytest.raises(DataError) as caught:
        render_site(tmp_path / "data", PROJECT)
    locations = [issue.location for issue in caught.value.issues]
    assert f"{left / 'annotations.yaml'} → unpublished_reason" in locations


def test_skip_without_a_reason_refuses_the_build(tmp_path):
    publishable_campaign(tmp_path / "data", make_plan(name="kept"))
    left = publishable_campaign(tmp_path / "data").parent
    with pytest.raises(DataError) as caught:
        render_site(tmp_path / "data", PROJECT, [left.name])
    assert [(i.location, i.message.split(",")[0]) for i in caught.value.issues] == [
        (f"--skip {left.name}", "needs a reason")
    ]


HOSTILE = (
    "<script>alert('reason')</script> [link](javascript:alert('link')) "
    '<img src=x onerror=alert("img")> {{ x * y }}'
)
"""Markup, a script link and a template expression (no figure: C-FIGURE would refuse it)."""


def test_reasons_are_author_text_never_markup(tmp_path):
    publishable_campaign(tmp_path / "data", make_plan(name="kept"))
    left = publishable_campaign(tmp_path / "data").parent
    _leave_out(left, HOSTILE, HOSTILE)
    skipped = publishable_campaign(tmp_path / "data", make_plan(name="other")).parent
    rendered = render_site(tmp_path / "data", PROJECT, {skipped.name: HOSTILE})
    pages = [*_changelog(rendered).values()]
    for page in pages:
        assert "<script>alert" not in page and "<img src=x" not in page
        assert 'href="javascript' not in page and "&lt;script&gt;alert" in page
        assert "{{ x * y }}" in page  # never rendered as a template


def test_a_reason_with_a_figure_written_by_hand_is_refused(tmp_path):
    publishable_campaign(tmp_path / "data", make_plan(name="kept"))
    left = publishable_campaign(tmp_path / "data").parent
    _leave_out(left, "生成速度が 12.5 tok/s しか出なかった", "only 12.5 tok/s")
    skipped = publishable_campaign(tmp_path / "data", make_plan(name="other")).parent
    with pytest.raises(DataError) as caught:
        render_site(tmp_path / "data", PROJECT, {skipped.name: "it ran at 3.2 tok/s"})
    figures = {i.location for i in caught.value.issues if i.rule == "C-FIGURE"}
    assert figures == {
        f"{left / 'annotations.yaml'} → unpublished_reason.ja",
        f"{left / 'annotations.yaml'} → unpublished_reason.en",
        f"--skip {skipped.name}",
    }
