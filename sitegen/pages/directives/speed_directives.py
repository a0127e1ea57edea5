"""Directives of the summary and speed pages: the headline, the cards at a glance, the
generation rate (chart, table, completion times), memory and telemetry."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import jinja2
import pandas as pd
from markupsafe import Markup

from sitegen.core.formatting import count, rate, seconds
from sitegen.pages.charts import trials_chart
from sitegen.pages.directives.common import (
    CHART_INLINE_BYTES,
    TABLE_PAGE_ROWS,
    cells,
    frame_records,
    render_partial,
)
from sitegen.pages.directives.page_context import PageContext, directive
from sitegen.pages.directives.quality_directives import primary_cells
from sitegen.pages.published_figures import SPEED_COLUMNS, FigureCell
from sitegen.pages.safe_json import script_json
from sitegen.statistics.headlines import MIN_RATIO_TRIALS, KeyPanel
from sitegen.statistics.latency import MIN_VALUES
from sitegen.statistics.speed import Comparison
from sitegen.statistics.system import memory_gaps


@dataclass(frozen=True)
class ComparisonCells:
    """What a headline sentence or the cards of one input print, as cells made once:
    the ratio (``ratio_cells``) and, by condition, its speed summary (``speed_cells``)
    and, on the cards, its TTFT percentiles (``latency/<condition>/<input>/ttft_s/…``)."""

    ratio: dict[str, FigureCell]
    speed: dict[str, dict[str, FigureCell]]
    ttft: dict[str, dict[str, FigureCell]] = field(default_factory=dict)


def speed_cells(ctx: PageContext, row: dict[str, Any]) -> dict[str, FigureCell]:
    """One speed summary row's figures as printed (``speed/<condition>/<input>/<column>``,
    ``SPEED_COLUMNS``), by column."""
    prefix = f"speed/{row['condition_id']}/{row['input_id']}"
    return cells(ctx, prefix, {column: row.get(column) for column in SPEED_COLUMNS})


def speed_rows(ctx: PageContext) -> list[tuple[dict, dict[str, FigureCell]]]:
    """Each speed summary row of the page's report with its figures as printed, by column."""
    return [(row, speed_cells(ctx, row)) for row in ctx.require_report().summary_records]


def ratio_cells(ctx: PageContext, comparison: Comparison) -> dict[str, FigureCell]:
    """A comparison's speed-up as printed (``ratio/<baseline>/<treatment>/<input>/…``):
    the ratio, the change in percent and the interval; none without a ratio (a ratio is
    a figure only with its interval)."""
    if comparison.ratio is None or comparison.ratio_interval is None:
        return {}
    low, high = comparison.ratio_interval
    prefix = f"ratio/{comparison.baseline}/{comparison.treatment}/{comparison.input_id}"
    values = {
        "ratio": comparison.ratio,
        "change": comparison.change_percent,
        "low": low,
        "high": high,
    }
    return cells(ctx, prefix, values)


def panel_cells(ctx: PageContext, panel: KeyPanel) -> ComparisonCells:
    """The figures of the cards of one input: its headline's ratio, each shown
    condition's speed summary and TTFT P50 and P95."""
    return ComparisonCells(
        ratio_cells(ctx, panel.headline.comparison) if panel.headline is not None else {},
        {condition: speed_cells(ctx, row) for condition, row in panel.rows.items()},
        {
            condition: cells(
                ctx,
                f"latency/{condition}/{panel.input_id}/ttft_s",
                {"p50": row.get("p50"), "p95": row.get("p95")},
            )
            for condition, row in panel.ttft.items()
        },
    )


@directive("headline")
def headline(ctx: PageContext) -> Markup:
    """Each comparison of the report as a sentence: the speed-up with its interval and
    both medians, or why there is none; each with its acceptance and limits."""
    report = ctx.require_report()
    rows = [
        (
            row,
            ComparisonCells(
                ratio_cells(ctx, row.comparison),
                {
                    row.comparison.baseline: speed_cells(ctx, row.baseline),
                    row.comparison.treatment: speed_cells(ctx, row.treatment),
                },
            ),
        )
        for row in report.headline
    ]
    return render_partial(
        ctx, "headline.html", report=report, rows=rows, min_ratio_trials=MIN_RATIO_TRIALS
    )


