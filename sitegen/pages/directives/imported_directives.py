"""Directives of an imported campaign's page: its figures with their source."""

from __future__ import annotations

from markupsafe import Markup

from sitegen.pages.charts import cdf_chart, trials_chart
from sitegen.pages.directives.common import markdown_inline_text, render_partial
from sitegen.pages.directives.page_context import PageContext, directive
from sitegen.pages.safe_json import script_json
from sitegen.statistics.imported_report import ImportedReport
from sitegen.statistics.latency import MIN_VALUES, PERCENTILES, cdf_points


@directive("imported_title")
def imported_title(ctx: PageContext) -> Markup:
    """An imported campaign's title as plain text inside Markdown (see ``report_title``)."""
    return markdown_inline_text(ctx.require_imported().title[ctx.lang])


@directive("imported_report")
def imported_report(ctx: PageContext) -> Markup:
    """An imported campaign's whole report: its figures with their source (C-IMPORTED),
    ratios where the declaration allows them, the claims the source cannot support, what
    the publisher declared and the imported files."""
    report = ctx.require_imported()
    return render_partial(
        ctx,
        "imported_report.html",
        report=report,
        downloads=[file.name for file in ctx.download_files()],
        charts=imported_charts(ctx, report),
        latency=report.latency_records,
        percentiles=PERCENTILES,
        minimum=MIN_VALUES,
    )


def imported_charts(ctx: PageContext, report: ImportedReport) -> list[tuple[str, str, Markup]]:
    """The measured reports' charts where the imported records allow them, as ``(metric,
    kind, spec)``: the generation rate per request with each condition's median
    (``trials_chart``) and the empirical CDF of TTFT (``cdf_chart``)."""
    frame = report.frame
    if frame.empty:
        return []
    usable = frame[(frame["role"] == "measured") & (frame["status"] == "ok")]
    labels = ctx.labels(report)
    charts = []
    if usable["gen_tps"].notna().any():
        trials = usable[usable["gen_tps"].notna()]
        medians = [
            {
                "condition_id": row.condition_id,
                "input_id": row.input_id,
                "gen_tps_median": row.figures["gen_tps"].median,
            }
            for row in report.rows
        ]
        names = ["condition_id", "input_id", "trial_id", "gen_tps", "outlier"]
        columns = {name: trials[name].tolist() for name in names if name in trials}
        spec = trials_chart(columns, medians, "gen_tps", labels, ctx.catalog)
        charts.append(("gen_tps", "trials", Markup(script_json(spec))))
    series = [
        (
            f"{labels[str(condition_id)]} · {input_id}",
            *cdf_points(group["ttft_s"].astype(float).to_numpy()),
        )
        for (condition_id, input_id), group in usable.groupby(
            ["condition_id", "input_id"], sort=False
        )
    ]
    series = [s for s in series if s[1]]
    if series:
        spec = cdf_chart(series, ctx.catalog.t("metric.ttft_s"), ctx.catalog)
        charts.append(("ttft_s", "cdf", Markup(script_json(spec))))
    return charts
