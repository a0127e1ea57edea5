"""A hostile or careless author: sandboxed content, the figure policy (C-FIGURE), titles
and author text that never become markup, and the content fixes of the caveats."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from sitegen.commands.build import RenderedSite, render_site
from sitegen.core.errors import DataError
from sitegen.core.project import content_search_path, packaged_theme
from sitegen.core.text import LANGUAGES, Bilingual
from sitegen.pages.author_text import render_author_text
from sitegen.pages.content import content_environment
from sitegen.pages.directives import (
    PageContext,
    directive_functions,
    html_environment,
    markdown_inline_text,
)
from sitegen.pages.mkdocs import site_config
from sitegen.pages.render import render_page, report_pages
from sitegen.pages.sources import load_sources
from sitegen.plan.plan_models import ConditionSpec, SpeculativeSpec
from tests.conftest import make_plan
from tests.sitefixtures import PROJECT, copy_project, project_page, publishable_campaign
from tests.statistics.test_quality_records import quality_plan


@pytest.fixture
def project(tmp_path) -> Path:
    return copy_project(tmp_path / "project")


@pytest.fixture(scope="module")
def data(tmp_path_factory) -> Path:
    """One publishable campaign, read only by the tests."""
    root = tmp_path_factory.mktemp("content-policy") / "data"
    publishable_campaign(root)
    return root


@pytest.fixture(scope="module")
def site(data) -> RenderedSite:
    """The demo project's site of ``data``."""
    return render_site(data, PROJECT)


def append(project: Path, page: str, text: str, langs=("ja", "en")) -> None:
    for lang in langs:
        path = project_page(project, f"{lang}/{page}")
        path.write_text(path.read_text() + "\n" + text + "\n")


def refused(data: Path, project: Path) -> str:
    with pytest.raises(DataError) as caught:
        render_site(data, project)
    return str(caught.value)


def summary_pages(site: RenderedSite, project: Path) -> tuple[dict[str, str | None], list]:
    """``project``'s report summary page (``report/index.md``) in each language, rendered as
    the build renders it (``render_page``) over the report of ``site``, and the issues
    found: the page, without rendering the whole site again. A bad ``content/sources.yaml``
    raises ``DataError``, as in the build."""
    (report,) = site.reports
    content = content_environment(content_search_path(project))
    partials = html_environment(str(packaged_theme() / "partials"))
    sources = load_sources(project / "content")
    pages, issues = {}, []
    for lang in LANGUAGES:
        ctx = PageContext(
            partials,
            site.catalogs[lang],
            report,
            site.reports,
            site_root="../../" if lang == LANGUAGES[0] else "../../../",
            report_pages=report_pages(report),
            sources=sources,
        )
        pages[lang], found = render_page(
            content, f"{lang}/report/index.md", directive_functions(ctx)
        )
        issues += found
    return pages, issues


def page_refused(site: RenderedSite, project: Path) -> str:
    """The error the build raises for ``project``'s summary page (``summary_pages``)."""
    try:
        _, issues = summary_pages(site, project)
    except DataError as exc:  # content/sources.yaml
        return str(exc)
    assert issues, "the page was published"
    return str(DataError(issues))


SANDBOX_ESCAPES = [
    "{{ headline.__self__ }}",
    "{{ examples.__self__.report.campaign.table.rows }}",
    "{{ headline.__closure__ }}",
    "{{ t.__globals__ }}",
    "{{ ''.__class__.__mro__ }}",
    "{{ lipsum.__globals__ }}",
    "{{ range(3) }}",
    "{{ cycler }}",
    "{{ namespace() }}",
    "{{ headline.func }}",
]


@pytest.mark.parametrize("escape", SANDBOX_ESCAPES)
def test_content_templates_cannot_reach_data(site, project, escape):
    append(project, "report/index.md", escape)
    message = page_refused(site, project)
    assert "content/ja/report/index.md" in message


def test_t_takes_no_values(data, project):
    append(project, "report/index.md", '{{ t("headline.ratio", ratio="3.00") }}')
    assert "unexpected keyword argument" in refused(data, project)


PROSE_FIGURES = [
    ("MTP halves generation time.", "halves"),
    ("It is always above 50 tok/s.", "'50'"),
    ("The model supports a 1M context.", "'1M'"),
    ("11/12 problems passed.", "'11', '12'"),
    ("投機的デコードで5倍速い。", "'5'"),
    ("投機的デコードで生成時間が半分になる。", "半分"),
    ("投機的デコードで三倍速い。", "三倍"),
]