@directive("kpi_cards")
def kpi_cards(ctx: PageContext) -> Markup:
    """The summary at a glance: the headline speed-up with its interval, the generation
    rate off → on, TTFT P50/P95, acceptance, the quality verdict and the truncations, each
    a card that carries its caveats and links to its detail; a baseline-only campaign gets
    the cards of what it measured."""
    report = ctx.require_report()
    figures = report.key_figures
    if figures is None:
        return Markup("")
    quality = report.quality
    truncation = [
        cells(
            ctx, f"conditions/{row.condition_id}", {"length_capped": row.length_capped, "n": row.n}
        )
        for row in report.condition_overview
        if row.condition_id in figures.conditions
    ]
    return render_partial(
        ctx,
        "kpi_cards.html",
        report=report,
        figures=figures,
        panels=[(panel, panel_cells(ctx, panel)) for panel in figures.panels],
        minimum=MIN_VALUES,
        min_ratio_trials=MIN_RATIO_TRIALS,
        quality=quality,
        quality_cells=primary_cells(ctx),
        outcomes=quality.outcomes.set_index("factor").to_dict("index")
        if quality is not None
        else None,
        truncation=truncation,
    )


@directive("beside_headline")
def beside_headline(ctx: PageContext) -> Markup:
    """Per condition, beside the headline: concurrency, length-capped and
    answer-not-reached counts of its measured trials, peak memory, and the memory limit
    the plan declares (``speculation_health.max_device_memory_mib``)."""
    report = ctx.require_report()
    return render_partial(
        ctx,
        "beside_headline.html",
        rows=report.condition_overview,
        labels=ctx.labels(report),
        memory_limit=report.plan.speculation_health.max_device_memory_mib,
    )


@directive("measured_on")
def measured_on(ctx: PageContext) -> Markup:
    """The measured hardware (C-HARDWARE)."""
    return render_partial(ctx, "measured_on.html", report=ctx.require_report())


@directive("speed_chart")
def speed_chart(ctx: PageContext, metric: str = "gen_tps") -> Markup:
    """Every trial as a point with each condition's median, and the table of the chart's
    numbers. A large campaign's chart and table are files the page loads
    (``CHART_INLINE_BYTES``, ``TABLE_PAGE_ROWS``), so no page grows with the records."""
    report = ctx.require_report()
    labels = ctx.labels(report)
    # The table's columns, in its order; the chart also marks outliers.
    table_columns = ["trial_id", "order_index", "condition_id", "input_id", "seed", metric]
    table_columns += ["generated_tokens", "finish"]
    trials = _shown_trials(report.usable_speed_trials, [*table_columns, "outlier"])
    spec = script_json(trials_chart(trials, report.summary_records, metric, labels, ctx.catalog))
    lang = ctx.lang
    spec_file = None
    if len(spec) > CHART_INLINE_BYTES:
        # Not "<metric>.<lang>.json": the i18n plugin would take the language suffix for a
        # translation of the file and move it away from the address the page loads.
        spec_file = f"charts/{metric}-{lang}.json"
        ctx.extra_files[f"reports/{report.slug}/{spec_file}"] = spec.encode("utf-8")
    printed_value = rate if metric.endswith("tps") else seconds
    rows = [
        [
            trial_id,
            f"#t{order_index}",
            labels[condition_id],
            input_id,
            str(seed),
            printed_value(value),
            count(tokens),
            ctx.catalog.t(f"finish.{finish}"),
        ]
        for trial_id, order_index, condition_id, input_id, seed, value, tokens, finish in zip(
            *(trials[name] for name in table_columns), strict=True
        )
    ]
    pages = [rows[i : i + TABLE_PAGE_ROWS] for i in range(0, len(rows), TABLE_PAGE_ROWS)]
    table_files = []
    if len(pages) > 1:
        for index, page in enumerate(pages):
            name = f"{metric}.{lang}.{index}.json"
            ctx.extra_files[f"reports/{report.slug}/tables/{name}"] = script_json(page).encode()
            table_files.append(name)
    return render_partial(
        ctx,
        "speed_chart.html",
        report=report,
        metric=metric,
        spec=Markup(spec) if spec_file is None else None,
        spec_file=spec_file,
        rows=pages[0] if pages else [],
        table_files=table_files,
        # Each trial's record on the data page, from the summary or a page beside it.
        data_page="data/" if ctx.page == "index" else "../data/",
        row_count=len(rows),
        page_rows=TABLE_PAGE_ROWS,
    )


