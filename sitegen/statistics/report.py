"""One campaign's statistics, computed once for both languages (pure).

This is the only place a page's figures come from: directives and partials select and
format these results; they compute nothing. ``make_report`` computes every one of them
before any page is rendered, so a statistic that cannot be computed stops the build at
the summarize stage, naming no page, instead of surfacing halfway through one; the
``Report`` it returns is frozen and holds values only.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any, cast

import pandas as pd

from sitegen.core.price_list import PriceList
from sitegen.plan.expand import iter_trials
from sitegen.plan.items import plan_items
from sitegen.plan.labels import condition_labels
from sitegen.plan.plan_models import Plan
from sitegen.records.campaign import Campaign
from sitegen.records.left_out import LeftOut
from sitegen.statistics.condition_facts import (
    FACT_COLUMNS,
    AnswerLimits,
    CompletionTimes,
    ConditionOverview,
    ThresholdResult,
    capacity_as_declared,
    completion_times,
    condition_overview,
    condition_rates,
    filled_lengths,
    observed_thresholds,
    quality_limits,
)
from sitegen.statistics.dispersion import outlier_labels
from sitegen.statistics.examples import ExampleDraw, draw_examples
from sitegen.statistics.headlines import (
    HeadlineRow,
    KeyFigures,
    headline_rows,
    key_figures,
    summary_rows,
)
from sitegen.statistics.health import HealthFinding, speculation_health
from sitegen.statistics.latency import latency_percentiles
from sitegen.statistics.load import SaturationPoint, load_table, saturation_points
from sitegen.statistics.quality_records import (
    PostHocResult,
    QualitySummary,
    post_hoc_results,
    score_quality,
    summarize_quality,
)
from sitegen.statistics.report_warnings import headline_warning, observation_warnings
from sitegen.statistics.setups import setup_records
from sitegen.statistics.speed import Comparison, compare_conditions, memory_summary, speed_summary
from sitegen.statistics.sweep import Sweep, make_sweep, pareto_points
from sitegen.statistics.system import (
    SystemCondition,
    hardware,
    system_frame,
    system_table,
    unhashed_model,
)
from sitegen.statistics.telemetry import telemetry_frame, telemetry_summary
from sitegen.statistics.token_cost import TokenCosts, token_costs
from sitegen.statistics.trials import (
    RunOrder,
    closed_loop,
    excluded_counts,
    observed_run_order,
    trials_frame,
)


@dataclass(frozen=True)
class Report:
    """One campaign's statistics, ready to render in any language."""

    campaign: Campaign
    trials: pd.DataFrame
    """Every record as a row."""
    summary: pd.DataFrame
    """Per condition × speed input summary (trials that enter the statistics)."""
    summary_records: list[dict[str, Any]]
    """``summary`` as one dict per row: the pages of both languages read it many times
    (read only)."""
    speed_input_ids: frozenset[str]
    usable_speed_trials: pd.DataFrame
    """Trials of the speed inputs that enter the statistics (quality answers have their
    own page)."""
    comparisons: list[Comparison]
    excluded: dict[str, int]
    quality: QualitySummary | None
    """Paired quality results (``None`` when the plan has no quality evaluation)."""
    memory: pd.DataFrame
    """Peak memory per condition and device over the speed trials."""
    health: dict[str, tuple[HealthFinding, ...]]
    """Per speculative condition: how its speculation fell outside the plan's bounds, each
    finding of one input or (memory) of every input (empty: it ran as declared),
    C-SPECHEALTH."""
    latency: pd.DataFrame
    """Percentiles of each latency metric per condition × speed input
    (``latency.latency_percentiles``; the ``latency_percentiles`` download)."""
    load: pd.DataFrame
    """Throughput, latency and goodput per condition × speed input × offered rate of the
    plan's open-loop load runs (``load.load_table``; the ``load`` download); empty
    without them."""
    saturation: list[SaturationPoint]
    """The saturation point of each condition × speed input under load."""
    condition_labels: dict[str, dict[str, str]]
    """What readers call each condition, per language, in plan order: the plan's
    ``label``, else a description of its settings (``plan.labels``); never its id."""
    headline: list[HeadlineRow]
    """Each comparison whose two conditions both have a summary row."""
    key_figures: KeyFigures | None
    """The summary cards' figures (``None`` without any usable speed trial)."""
    telemetry: pd.DataFrame
    """Device telemetry per condition and device over the speed trials."""
    condition_rates: dict[str, dict[str, float]]
    """Per condition, the median over its speed inputs of the per-input medians of the
    generation rate and of energy and CPU time per generated token."""
    sweep: Sweep | None
    """The sweep view (several speculative or concurrency levels), else ``None``."""
    pareto: pd.DataFrame
    """Per-user against aggregate generation rate per condition and input, the Pareto
    front marked (meaningful when concurrency varies)."""
    system: list[SystemCondition]
    """Per condition: the system its usable records ran on, each distinct value listed."""
    system_table: pd.DataFrame
    """``system`` as one row per condition × field × distinct value."""
    thresholds: list[ThresholdResult]
    """Each threshold claim of the annotations as observed in k of n trials."""
    examples: ExampleDraw
    """Curated examples in declaration order, then the plan's seeded draw."""
    completion_times_by_input: dict[str, CompletionTimes]
    """End-to-end times per condition on each speed input (``completion_times``)."""
    post_hoc: list[PostHocResult]
    """Each post-hoc analysis of the annotations beside its non-inferiority result."""
    hardware: str
    """Every device set the usable records ran on, e.g. ``1× AMD EPYC`` (``; ``)."""
    filled_lengths: dict[str, tuple[int, int]]
    """Per condition: the smallest and largest input length of its usable trials."""
    condition_overview: list[ConditionOverview]
    """Per condition in plan order, what the summary shows beside the headline."""
    capacity_as_declared: list[str]
    """Conditions whose engine did not report the context it allocated."""
    quality_limits: list[AnswerLimits]
    """The problems' limits, then each document task's (empty without a quality
    evaluation)."""
    headline_warning: str | None
    """Why the summary carries no comparison, for ``sitegen check`` (``None``: it does)."""
    observation_warnings: list[str]
    """Every place a page states an observation where a figure might be expected."""
    run_order: RunOrder
    """The run order the records show."""
    unhashed_model: bool
    """Whether a usable record's model could not be hashed (a remote server's file)."""
    token_costs: TokenCosts
    """Per condition × speed input: throughput at the plan's concurrency and the cost per
    million output tokens from the project's declared prices, or why there is none."""
    signing_key: str | None = None
    """Fingerprint of the key the project declares (``None``: it declares none)."""
    signed_at: str | None = None
    """When the campaign's manifest was signed with it."""
    left_out: tuple[LeftOut, ...] = ()
    """The campaigns of this report's plan (by name) that the version does not publish,
    each with why (``records.left_out``): the method page lists them."""

    @property
    def plan(self) -> Plan:
        return self.campaign.plan

    @property
    def slug(self) -> str:
        """The report's address under ``reports/`` (``Campaign.report_name``): the plan's
        name, or for a campaign of a series its campaign id without the plan hash. The
        campaign (name and plan hash) is on the method page, in the system table and in
        the downloads."""
        return self.campaign.report_name

    @property
    def registered_at(self) -> datetime | None:
        """When the plan was registered (``Campaign.registered_at``)."""
        return self.campaign.registered_at

    @property
    def uses_ngram(self) -> bool:
        """Whether a condition uses n-gram self-speculation (never to be called MTP)."""
        return any(c.speculative.mode.startswith("ngram") for c in self.plan.conditions)

    def completion_times(self, input_id: str) -> CompletionTimes:
        """End-to-end times per condition on speed input ``input_id``."""
        return self.completion_times_by_input[input_id]


