"""The home page's overview across campaigns and the site-wide polish of issue 22: every
overview row is a claim carrying the caveats its rules require, a project's overview page
shows the campaigns and columns it names and refuses names it does not know, each row
counts its own trials, comparisons show latency,
acceptance and memory beside the rate, one percent style, memory in GiB with the declared
headroom, seconds with two decimals, and no internal name on a page in either language."""

from __future__ import annotations

import re

import pytest

from sitegen.commands.build import render_site
from sitegen.core.errors import DataError
from sitegen.core.text import LANGUAGES
from sitegen.pages.i18n import load_catalogs
from sitegen.pages.mkdocs import ReportNav, VersionBuild, site_config
from sitegen.plan.plan_models import SpeculationHealthSpec
from sitegen.statistics.setups import SETUP_FIELDS
from sitegen.validation.page_facts import read_page
from sitegen.validation.rules import load_rules, registered_checks
from tests.builtsites import rendered_page, unmarked
from tests.conftest import make_plan
from tests.sitefixtures import (
    PROJECT,
    copy_project,
    hostile_plan,
    project_page,
    publishable_campaign,
    report_address,
    sweep_plan,
)
from tests.statistics.test_quality_records import quality_plan

HEADROOM_MIB = 81_920


def _plan_with_headroom():
    return make_plan(
        name="headroom",
        inputs=hostile_plan().inputs,
        speculation_health=SpeculationHealthSpec(max_device_memory_mib=HEADROOM_MIB),
    )


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    data = tmp_path_factory.mktemp("overview") / "data"
    first = publishable_campaign(data, _plan_with_headroom())
    publishable_campaign(data, make_plan(name="second"))
    return data, report_address(first.parent)


@pytest.fixture(scope="module")
def site(data):
    rendered = render_site(data[0], PROJECT)
    yield rendered, data[1]
    rendered.scratch.cleanup()


def _text(html: str) -> str:
    return read_page(html).text


@pytest.mark.parametrize("lang", LANGUAGES)
def test_every_overview_row_is_a_claim_with_its_caveats(site, lang):
    html = rendered_page(site[0], "index.md" if lang == "ja" else "index.en.md")
    facts = read_page(html)
    rows = [c for c in facts.claims if c.attrs.get("data-report")]
    assert {c.attrs["data-report"] for c in rows} == {site[1], "second"}
    required = {rule.id for rule in load_rules() if "speed-ratio" in rule.claims}
    ratios = [c for c in rows if c.kind == "speed-ratio"]
    assert ratios, [c.kind for c in rows]
    for claim in ratios:
        assert required <= facts.effective_caveats(claim), claim.attrs
        assert claim.attrs["data-ci"] and claim.attrs["data-factor-only"] == "true"
    # The home page loads the sorting script only (no other script for the table).
    assert html.count('class="sg-sort"') == 13


@pytest.mark.parametrize("lang", LANGUAGES)
def test_each_row_counts_the_trials_of_its_own_comparison(site, lang):
    t = load_catalogs(PROJECT)[lang].t
    home = rendered_page(site[0], "index.md" if lang == "ja" else "index.en.md")
    report = next(r for r in site[0].reports if r.slug == site[1])
    for headline in report.headline:
        trials = int(headline.baseline["n"]) + int(headline.treatment["n"])
        assert trials < report.excluded["measured"]  # the campaign has other inputs
        row = t("overview.input", input=headline.comparison.input_id)
        assert f"{row} · {t('home.trials', n=trials)}" in home


def test_the_overview_page_in_both_languages_and_the_navigation(site, tmp_path):
    for lang, path, home in (
        ("ja", "overview/index.md", "../"),
        ("en", "overview/index.en.md", "../"),
    ):
        html = rendered_page(site[0], path)
        reports = {
            c.attrs["data-report"] for c in read_page(html).claims if "data-report" in c.attrs
        }
        assert reports == {site[1], "second"}, lang
        assert f'href="{home}reports/second/"' in html
        assert html.count('class="sg-sort"') == 13
    reports = tuple(ReportNav.of(report) for report in site[0].reports)
    build = VersionBuild("v", 0, {}, reports, load_catalogs(PROJECT), {})
    config = site_config(PROJECT, tmp_path / "docs", tmp_path / "out", build)
    assert config["nav"][:2] == ["index.md", "overview/index.md"]