def _shown_trials(usable: pd.DataFrame, names: list[str]) -> dict[str, list[Any]]:
    """The columns ``names`` of ``usable`` that it has, by name, as lists of Python values
    in run order (``order_index``): only these columns are read and put in order (a sorted
    frame copied every column of every trial, once per page and metric)."""
    # argsort's default kind is the one sort_values uses: ties come out as they did.
    order = usable["order_index"].to_numpy().argsort().tolist()
    shown = {}
    for name in dict.fromkeys(names):
        if name in usable:
            values = usable[name].tolist()
            shown[name] = [values[i] for i in order]
    return shown


@directive("speed_table")
def speed_table(ctx: PageContext) -> Markup:
    """Per condition × input: the generation rate and its spread, each figure a cell
    printed as ``published_figures`` prints it; then the limits each was measured under."""
    report = ctx.require_report()
    return render_partial(
        ctx, "speed_table.html", report=report, rows=speed_rows(ctx), labels=ctx.labels(report)
    )


@directive("completion_time")
def completion_time(ctx: PageContext, input_id: str, ratio: bool = False) -> Markup:
    """End-to-end times of each condition beside their output lengths; the time ratio only
    when asked (C-LENGTH refuses it when output lengths differ)."""
    report = ctx.require_report()
    if input_id not in report.speed_input_ids:
        known = ", ".join(sorted(report.speed_input_ids)) or "none"
        raise jinja2.TemplateRuntimeError(
            f"completion_time('{input_id}'): not a speed input of this report (known: {known})"
        )
    times = report.completion_times(input_id)
    return render_partial(
        ctx,
        "completion_time.html",
        times=times,
        show_ratio=ratio and times.time_ratio is not None,
        labels=ctx.labels(report),
    )


@directive("memory_table")
def memory_table(ctx: PageContext) -> Markup:
    """Peak memory per condition and device (GPU via NVML, CPU engines: process RSS)."""
    report = ctx.require_report()
    rows = frame_records(report.memory)
    measured_conditions = report.usable_speed_trials["condition_id"].unique()
    return render_partial(
        ctx,
        "memory_table.html",
        report=report,
        rows=[
            (
                row,
                cells(
                    ctx,
                    f"memory/{row['condition_id']}/{row['device']}",
                    {"median": row["median_mib"], "max": row["max_mib"]},
                ),
            )
            for row in rows
        ],
        memory_limit=report.plan.speculation_health.max_device_memory_mib,
        gaps=memory_gaps(report.plan, {row["condition_id"] for row in rows}, measured_conditions),
        labels=ctx.labels(report),
    )


@directive("telemetry_table")
def telemetry_table(ctx: PageContext) -> Markup:
    """Per condition and device, beside the generation rate: GPU utilization, memory
    bandwidth, power, clock, temperature and memory (NVML), or the engine process's CPU
    time on CPU runs; energy (or CPU time) per generated token, labelled derived."""
    report = ctx.require_report()
    return render_partial(
        ctx,
        "telemetry_table.html",
        report=report,
        rows=frame_records(report.telemetry),
        rates=report.condition_rates,
        labels=ctx.labels(report),
    )
