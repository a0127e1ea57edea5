"""Directives of open-loop load: throughput, goodput and latency against the offered
rate, with each condition's saturation point."""

from __future__ import annotations

from markupsafe import Markup

from sitegen.core.formatting import milliseconds, seconds
from sitegen.pages.charts import PALETTE, load_chart
from sitegen.pages.directives.common import list_separator, render_partial
from sitegen.pages.directives.page_context import PageContext, directive
from sitegen.pages.safe_json import script_json
from sitegen.plan.slo_targets import slo_key
from sitegen.statistics.latency import MIN_VALUES
from sitegen.statistics.load import SATURATION_LATENCY_FACTOR, SATURATION_SHORTFALL
from sitegen.statistics.report import Report
from sitegen.statistics.speed import records_of


@directive("load_results")
def load_results(ctx: PageContext) -> Markup:
    """Open-loop request-rate load (plans with ``load.profile`` ``constant`` or
    ``poisson``): achieved throughput (requests/s, output tokens/s), goodput and latency
    (median and P95 of TTFT and end-to-end) against the offered rate, each condition and
    input's saturation point marked, and the table of every figure; with the definitions
    (C-LOAD). A campaign without load runs says so."""
    report = ctx.require_report()
    rows = records_of(report.load)
    plan = report.plan
    charts: list[tuple[str, Markup, str]] = []
    if rows:
        charts = [
            (name, Markup(script_json(spec)), caption)
            for name, spec, caption in load_charts(ctx, report, rows)
        ]
    return render_partial(
        ctx,
        "load.html",
        report=report,
        rows=rows,
        charts=charts,
        load=plan.load if plan.load is not None and plan.load.open_loop else None,
        slo=plan.slo,
        slo_key=slo_key(plan.slo),
        targets=slo_targets(ctx, report),
        saturation=report.saturation,
        shortfall=SATURATION_SHORTFALL * 100,
        factor=SATURATION_LATENCY_FACTOR,
        minimum=MIN_VALUES,
    )


def slo_targets(ctx: PageContext, report: Report) -> str:
    """The declared targets as a reader reads them (``TTFT ≤ 1.00 s, …``)."""
    slo = report.plan.slo
    if slo is None:
        return ""
    declared = [
        ("ttft", slo.ttft_p95_s, seconds),
        ("itl", slo.itl_p99_ms, milliseconds),
        ("e2e", slo.e2e_p95_s, seconds),
    ]
    return list_separator(ctx).join(
        ctx.catalog.t(f"load.target.{name}", value=shown(value))
        for name, value, shown in declared
        if value is not None
    )


def load_charts(ctx: PageContext, report: Report, rows: list[dict]) -> list[tuple[str, dict, str]]:
    """The load section's charts: completed requests/s (with goodput), output tokens/s and
    latency, against the offered rate."""
    t = ctx.catalog.t
    lines: dict[str, list[dict]] = {"throughput": [], "tokens": [], "latency": []}
    marks: dict[str, list[dict]] = {"throughput": [], "tokens": [], "latency": []}
    series: dict[tuple[str, str], list[dict]] = {}
    for row in rows:
        series.setdefault((row["condition_id"], row["input_id"]), []).append(row)
    labels = ctx.labels(report)
    for index, ((condition_id, input_id), mine) in enumerate(series.items()):
        name = f"{labels[condition_id]} · {input_id}"
        _series_lines(ctx, report, mine, name, PALETTE[index % len(PALETTE)], lines)
        for row in mine:
            if row["saturation_point"]:
                for kind, column in (
                    ("throughput", "throughput_rps"),
                    ("tokens", "output_tps"),
                    ("latency", "e2e_median_s"),
                ):
                    if row[column] is not None:
                        marks[kind].append(
                            {"name": name, "x": row["offered_rate"], "y": row[column]}
                        )
    rates = sorted({row["offered_rate"] for row in rows})
    return [
        (
            "throughput",
            load_chart(
                lines["throughput"],
                t("chart.load_throughput"),
                ctx.catalog,
                marks["throughput"],
                diagonal=rates,
            ),
            t("chart.load_throughput_caption"),
        ),
        (
            "tokens",
            load_chart(lines["tokens"], t("chart.load_output_tps"), ctx.catalog, marks["tokens"]),
            t("chart.load_tokens_caption"),
        ),
        (
            "latency",
            load_chart(lines["latency"], t("chart.load_latency"), ctx.catalog, marks["latency"]),
            t("chart.load_latency_caption"),
        ),
    ]


def _series_lines(
    ctx: PageContext,
    report: Report,
    mine: list[dict],
    name: str,
    color: str,
    lines: dict[str, list[dict]],
) -> None:
    """One condition and input's lines of each load chart, added to ``lines``."""
    t = ctx.catalog.t
    x = [row["offered_rate"] for row in mine]

    def line(column: str, label: str, dash: str = "solid") -> dict:
        return {
            "name": f"{name} · {label}",
            "x": x,
            "y": [row[column] for row in mine],
            "dash": dash,
            "color": color,
        }

    lines["throughput"].append(line("throughput_rps", t("chart.load_achieved")))
    if report.plan.slo is not None:
        lines["throughput"].append(line("goodput_rps", t("chart.load_goodput"), "dot"))
    lines["tokens"].append(line("output_tps", t("chart.load_achieved")))
    lines["latency"].append(line("ttft_median_s", t("chart.load_ttft_median")))
    lines["latency"].append(line("e2e_median_s", t("chart.load_e2e_median"), "dash"))
    if any(row["e2e_p95_s"] is not None for row in mine):
        lines["latency"].append(line("ttft_p95_s", t("chart.load_ttft_p95"), "dot"))
        lines["latency"].append(line("e2e_p95_s", t("chart.load_e2e_p95"), "dashdot"))