def test_a_declared_overview_shows_its_campaigns_in_order_and_its_columns(data, tmp_path):
    project = copy_project(tmp_path / "project")
    for lang in LANGUAGES:
        page = project_page(project, f"{lang}/overview.md")
        page.write_text(
            page.read_text().replace(
                "{{ overview() }}",
                f'{{{{ overview(campaigns=["second", "{data[1]}"], columns=["ttft", "speedup"]) }}}}',
            )
        )
    rendered = render_site(data[0], project)
    html = rendered.docs["overview/index.en.md"].decode("utf-8")
    rendered.scratch.cleanup()
    rows = [c.attrs["data-report"] for c in read_page(html).claims if "data-report" in c.attrs]
    assert rows.index("second") < rows.index(data[1])
    headers = re.findall(r"<th[^>]*><button[^>]*>([^<]*)<", html)
    t = load_catalogs(PROJECT)["en"].t
    # The campaign first, then the named columns in the table's order.
    assert headers == [t("col.report"), t("overview.speedup"), t("overview.ttft")]
    assert t("overview.memory") not in html


@pytest.mark.parametrize(
    ("call", "expected"),
    [
        ('overview(campaigns=["nowhere"])', "campaigns: unknown campaign 'nowhere'"),
        ('overview(columns=["speedup", "colour"])', "columns: unknown column 'colour'"),
        ('overview(columns="speedup")', "columns: a list of column names"),
    ],
)
def test_an_unknown_campaign_or_column_fails_the_build_naming_the_file(
    data, tmp_path, call, expected
):
    project = copy_project(tmp_path / "project")
    page = project_page(project, "en/overview.md")
    page.write_text(page.read_text().replace("overview()", call))
    with pytest.raises(DataError) as caught:
        render_site(data[0], project)
    (issue,) = caught.value.issues
    assert issue.location == "content/en/overview.md"
    assert expected in issue.message and "\n" not in str(issue)


@pytest.mark.parametrize("lang", LANGUAGES)
def test_memory_in_gib_with_the_declared_headroom(site, lang):
    t = load_catalogs(PROJECT)[lang].t
    headroom = t("beside.memory_limit", limit=f"{HEADROOM_MIB / 1024:,.2f}")
    suffix = "" if lang == "ja" else ".en"
    summary = rendered_page(site[0], f"reports/{site[1]}/index{suffix}.md")
    speed = rendered_page(site[0], f"reports/{site[1]}/speed{suffix}.md")
    assert headroom in summary and headroom in speed
    for page in (summary, speed):
        assert "MiB" not in _text(page) and "max_device_memory_mib" not in _text(page)
    home = rendered_page(site[0], f"index{suffix}.md")
    assert t("overview.headroom", limit=f"{HEADROOM_MIB / 1024:,.2f}") in home


STRAY_FIGURES = {
    "three or more decimals": re.compile(r"(?<![\w.])\d[\d,]*\.\d{3,}(?!\w|\.\d)"),
    "a space before %": re.compile(r"\d\s+[%％]"),
    "no thousands separator": re.compile(r"(?<![\w.,#/:-])\d{5,}(?![\w,]|\.\d)"),
}
"""Figures printed outside the formatter's styles (``sitegen/core/formatting.py``): every
rate, time, ratio and percentage has at most 2 decimals, a percent sign follows its figure
without a space, and a count from 10,000 up separates its thousands."""
SEEDS = re.compile(r"(?i)(?:\bseeds?|シード)\W{0,3}\d+")
"""A seed is an identifier, printed as declared (no thousands separators)."""


def stray_figures(html: str) -> list[tuple[str, str]]:
    """Each figure of the page's visible text that no formatter style prints, with the
    style it breaks; code spans (hashes, ids, versions) are not figures."""
    html = re.sub(r"<code[^>]*>.*?</code>", " ", unmarked(html), flags=re.S)
    # The data dictionary quotes the record's documentation (collapsed, for developers).
    html = re.sub(r'<details class="sg-dictionary">.*?</details>', "", html, flags=re.S)
    text = SEEDS.sub(" ", _text(html))
    return [
        (name, m.group()) for name, found in STRAY_FIGURES.items() for m in found.finditer(text)
    ]