@pytest.mark.parametrize(("prose", "named"), PROSE_FIGURES)
def test_figures_in_prose_are_refused(site, project, prose, named):
    append(project, "report/index.md", prose)
    message = page_refused(site, project)
    assert "[C-FIGURE] content/ja/report/index.md" in message and named in message


def test_the_build_refuses_a_figure_in_prose_naming_the_page_in_both_languages(data, project):
    append(project, "report/index.md", "MTP halves generation time.")
    message = refused(data, project)
    assert "[C-FIGURE] content/ja/report/index.md → prose" in message
    assert "[C-FIGURE] content/en/report/index.md → prose" in message and "halves" in message


def test_home_page_figures_are_refused_too(data, project):
    append(project, "index.md", "Our engine is 2.50× faster.")
    assert "[C-FIGURE] content/ja/index.md" in refused(data, project)


def test_hand_written_markers_are_refused_as_raw_html(data, project):
    append(project, "report/index.md", '<span data-caveat="C-REVIEW">reviewed</span>')
    message = refused(data, project)
    assert "content/ja/report/index.md: raw HTML" in message


def test_a_sourced_literal_and_identifiers_publish(data, project):
    (project / "content" / "sources.yaml").write_text(
        "sources:\n  - {id: card, title: Model card, publisher: Example, date: 2025-01-01}\n"
    )
    append(
        project,
        "report/index.md",
        "Measured on H100-class hosts with gemma-3-270m and Q4_K_M; the model card gives "
        '{{ literal("32,768", source="card") }} tokens.',
    )
    docs = render_site(data, project).docs
    page = next(v for k, v in docs.items() if k.endswith("/index.en.md") and "reports/" in k)
    assert 'data-literal="32,768"' in page.decode() and "Model card, Example" in page.decode()


def test_literal_needs_a_declared_source(data, project):
    append(project, "report/index.md", '{{ literal("1M", why="model card") }}')
    assert "needs a value and the id of a source" in refused(data, project)


def test_a_page_in_one_language_only_is_refused(data, project):
    extra = project / "content" / "en" / "report" / "extra.md"
    extra.parent.mkdir(parents=True)
    extra.write_text("# Extra\n")
    message = refused(data, project)
    assert "content/ja/report/extra.md" in message and "missing" in message


def test_completion_time_ratio_follows_confdiff_and_names_unknown_inputs(tmp_path, project):
    plan = make_plan(
        conditions=[
            ConditionSpec(id="off", context_capacity=512),
            ConditionSpec(
                id="on",
                context_capacity=4096,
                speculative=SpeculativeSpec(mode="ngram-simple", draft_max=4),
            ),
        ]
    )

    def same_length(record):
        if record["metrics"]:
            record["metrics"]["generated_tokens"] = 16
            record["metrics"]["generation_s"] = 15 / record["metrics"]["gen_tps"]

    publishable_campaign(tmp_path / "data", plan, mutate=same_length)
    append(project, "report/speed.md", '{{ completion_time("short", ratio=True) }}')
    message = refused(tmp_path / "data", project)
    assert "[C-CONFDIFF]" in message and "time ratio" in message
    for lang in ("ja", "en"):
        speed = project_page(project, f"{lang}/report/speed.md")
        speed.write_text(speed.read_text().replace('"short", ratio=True', '"nope"'))
    assert "not a speed input of this report" in refused(tmp_path / "data", project)


def test_titles_are_plain_text_in_markdown_and_navigation():
    hostile = "<style>[data-caveat]{display:none}</style> [x](javascript:alert(1)) &#x3C;b>"
    shown = markdown_inline_text(hostile)
    assert "<style>" not in shown and "](" not in shown and "&#x3C;" not in shown
    assert "\\[x\\]\\(javascript:alert\\(1\\)\\)" in shown


