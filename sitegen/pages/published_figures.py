"""A report's published figures as the pages print them: ``{figure id: text}`` (pure).

The report partials print a figure only through ``figure(id)``, which looks its text up
here and marks it ``<span data-figure="ID">TEXT</span>``; ``sitegen audit`` recomputes
this table from a version's downloads and compares every marked figure of every page with
it. One table, so a page cannot print a figure other than the one the audit recomputes.

Ids are ``/``-separated (plan ids never hold a ``/``):

- ``ratio/<baseline>/<treatment>/<input>/{ratio,change,low,high}``: a speed-up, as a
  change in percent, and its interval
- ``speed/<condition>/<input>/<column>``: the speed summary (generation rate median,
  quartiles, P10/P90, range, outliers, n, native rate, acceptance) and the latency
  breakdown's medians
- ``latency/<condition>/<input>/<metric>/{mean,p50,p90,p95,p99,max}``: latency
  percentiles (TPOT and ITL in milliseconds)
- ``memory/<condition>/<device>/{median,max}``: peak memory in GiB
- ``conditions/<condition>/{n,length_capped}``: the truncation card
- ``quality/{difference,difference_signed,lower_bound,lower_bound_signed,margin}``: the
  primary accuracy result in percentage points
"""

from __future__ import annotations

from typing import Any

import jinja2
from markupsafe import Markup, escape

from sitegen.pages.directives import format_gib, format_number, format_signed
from sitegen.statistics.latency import PERCENTILES
from sitegen.statistics.report import Report
from sitegen.statistics.speed import records_of

FIGURE_ATTRIBUTE = "data-figure"

SPEED_COLUMNS: dict[str, int | None] = {
    "n": None,
    "gen_tps_median": 2,
    "gen_tps_q1": 2,
    "gen_tps_q3": 2,
    "gen_tps_p10": 2,
    "gen_tps_p90": 2,
    "gen_tps_min": 2,
    "gen_tps_max": 2,
    "outliers": None,
    "native_tps_median": 2,
    "prompt_processing_s_median": 2,
    "ttft_s_median": 2,
    "t_first_visible_s_median": 2,
    "t_first_answer_s_median": 2,
    "t_natural_finish_s_median": 2,
    "e2e_s_median": 2,
    "generated_tokens_median": 1,
    "reasoning_tokens_median": 1,
    "answer_tokens_median": 1,
}
"""Speed summary columns a page prints, with their decimals (``None``: a whole number)."""

MILLISECOND_METRICS = ("tpot_s", "itl_s")
"""Latency metrics printed in milliseconds (per-token times are small)."""


def _percent(value: Any, digits: int, sign: bool = False) -> str:
    if value is None:
        return format_number(None)
    return (format_signed if sign else format_number)(value * 100, digits)


def report_figures(report: Report) -> dict[str, str]:
    """Every figure the report's pages print, as printed, by id (see the module)."""
    figures: dict[str, str] = {}
    for row in records_of(report.summary):
        key = f"speed/{row['condition_id']}/{row['input_id']}"
        for column, digits in SPEED_COLUMNS.items():
            if column in row:
                figures[f"{key}/{column}"] = format_number(row[column], digits)
        figures[f"{key}/acceptance"] = _percent(row.get("acceptance"), 1)
        figures[f"{key}/acceptance_median"] = _percent(row.get("acceptance_median"), 1)
    for comparison in report.comparisons:
        if comparison.ratio is None:
            continue
        key = f"ratio/{comparison.baseline}/{comparison.treatment}/{comparison.input_id}"
        low, high = comparison.ratio_interval
        figures |= {
            f"{key}/ratio": format_number(comparison.ratio, 2),
            f"{key}/change": format_signed(comparison.change_percent, 1),
            f"{key}/low": format_number(low, 2),
            f"{key}/high": format_number(high, 2),
        }
    for row in records_of(report.latency):
        key = f"latency/{row['condition_id']}/{row['input_id']}/{row['metric']}"
        scale = 1000 if row["metric"] in MILLISECOND_METRICS else 1
        for column in ("mean", *(f"p{p}" for p in PERCENTILES), "max"):
            value = row[column]
            figures[f"{key}/{column}"] = format_number(None if value is None else value * scale, 2)
    for row in records_of(report.memory):
        key = f"memory/{row['condition_id']}/{row['device']}"
        figures[f"{key}/median"] = format_gib(row["median_mib"])
        figures[f"{key}/max"] = format_gib(row["max_mib"])
    for overview in report.condition_overview:
        key = f"conditions/{overview.condition_id}"
        figures[f"{key}/n"] = format_number(overview.n)
        figures[f"{key}/length_capped"] = format_number(overview.length_capped)
    primary = report.quality.primary if report.quality is not None else None
    if primary is not None:
        figures |= {
            "quality/difference": _percent(primary.difference, 2),
            "quality/difference_signed": _percent(primary.difference, 2, sign=True),
            "quality/lower_bound": _percent(primary.lower_bound, 2),
            "quality/lower_bound_signed": _percent(primary.lower_bound, 2, sign=True),
            "quality/margin": _percent(primary.margin, 1),
        }
    return figures


def figure_span(figures: dict[str, str], figure_id: str) -> Markup:
    """The figure ``figure_id`` as a page prints it, marked for the audit; a figure the
    table does not hold is an error (a template cannot print one of its own)."""
    if figure_id not in figures:
        raise jinja2.TemplateRuntimeError(
            f"figure({figure_id!r}): not a figure of this report (pages/published_figures.py)"
        )
    return Markup('<span {}="{}">{}</span>').format(
        Markup(FIGURE_ATTRIBUTE), figure_id, escape(figures[figure_id])
    )
