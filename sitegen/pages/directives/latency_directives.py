"""Directives of latency: the breakdown's medians, percentiles with the CDF, and where
prompt-processing time comes from."""

from __future__ import annotations

import jinja2
from markupsafe import Markup

from sitegen.pages.charts import cdf_chart
from sitegen.pages.directives.common import cells, render_partial
from sitegen.pages.directives.page_context import PageContext, directive
from sitegen.pages.directives.speed_directives import speed_rows
from sitegen.pages.safe_json import script_json
from sitegen.plan.engine_registry import prefill_source as engine_prefill_source
from sitegen.statistics.latency import LATENCY_METRICS, MIN_VALUES, PERCENTILES, cdf_points
from sitegen.statistics.speed import records_of

PERCENTILE_COLUMNS = ("mean", *(f"p{p}" for p in PERCENTILES), "max")
"""The figures of a latency percentile row, as ``published_figures`` prints them."""


@directive("latency_table")
def latency_table(ctx: PageContext) -> Markup:
    """Per condition × input medians of the latency breakdown: prefill (the engine's own
    figure), first token, first text, first answer, natural finish, and thinking vs answer
    tokens where the engine separates them."""
    report = ctx.require_report()
    return render_partial(
        ctx,
        "latency_table.html",
        report=report,
        rows=speed_rows(ctx),
        labels=ctx.labels(report),
        prefill_source=engine_prefill_source(report.plan.engine),
    )


@directive("latency_percentiles")
def latency_percentiles(ctx: PageContext, metric: str = "ttft_s") -> Markup:
    """Per condition × input × latency metric: n, mean, P50, P90, P95 and P99 (the
    observed maximum in place of a percentile that has too few values, C-TAIL), and the
    empirical CDF of ``metric`` per condition and input."""
    report = ctx.require_report()
    if metric not in LATENCY_METRICS:
        raise jinja2.TemplateRuntimeError(
            f"latency_percentiles({metric!r}): one of {', '.join(LATENCY_METRICS)}"
        )
    labels = ctx.labels(report)
    trials = report.usable_speed_trials
    series = []
    if metric in trials:
        # Each condition × input's values in order of first appearance, as a groupby
        # without sorting gives them, grouped in Python: pandas' groupby of a report's
        # few trials costs more than their CDFs.
        positions: dict[tuple[str, str], list[int]] = {}
        keys = zip(trials["condition_id"].tolist(), trials["input_id"].tolist(), strict=True)
        for position, key in enumerate(keys):
            positions.setdefault(key, []).append(position)
        values = trials[metric].to_numpy(dtype=float)
        series = [
            (f"{labels[str(condition_id)]} · {input_id}", *cdf_points(values[chosen]))
            for (condition_id, input_id), chosen in positions.items()
        ]
    series = [s for s in series if s[1]]
    spec = cdf_chart(series, ctx.catalog.t(f"metric.{metric}"), ctx.catalog)
    # A percentile without enough values is missing (NaN in the table): None here.
    rows = [
        (
            row,
            cells(
                ctx,
                f"latency/{row['condition_id']}/{row['input_id']}/{row['metric']}",
                {column: row[column] for column in PERCENTILE_COLUMNS},
            ),
        )
        for row in records_of(report.latency)
    ]
    return render_partial(
        ctx,
        "latency_percentiles.html",
        report=report,
        rows=rows,
        percentiles=PERCENTILES,
        minimum=MIN_VALUES,
        metric=metric,
        spec=Markup(script_json(spec)) if series else None,
    )


@directive("prefill_source")
def prefill_source(ctx: PageContext) -> Markup:
    """The engine's own figure behind prompt-processing time (llama.cpp
    ``timings.prompt_ms``, ExLlamaV3 ``time_prefill``), or that it reports none."""
    engine = ctx.require_report().plan.engine
    return render_partial(
        ctx, "prefill_source.html", engine=engine, source=engine_prefill_source(engine)
    )
