"""An engine tracked across its builds (pure): the campaigns of one plan that declares a
series (``Plan.series``), one campaign per value of its factor, put in order, each
build's medians, and each step's verdict (``series_verdicts``).

A series is every published campaign of one plan: the same name and the same registered
plan (``Campaign.plan_sha256``), so every setup field the plan fixes is the same by
construction, and what the records show of the rest is compared step by step
(``setups.compare_setups``): a page can say that only the factor differs, or name what
else does. The builds are ordered by the factor's value in natural order (numbers inside
it compared as numbers: ``xllamacpp 2026.4.8672`` before ``xllamacpp 2026.10.11549``),
campaigns with the same value by when they were registered.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Literal

import numpy as np
import pandas as pd

from sitegen.core.comparison_spec import SetupField
from sitegen.plan.plan_models import Plan
from sitegen.records.inclusion import closed_loop
from sitegen.records.series_factor import factor_values
from sitegen.statistics.report import Report
from sitegen.statistics.series_verdicts import Better, StepVerdict, series_verdicts
from sitegen.statistics.setups import (
    Setup,
    SetupComparison,
    compare_setups,
    describe_setup,
    setup_records,
)

SeriesMetric = Literal["gen_tps", "ttft_s"]
"""The metrics a series follows: the generation rate (tok/s) and the time to first token
(s)."""
SERIES_METRICS: dict[SeriesMetric, Better] = {"gen_tps": "higher", "ttft_s": "lower"}
"""Each metric a series follows, in display order, with the direction that is faster."""


@dataclass(frozen=True)
class MetricFigure:
    """One metric of one build on one condition × input, over its trials that enter the
    statistics."""

    median: float | None
    n: int
    """Trials with a value (failed trials have none)."""
    quartiles: tuple[float, float] | None
    """Q1 and Q3 of the values: the interquartile range, the trials' spread (not an
    interval of the median); ``None`` without values."""


@dataclass(frozen=True)
class BuildCell:
    """One build's figures for one condition × speed input."""

    condition_id: str
    input_id: str
    figures: dict[SeriesMetric, MetricFigure]
    failed: int
    """Measured trials whose request failed: counted, never summarized."""


@dataclass(frozen=True)
class SeriesBuild:
    """One campaign of the series: one value of its factor."""

    campaign_id: str
    factor_value: str
    """The factor as the campaign's records hold it (``records.series_factor``; several
    distinct values joined with `` | ``; ``-`` without a record whose engine loaded)."""
    registered_at: datetime | None
    cells: tuple[BuildCell, ...]
    """Every condition × speed input of the series, in plan order."""

    def cell(self, condition_id: str, input_id: str) -> BuildCell:
        return next(
            c for c in self.cells if (c.condition_id, c.input_id) == (condition_id, input_id)
        )


@dataclass(frozen=True)
class StepCell:
    """The verdict of one step for one condition × input × metric."""

    condition_id: str
    input_id: str
    metric: SeriesMetric
    verdict: StepVerdict


@dataclass(frozen=True)
class SeriesStep:
    """From one build to the next."""

    previous: str
    """The earlier build's campaign id."""
    current: str
    """The later build's campaign id."""
    setup: SetupComparison
    """What the two campaigns' usable records show, field by field, the factor aside:
    ``setup.factor_alone and setup.factor_differs`` is "only the factor differs"."""
    cells: tuple[StepCell, ...]
    """Per condition × input (plan order), each metric (``SERIES_METRICS`` order)."""


@dataclass(frozen=True)
class BuildSeries:
    """The campaigns of one plan that declares a series, in series order."""

    plan: Plan
    plan_sha256: str
    factor: SetupField
    builds: tuple[SeriesBuild, ...]
    steps: tuple[SeriesStep, ...]
    """One per neighbouring pair of ``builds`` (none with a single build)."""
    address: str
    """Its page's folder, ``series/<address>/``: the plan's name, or where two series of a
    build share it (a plan edited between builds registers another plan, whose campaigns
    form a series of their own) the name and the first hex digits of the plan's hash
    (``make_series``)."""


@dataclass(frozen=True)
class StepFinding:
    """One step's verdict on one condition × input × metric, with its step."""

    step: SeriesStep
    cell: StepCell


_NUMBER = re.compile(r"(\d+)")


def natural_key(text: str) -> tuple[tuple[str, int], ...]:
    """A sort key comparing the numbers inside ``text`` as numbers: (text, number) pairs in
    the order they come (``2026.4.8672`` before ``2026.10.11549``); a value that ends where
    a longer one goes on sorts first."""
    parts = _NUMBER.split(text)
    # re.split with one group alternates text, number, text, …, ending with text.
    numbers = [int(p) for p in parts[1::2]]
    return tuple(zip(parts[0::2], [*numbers, -1], strict=True))


def _order_key(build: SeriesBuild) -> tuple[object, ...]:
    """Natural order of the factor, then registration (unknown last), then campaign id."""
    at = build.registered_at
    return (
        natural_key(build.factor_value),
        at is None,
        at.timestamp() if at is not None else 0.0,
        build.campaign_id,
    )


def make_series(reports: Sequence[Report]) -> list[BuildSeries]:
    """Every series among ``reports``: the campaigns of each plan that declares one,
    grouped by plan name and registered plan hash, in order of each group's first
    report."""
    groups: dict[tuple[str, str], tuple[SetupField, list[Report]]] = {}
    for report in reports:
        series = report.plan.series
        if series is not None:
            key = (report.plan.name, report.campaign.plan_sha256)
            groups.setdefault(key, (series.factor, []))[1].append(report)
    found = [build_series(group, factor) for factor, group in groups.values()]
    names = [series.plan.name for series in found]
    return [
        replace(series, address=f"{series.address}-{series.plan_sha256[:12]}")
        if names.count(series.plan.name) > 1
        else series
        for series in found
    ]


