"""A report's published figures as the pages print them: ``{figure id: text}`` (pure).

The report partials print a figure only as a ``FigureCell`` made here: its value, its
text (formatted by ``sitegen/core/formatting.py``, as every figure is) and its id, printed as
``<span data-figure="ID">TEXT</span>``; the directives hand partials the cells they
print (``figure_cells``), so no template builds an id or formats a figure of its own;
``sitegen audit`` recomputes this table from a version's downloads and compares every
marked figure of every page with it. One table, so a page cannot print a figure other
than the one the audit recomputes.

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
- ``cost/<condition>/<input>/{throughput,per_hour,cost}``: throughput at the plan's
  concurrency, the declared price per hour of the devices used and the cost per million
  output tokens (only where a cost is computed)
- ``quality/{difference,difference_signed,lower_bound,lower_bound_signed,margin}``: the
  primary accuracy result in percentage points
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import jinja2
from markupsafe import Markup, escape

from sitegen.core.formatting import (
    count,
    gib,
    median_count,
    money,
    percent,
    rate,
    ratio,
    seconds,
    seconds_as_ms,
    signed,
)
from sitegen.statistics.latency import PERCENTILES
from sitegen.statistics.report import Report
from sitegen.statistics.speed import records_of

FIGURE_ATTRIBUTE = "data-figure"

SPEED_COLUMNS: dict[str, Callable[[Any], str]] = {
    "n": count,
    "gen_tps_median": rate,
    "gen_tps_q1": rate,
    "gen_tps_q3": rate,
    "gen_tps_p10": rate,
    "gen_tps_p90": rate,
    "gen_tps_min": rate,
    "gen_tps_max": rate,
    "outliers": count,
    "native_tps_median": rate,
    "acceptance": percent,
    "acceptance_median": percent,
    "prompt_processing_s_median": seconds,
    "ttft_s_median": seconds,
    "t_first_visible_s_median": seconds,
    "t_first_answer_s_median": seconds,
    "t_natural_finish_s_median": seconds,
    "e2e_s_median": seconds,
    "generated_tokens_median": median_count,
    "reasoning_tokens_median": median_count,
    "answer_tokens_median": median_count,
}
"""Speed summary columns a page prints, each with its formatter."""

MILLISECOND_METRICS = ("tpot_s", "itl_s")
"""Latency metrics printed in milliseconds (per-token times are small)."""


def report_figures(report: Report) -> dict[str, str]:
    """Every figure the report's pages print, as printed, by id (see the module)."""
    figures: dict[str, str] = {}
    # The summary's rows as the report holds them (a missing value prints as one either
    # way), not converted anew, every column of them, for the few columns printed.
    for row in report.summary_records:
        key = f"speed/{row['condition_id']}/{row['input_id']}"
        for column, shown in SPEED_COLUMNS.items():
            figures[f"{key}/{column}"] = shown(row.get(column))
    for comparison in report.comparisons:
        # A ratio is given only with its interval (``Comparison.ratio``).
        if comparison.ratio is None or comparison.ratio_interval is None:
            continue
        key = f"ratio/{comparison.baseline}/{comparison.treatment}/{comparison.input_id}"
        low, high = comparison.ratio_interval
        figures |= {
            f"{key}/ratio": ratio(comparison.ratio),
            f"{key}/change": signed(comparison.change_percent, 1),
            f"{key}/low": ratio(low),
            f"{key}/high": ratio(high),
        }
    for row in records_of(report.latency):
        key = f"latency/{row['condition_id']}/{row['input_id']}/{row['metric']}"
        shown = seconds_as_ms if row["metric"] in MILLISECOND_METRICS else seconds
        for column in ("mean", *(f"p{p}" for p in PERCENTILES), "max"):
            figures[f"{key}/{column}"] = shown(row[column])
    for row in records_of(report.memory):
        key = f"memory/{row['condition_id']}/{row['device']}"
        figures[f"{key}/median"] = gib(row["median_mib"])
        figures[f"{key}/max"] = gib(row["max_mib"])
    for overview in report.condition_overview:
        key = f"conditions/{overview.condition_id}"
        figures[f"{key}/n"] = count(overview.n)
        figures[f"{key}/length_capped"] = count(overview.length_capped)
    for cost in report.token_costs.rows:
        if cost.cost_per_million is not None:
            key = f"cost/{cost.condition_id}/{cost.input_id}"
            figures[f"{key}/throughput"] = rate(cost.throughput_tps)
            figures[f"{key}/per_hour"] = money(cost.per_hour)
            figures[f"{key}/cost"] = money(cost.cost_per_million)
    primary = report.quality.primary if report.quality is not None else None
    if primary is not None:
        figures |= {
            "quality/difference": percent(primary.difference, 2),
            "quality/difference_signed": signed(primary.difference * 100, 2),
            "quality/lower_bound": percent(primary.lower_bound, 2),
            "quality/lower_bound_signed": signed(primary.lower_bound * 100, 2),
            "quality/margin": percent(primary.margin),
        }
    return figures


@dataclass(frozen=True)
class FigureCell:
    """One figure as a page prints it: the ``value`` behind it, its printed ``text`` and
    its ``id``. Made once in Python; a partial prints it as it is, marked for the audit
    (``<span data-figure="ID">TEXT</span>``), or passes it to ``t``, which keeps markup."""

    value: Any
    text: str
    id: str

    def __html__(self) -> str:
        # Joined, not ``Markup.format``: that parses its template in Python, cell by cell.
        return Markup(f'<span {FIGURE_ATTRIBUTE}="{escape(self.id)}">{escape(self.text)}</span>')

    def __str__(self) -> str:
        return str(self.__html__())


def figure_span(figures: dict[str, str], figure_id: str, value: Any = None) -> FigureCell:
    """The figure ``figure_id`` as a page prints it, marked for the audit; a figure the
    table does not hold is an error (a directive cannot print one of its own)."""
    if figure_id not in figures:
        raise jinja2.TemplateRuntimeError(
            f"{figure_id!r}: not a figure of this report (pages/published_figures.py)"
        )
    return FigureCell(value, figures[figure_id], figure_id)


def figure_cells(
    figures: dict[str, str], prefix: str, values: dict[str, Any]
) -> dict[str, FigureCell]:
    """The figures ``<prefix>/<name>`` for each name of ``values`` (the value behind each),
    as cells by name: e.g. a speed summary row's ``speed/<condition>/<input>/…``."""
    return {name: figure_span(figures, f"{prefix}/{name}", value) for name, value in values.items()}
