"""The campaign loop as named steps: gather what to run → for each unit that runs
together: run it → write its records → stop its condition after an outage; then the
result."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from sitegen.core.signing import Signer
from sitegen.engine.contract import Engine
from sitegen.engine.engines import get_engine_class
from sitegen.measure.native import native_output_to
from sitegen.measure.round_runner import Phase, RoundRunner
from sitegen.measure.rounds import (
    conditions_after,
    group_rounds,
    last_positions,
    needs_attempt,
    planned_rounds,
    with_resume_warmups,
)
from sitegen.plan.engine_registry import validate_engine_options
from sitegen.plan.expand import RoundKey, TrialSpec, expand_trials
from sitegen.plan.plan_models import Plan
from sitegen.records.layout import CAMPAIGNS_DIR
from sitegen.records.record_models import NodeInfo, TrialRecord
from sitegen.records.store import CampaignStore, LatestAttempt, TrialSink

MAX_CONSECUTIVE_ENGINE_FAILURES = 3
"""Trials of one condition in a row whose engine would not load or failed as a whole
(``EngineError`` during the request) before the condition is stopped for this run."""


@dataclass(frozen=True)
class StoppedCondition:
    """A condition stopped after consecutive engine failures; its trials stay pending."""

    condition_id: str
    reason: str
    """The last failure."""
    left_pending: int
    """Planned trials of the condition not attempted in this run."""


@dataclass(frozen=True)
class CampaignResult:
    """What one ``measure`` invocation did."""

    directory: Path
    written: int
    """Planned trials attempted now (first attempts and retries)."""
    skipped: int
    """Planned trials that already had an ok record."""
    failed: int
    """Planned trials attempted now whose attempt failed (kept as records)."""
    retried: int = 0
    """Planned trials attempted again because their latest attempt had failed."""
    incomplete: int = 0
    """Planned trials still without an ok record: failed now or left pending."""
    stopped: list[StoppedCondition] = field(default_factory=list)
    """Conditions stopped after consecutive engine failures."""
    resume_warmups: int = 0
    """Extra warm-ups run because a resumed condition's model was loaded anew."""


Progress = Callable[[int, int, TrialRecord], None]
"""Called after each record is appended: (trials done, trials to do, the record). Trials
a stopped condition leaves pending count as done, so the total never changes."""


def run_campaign(
    plan: Plan,
    data_dir: Path,
    progress: Progress | None = None,
    phase: Phase | None = None,
    engines: dict[str, Engine] | None = None,
    signer: Signer | None = None,
    new_campaign: bool = False,
) -> CampaignResult:
    """Attempt every planned trial without an ok record, appending one record per attempt.

    Nothing is created on disk for an invalid plan or engine option. The campaign is
    locked for the whole run and checked against its manifest before anything is appended
    (``LockedError``, ``IntegrityError``). ``engines``: engines already constructed by
    preflight (condition id → engine), used instead of loading them again and closed by
    the run. ``signer``: signs every manifest update. ``new_campaign``: register the next
    campaign of the plan's series instead of resuming its latest."""
    validate_engine_options(plan)
    engine_class = get_engine_class(plan.engine)
    with CampaignStore.open(data_dir / CAMPAIGNS_DIR, plan, signer, new_campaign) as store:
        result = run_trials(
            plan,
            store,
            engine_class,
            progress,
            phase=phase,
            engines=engines,
            factor_values=store.factor_values,
        )
        store.sign()  # covers what the engine logged after the last record
    return result


def run_trials(
    plan: Plan,
    store: TrialSink,
    engine_class: type[Engine],
    progress: Progress | None,
    node: NodeInfo | None = None,
    phase: Phase | None = None,
    engines: dict[str, Engine] | None = None,
    factor_values: dict[str, list[str]] | None = None,
) -> CampaignResult:
    """The campaign runner: every trial of ``plan`` that needs an attempt, run and
    appended to ``store`` (a ``CampaignStore``, or the fleet's stand-in for it on a node).
    ``node``: the Ray node of a fleet run, recorded in every record's provenance.
    ``factor_values``: the values of the series factor the campaign holds (value → trial
    ids), which every engine loaded must report again (``None``: the first one sets it)."""
    run = _CampaignRun.gather(plan, store, progress, phase)
    with native_output_to(store.engine_log_path):
        runner = RoundRunner(plan, store, engine_class, node, phase, engines, factor_values)
        try:
            for position, needed in group_rounds(run.queue):
                condition_id = needed[0].condition_id
                if run.is_stopped(condition_id):
                    continue
                end = position + len(needed)
                results = runner.run(
                    run.members(needed), run.attempts(needed), keep_loaded=run.still_queued(end)
                )
                run.write(condition_id, results)
                run.stop_after_outage(condition_id, end, results)
        finally:
            runner.close_all()
    return run.result()