def make_report(campaign: Campaign, prices: PriceList | None = None) -> Report:
    """Every statistic of the measured ``campaign``, computed now, in order: the trials
    table with its outliers marked, the speed summary and comparisons, then each table
    and view the pages show. ``prices``: the project's declared device prices, which
    the costs per million output tokens need (``None``: it declares none)."""
    plan = campaign.plan
    items = plan_items(plan)
    speed_ids = frozenset(i.id for i in plan.inputs)
    frame = trials_frame(campaign.table)
    # The trials frame's rows are the table's records: the table's usable mask is theirs.
    usable = campaign.table.usable
    # One selection: the usable trials of every input (the quality answers' too) would be
    # a copy of nearly the whole table.
    usable_speed_trials = frame[usable & frame["input_id"].isin(speed_ids).to_numpy()]
    labels = outlier_labels(usable_speed_trials, plan.dispersion.outliers)
    frame["outlier"] = False
    frame.loc[usable_speed_trials.index, "outlier"] = labels
    usable_speed_trials["outlier"] = labels
    summary = speed_summary(usable_speed_trials)
    memory = memory_summary(campaign.table, set(speed_ids))
    health = speculation_health(plan, summary, memory)
    by_side = ("condition_id", "input_id")
    setups = setup_records(campaign, campaign.rows.loc[usable_speed_trials.index], by=by_side)
    comparisons = compare_conditions(plan, summary, setups, usable_speed_trials, health)
    # The rows as dicts, made once: the headline rows and cards share them.
    summary_records = cast(list[dict[str, Any]], summary.to_dict("records"))
    rows = summary_rows(summary_records)
    latency = latency_percentiles(usable_speed_trials, campaign.table.chunk_gaps)
    load = load_table(plan, frame, campaign.table.chunk_gaps)
    headline = headline_rows(rows, comparisons)
    thresholds = observed_thresholds(campaign.annotations.thresholds, usable_speed_trials)
    system = system_table(campaign.table, plan)
    usable_facts = frame.loc[usable, FACT_COLUMNS]
    quality = (
        summarize_quality(plan, score_quality(plan, items, campaign.rows, campaign.iter_texts))
        if plan.quality
        else None
    )
    return Report(
        campaign=campaign,
        trials=frame,
        summary=summary,
        summary_records=summary_records,
        speed_input_ids=speed_ids,
        usable_speed_trials=usable_speed_trials,
        comparisons=comparisons,
        excluded=_excluded(plan, frame),
        quality=quality,
        memory=memory,
        health=health,
        latency=latency,
        load=load,
        saturation=saturation_points(load),
        condition_labels=condition_labels(plan),
        headline=headline,
        key_figures=key_figures(plan, rows, latency, headline),
        telemetry=telemetry_summary(telemetry_frame(campaign.table), set(speed_ids)),
        condition_rates=condition_rates(summary),
        sweep=make_sweep(plan, summary, comparisons),
        pareto=pareto_points(summary),
        system=system,
        system_table=system_frame(system),
        thresholds=thresholds,
        examples=draw_examples(campaign, items),
        completion_times_by_input={
            i: completion_times(i, summary_records, comparisons) for i in speed_ids
        },
        post_hoc=post_hoc_results(plan, quality, campaign.annotations.post_hoc),
        hardware=hardware(campaign.table),
        filled_lengths=filled_lengths(usable_facts),
        condition_overview=condition_overview(plan, usable_facts),
        capacity_as_declared=capacity_as_declared(plan, usable_facts),
        quality_limits=quality_limits(plan, usable_facts),
        headline_warning=headline_warning(plan, headline, comparisons),
        observation_warnings=observation_warnings(comparisons, thresholds),
        run_order=observed_run_order(campaign.rows),
        unhashed_model=unhashed_model(campaign.table),
        token_costs=token_costs(plan, campaign.table, speed_ids, prices),
    )


def _excluded(plan: Plan, frame: pd.DataFrame) -> dict[str, int]:
    """Warm-ups and failed attempts beside the planned and measured trials, of the
    closed-loop trials: load runs count on their own (the load section)."""
    return excluded_counts(
        frame[closed_loop(frame)],
        (t.trial_id for t in iter_trials(plan) if t.role == "measured" and t.load_rate is None),
    )
