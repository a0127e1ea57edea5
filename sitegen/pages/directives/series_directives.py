"""Directives of a series page (an engine tracked across its builds, issue 39) and of the
home and overview pages' list of series.

Every figure comes from the frozen ``BuildSeries`` the summarize stage made
(``statistics.build_series``); the directives only select and format it, the verdicts'
rule and its constants included (``statistics.series_verdicts``), so the rule the page
states is the rule that decided. A series page is not a report: it marks no figure for
the audit (which recomputes a report's figures from its own downloads); its figures are
printed through the site's formatters like the comparison and overview pages'. The
factor's values are what engines and hosts report: untrusted text, escaped by the
partials and by the chart.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import jinja2
from markupsafe import Markup

from sitegen.core.formatting import count, percent, rate, ratio, seconds, setting
from sitegen.pages import charts
from sitegen.pages.directives.common import (
    field_list,
    format_utc,
    markdown_inline_text,
    render_partial,
)
from sitegen.pages.directives.page_context import PageContext, directive
from sitegen.pages.safe_json import script_json
from sitegen.plan.labels import condition_labels
from sitegen.statistics.build_series import (
    SERIES_METRICS,
    BuildSeries,
    MetricFigure,
    SeriesMetric,
    StepFinding,
    regressions,
)
from sitegen.statistics.series_verdicts import (
    FENCE_IQRS,
    MIN_STEP_VALUES,
    MIN_STEPS_FOR_FENCE,
    NOISE_FLOOR,
    StepVerdict,
)

FORMATS = {"gen_tps": rate, "ttft_s": seconds}
"""How each metric a series follows is printed: a rate, a time in seconds."""


def _metric(name: str) -> SeriesMetric:
    if name not in SERIES_METRICS:
        raise jinja2.TemplateRuntimeError(
            f"{name!r}: a series follows one of {', '.join(SERIES_METRICS)}"
        )
    return name  # type: ignore[return-value]


@dataclass(frozen=True)
class VerdictText:
    """One step's verdict as the page prints it."""

    verdict: str
    """``faster``, ``slower``, ``no-change`` or ``inconclusive`` (a data attribute)."""
    word: str
    ratio: str | None
    """The ratio with its interval (``None``: no interval to give it with)."""
    reason: str


def verdict_text(ctx: PageContext, found: StepVerdict) -> VerdictText:
    """The verdict word, the ratio with its bootstrap interval, and why, translated."""
    t = ctx.catalog.t
    shown = None
    if found.ratio is not None and found.interval is not None:
        low, high = found.interval
        shown = t("series.ratio", ratio=ratio(found.ratio), low=ratio(low), high=ratio(high))
    reason = t(
        f"series.reason.{found.reason}",
        minimum=count(MIN_STEP_VALUES),
        threshold=percent(found.threshold),
        one=count(1),
    )
    key = found.verdict.replace(" ", "-")
    return VerdictText(key, t(f"series.verdict.{key}"), shown, reason)


def _builds(ctx: PageContext, series: BuildSeries) -> dict[str, dict[str, Any]]:
    """Each build by campaign id: its factor value, when it was registered and the address
    of its report (``None`` where the site does not publish it)."""
    slugs = {report.campaign.campaign_id: report.slug for report in ctx.reports}
    return {
        build.campaign_id: {
            "value": build.factor_value,
            "date": format_utc(build.registered_at),
            "slug": slugs.get(build.campaign_id),
        }
        for build in series.builds
    }


@directive("series_title")
def series_title(ctx: PageContext) -> Markup:
    """The series' title (its plan's) as plain text inside Markdown."""
    return markdown_inline_text(ctx.require_series().plan.title[ctx.lang])


@directive("series_builds")
def series_builds(ctx: PageContext) -> Markup:
    """What the series varies, and its builds in series order: the factor's value as
    recorded, when the campaign was registered, a link to its report."""
    series = ctx.require_series()
    return render_partial(
        ctx,
        "series_builds.html",
        factor=field_list(ctx, [series.factor]),
        builds=list(_builds(ctx, series).values()),
    )


def _finding(ctx: PageContext, series: BuildSeries, found: StepFinding) -> dict[str, Any]:
    builds = _builds(ctx, series)
    cell = found.cell
    return {
        "previous": builds[found.step.previous],
        "current": builds[found.step.current],
        "condition": condition_labels(series.plan)[cell.condition_id][ctx.lang],
        "input": cell.input_id,
        "metric": cell.metric,
        "verdict": verdict_text(ctx, cell.verdict),
        "threshold": percent(cell.verdict.threshold),
    }


@directive("series_regressions")
def series_regressions(ctx: PageContext) -> Markup:
    """Every "slower" step first (which build, condition × input, metric, ratio with its
    interval, the noise threshold), or a sentence saying there is none."""
    series = ctx.require_series()
    found = [_finding(ctx, series, f) for f in regressions(series)]
    return render_partial(
        ctx, "series_regressions.html", regressions=found, steps=len(series.steps)
    )


