"""Directives of the sweep page: the factors varied, the ratio of every speculative level
in every series, the lines against draft length, and the Pareto front of concurrency."""

from __future__ import annotations

import math
from typing import Any

import jinja2
import pandas as pd
from markupsafe import Markup

from sitegen.core.formatting import setting
from sitegen.pages import charts
from sitegen.pages.charts import axis_title
from sitegen.pages.directives.common import render_partial
from sitegen.pages.directives.page_context import PageContext, directive
from sitegen.pages.safe_json import script_json
from sitegen.statistics.report import Report
from sitegen.statistics.sweep import Sweep, factor_values

SWEEP_METRICS = ("gen_tps", "ratio", "acceptance")
"""What ``sweep_chart`` draws against draft length."""


def factor_name(ctx: PageContext, key: str) -> str:
    """A sweep factor in the page's language (engine options by their key)."""
    if key.startswith("option:"):
        return ctx.catalog.t("factor.option", key=key.removeprefix("option:"))
    return ctx.catalog.t(f"factor.{key}")


def level(ctx: PageContext, value: Any, factor: str = "") -> str:
    if value is None:
        # No draft length is speculation off; other unset factors take the default.
        return ctx.catalog.t("sweep.off" if factor == "draft_max" else "sweep.unset")
    return setting(value)


def series_label(ctx: PageContext, values: dict[str, Any]) -> str:
    """A sweep series in the page's language, e.g. ``温度 0.7 · 同時リクエスト 2``."""
    parts = [f"{factor_name(ctx, key)} {level(ctx, value, key)}" for key, value in values.items()]
    return " · ".join(parts) or ctx.catalog.t("sweep.all_series")


def require_sweep(ctx: PageContext) -> Sweep:
    sweep = ctx.require_report().sweep
    if sweep is None:
        raise jinja2.TemplateRuntimeError("this report has no sweep (one speculative level)")
    return sweep


@directive("sweep_varies")
def sweep_varies(ctx: PageContext, factor: str) -> bool:
    """Whether the report's sweep varies ``factor`` (``draft_max``, ``concurrency`` …);
    content can branch on it."""
    sweep = ctx.require_report().sweep
    return sweep is not None and factor in sweep.factors


@directive("sweep_factors")
def sweep_factors(ctx: PageContext) -> Markup:
    """The factors the sweep varies, named in the page's language, with their levels."""
    report = ctx.require_report()
    sweep = require_sweep(ctx)
    values = {c.id: factor_values(report.plan, c) for c in report.plan.conditions}
    rows = [
        (
            factor_name(ctx, factor),
            [level(ctx, v, factor) for v in dict.fromkeys(v[factor] for v in values.values())],
        )
        for factor in sweep.factors
    ]
    return render_partial(ctx, "sweep_factors.html", rows=rows)


@directive("sweep_table")
def sweep_table(ctx: PageContext) -> Markup:
    """Per input: the ratio of every speculative level (rows) in every series (columns) to
    its matched baseline, with its bootstrap interval and acceptance; a level whose
    speculation did not run states what was observed (C-SPECHEALTH)."""
    report = ctx.require_report()
    sweep = require_sweep(ctx)
    tables = []
    for spec in report.plan.inputs:
        rows = []
        for speculative in sweep.levels:
            cells = []
            for series in sweep.series:
                cell = sweep.cells.get((spec.id, speculative, series))
                heat = None
                if cell is not None and cell.comparison.ratio:
                    heat = min(abs(math.log2(cell.comparison.ratio)), 1.0)
                cells.append((cell, heat))
            rows.append((speculative, cells))
        tables.append((spec.id, rows))
    return render_partial(
        ctx,
        "sweep_table.html",
        report=report,
        tables=tables,
        series=[series_label(ctx, sweep.series_values[s]) for s in sweep.series],
        labels=ctx.labels(report),
    )


@directive("sweep_chart")
def sweep_chart(ctx: PageContext, metric: str = "gen_tps") -> Markup:
    """Per input, one line per series against draft length: ``gen_tps`` (every trial and
    the medians), ``ratio`` (median ratio with its bootstrap interval) or ``acceptance``
    (every trial's rate and the pooled rate)."""
    if metric not in SWEEP_METRICS:
        raise jinja2.TemplateRuntimeError(
            f"sweep_chart('{metric}'): one of gen_tps, ratio, acceptance"
        )
    report = ctx.require_report()
    sweep = require_sweep(ctx)
    titles = {
        "gen_tps": ctx.catalog.t("metric.gen_tps"),
        "ratio": ctx.catalog.t("sweep.ratio_axis"),
        "acceptance": ctx.catalog.t("sweep.acceptance_axis"),
    }
    plotted = []
    for spec in report.plan.inputs:
        figure = charts.sweep_chart(
            _sweep_lines(ctx, report, sweep, metric, spec.id),
            axis_title(ctx.catalog, metric),
            ctx.catalog,
            reference=1.0 if metric == "ratio" else None,
        )
        plotted.append(
            (spec.id, f"{report.slug}-sweep-{metric}-{spec.id}", Markup(script_json(figure)))
        )
    return render_partial(
        ctx, "sweep_chart.html", charts=plotted, metric=metric, title=titles[metric]
    )


