"""The comparisons a report leads with (pure): each comparison beside both conditions'
summary rows, and the summary cards the plan's chosen headline (or the first ratio)
fills.

Whether a ratio may be quoted as a figure is decided here, once, so the cards, the home
and overview rows and the history never disagree about it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pandas as pd

from sitegen.plan.plan_models import HeadlineSpec, Plan
from sitegen.statistics.speed import Comparison, records_of

MIN_RATIO_TRIALS = 3
"""Trials with a generation rate each side of a ratio needs before the ratio is quoted as
a figure: with fewer, or with an interval that includes 1×, the cards, the home and
overview rows and the history call the ratio inconclusive and show its interval instead
(stated on the method page's glossary)."""

SummaryRows = dict[tuple[str, str], dict[str, Any]]
"""Speed summary rows by (condition, input)."""


@dataclass(frozen=True)
class HeadlineRow:
    """One comparison of the summary with both conditions' summary rows."""

    comparison: Comparison
    baseline: dict[str, Any]
    treatment: dict[str, Any]

    @property
    def ratio_trials(self) -> int:
        """Trials with a generation rate on the side that has fewer (the ratio's n)."""
        counts = [_trials(side.get("gen_tps_n")) for side in (self.baseline, self.treatment)]
        return min(counts)

    @property
    def crosses_one(self) -> bool:
        """The ratio's interval includes 1×: no change is as consistent with the data (an
        interval of one point, every resample alike, is that point, not a spread)."""
        interval = self.comparison.ratio_interval
        return (
            interval is not None and interval[0] <= 1 <= interval[1] and interval[0] < interval[1]
        )

    @property
    def too_few(self) -> bool:
        """Fewer than ``MIN_RATIO_TRIALS`` trials with a rate on a side."""
        return self.ratio_trials < MIN_RATIO_TRIALS

    @property
    def inconclusive(self) -> bool:
        """A ratio is given but may not be quoted as a figure: its interval includes 1× or
        a side has fewer than ``MIN_RATIO_TRIALS`` trials (``False`` without a ratio)."""
        return self.comparison.ratio is not None and (self.crosses_one or self.too_few)


def _trials(value: Any) -> int:
    try:
        return 0 if value is None or pd.isna(value) else int(value)
    except (TypeError, ValueError):
        return 0


@dataclass(frozen=True)
class KeyPanel:
    """The cards of one input: the ratio, the generation rate off → on, TTFT off → on and
    the treatment's acceptance."""

    input_id: str
    conditions: tuple[str, ...]
    """The conditions the cards show: baseline then treatment, or the measured one(s)."""
    headline: HeadlineRow | None
    """The comparison whose ratio the first card shows (``None``: no ratio to show)."""
    rows: dict[str, dict[str, Any]]
    """The speed summary row of each of ``conditions`` on ``input_id``."""
    ttft: dict[str, dict[str, Any]]
    """The TTFT percentile row (``latency``) of each of ``conditions`` that has one."""
    tail_complete: bool
    """Every shown condition has a P95 (enough requests): only then may a card say its
    percentiles come from enough requests."""


@dataclass(frozen=True)
class KeyFigures:
    """What the summary's cards show: per input, the headline the plan chooses
    (``Plan.headline``), else the first comparison with a ratio in plan order, else the
    campaign's first condition and input on their own."""

    panels: tuple[KeyPanel, ...]
    """One per shown input, in plan order (never empty)."""
    chosen: bool
    """Whether the plan chooses the headline (``Plan.headline``)."""

    @property
    def input_id(self) -> str:
        return self.panels[0].input_id

    @property
    def conditions(self) -> tuple[str, ...]:
        return self.panels[0].conditions

    @property
    def headline(self) -> HeadlineRow | None:
        """The first panel's comparison with a ratio (the changelog's and history's)."""
        return next((p.headline for p in self.panels if p.headline is not None), None)

    @property
    def rows(self) -> dict[str, dict[str, Any]]:
        return self.panels[0].rows


def summary_rows(summary_records: list[dict[str, Any]]) -> SummaryRows:
    """The speed summary's rows by (condition, input)."""
    return {(str(r["condition_id"]), str(r["input_id"])): r for r in summary_records}


def headline_rows(rows: SummaryRows, comparisons: list[Comparison]) -> list[HeadlineRow]:
    """Each comparison whose two conditions both have a summary row."""
    return [
        HeadlineRow(c, rows[(c.baseline, c.input_id)], rows[(c.treatment, c.input_id)])
        for c in comparisons
        if (c.baseline, c.input_id) in rows and (c.treatment, c.input_id) in rows
    ]


def _tail_complete(ttft: dict[str, dict[str, Any]]) -> bool:
    return bool(ttft) and all(
        row.get("p95") is not None and not pd.isna(row.get("p95")) for row in ttft.values()
    )


def _panel(
    rows: SummaryRows,
    ttft_rows: SummaryRows,
    input_id: str,
    conditions: tuple[str, ...],
    headline: HeadlineRow | None,
) -> KeyPanel:
    ttft = {c: ttft_rows[(c, input_id)] for c in conditions if (c, input_id) in ttft_rows}
    return KeyPanel(
        input_id,
        conditions,
        headline,
        {c: rows[(c, input_id)] for c in conditions},
        ttft,
        _tail_complete(ttft),
    )


def _chosen_headline(
    choice: HeadlineSpec, headlines: list[HeadlineRow], input_id: str
) -> HeadlineRow | None:
    """The comparison of the chosen pair on ``input_id`` that has a ratio."""
    return next(
        (
            h
            for h in headlines
            if h.comparison.input_id == input_id
            and (h.comparison.baseline, h.comparison.treatment)
            == (choice.baseline, choice.treatment)
            and h.comparison.ratio is not None
        ),
        None,
    )


def key_figures(
    plan: Plan, rows: SummaryRows, latency: pd.DataFrame, headlines: list[HeadlineRow]
) -> KeyFigures | None:
    """The summary cards' figures (``None`` without any usable speed trial): the plan's
    chosen headline on each chosen input, else the first comparison with a ratio."""
    if not rows:
        return None
    ttft_rows = summary_rows(records_of(latency[latency["metric"] == "ttft_s"]))
    choice = plan.headline
    if choice is not None:
        inputs = [choice.input] if choice.input else [i.id for i in plan.inputs]
        panels = []
        for input_id in inputs:
            conditions = tuple(
                c for c in (choice.baseline, choice.treatment) if (c, input_id) in rows
            )
            if conditions:
                row = _chosen_headline(choice, headlines, input_id)
                panels.append(_panel(rows, ttft_rows, input_id, conditions, row))
        if panels:
            return KeyFigures(tuple(panels), True)
    headline = next((row for row in headlines if row.comparison.ratio is not None), None)
    if headline is not None:
        input_id = headline.comparison.input_id
        conditions = (headline.comparison.baseline, headline.comparison.treatment)
    else:
        input_id = next(iter(rows))[1]
        conditions = tuple(c.id for c in plan.conditions if (c.id, input_id) in rows)
    return KeyFigures((_panel(rows, ttft_rows, input_id, conditions, headline),), False)