def _figure(figure: MetricFigure, metric: SeriesMetric) -> dict[str, str | None]:
    shown = FORMATS[metric]
    quartiles = figure.quartiles
    return {
        "median": shown(figure.median),
        "n": count(figure.n),
        "q1": None if quartiles is None else shown(quartiles[0]),
        "q3": None if quartiles is None else shown(quartiles[1]),
    }


@directive("series_table")
def series_table(ctx: PageContext, metric: str = "gen_tps") -> Markup:
    """Per condition × input, each build in series order: the median (n) with the
    quartiles, and the verdict of its step from the build before."""
    series = ctx.require_series()
    chosen = _metric(metric)
    labels = condition_labels(series.plan)
    verdicts = {
        (step.current, c.condition_id, c.input_id): verdict_text(ctx, c.verdict)
        for step in series.steps
        for c in step.cells
        if c.metric == chosen
    }
    rows = [
        {
            "condition": labels[cell.condition_id][ctx.lang],
            "input": cell.input_id,
            "first": index == 0,
            "build": build.factor_value,
            "failed": count(cell.failed) if cell.failed else None,
            "verdict": verdicts.get((build.campaign_id, cell.condition_id, cell.input_id)),
            **_figure(cell.figures[chosen], chosen),
        }
        for position in range(len(series.builds[0].cells))
        for index, build in enumerate(series.builds)
        for cell in (build.cells[position],)
    ]
    return render_partial(
        ctx,
        "series_table.html",
        rows=rows,
        metric=chosen,
        table_id=f"sg-series-table-{chosen}",
    )


@directive("series_chart")
def series_chart(ctx: PageContext, metric: str = "gen_tps") -> Markup:
    """Each condition × input's median over the builds, its quartiles as bars."""
    series = ctx.require_series()
    chosen = _metric(metric)
    labels = condition_labels(series.plan)
    lines = []
    for position, first in enumerate(series.builds[0].cells):
        figures = [build.cells[position].figures[chosen] for build in series.builds]
        lines.append(
            {
                "name": f"{labels[first.condition_id][ctx.lang]} · {first.input_id}",
                "y": [f.median for f in figures],
                "quartiles": [f.quartiles for f in figures],
            }
        )
    spec = charts.series_chart(
        lines,
        [build.factor_value for build in series.builds],
        charts.axis_title(ctx.catalog, chosen),
        ctx.catalog,
    )
    return render_partial(
        ctx,
        "series_chart.html",
        spec=Markup(script_json(spec)),
        chart_id=f"series-{series.address}-{chosen}",
        metric=chosen,
    )


@directive("series_setups")
def series_setups(ctx: PageContext) -> Markup:
    """Each step's setup evidence: only the factor differs, or what else differs and what
    is not recorded on both sides."""
    series = ctx.require_series()
    builds = _builds(ctx, series)
    steps = [
        {
            "previous": builds[step.previous],
            "current": builds[step.current],
            "factor_alone": step.setup.factor_alone and step.setup.factor_differs,
            "factor_differs": step.setup.factor_differs,
            "differing": field_list(ctx, step.setup.differing),
            "unrecorded": field_list(ctx, step.setup.unrecorded),
        }
        for step in series.steps
    ]
    return render_partial(
        ctx, "series_setups.html", steps=steps, factor=field_list(ctx, [series.factor])
    )


@directive("series_rule")
def series_rule(ctx: PageContext) -> Markup:
    """The rule that decides each verdict, with the constants and the plan's bootstrap
    settings that decided it (``statistics.series_verdicts``)."""
    dispersion = ctx.require_series().plan.dispersion
    return render_partial(
        ctx,
        "series_rule.html",
        minimum=count(MIN_STEP_VALUES),
        floor=percent(NOISE_FLOOR),
        steps=count(MIN_STEPS_FOR_FENCE),
        fence=setting(FENCE_IQRS),
        level=percent(dispersion.confidence, 0),
        resamples=count(dispersion.bootstrap_resamples),
        seed=str(dispersion.bootstrap_seed),
        one=count(1),
    )


@directive("series_list")
def series_list(ctx: PageContext) -> Markup:
    """Every series with its number of builds and its latest step's verdicts, linked to
    its page (nothing where the site has no series)."""
    items = []
    for series in ctx.every_series:
        latest = series.steps[-1].cells if series.steps else ()
        words = [c.verdict.verdict for c in latest]
        items.append(
            {
                "address": series.address,
                "title": series.plan.title[ctx.lang],
                "builds": count(len(series.builds)),
                "latest": series.builds[-1].factor_value,
                "stepped": bool(series.steps),
                **{
                    key.replace(" ", "_"): count(words.count(key))
                    for key in ("slower", "faster", "no change", "inconclusive")
                },
                "regressions": count(len(regressions(series))),
            }
        )
    return render_partial(ctx, "series_list.html", items=items, home=ctx.language_home)