def test_navigation_titles_are_escaped(tmp_path, data):
    from sitegen.pages.i18n import load_catalogs
    from sitegen.pages.mkdocs import ReportNav, VersionBuild

    site = render_site(data, PROJECT)
    report = site.reports[0]
    hostile = Bilingual(ja="<b>太字</b>", en='"><script>x</script>')
    report.campaign.plan.__dict__["title"] = hostile  # frozen model: test-only swap
    build = VersionBuild("v", 0, {}, (ReportNav.of(report),), load_catalogs(PROJECT), {})
    config = site_config(PROJECT, tmp_path / "docs", tmp_path / "out", build)
    languages = next(p["i18n"]["languages"] for p in config["plugins"] if "i18n" in p)
    titles = {lang["locale"]: lang["nav_translations"][report.slug] for lang in languages}
    assert titles == {
        "ja": "&lt;b&gt;太字&lt;/b&gt;",
        "en": "&quot;&gt;&lt;script&gt;x&lt;/script&gt;",
    }


def test_author_text_is_commonmark_without_html_or_unsafe_links():
    html = render_author_text(
        "**bold** <script>alert(1)</script> [ok](https://example.org) "
        "[bad](javascript:alert(1)) [ent](&#106;avascript:x) ![img](https://x/y.png)\n\n# head"
    )
    assert "<strong>bold</strong>" in html and '<a href="https://example.org">ok</a>' in html
    assert "<script>" not in html and "javascript:" not in html.split("[bad]")[0]
    assert 'href="javascript' not in html and "<img" not in html and "<h1" not in html
    assert "\n\n" not in html


def test_blank_or_control_text_is_refused():
    for bad in (" ", "\t\n", "a\x00b", "esc\x1b[31m"):
        with pytest.raises(ValueError):
            Bilingual(ja=bad, en="ok")


def test_post_hoc_dates_are_real_and_after_registration(tmp_path):
    directory = publishable_campaign(tmp_path / "data", quality_plan()).parent
    started = min(
        json.loads(line)["started_at"]
        for line in (directory / "records.jsonl").read_text().splitlines()
    )
    day = started[:10]
    cases = {
        "2026-99-99 not a date": "added_at",
        day: "registration day",
        f"{day}T00:00:00Z": "not after the plan's registration",
        "2000-01-01": "precedes",
    }
    for added, expected in cases.items():
        post_hoc = [
            {
                "label": "x",
                "exclude_templates": ["logic.order"],
                "added_at": added,
                "reason": {"ja": "理由", "en": "why"},
            }
        ]
        (directory / "annotations.yaml").write_text(yaml.safe_dump({"post_hoc": post_hoc}))
        assert expected in refused(tmp_path / "data", PROJECT), added
    post_hoc[0]["added_at"] = "2999-01-01T00:00:00Z"
    (directory / "annotations.yaml").write_text(yaml.safe_dump({"post_hoc": post_hoc}))
    render_site(tmp_path / "data", PROJECT)


def test_records_that_ran_elsewhere_make_a_configuration_comparison(tmp_path):
    def on_elsewhere(record):
        if record["condition_id"] == "on":
            record["provenance"]["host"]["devices"][0].update(name="Other CPU")

    publishable_campaign(tmp_path / "data", make_plan(), mutate=on_elsewhere)
    site = render_site(tmp_path / "data", PROJECT)
    summary = next(
        v for k, v in site.docs.items() if k.endswith("/index.en.md") and "reports/" in k
    ).decode()
    assert 'data-claim="configuration-comparison" data-differing="devices"' in summary
    assert 'data-claim="speed-ratio"' not in summary


def test_records_of_a_condition_on_another_engine_than_planned_are_refused(tmp_path):
    def on_elsewhere(record):
        if record["condition_id"] == "on":
            record["provenance"]["engine"]["id"] = "llamacpp-http"

    publishable_campaign(tmp_path / "data", make_plan(), mutate=on_elsewhere)
    assert "C-ENGINE" in refused(tmp_path / "data", PROJECT)


def test_quality_pages_state_what_the_records_show(tmp_path):
    publishable_campaign(tmp_path / "data", quality_plan(pair_order="alternate"))
    site = render_site(tmp_path / "data", PROJECT)
    report = site.reports[0]
    assert report.run_order == "interleaved"
    quality = next(v for k, v in site.docs.items() if k.endswith("/quality.en.md")).decode()
    assert (
        "conditions alternated"
        in next(v for k, v in site.docs.items() if k.endswith("/method.en.md")).decode()
    )
    by_domain = report.quality.pairs_by_domain
    answers = report.quality.tables.answers
    for row in by_domain.to_dict("records"):
        own = answers[(answers["domain"] == row["domain"]) & (answers["factor"] == "off")]
        assert row["off_truncated"] == int((own["outcome"] == "truncated").sum())
    assert "Each row shows the length-capped" in quality


