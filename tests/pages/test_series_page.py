"""A page per series of builds (issue 39): each build's medians with their quartiles and
each build's verdict against the build before, regressions first, the rule stated with
its constants, in ja and en; each build a report of its own; the home, overview and
history pages link to it."""

from __future__ import annotations

import json
import re

import plotly.graph_objects as go
import pytest

from sitegen.commands.build import build_site, render_site
from sitegen.pages.charts import series_chart
from sitegen.pages.i18n import load_catalogs
from sitegen.statistics.series_verdicts import MIN_STEP_VALUES, MIN_STEPS_FOR_FENCE
from tests.builtsites import rendered_page, rendered_reports
from tests.seriesfixtures import series_build
from tests.sitefixtures import PROJECT

BUILDS = (
    ("xllamacpp 2026.10.11549", "c", 70.0),
    ("xllamacpp 2026.4.8672", "a", 100.0),
    ("xllamacpp 2026.5.9000", "b", 100.5),
)
"""Engine version, campaign tag and generation rate of each campaign, out of series order:
the last build is 30 % slower than the one before it."""


@pytest.fixture(scope="module")
def series_site(tmp_path_factory):
    data = tmp_path_factory.mktemp("series") / "data"
    for version, tag, rate in BUILDS:
        series_build(data, version, tag, rate)
    return data, render_site(data, PROJECT)


def text_of(html: str) -> str:
    return " ".join(re.sub(r"<[^>]+>", " ", html).split())


def test_each_campaign_of_a_series_has_a_report_of_its_own(series_site):
    data, rendered = series_site
    assert rendered_reports(rendered) == {"builds-a", "builds-b", "builds-c"}
    (series,) = rendered.series
    assert series.address == "builds"
    assert [b.campaign_id.split("-")[1] for b in series.builds] == ["a", "b", "c"]


def test_two_campaigns_of_a_series_get_distinct_report_pages(tmp_path):
    data = tmp_path / "data"
    series_build(data, "xllamacpp 2026.4.8672", "a", 100.0)
    series_build(data, "xllamacpp 2026.5.9000", "b", 100.0)
    rendered = render_site(data, PROJECT)
    assert rendered_reports(rendered) == {"builds-a", "builds-b"}
    for slug in ("builds-a", "builds-b"):
        assert "reports/" + slug + "/speed.en.md" in rendered.docs
    page = rendered_page(rendered, "series/builds/index.en.md")
    assert "No step of this series is slower" in text_of(page)


@pytest.mark.parametrize("lang", ["ja", "en"])
def test_the_series_page_lists_every_build_and_regressions_first(series_site, lang):
    _, rendered = series_site
    path = "series/builds/index.md" if lang == "ja" else "series/builds/index.en.md"
    page = rendered_page(rendered, path)
    builds = re.findall(r'<tr data-build="\d+"><td><code>([^<]*)</code>', page)
    assert builds == [
        "xllamacpp 2026.4.8672 b1",
        "xllamacpp 2026.5.9000 b1",
        "xllamacpp 2026.10.11549 b1",
    ]
    for slug in ("builds-a", "builds-b", "builds-c"):
        assert f'href="{"../../" if lang == "ja" else "../../../"}reports/{slug}/"' in page
    # The regressions come before the tables: every slower step, each metric named.
    slower = page.index('<li data-verdict="slower"')
    assert slower < page.index('data-claim="series-chart"') < page.index("sg-series-table-gen_tps")
    assert page.count('<li data-verdict="slower"') == 8  # 2 conditions × 2 inputs × 2 metrics
    assert 'data-verdict="slower"' in page.split('id="sg-series-table-gen_tps"')[1]
    assert ("0.70×" if lang == "en" else "0.70倍") in page.split('<li data-verdict="slower"')[1]
    assert page.index("sg-series-table-gen_tps") < page.index("sg-series-table-ttft_s")
    assert page.count('class="sg-plot"') == 2


def test_the_page_states_the_rule_with_its_constants(series_site):
    _, rendered = series_site
    rule = text_of(rendered_page(rendered, "series/builds/index.en.md").split("sg-series-rule")[1])
    assert f"fewer than {MIN_STEP_VALUES} trials with a value" in rule
    assert f"at least {MIN_STEPS_FOR_FENCE} steps" in rule
    assert "never below 2.0%" in rule and "Q3 + 1.5 × IQR" in rule
    assert "95% percentile-bootstrap interval (B=2,000" in rule and "rustc-perf" in rule
    ja = text_of(rendered_page(rendered, "series/builds/index.md").split("sg-series-rule")[1])
    assert f"{MIN_STEP_VALUES} 回に満たない" in ja and "2.0% を下回る" in ja


def test_each_step_says_only_the_engine_build_differs(series_site):
    _, rendered = series_site
    page = text_of(rendered_page(rendered, "series/builds/index.en.md"))
    assert page.count("only the engine version and build differs") == 2


def test_home_and_overview_link_to_the_series_with_its_latest_verdicts(series_site):
    _, rendered = series_site
    home = rendered_page(rendered, "index.en.md")
    assert '<a href="series/builds/">' in home
    assert "3 builds, the latest xllamacpp 2026.10.11549 b1." in text_of(home)
    assert "8 slower, 0 faster" in text_of(home)
    overview = rendered_page(rendered, "overview/index.md")
    assert '<a href="../series/builds/">' in overview


@pytest.mark.slow
def test_the_published_history_and_navigation_link_to_the_series(series_site, tmp_path):
    data, _ = series_site
    site = tmp_path / "site"
    build_site(data, site, PROJECT, version="v1")
    version = site / "v" / "v1"
    history = (version / "en" / "reports" / "builds-a" / "history" / "index.html").read_text()
    assert 'href="../../../series/builds/"' in history
    series_page = (version / "en" / "series" / "builds" / "index.html").read_text()
    assert "xllamacpp 2026.10.11549 b1" in series_page
    home = (version / "index.html").read_text()
    assert 'href="series/builds/"' in home


def test_the_series_chart_is_valid_with_quartile_bars_and_escaped_builds():
    catalog = load_catalogs()["en"]
    lines = [{"name": "off · short", "y": [10.0, None], "quartiles": [(9.0, 11.5), None]}]
    spec = series_chart(lines, ["b<1>", "b&2"], "rate", catalog)
    go.Figure(spec)  # plotly's own validation: raises on a property plotly.js lacks
    (line,) = json.loads(json.dumps(spec, allow_nan=False))["data"]
    assert line["x"] == [1, 2] and line["y"] == [10.0, None]
    assert line["error_y"]["array"] == [1.5, None] and line["error_y"]["arrayminus"] == [1.0, None]
    assert spec["layout"]["xaxis"]["ticktext"] == ["b&lt;1&gt;", "b&amp;2"]
