"""One campaign's statistics, computed once for both languages (pure).

This is the only place a page's figures come from: directives and partials select and
format these results; they compute nothing.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from functools import cached_property
from typing import Any

import pandas as pd

from sitegen.core.formatting import gib, percent
from sitegen.plan.expand import iter_trials
from sitegen.plan.items import plan_items
from sitegen.plan.labels import condition_labels as plan_condition_labels
from sitegen.plan.plan_models import Plan
from sitegen.records.annotations import CuratedExample, PostHocAnalysis, ThresholdClaim
from sitegen.records.campaign import Campaign
from sitegen.records.left_out import LeftOut
from sitegen.records.record_models import UNKNOWN_REMOTE_SHA256
from sitegen.statistics.dispersion import outlier_labels
from sitegen.statistics.examples import ExampleView, example_views
from sitegen.statistics.health import HealthFinding, speculation_health
from sitegen.statistics.latency import latency_percentiles
from sitegen.statistics.load import SaturationPoint, load_table, saturation_points
from sitegen.statistics.quality import NonInferiorityResult, post_hoc
from sitegen.statistics.quality_records import QualitySummary, score_quality, summarize_quality
from sitegen.statistics.setups import setup_records
from sitegen.statistics.speed import (
    Comparison,
    compare_conditions,
    memory_summary,
    records_of,
    speed_summary,
)
from sitegen.statistics.sweep import Sweep, make_sweep, pareto_points
from sitegen.statistics.system import (
    SystemCondition,
    memory_frame,
    system_frame,
    system_table,
)
from sitegen.statistics.telemetry import telemetry_frame, telemetry_summary
from sitegen.statistics.trials import (
    RunOrder,
    closed_loop,
    enters_statistics,
    excluded_counts,
    observed_run_order,
    trials_frame,
    usable,
)

COMPLETION_LENGTH_TOLERANCE = 0.05
"""Median output lengths within 5 % count as equal for a completion-time ratio (C-LENGTH)."""


MIN_RATIO_TRIALS = 3
"""Trials with a generation rate each side of a ratio needs before the ratio is quoted as
a figure: with fewer, or with an interval that includes 1×, the cards, the home and
overview rows and the history call the ratio inconclusive and show its interval instead
(stated on the method page's glossary)."""


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

    @property
    def tail_complete(self) -> bool:
        """Every shown condition has a P95 (enough requests): only then may a card say its
        percentiles come from enough requests."""
        return bool(self.ttft) and all(
            row.get("p95") is not None and not pd.isna(row.get("p95")) for row in self.ttft.values()
        )


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


@dataclass(frozen=True)
class ConditionOverview:
    """One condition's line beside the headline."""

    condition_id: str
    concurrency: int
    """Requests in flight at once (the plan's ``concurrency``)."""
    n: int
    """Measured trials that enter the statistics (speed and quality)."""
    length_capped: int
    """Of them, those that stopped at the output cap."""
    answer_not_reached: int
    """Of them, those that produced no answer text after thinking."""
    peak_memory_mib: float | None
    """Highest peak memory of any device in any of them (``None``: none recorded)."""


@dataclass(frozen=True)
class ThresholdResult:
    """A threshold claim as observed: ``k`` of ``n`` trials strictly above the declared
    bound, never a rounded one (``n`` 0: nothing was observed, no count is shown)."""

    claim: ThresholdClaim
    k: int
    n: int

    @property
    def above_decimals(self) -> int:
        """Decimals of the bound as declared (49.96 → 2, 50 → 0): it is shown with them,
        so a rounded bound never seems to put a trial on the other side."""
        exponent = Decimal(repr(self.claim.above)).normalize().as_tuple().exponent
        return max(0, -int(exponent))


@dataclass(frozen=True)
class ExampleDraw:
    """The examples page: curated answers with their declaration, then a seeded draw."""

    curated: list[tuple[ExampleView, CuratedExample]]
    drawn: list[ExampleView]
    """Each answer with its problem, correct answer and the compared answers beside it."""
    pool_size: int
    """Measured, successful trials the random draw was made from."""


@dataclass(frozen=True)
class CompletionTimes:
    """End-to-end times of each condition on one input beside their output lengths."""

    input_id: str
    rows: list[dict[str, Any]]
    lengths_differ: bool
    """Median output lengths differ by more than ``COMPLETION_LENGTH_TOLERANCE``."""
    time_ratio: float | None
    """Second condition's median time ÷ first's (two conditions only)."""
    factor_only: bool
    """The two conditions differ in the declared factor alone (C-CONFDIFF)."""

    @property
    def time_change_percent(self) -> float | None:
        """``time_ratio`` as a signed change in percent."""
        return None if self.time_ratio is None else (self.time_ratio - 1) * 100


@dataclass(frozen=True)
class AnswerLimits:
    """What limits one set of quality answers (the problems, or one document task): the
    output cap, the allocated context and the filled input length (C-CAPACITY)."""

    task_id: str | None
    """The document task; ``None`` for the suite's problems."""
    max_output_tokens: int
    context_capacity: tuple[int, ...]
    """The allocated context of the off and on conditions (one value when they agree)."""
    prompt_min: int | None
    """Smallest and largest input length (tokens) of the set's usable answers."""
    prompt_max: int | None


@dataclass(frozen=True)
class PostHocResult:
    analysis: PostHocAnalysis
    result: NonInferiorityResult


@dataclass(frozen=True)
class Report:
    """One campaign's statistics, ready to render in any language."""

    campaign: Campaign
    trials: pd.DataFrame
    """Every record as a row."""
    summary: pd.DataFrame
    """Per condition × speed input summary (trials that enter the statistics)."""
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
        """The report's address under ``reports/``: the plan's name. The campaign (name
        and plan hash) is on the method page, in the system table and in the downloads."""
        return self.plan.name

    @cached_property
    def summary_records(self) -> list[dict[str, Any]]:
        """``summary`` as one dict per row, made once: the pages of both languages read it
        many times (read only)."""
        return self.summary.to_dict("records")

    @cached_property
    def speed_input_ids(self) -> frozenset[str]:
        return frozenset(i.id for i in self.plan.inputs)

    def _usable(self, *columns: str) -> pd.DataFrame:
        """``columns`` of the trials that enter the statistics: only these columns are
        copied (the whole table's usable rows would be most of it again)."""
        return self.trials.loc[enters_statistics(self.trials), list(columns)]

    @cached_property
    def usable_speed_trials(self) -> pd.DataFrame:
        """Trials of the speed inputs that enter the statistics (quality answers have their
        own page)."""
        # One selection: the usable trials of every input (the quality answers' too) would
        # be a copy of nearly the whole table.
        trials = self.trials
        return trials[enters_statistics(trials) & trials["input_id"].isin(self.speed_input_ids)]

    @cached_property
    def latency(self) -> pd.DataFrame:
        """Percentiles of each latency metric per condition × speed input
        (``latency.latency_percentiles``; the ``latency_percentiles`` download)."""
        return latency_percentiles(self.usable_speed_trials, self.campaign.table.chunk_gaps)

    @cached_property
    def load(self) -> pd.DataFrame:
        """Throughput, latency and goodput per condition × speed input × offered rate of
        the plan's open-loop load runs (``load.load_table``; the ``load`` download); empty
        without them."""
        return load_table(self.plan, self.trials, self.campaign.table.chunk_gaps)

    @cached_property
    def saturation(self) -> list[SaturationPoint]:
        """The saturation point of each condition × speed input under load."""
        return saturation_points(self.load)

    @cached_property
    def condition_labels(self) -> dict[str, dict[str, str]]:
        """What readers call each condition, per language, in plan order: the plan's
        ``label``, else a description of its settings (``plan.labels``); never its id."""
        return plan_condition_labels(self.plan)

    @cached_property
    def headline(self) -> list[HeadlineRow]:
        """Each comparison whose two conditions both have a summary row."""
        if self.summary.empty:
            return []
        rows = {(r["condition_id"], r["input_id"]): r for r in self.summary_records}
        return [
            HeadlineRow(c, rows[(c.baseline, c.input_id)], rows[(c.treatment, c.input_id)])
            for c in self.comparisons
            if (c.baseline, c.input_id) in rows and (c.treatment, c.input_id) in rows
        ]

    @cached_property
    def key_figures(self) -> KeyFigures | None:
        """The summary cards' figures (``None`` without any usable speed trial): the plan's
        chosen headline on each chosen input, else the first comparison with a ratio."""
        if self.summary.empty:
            return None
        rows = {(r["condition_id"], r["input_id"]): r for r in self.summary_records}
        latency = self.latency
        ttft_rows = {
            (r["condition_id"], r["input_id"]): r
            for r in records_of(latency[latency["metric"] == "ttft_s"])
        }

        def panel(input_id: str, conditions: tuple[str, ...], headline: HeadlineRow | None):
            return KeyPanel(
                input_id,
                conditions,
                headline,
                {c: rows[(c, input_id)] for c in conditions},
                {c: ttft_rows[(c, input_id)] for c in conditions if (c, input_id) in ttft_rows},
            )

        choice = self.plan.headline
        if choice is not None:
            inputs = [choice.input] if choice.input else [i.id for i in self.plan.inputs]
            panels = []
            for input_id in inputs:
                conditions = tuple(
                    c for c in (choice.baseline, choice.treatment) if (c, input_id) in rows
                )
                if not conditions:
                    continue
                row = next(
                    (
                        h
                        for h in self.headline
                        if h.comparison.input_id == input_id
                        and (h.comparison.baseline, h.comparison.treatment)
                        == (choice.baseline, choice.treatment)
                        and h.comparison.ratio is not None
                    ),
                    None,
                )
                panels.append(panel(input_id, conditions, row))
            if panels:
                return KeyFigures(tuple(panels), True)
        headline = next((row for row in self.headline if row.comparison.ratio is not None), None)
        if headline is not None:
            input_id = headline.comparison.input_id
            conditions = (headline.comparison.baseline, headline.comparison.treatment)
        else:
            input_id = self.summary["input_id"].iloc[0]
            conditions = tuple(c.id for c in self.plan.conditions if (c.id, input_id) in rows)
        return KeyFigures((panel(input_id, conditions, headline),), False)

    @property
    def memory_trials(self) -> pd.DataFrame:
        """Peak memory per record and device (every record, like ``trials``); made when
        asked (for the download), not kept."""
        return memory_frame(self.campaign.table)

    @property
    def telemetry_trials(self) -> pd.DataFrame:
        """Device telemetry per record and device (every record, like ``trials``); made
        when asked (for the summary and the download), not kept."""
        return telemetry_frame(self.campaign.table)

    @cached_property
    def telemetry(self) -> pd.DataFrame:
        """Device telemetry per condition and device over the speed trials."""
        return telemetry_summary(self.telemetry_trials, set(self.speed_input_ids))

    @cached_property
    def condition_rates(self) -> dict[str, dict[str, float]]:
        """Per condition, the median over its speed inputs of the per-input medians of the
        generation rate and of energy and CPU time per generated token (shown beside the
        telemetry, which is per condition and device)."""
        if self.summary.empty:
            return {}
        columns = ["gen_tps_median", "energy_per_token_j_median", "cpu_s_per_token_median"]
        medians = self.summary.groupby("condition_id", sort=False)[columns].median()
        return medians.to_dict("index")

    @cached_property
    def sweep(self) -> Sweep | None:
        """The sweep view (several speculative or concurrency levels), else ``None``."""
        return make_sweep(self.plan, self.summary, self.comparisons)

    @cached_property
    def pareto(self) -> pd.DataFrame:
        """Per-user against aggregate generation rate per condition and input, the Pareto
        front marked (meaningful when concurrency varies)."""
        return pareto_points(self.summary)

    @cached_property
    def system(self) -> list[SystemCondition]:
        """Per condition: the system its usable records ran on, each distinct value listed."""
        return system_table(self.campaign.table, self.plan)

    @cached_property
    def system_table(self) -> pd.DataFrame:
        """``system`` as one row per condition × field × distinct value."""
        return system_frame(self.system)

    @cached_property
    def thresholds(self) -> list[ThresholdResult]:
        """Each threshold claim of the annotations as observed in k of n trials."""
        trials = self.usable_speed_trials
        results = []
        for claim in self.campaign.annotations.thresholds:
            selected = trials[trials["condition_id"] == claim.condition_id]
            if claim.input_id is not None:
                selected = selected[selected["input_id"] == claim.input_id]
            values = selected[claim.metric].dropna()
            results.append(ThresholdResult(claim, int((values > claim.above).sum()), len(values)))
        return results

    @cached_property
    def examples(self) -> ExampleDraw:
        """Curated examples in declaration order, then the plan's ``examples.count`` answers
        drawn with ``random.Random(examples.seed).sample`` from the usable trials in run
        order."""
        annotations = self.campaign.annotations
        rows = self.campaign.rows
        usable_rows = rows.loc[enters_statistics(rows), ["trial_id", "order_index"]]
        # Only the curated trials are looked up (every trial id as a Python string would be
        # a large dict).
        curated = usable_rows[
            usable_rows["trial_id"].isin([e.trial_id for e in annotations.curated_examples])
        ]
        by_id = dict(zip(curated["trial_id"], curated.index, strict=True))
        chosen = [e for e in annotations.curated_examples if e.trial_id in by_id]
        pool = [int(i) for i in usable_rows.sort_values("order_index", kind="stable").index]
        draw = self.plan.examples
        drawn = random.Random(draw.seed).sample(pool, min(draw.count, len(pool)))
        views = example_views(
            self.plan,
            plan_items(self.plan),
            rows,
            [int(by_id[e.trial_id]) for e in chosen] + drawn,
            self.campaign.iter_full_records,
        )
        curated = list(zip(views[: len(chosen)], chosen, strict=True))
        return ExampleDraw(curated, views[len(chosen) :], len(pool))

    def completion_times(self, input_id: str) -> CompletionTimes:
        """End-to-end times per condition on one speed input (empty without trials)."""
        rows = (
            self.summary[self.summary["input_id"] == input_id].to_dict("records")
            if len(self.summary)
            else []
        )
        tokens = [r["generated_tokens_median"] for r in rows]
        lengths_differ = len(tokens) > 1 and max(tokens) > (1 + COMPLETION_LENGTH_TOLERANCE) * min(
            tokens
        )
        time_ratio = None
        factor_only = False
        if len(rows) == 2 and rows[0]["e2e_s_median"] and rows[1]["e2e_s_median"] is not None:
            time_ratio = rows[1]["e2e_s_median"] / rows[0]["e2e_s_median"]
            pair = {rows[0]["condition_id"], rows[1]["condition_id"]}
            factor_only = any(
                c.input_id == input_id and {c.baseline, c.treatment} == pair and c.is_factor_only
                for c in self.comparisons
            )
        return CompletionTimes(input_id, rows, lengths_differ, time_ratio, factor_only)

    @cached_property
    def post_hoc(self) -> list[PostHocResult]:
        """Each post-hoc analysis of the annotations: the non-inferiority test again with
        its templates removed (labelled, shown beside the primary result)."""
        if self.quality is None or self.plan.quality is None:
            return []
        settings = self.plan.quality
        return [
            PostHocResult(
                analysis,
                post_hoc(
                    self.quality.tables.answers,
                    exclude_templates=analysis.exclude_templates,
                    label=analysis.label,
                    reason=analysis.reason,
                    margin=settings.margin,
                    rng_seed=settings.bootstrap_seed,
                    n_boot=settings.bootstrap_resamples,
                ),
            )
            for analysis in self.campaign.annotations.post_hoc
        ]

    @cached_property
    def hardware(self) -> str:
        """Every device set the usable records ran on, e.g. ``1× AMD EPYC``; sets that
        differ between records are all listed (``; ``), never the first alone."""
        seen: list[str] = []
        rows = self.campaign.rows
        for index in rows.loc[enters_statistics(rows), "provenance"].unique():
            devices = self.campaign.table.provenances[index].host.devices
            if devices:
                names = sorted({d.name for d in devices})
                shown = f"{len(devices)}× " + " / ".join(names)
                if shown not in seen:
                    seen.append(shown)
        return "; ".join(seen) or "-"

    @cached_property
    def filled_lengths(self) -> dict[str, tuple[int, int]]:
        """Per condition: the smallest and largest input length (tokens) of its usable
        trials, shown beside the context capacity (C-CAPACITY)."""
        trials = self._usable("condition_id", "prompt_tokens").dropna(subset=["prompt_tokens"])
        return {
            condition_id: (int(group["prompt_tokens"].min()), int(group["prompt_tokens"].max()))
            for condition_id, group in trials.groupby("condition_id", sort=False)
        }

    @cached_property
    def condition_overview(self) -> list[ConditionOverview]:
        """Per condition in plan order, what the summary shows beside the headline: its
        concurrency, how many of its measured trials were length-capped or never reached an
        answer, and its highest peak memory."""
        trials = self._usable("condition_id", "peak_mem_mib", "finish", "answer_reached")
        overview = []
        for condition in self.plan.conditions:
            mine = trials[trials["condition_id"] == condition.id]
            peak = mine["peak_mem_mib"].max() if len(mine) else None
            overview.append(
                ConditionOverview(
                    condition_id=condition.id,
                    concurrency=condition.concurrency,
                    n=len(mine),
                    length_capped=int((mine["finish"] == "length").sum()),
                    answer_not_reached=int((~mine["answer_reached"].astype(bool)).sum()),
                    peak_memory_mib=None if pd.isna(peak) else float(peak),
                )
            )
        return overview

    @cached_property
    def capacity_as_declared(self) -> list[str]:
        """Conditions whose usable trials' engine did not report the context it allocated
        (``engine_context_per_slot``): their capacity is shown as the plan declares it."""
        rows = self.campaign.rows
        columns = ["condition_id", "engine_context_per_slot"]
        last = rows.loc[enters_statistics(rows), columns].groupby("condition_id").tail(1)
        reported = dict(
            zip(last["condition_id"], last["engine_context_per_slot"].notna(), strict=True)
        )
        return [c.id for c in self.plan.conditions if not reported.get(c.id, False)]

    @cached_property
    def quality_limits(self) -> list[AnswerLimits]:
        """The problems' limits, then each document task's (empty without a quality
        evaluation): output cap, allocated context and filled input length."""
        quality = self.plan.quality
        if quality is None:
            return []
        conditions = (quality.off_condition, quality.on_condition)
        capacities = tuple(
            sorted({c.context_capacity for c in self.plan.conditions if c.id in conditions})
        )
        trials = self._usable("condition_id", "input_id", "prompt_tokens")
        trials = trials[trials["condition_id"].isin(conditions)]
        documents = {d.task_id: d for d in quality.documents}

        def limits(task_id: str | None, cap: int, selected: pd.DataFrame) -> AnswerLimits:
            prompts = selected["prompt_tokens"].dropna()
            low, high = (int(prompts.min()), int(prompts.max())) if len(prompts) else (None, None)
            return AnswerLimits(task_id, cap, capacities, low, high)

        problems = trials[~trials["input_id"].isin(self.speed_input_ids | set(documents))]
        return [limits(None, quality.max_output_tokens, problems)] + [
            limits(task_id, spec.max_output_tokens, trials[trials["input_id"] == task_id])
            for task_id, spec in documents.items()
        ]

    @cached_property
    def headline_warning(self) -> str | None:
        """Why the summary carries no comparison (no factor-only comparison with both
        medians), for ``sitegen check``; ``None`` when it carries one, or when the report
        has no speed inputs (a quality evaluation only)."""
        if not self.plan.inputs:
            return None
        if any(r.comparison.ratio is not None for r in self.headline):
            return None
        if len(self.plan.conditions) < 2:
            return "the plan has one condition: nothing to compare"
        configurations: dict[tuple[str, str, tuple[str, ...], tuple[str, ...]], list[str]] = {}
        missing: list[str] = []
        inactive: dict[str, list[str]] = {}
        single: list[str] = []
        for c in self.comparisons:
            # A side without trials first: its records show no engine or devices, so the
            # observed setups differ too, and that is not the reason.
            if not c.has_medians:
                for condition, median in (
                    (c.baseline, c.baseline_median),
                    (c.treatment, c.treatment_median),
                ):
                    if median is None and f"{condition} on {c.input_id}" not in missing:
                        missing.append(f"{condition} on {c.input_id}")
            elif not c.is_factor_only:
                key = (c.treatment, c.baseline, c.differing_fields, c.unrecorded_fields)
                configurations.setdefault(key, []).append(c.input_id)
            elif c.health:
                texts = inactive.setdefault(c.treatment, [])
                texts += [t for f in c.health if (t := _health_text(f)) not in texts]
            elif c.ratio is None:
                single.append(f"{c.treatment} vs {c.baseline} on {c.input_id}")
        reasons = [
            f"configuration comparison {treatment} vs {baseline} on input(s) "
            f"{', '.join(inputs)}: {_setup_text(fields, unrecorded)}, so not the declared "
            f"factor ({self.plan.factor}) alone"
            for (treatment, baseline, fields, unrecorded), inputs in configurations.items()
        ]
        reasons += [
            f"speculation of {condition} did not run as declared ({', '.join(observed)}; "
            "C-SPECHEALTH)"
            for condition, observed in inactive.items()
        ]
        if single:
            reasons.append(f"fewer than 2 trials on a side, no interval: {', '.join(single)}")
        if missing:
            reasons.append(f"no trials with a generation rate: {', '.join(missing)}")
        return "; ".join(reasons) or "no trials"

    @cached_property
    def observation_warnings(self) -> list[str]:
        """Every place a page states an observation where a figure might be expected, for
        ``sitegen check`` (warnings, not errors), each naming the condition and input: a
        missing median, speculation that did not run as declared (or reported no draft
        counts), a factor-only ratio without its interval (fewer than two trials a side),
        and a threshold without usable trials."""
        warnings: list[str] = []

        def add(text: str) -> None:
            if text not in warnings:
                warnings.append(text)

        for c in self.comparisons:
            for condition, median in (
                (c.baseline, c.baseline_median),
                (c.treatment, c.treatment_median),
            ):
                if median is None:
                    add(f"no generation rate was measured for {condition} on input {c.input_id}")
            for finding in c.health:
                add(
                    f"speculation of {c.treatment} on input {c.input_id} did not run as "
                    f"declared: {_health_text(finding)} (no ratio shown)"
                )
            if c.is_speculation_effect and c.has_medians and c.ratio_interval is None:
                add(
                    f"{c.treatment} vs {c.baseline} on input {c.input_id}: fewer than 2 "
                    "trials with a generation rate on a side, so no ratio (medians only)"
                )
        for row in self.thresholds:
            if row.n == 0:
                claim = row.claim
                add(
                    f"threshold {claim.metric} above {claim.above!r} for {claim.condition_id} on "
                    f"input {claim.input_id or 'all'}: no usable trials, nothing observed"
                )
        return warnings

    @property
    def registered_at(self) -> datetime | None:
        """When the plan was registered (``Campaign.registered_at``)."""
        return self.campaign.registered_at

    @cached_property
    def run_order(self) -> RunOrder:
        """The run order the records show."""
        return observed_run_order(self.campaign.rows)

    @cached_property
    def unhashed_model(self) -> bool:
        """Whether a usable record's model could not be hashed (a remote server's file)."""
        rows = self.campaign.rows
        provenances = self.campaign.table.provenances
        return any(
            provenances[index].model.sha256 == UNKNOWN_REMOTE_SHA256
            for index in rows.loc[enters_statistics(rows), "provenance"].unique()
        )

    @property
    def uses_ngram(self) -> bool:
        """Whether a condition uses n-gram self-speculation (never to be called MTP)."""
        return any(c.speculative.mode.startswith("ngram") for c in self.plan.conditions)


def _setup_text(differing: tuple[str, ...], unrecorded: tuple[str, ...]) -> str:
    parts = [f"they differ in {', '.join(differing)}"] if differing else []
    if unrecorded:
        parts.append(f"not recorded on both sides: {', '.join(unrecorded)}")
    return "; ".join(parts)


def _health_text(finding: HealthFinding) -> str:
    on = f" on {finding.input_id}" if finding.input_id else ""
    if finding.kind == "no-counts":
        return f"its engine reported no draft counts{on}"
    if finding.kind == "no-drafts":
        return f"0 drafts proposed in {finding.trials} trials{on}"
    if finding.kind == "low-acceptance":
        observed, limit = percent(finding.observed), percent(finding.limit)
        return f"acceptance {observed}% under the declared {limit}%{on}"
    return (
        f"peak memory {gib(finding.observed)} GiB on {finding.device} over the declared "
        f"{gib(finding.limit)} GiB"
    )


def make_report(campaign: Campaign) -> Report:
    plan = campaign.plan
    items = plan_items(plan)
    speed_ids = {i for i, item in items.items() if item.kind == "speed"}
    frame = trials_frame(campaign.table)
    speed = frame["input_id"].isin(speed_ids)
    usable_speed = usable(frame[speed])
    frame["outlier"] = False
    frame.loc[usable_speed.index, "outlier"] = outlier_labels(
        usable_speed, plan.dispersion.outliers
    )
    summary = speed_summary(frame[speed])
    memory = memory_summary(campaign.table, speed_ids)
    health = speculation_health(plan, summary, memory)
    return Report(
        campaign=campaign,
        trials=frame,
        summary=summary,
        comparisons=compare_conditions(
            plan,
            summary,
            setup_records(
                campaign, campaign.rows.loc[usable_speed.index], by=("condition_id", "input_id")
            ),
            usable_speed,
            health,
        ),
        # Load runs count on their own (the load section): planned, recorded, failed.
        excluded=excluded_counts(
            frame[closed_loop(frame)],
            (t.trial_id for t in iter_trials(plan) if t.role == "measured" and t.load_rate is None),
        ),
        quality=summarize_quality(
            plan, score_quality(plan, items, campaign.rows, campaign.iter_texts)
        )
        if plan.quality
        else None,
        memory=memory,
        health=health,
    )