@dataclass
class _CampaignRun:
    """One run through a campaign's queue: what it has to do, what it wrote, and the
    conditions it stopped."""

    store: TrialSink
    progress: Progress | None
    phase: Phase | None
    latest: dict[str, LatestAttempt]
    """The latest attempt recorded before this run, by trial id."""
    planned: list[TrialSpec]
    pending: list[TrialSpec]
    """Planned trials never recorded or whose latest attempt failed."""
    queue: list[TrialSpec]
    """The pending trials with the resume warm-ups, in run order."""
    rounds: dict[RoundKey, list[TrialSpec]]
    """Every concurrent round and load run of the plan with all its requests."""
    pending_ids: set[str] = field(init=False)
    """The ids of ``pending``: their records count as written (resume warm-ups' do not)."""
    last_positions: dict[str, int] = field(init=False)
    """Each condition's last position in ``queue``."""
    attempted: int = 0
    succeeded: int = 0
    failed: int = 0
    retried: int = 0
    left_pending: int = 0
    streaks: Counter[str] = field(default_factory=Counter)
    """Trials in a row whose engine failed as a whole, by condition."""
    stopped: list[StoppedCondition] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.pending_ids = {trial.trial_id for trial in self.pending}
        self.last_positions = last_positions(self.queue)

    @classmethod
    def gather(
        cls, plan: Plan, store: TrialSink, progress: Progress | None, phase: Phase | None
    ) -> _CampaignRun:
        """What the run has to do: the planned trials never recorded or whose latest
        attempt failed, with the warm-ups a resumed condition needs."""
        latest = store.latest_attempts()
        planned = expand_trials(plan)
        pending = [t for t in planned if needs_attempt(latest.get(t.trial_id))]
        queue = with_resume_warmups(plan, pending, set(latest))
        return cls(store, progress, phase, latest, planned, pending, queue, planned_rounds(planned))

    def is_stopped(self, condition_id: str) -> bool:
        return any(stop.condition_id == condition_id for stop in self.stopped)

    def members(self, needed: list[TrialSpec]) -> list[TrialSpec]:
        """Who runs with ``needed``. A round runs all its users (a load run all its
        requests, on its whole schedule) even when only some still need a record, so its
        requests always compete as the plan says."""
        return self.rounds.get(needed[0].round_key, needed)

    def attempts(self, needed: list[TrialSpec]) -> dict[str, int]:
        """The attempt number of each trial in ``needed`` (trial id → number)."""
        return {
            t.trial_id: self.latest[t.trial_id].attempt + 1 if t.trial_id in self.latest else 1
            for t in needed
        }

    def still_queued(self, end: int) -> set[str]:
        """The conditions with trials queued from ``end`` on and not stopped: their engines
        stay loaded."""
        stopped_ids = {stop.condition_id for stop in self.stopped}
        return conditions_after(self.last_positions, end) - stopped_ids

    def write(self, condition_id: str, results: list[tuple[TrialRecord, bool]]) -> None:
        """Append each record, count it, and report progress."""
        for record, engine_failed in results:
            self.store.append(record)
            self.attempted += 1
            if record.trial_id in self.pending_ids:
                self.succeeded += record.status == "ok"
                self.failed += record.status == "failed"
                self.retried += record.trial_id in self.latest
            self.streaks[condition_id] = self.streaks[condition_id] + 1 if engine_failed else 0
            if self.progress:
                self.progress(self.attempted + self.left_pending, len(self.queue), record)

    def stop_after_outage(
        self, condition_id: str, end: int, results: list[tuple[TrialRecord, bool]]
    ) -> None:
        """After ``MAX_CONSECUTIVE_ENGINE_FAILURES`` engine failures in a row (an outage),
        leave the condition's other trials pending, not burnt."""
        if self.streaks[condition_id] < MAX_CONSECUTIVE_ENGINE_FAILURES:
            return
        rest = [t for t in self.queue[end:] if t.condition_id == condition_id]
        if not rest:
            return
        self.left_pending += len(rest)
        reason = results[-1][0].failure_reason or ""
        if self.phase:
            self.phase(condition_id, "stopped", f"{len(rest)} left pending: {reason}")
        self.stopped.append(
            StoppedCondition(
                condition_id, reason, sum(t.trial_id in self.pending_ids for t in rest)
            )
        )

    def result(self) -> CampaignResult:
        return CampaignResult(
            directory=self.store.directory,
            written=self.succeeded + self.failed,
            skipped=len(self.planned) - len(self.pending),
            failed=self.failed,
            retried=self.retried,
            incomplete=len(self.pending) - self.succeeded,
            stopped=self.stopped,
            resume_warmups=self.attempted - self.succeeded - self.failed,
        )
