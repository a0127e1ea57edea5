"""Directives of the home and overview pages: every campaign's headline in one table."""

from __future__ import annotations

import jinja2
from markupsafe import Markup

from sitegen.pages.directives.common import render_partial
from sitegen.pages.directives.page_context import PageContext, directive
from sitegen.plan.plan_models import HeadlineSpec
from sitegen.statistics.headlines import MIN_RATIO_TRIALS
from sitegen.statistics.latency import MIN_VALUES
from sitegen.statistics.overview import (
    MeasuredRow,
    imported_rows,
    measured_rows,
    overview_headlines,
    overview_selection,
)
from sitegen.statistics.report import Report


@directive("report_list")
def report_list(ctx: PageContext) -> Markup:
    """Every campaign's headline in one sortable table (``statistics/overview.py``): each
    measured campaign's comparisons, then each imported campaign's figures."""
    return overview(ctx)


@directive("overview")
def overview(
    ctx: PageContext, campaigns: object = None, columns: object = None, headlines: object = None
) -> Markup:
    """The overview table of the campaigns named by folder name, in that order, with the
    columns named (``OVERVIEW_COLUMNS``, shown in the table's order); every campaign and
    column when not named: ``overview(campaigns=["a", "b"], columns=["speedup", "rate",
    "ttft"])``. ``headlines`` chooses a measured campaign's headline rows like a plan's
    ``headline``: ``headlines={"a": {"baseline": "off", "treatment": "ng2", "input": "q"}}``."""
    measured = {report.slug: report for report in ctx.reports}
    imported = {report.slug: report for report in ctx.imported_reports}
    try:
        slugs, shown = overview_selection([*measured, *imported], campaigns, columns)
        chosen = overview_headlines(measured, headlines)
    except ValueError as exc:
        raise jinja2.TemplateRuntimeError(f"overview({exc})") from None
    rows = [
        row
        for slug in slugs
        for row in (
            _measured_rows(ctx, measured[slug], chosen.get(slug))
            if slug in measured
            else imported_rows(imported[slug])
        )
    ]
    return render_partial(
        ctx,
        "report_list.html",
        rows=rows,
        columns=shown,
        home=ctx.language_home,
        minimum=MIN_VALUES,
        min_ratio_trials=MIN_RATIO_TRIALS,
    )


def _measured_rows(
    ctx: PageContext, report: Report, choice: HeadlineSpec | None
) -> list[MeasuredRow]:
    """``measured_rows`` of ``report`` with the headline ``choice``, once a build
    (``PageContext.overview_rows``)."""
    key = (report.slug, choice)
    if key not in ctx.overview_rows:
        ctx.overview_rows[key] = measured_rows(report, choice)
    return ctx.overview_rows[key]