@pytest.mark.parametrize(
    ("html", "broken"),
    [
        ("<p>TTFT 0.123 s</p>", "three or more decimals"),
        ("<td>62.275</td>", "three or more decimals"),
        ("<p>accepted 45.0 %</p>", "a space before %"),
        ("<p>12345 tokens</p>", "no thousands separator"),
    ],
)
def test_the_figure_scan_finds_what_no_formatter_prints(html, broken):
    assert [name for name, _ in stray_figures(html)] == [broken]
    shown = "<p>0.12 s, 62.28 tok/s, 1.22× (+21.7%), 12,345 tokens, v2026.10.11549</p>"
    assert stray_figures(shown + f"<code>{html}</code>") == []


@pytest.fixture(scope="module")
def rich_site(tmp_path_factory):
    """The headroom campaign, a sweep over draft length and concurrency (sweep and Pareto
    pages) and a quality evaluation: every kind of figure a page prints. As ``site``:
    the rendered site first."""
    data = tmp_path_factory.mktemp("figures") / "data"
    publishable_campaign(data, _plan_with_headroom())
    publishable_campaign(data, sweep_plan(concurrency=True))
    publishable_campaign(data, quality_plan())
    rendered = render_site(data, PROJECT)
    yield rendered, None
    rendered.scratch.cleanup()


def test_every_catalog_writes_percent_one_way():
    """The formatter prints a percentage's figure; the catalogs add its sign, right after
    the figure in both languages (pages a test site does not reach included)."""
    for lang, catalog in load_catalogs(PROJECT).items():
        spaced = [k for k, v in catalog.strings.items() if re.search(r"\}\s+[%％]|％", v[lang])]
        assert spaced == [], lang
        assert catalog.t("kpi.percent", value="1") == "1%"


@pytest.mark.parametrize("lang", LANGUAGES)
def test_every_figure_on_every_page_is_in_a_formatter_style(rich_site, lang):
    site = rich_site
    assert {"sweep", "unit"} <= {report.slug for report in site[0].reports}
    suffix = "" if lang == "ja" else ".en"
    pages = [
        name
        for name in site[0].docs
        if name.endswith(f"{suffix}.md") and (lang == "en" or ".en." not in name)
    ]
    assert len(pages) >= 18
    for name in pages:
        assert stray_figures(rendered_page(site[0], name)) == [], name
    # Sanity: the pages do print counts over 10,000 and percentages, separated and attached.
    every = " ".join(_text(rendered_page(site[0], name)) for name in pages)
    assert re.search(r"\d{1,3},\d{3}", every) and re.search(r"\d%", every)


INTERNAL = re.compile(
    r"\b(?:gen_tps|ttft_s|e2e_s|max_device_memory_mib|speculation_health|"
    + "|".join(name for name in SETUP_FIELDS if "_" in name)
    + r")\b"
)
"""Field ids and code names a reader should never see outside the data dictionary."""


@pytest.mark.parametrize("lang", LANGUAGES)
def test_no_internal_names_on_any_page(site, lang):
    checks = {c.name for c in registered_checks()} - {"records_consistent"}
    suffix = ".en.md" if lang == "en" else ".md"
    pages = [n for n in site[0].docs if n.endswith(suffix) and (lang == "en" or ".en." not in n)]
    assert len(pages) >= 8
    for name in pages:
        html = rendered_page(site[0], name)
        if name.split("/")[-1].startswith("data"):
            # The data dictionary documents the record's fields by name (collapsed).
            html = re.sub(r'<details class="sg-dictionary">.*?</details>', "", html, flags=re.S)
        # Code spans are code (rule ids; the method page's note to report authors).
        text = _text(re.sub(r"<code>.*?</code>", "", html, flags=re.S))
        assert not INTERNAL.findall(text), (name, INTERNAL.findall(text)[:5])
        assert not [c for c in checks if re.search(rf"\b{c}\b", text)], name


def test_every_rule_claim_kind_has_a_name_in_both_languages():
    catalogs = load_catalogs(PROJECT)
    kinds = {kind for rule in load_rules() for kind in rule.claims}
    for lang in LANGUAGES:
        missing = [k for k in kinds if f"rules.claim.{k}" not in catalogs[lang].strings]
        assert not missing, (lang, missing)


def test_long_method_tables_are_collapsed_with_their_caveats_outside(site):
    method = rendered_page(site[0], f"reports/{site[1]}/method.en.md")
    assert method.count('<details class="sg-system">') == 2
    assert '<details class="sg-rules">' in method
    facts = read_page(method)
    (system,) = facts.claims_of("system-table")
    assert {"C-HARDWARE", "C-CAPACITY"} <= facts.effective_caveats(system)