def _sweep_lines(
    ctx: PageContext, report: Report, sweep: Sweep, metric: str, input_id: str
) -> list[dict]:
    """The lines of one input's sweep chart of ``metric``: one a series, with its trials
    (``gen_tps``, ``acceptance``) or its intervals (``ratio``)."""
    trials = report.usable_speed_trials
    summary = {(r["condition_id"], r["input_id"]): r for r in report.summary_records}
    by_treatment = {(c.treatment, c.input_id): c for c in report.comparisons}
    lines = []
    for series in sweep.series:
        members = sorted(
            (c for c in report.plan.conditions if sweep.condition_series[c.id] == series),
            key=lambda c: c.speculative.draft_max or 0,
        )
        if metric != "gen_tps":
            members = [c for c in members if c.speculative.mode != "off"]
        line: dict[str, Any] = {
            "name": series_label(ctx, sweep.series_values[series]),
            "x": [],
            "y": [],
        }
        points: dict[str, list[Any]] = {"x": [], "y": [], "text": [], "outlier": []}
        error: list[tuple[float, float] | None] = []
        for condition in members:
            x = condition.speculative.draft_max or 0
            row = summary.get((condition.id, input_id))
            if metric == "ratio":
                comparison = by_treatment.get((condition.id, input_id))
                if comparison is None or comparison.ratio is None:
                    continue
                line["x"].append(x)
                line["y"].append(round(comparison.ratio, 4))
                error.append(comparison.ratio_interval)
                continue
            if row is None:
                continue
            value = row["gen_tps_median"] if metric == "gen_tps" else row["acceptance"]
            if value is not None:
                line["x"].append(x)
                line["y"].append(round(value, 4))
            mine = trials[
                (trials["condition_id"] == condition.id) & (trials["input_id"] == input_id)
            ]
            if metric == "acceptance":
                mine = mine[mine["acceptance"].notna()]
            values = mine[metric if metric == "acceptance" else "gen_tps"]
            points["x"] += [x] * len(mine)
            points["y"] += [None if pd.isna(v) else round(float(v), 4) for v in values]
            points["text"] += mine["trial_id"].tolist()
            points["outlier"] += [bool(o) for o in mine["outlier"]]
        if metric != "ratio":
            line["trials"] = points
        else:
            line["error"] = error
        if line["x"] or points["x"]:
            lines.append(line)
    return lines


@directive("pareto_chart")
def pareto_chart(ctx: PageContext) -> Markup:
    """Per input: per-user generation rate against aggregate rate, one line per
    configuration through its concurrency levels, the Pareto front dashed, and the numbers
    behind it."""
    report = ctx.require_report()
    sweep = require_sweep(ctx)
    points = report.pareto
    conditions = {c.id: c for c in report.plan.conditions}
    others = [f for f in sweep.series_factors if f != "concurrency"]
    plotted = []
    for spec in report.plan.inputs:
        mine = points[points["input_id"] == spec.id].sort_values("concurrency")
        groups: dict[str, dict] = {}
        for condition_id, aggregate_tps, per_user_tps, concurrency in zip(
            mine["condition_id"],
            mine["aggregate_tps"],
            mine["per_user_tps"],
            mine["concurrency"],
            strict=True,
        ):
            values = factor_values(report.plan, conditions[condition_id])
            name = " · ".join(
                [sweep.condition_level[condition_id]]
                + ([series_label(ctx, {k: values[k] for k in others})] if others else [])
            )
            line = groups.setdefault(name, {"name": name, "x": [], "y": [], "text": []})
            line["x"].append(round(aggregate_tps, 3))
            line["y"].append(round(per_user_tps, 3))
            line["text"].append(f"×{concurrency}")
        front = mine[mine["front"]].sort_values("aggregate_tps")
        figure = charts.pareto_chart(
            list(groups.values()),
            {
                "x": [round(v, 3) for v in front["aggregate_tps"]],
                "y": [round(v, 3) for v in front["per_user_tps"]],
            },
            ctx.catalog,
        )
        plotted.append(
            (
                spec.id,
                f"{report.slug}-pareto-{spec.id}",
                Markup(script_json(figure)),
                mine.to_dict("records"),
            )
        )
    return render_partial(ctx, "pareto_chart.html", charts=plotted, labels=ctx.labels(report))
