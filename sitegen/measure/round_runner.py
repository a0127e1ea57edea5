"""Running one round: the engines of a campaign's conditions, loaded as they are needed,
and each round as named steps (free → load → fit the prompt → measure → log → record)."""

from __future__ import annotations

import json
from collections.abc import Callable
from collections.abc import Set as AbstractSet
from datetime import UTC, datetime

from sitegen.core.errors import ConfigError, SitegenError, StorageError
from sitegen.engine.contract import Engine, EngineDescription
from sitegen.measure.requests import (
    Outcome,
    generation_requests,
    measure_load_run,
    measure_round,
)
from sitegen.measure.trial_records import TrialRecorder, load_info, round_info
from sitegen.plan.engine_options import ServerOptions
from sitegen.plan.engine_registry import parse_engine_options
from sitegen.plan.expand import TrialSpec
from sitegen.plan.items import PlanItem, plan_items
from sitegen.plan.plan_models import ConditionSpec, Plan
from sitegen.plan.prompts import fit_prompt
from sitegen.records.record_models import NodeInfo, TrialRecord
from sitegen.records.series_factor import factor_value
from sitegen.records.store import TrialSink

Phase = Callable[[str, str, str], None]
"""Called when a condition enters a phase: (condition id, phase, detail). Phases:
``loading`` (the engine loads its model or waits for its server; detail: what, and for
how long at most), ``warm-up``, ``measuring``, ``stopped`` (detail: why)."""