def test_conditions_table_shows_capacity_with_filled_lengths(data):
    site = render_site(data, PROJECT)
    method = next(v for k, v in site.docs.items() if k.endswith("/method.en.md")).decode()
    table = method.split('data-claim="conditions"')[1].split("</table>")[0]
    low, high = site.reports[0].filled_lengths["off"]
    assert f"{low:,}" in table and f"{high:,}" in table and "Filled input" in table


def test_a_declared_unhashable_model_is_stated_on_the_summary(tmp_path):
    plan = make_plan()
    plan = plan.model_copy(
        update={"model": plan.model.model_copy(update={"remote_unhashable": True})}
    )

    def remote(record):
        record["provenance"]["model"]["sha256"] = "unknown-remote"

    publishable_campaign(tmp_path / "data", plan, mutate=remote)
    site = render_site(tmp_path / "data", PROJECT)
    summary = next(
        v for k, v in site.docs.items() if k.endswith("/index.en.md") and "reports/" in k
    ).decode()
    assert 'data-caveat="C-MODELID"' in summary and "could not be hashed" in summary


def test_parity_names_figures_shown_more_often_in_one_language():
    from sitegen.validation import check_language_parity
    from sitegen.validation.page_facts import read_page

    [issue] = check_language_parity("ja.md", read_page("<p>50 50 3</p>"), read_page("<p>3 50</p>"))
    assert "more in ja: '50' ×1; more in en: none" in issue.message


def test_prose_is_markdown_with_headings_kept_for_mkdocs():
    from sitegen.pages.content import render_prose

    prose = render_prose("# Title *x*\n\ntext `a<b`\n\n```\ncode\n\nmore\n```\n\n\x02sg0\x03\n")
    assert prose.markdown.startswith("# Title x\n\n<p>text <code>a&lt;b</code></p>")
    assert "<pre><code>code&#10;&#10;more&#10;</code></pre>" in prose.markdown
    assert "\n\x02sg0\x03" in prose.markdown and "<p>\x02sg0\x03" not in prose.markdown
    assert not prose.problems and "Title" in prose.text and "code" in prose.text


@pytest.mark.parametrize(
    "text",
    [
        "# T\n\ntext *em* `code` [ref] [two][ref] \x02sg0\x03\n\n- a\n- b\n\n| a |\n|---|\n| 1 |\n",
        '[ref]: https://example.org "title"\n[other]: relative/page.md\n\n[ref] [other]\n',
        "[ref]: ftp://example.org\n\n[ref]\n",
        "[ref]: java\tscript:alert(1)\n\n[ref]\n",
        "[ref]: javascript:alert(1)\n\n[ref]\n",
        "[ref]: data:image/png;base64,AAAA\n\n[ref]\n",
        "[a](ftp://x) [b](javascript:x) ![c](d) <b>e</b> <https://f>\n\n[a]: /ok\n",
    ],
)
def test_one_parse_serves_both_where_the_parsers_agree(text):
    from sitegen.pages.content import _html_finder, _markdown, _parsed_alike

    env: dict = {}
    found = [token.as_dict() for token in _html_finder().parse(text, env)]
    rendered = [token.as_dict() for token in _markdown().parse(text)]
    assert not _parsed_alike(text, env) or found == rendered


@pytest.mark.parametrize(
    "html",
    [
        '<div data-claim="x"><template><span data-caveat="C-REVIEW">r</span></template></div>',
        '<div data-claim="x"><div hidden><span data-caveat="C-REVIEW">r</span></div></div>',
        '<div data-claim="x"><details><p><span data-caveat="C-REVIEW">r</span></p></details></div>',
    ],
    ids=["template", "hidden", "closed-details"],
)
def test_caveats_a_reader_cannot_see_do_not_count(html):
    from sitegen.validation.page_facts import read_page

    facts = read_page(html)
    assert not facts.caveats and not facts.effective_caveats(facts.claims[0])


def test_a_caveat_in_a_summary_or_open_details_counts():
    from sitegen.validation.page_facts import read_page

    for html in (
        '<details><summary><span data-caveat="C-REVIEW">r</span></summary>x</details>',
        '<details open><span data-caveat="C-REVIEW">r</span></details>',
    ):
        assert read_page(html).caveats == {"C-REVIEW"}