Values = dict[tuple[str, str, SeriesMetric], np.ndarray]
"""A build's values of each condition × input × metric (trials that enter the
statistics)."""


@dataclass(frozen=True)
class _Measured:
    """One campaign read as a build: what the series shows of it, the values its steps'
    intervals resample, and the setup its usable speed records show."""

    build: SeriesBuild
    values: Values
    setup: Setup


def build_series(reports: Sequence[Report], factor: SetupField) -> BuildSeries:
    """The series of ``reports`` (campaigns of one plan) in ``factor``: each build's
    figures in series order, and each step's setup comparison and verdicts."""
    first = reports[0]
    pairs = _cell_keys(reports)
    measured = sorted(
        (_measure(report, factor, pairs) for report in reports),
        key=lambda m: _order_key(m.build),
    )
    verdicts = {
        (condition_id, input_id, metric): series_verdicts(
            [m.values[(condition_id, input_id, metric)] for m in measured],
            first.plan.dispersion,
            better,
        )
        for condition_id, input_id in pairs
        for metric, better in SERIES_METRICS.items()
    }
    steps = tuple(
        SeriesStep(
            previous=before.build.campaign_id,
            current=after.build.campaign_id,
            setup=compare_setups(before.setup, after.setup, factor),
            cells=tuple(StepCell(*key, found[index]) for key, found in verdicts.items()),
        )
        for index, (before, after) in enumerate(zip(measured, measured[1:], strict=False))
    )
    builds = tuple(m.build for m in measured)
    plan = first.plan
    return BuildSeries(plan, first.campaign.plan_sha256, factor, builds, steps, plan.name)


def _cell_keys(reports: Sequence[Report]) -> list[tuple[str, str]]:
    """The condition × speed input pairs any of the campaigns measured (closed-loop
    measured trials, failed ones included), in plan order."""
    seen: set[tuple[str, str]] = set()
    for report in reports:
        trials = _closed_loop_measured(report)
        seen |= set(zip(trials["condition_id"], trials["input_id"], strict=True))
    plan = reports[0].plan
    return [
        (condition.id, item.id)
        for condition in plan.conditions
        for item in plan.inputs
        if (condition.id, item.id) in seen
    ]


def _closed_loop_measured(report: Report) -> pd.DataFrame:
    trials = report.trials
    speed = trials["input_id"].isin(report.speed_input_ids)
    return trials[speed & (trials["role"] == "measured") & closed_loop(trials)]


def _measure(report: Report, factor: SetupField, pairs: list[tuple[str, str]]) -> _Measured:
    """One campaign as a build of the series, each of ``pairs`` a cell."""
    measured = _closed_loop_measured(report)
    failed = measured[measured["status"] == "failed"]
    usable = report.usable_speed_trials
    values: Values = {}
    cells = []
    for condition_id, input_id in pairs:
        figures: dict[SeriesMetric, MetricFigure] = {}
        for metric in SERIES_METRICS:
            found = _values(usable, condition_id, input_id, metric)
            values[(condition_id, input_id, metric)] = found
            figures[metric] = _figure(found)
        count = int(
            ((failed["condition_id"] == condition_id) & (failed["input_id"] == input_id)).sum()
        )
        cells.append(BuildCell(condition_id, input_id, figures, count))
    campaign = report.campaign
    rows = campaign.rows
    setup = describe_setup(
        setup_records(campaign, rows.loc[usable.index], by=("condition_id", "input_id")), factor
    )
    build = SeriesBuild(
        campaign.campaign_id,
        _factor_value(report, factor),
        report.registered_at,
        tuple(cells),
    )
    return _Measured(build, values, setup)


def _values(trials: pd.DataFrame, condition_id: str, input_id: str, metric: str) -> np.ndarray:
    """The present values of ``metric`` of one condition × input."""
    selected = (trials["condition_id"] == condition_id) & (trials["input_id"] == input_id)
    found = trials.loc[selected, metric].astype(float).to_numpy()
    return found[~np.isnan(found)]


def _figure(values: np.ndarray) -> MetricFigure:
    if not len(values):
        return MetricFigure(None, 0, None)
    # Linear interpolation between order statistics, as the speed summary's quartiles.
    q1, q3 = np.quantile(values, [0.25, 0.75])
    return MetricFigure(float(np.median(values)), len(values), (float(q1), float(q3)))


def _factor_value(report: Report, factor: SetupField) -> str:
    """The factor as the campaign's records hold it (``records.series_factor``, the value
    ``measure`` and C-SERIES compare), each distinct value once: read from one record of
    each distinct setup, which include every distinct provenance."""
    campaign = report.campaign
    found = factor_values(setup_records(campaign, campaign.rows), factor)
    return " | ".join(sorted(found)) or "-"


def regressions(series: BuildSeries) -> list[StepFinding]:
    """Every step's "slower" verdict, in series order (oldest step first), then plan order
    of conditions and inputs, then ``SERIES_METRICS`` order: what the page lists first."""
    return [
        StepFinding(step, cell)
        for step in series.steps
        for cell in step.cells
        if cell.verdict.verdict == "slower"
    ]


def listed(series: BuildSeries) -> list[StepFinding]:
    """Every step's verdicts as the page lists them: the regressions first
    (``regressions``), then the rest in the same order."""
    rest = [
        StepFinding(step, cell)
        for step in series.steps
        for cell in step.cells
        if cell.verdict.verdict != "slower"
    ]
    return [*regressions(series), *rest]