class RoundRunner:
    """Runs the rounds of one campaign, holding the engines it loaded until told to free
    them (``close_all``)."""

    def __init__(
        self,
        plan: Plan,
        store: TrialSink,
        engine_class: type[Engine],
        node: NodeInfo | None = None,
        phase: Phase | None = None,
        engines: dict[str, Engine] | None = None,
        factor_values: dict[str, list[str]] | None = None,
    ) -> None:
        self.plan = plan
        self.phase = phase or (lambda condition_id, phase, detail: None)
        self.phases: dict[str, str] = {}
        """The phase each condition was last reported in (reported once per change)."""
        self.store = store
        self.engine_class = engine_class
        self.engines: dict[str, Engine] = dict(engines or {})
        self.descriptions = {cid: engine.describe() for cid, engine in self.engines.items()}
        self.prompts: dict[str, str] = {}
        self.conditions = {c.id: c for c in plan.conditions}
        self.items = plan_items(plan)
        self.recorder = TrialRecorder(plan, store, self.items, node)
        self.series_values = {
            value: f"trial {trial_ids[0]}"
            + (f" and {len(trial_ids) - 1} more" if trial_ids[1:] else "")
            for value, trial_ids in (factor_values or {}).items()
        }
        """For a plan with a series: each value of its factor the campaign was measured
        with, and where it was recorded (from ``factor_values``: value → trial ids)."""
        self.series_checked: dict[str, EngineDescription] = {}
        """The description of each condition's engine last checked against the series."""

    def run(
        self, members: list[TrialSpec], attempts: dict[str, int], keep_loaded: set[str]
    ) -> list[tuple[TrialRecord, bool]]:
        """Run one trial, or every user of a concurrent round at once, and return the
        record of each trial in ``attempts`` (trial id → attempt number) with whether the
        engine as a whole failed (would not load, or raised during the request) rather
        than that one request."""
        first = members[0]
        condition = self.conditions[first.condition_id]
        # Sequential blocks: free the previous condition's model before loading the next.
        self.close_all(keep=keep_loaded | {condition.id})
        engine = self.engine_for(condition)
        if not isinstance(engine, str):
            self._check_series(condition)
        self._enter(condition.id, "warm-up" if first.role == "warmup" else "measuring")
        spec = self.items[first.input_id]
        started_at = datetime.now(UTC).isoformat(timespec="milliseconds")
        recorded = [t for t in members if t.trial_id in attempts]
        description = self.descriptions.get(condition.id)
        unsent = load_info(self.plan, members, None, started_at)
        if isinstance(engine, str):
            outcome = Outcome(prompt=spec.text, failure=engine, engine_failed=True)
            return self.recorder.records(
                recorded, attempts, started_at, description, lambda _: outcome, load_of=unsent
            )
        try:
            prompt = self._fit_prompt(engine, spec)
        except SitegenError as exc:
            outcome = Outcome(prompt=spec.text, failure=f"input length: {exc}")
            return self.recorder.records(
                recorded, attempts, started_at, description, lambda _: outcome, load_of=unsent
            )
        requests = generation_requests(self.plan, condition, spec, prompt, members)
        interval = self.plan.telemetry.interval_s
        if first.load_rate is not None:
            offsets = [t.scheduled_s or 0.0 for t in members]
            measured = measure_load_run(engine, requests, offsets, interval)
        else:
            measured = measure_round(engine, requests, interval)
        samples = measured.telemetry.raw_samples()
        if samples:
            self._log_samples([t.trial_id for t in recorded], samples)
        by_id = dict(zip([t.trial_id for t in members], measured.outcomes, strict=True))
        return self.recorder.records(
            recorded,
            attempts,
            started_at,
            description,
            lambda trial: by_id[trial.trial_id],
            None if first.load_rate is not None else round_info(members, measured, started_at),
            measured.peaks,
            measured.telemetry.summaries() + measured.cpu_time,
            load_info(self.plan, members, measured, started_at),
        )

    def engine_for(self, condition: ConditionSpec) -> Engine | str:
        """The loaded engine of ``condition``, or why it would not load. A failed load is
        not remembered: the next trial tries again, as an outage may be over."""
        if condition.id not in self.engines:
            self._enter(condition.id, "loading", self._loading_detail(condition))
            try:
                engine = self.engine_class(self.plan, condition)
            except SitegenError as exc:
                return f"load failure: {exc}"
            self.engines[condition.id] = engine
            self.descriptions[condition.id] = engine.describe()
        return self.engines[condition.id]

    def _check_series(self, condition: ConditionSpec) -> None:
        """Refuse an engine that reports another value of the series factor than the
        campaign holds (C-SERIES), before anything is recorded with it: a campaign of a
        series measures one value, and another is the next campaign. The first engine of a
        campaign without records sets the value."""
        series, description = self.plan.series, self.descriptions[condition.id]
        if series is None or self.series_checked.get(condition.id) is description:
            return
        provenance = self.recorder.provenance(description, condition)
        value = factor_value(provenance, series.factor)
        if value is None:  # a factor the plan fixes: every engine reports the plan's value
            return
        if not self.series_values:
            self.series_values[value] = f"the engine of condition {condition.id} in this run"
        if value not in self.series_values:
            recorded = "; ".join(f"{v!r} ({where})" for v, where in self.series_values.items())
            raise ConfigError(
                f"campaign {self.store.campaign_id} ({self.store.directory}) of plan "
                f"{self.plan.name}'s series by {series.factor} was measured with {recorded}, "
                f"but the engine of condition {condition.id} reports {value!r}; nothing was "
                "recorded with it. Measure the next campaign of the series with `sitegen "
                f"measure --new-campaign`, or resume this one with its {series.factor}"
            )
        self.series_checked[condition.id] = description

    def close_all(self, keep: AbstractSet[str] = frozenset()) -> None:
        for condition_id in [c for c in self.engines if c not in keep]:
            self.engines.pop(condition_id).close()

    def _enter(self, condition_id: str, phase: str, detail: str = "") -> None:
        if self.phases.get(condition_id) != phase or phase == "loading":
            self.phases[condition_id] = phase
            self.phase(condition_id, phase, detail)

    def _loading_detail(self, condition: ConditionSpec) -> str:
        """What loading means for this condition: a server to wait for, or a model."""
        options = parse_engine_options(self.plan.engine, condition)
        if isinstance(options, ServerOptions):
            return (
                f"waiting for the server at {options.base_url} "
                f"(up to {options.ready_timeout_s:g} s)"
            )
        return f"model {self.plan.model_for(condition).name}"

    def _fit_prompt(self, engine: Engine, spec: PlanItem) -> str:
        """The item's prompt fitted to its target length with the engine's tokenizer; fitted
        once per item, then reused."""
        prompt = self.prompts.get(spec.item_id) or fit_prompt(
            spec.text, spec.target_prompt_tokens, self.plan.filler, engine.count_tokens
        )
        self.prompts[spec.item_id] = prompt
        return prompt

    def _log_samples(self, trial_ids: list[str], samples: list[dict]) -> None:
        """Append the raw telemetry samples of one request or round to the campaign's
        telemetry log (signed with the records that follow)."""
        line = json.dumps({"trial_ids": trial_ids, "samples": samples}, separators=(",", ":"))
        path = self.store.telemetry_log_path
        try:
            with path.open("a", encoding="utf-8") as log:
                log.write(line + "\n")
        except OSError as exc:
            raise StorageError.from_os_error(exc, "append telemetry to", path) from exc
