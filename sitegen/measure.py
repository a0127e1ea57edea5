"""``sitegen measure``: plan → engine → records.

Trials with an ok record are skipped, so an interrupted campaign resumes where it
stopped. A failed request, a missed input length or an engine that will not load becomes
a ``failed`` record (failed requests are data) and the campaign goes on; a later run
tries each planned trial whose latest attempt failed again, as a new attempt, keeping
the failed one. A condition whose engine failed ``MAX_CONSECUTIVE_ENGINE_FAILURES``
trials in a row (an outage) is stopped for this run: its remaining trials are left
pending for the next run rather than burnt as failed records.
"""

from __future__ import annotations

import json
import os
import platform
import socket
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path

from sitegen import __version__
from sitegen.engine.base import Engine, EngineDescription, GenerationRequest
from sitegen.engine.memory import MemoryProbe, PeakMemorySampler, ProcessRssProbe, cpu_name
from sitegen.engine.nvml import nvml_cuda_version
from sitegen.engine.options import ServerOptions, parse_engine_options, validate_engine_options
from sitegen.engine.registry import get_engine_class
from sitegen.engine.telemetry import ProcessCpuTime, TelemetrySampler, nvml_telemetry_probes
from sitegen.errors import SitegenError, StorageError
from sitegen.plan.expand import TrialSpec, expand_trials
from sitegen.plan.items import PlanItem, plan_items
from sitegen.plan.models import ConditionSpec, Plan
from sitegen.plan.prompts import fit_prompt
from sitegen.records.layout import CAMPAIGNS_DIR
from sitegen.records.metrics import compute_metrics
from sitegen.records.models import (
    DeviceInfo,
    DeviceMemory,
    DeviceTelemetry,
    EngineInfo,
    HostInfo,
    ModelInfo,
    NodeInfo,
    Provenance,
    RoundInfo,
    Sampling,
    TrialRecord,
)
from sitegen.records.store import CampaignStore
from sitegen.records.stream import StreamChunk, StreamEnd

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
Phase = Callable[[str, str, str], None]
"""Called when a condition enters a phase: (condition id, phase, detail). Phases:
``loading`` (the engine loads its model or waits for its server; detail: what, and for
how long at most), ``warm-up``, ``measuring``, ``stopped`` (detail: why)."""


def run_campaign(
    plan: Plan,
    data_dir: Path,
    progress: Progress | None = None,
    phase: Phase | None = None,
    engines: dict[str, Engine] | None = None,
) -> CampaignResult:
    """Attempt every planned trial without an ok record, appending one record per attempt.

    Nothing is created on disk for an invalid plan or engine option. The campaign is
    locked for the whole run and checked against its manifest before anything is appended
    (``LockedError``, ``IntegrityError``). ``engines``: engines already constructed by
    preflight (condition id → engine), used instead of loading them again and closed by
    the run."""
    validate_engine_options(plan)
    engine_class = get_engine_class(plan.engine)
    with CampaignStore.open(data_dir / CAMPAIGNS_DIR, plan) as store:
        result = _run(plan, store, engine_class, progress, phase=phase, engines=engines)
        store.sign()  # covers what the engine logged after the last record
    return result


def _run(
    plan: Plan,
    store: CampaignStore,
    engine_class: type[Engine],
    progress: Progress | None,
    node: NodeInfo | None = None,
    phase: Phase | None = None,
    engines: dict[str, Engine] | None = None,
) -> CampaignResult:
    """``node``: the Ray node of a fleet run, recorded in every record's provenance."""
    latest = store.latest_attempts()
    planned = expand_trials(plan)
    pending = [t for t in planned if _needs_attempt(latest.get(t.trial_id))]
    queue = with_resume_warmups(plan, pending, set(latest))
    planned_ids = {trial.trial_id for trial in pending}
    total = len(queue)
    attempted = succeeded = failed = retried = left_pending = 0
    streaks: Counter[str] = Counter()
    stopped: list[StoppedCondition] = []
    stopped_ids: set[str] = set()
    rounds = planned_rounds(planned)
    with native_output_to(store.engine_log_path):
        runner = _Runner(plan, store, engine_class, node, phase, engines)
        try:
            for position, needed in group_rounds(queue):
                condition_id = needed[0].condition_id
                if condition_id in stopped_ids:
                    continue
                attempts = {
                    t.trial_id: latest[t.trial_id].attempt + 1 if t.trial_id in latest else 1
                    for t in needed
                }
                keep = _conditions_after(queue, position + len(needed)) - stopped_ids
                # A round runs all its users even when only some still need a record, so
                # its requests always compete as the plan says.
                members = rounds.get(needed[0].round_key, needed)
                results = runner.run(members, attempts, keep_loaded=keep)
                for record, engine_failed in results:
                    store.append(record)
                    attempted += 1
                    if record.trial_id in planned_ids:
                        succeeded += record.status == "ok"
                        failed += record.status == "failed"
                        retried += record.trial_id in latest
                    streaks[condition_id] = streaks[condition_id] + 1 if engine_failed else 0
                    if progress:
                        progress(attempted + left_pending, total, record)
                if streaks[condition_id] >= MAX_CONSECUTIVE_ENGINE_FAILURES:
                    # An outage: leave the condition's other trials pending, not burnt.
                    after = queue[position + len(needed) :]
                    rest = [t for t in after if t.condition_id == condition_id]
                    if rest:
                        left_pending += len(rest)
                        stopped_ids.add(condition_id)
                        if phase:
                            reason = results[-1][0].failure_reason or ""
                            phase(condition_id, "stopped", f"{len(rest)} left pending: {reason}")
                        stopped.append(
                            StoppedCondition(
                                condition_id,
                                results[-1][0].failure_reason or "",
                                sum(t.trial_id in planned_ids for t in rest),
                            )
                        )
        finally:
            runner.close_all()
    return CampaignResult(
        directory=store.directory,
        written=succeeded + failed,
        skipped=len(planned) - len(pending),
        failed=failed,
        retried=retried,
        incomplete=len(pending) - succeeded,
        stopped=stopped,
        resume_warmups=attempted - succeeded - failed,
    )


def planned_rounds(planned: list[TrialSpec]) -> dict[tuple[str, str, str, int], list[TrialSpec]]:
    """Every concurrent round of the plan with all its users (rounds of one request are
    not listed)."""
    rounds: dict[tuple[str, str, str, int], list[TrialSpec]] = {}
    for trial in planned:
        if trial.concurrency > 1:
            rounds.setdefault(trial.round_key, []).append(trial)
    return rounds


def group_rounds(queue: list[TrialSpec]) -> Iterator[tuple[int, list[TrialSpec]]]:
    """The queue as units that run together: each trial alone, or the queued users of one
    concurrent round; with the queue position of each unit's first trial."""
    position = 0
    while position < len(queue):
        trial = queue[position]
        unit = [trial]
        if trial.concurrency > 1:
            while (
                position + len(unit) < len(queue)
                and queue[position + len(unit)].round_key == trial.round_key
            ):
                unit.append(queue[position + len(unit)])
        yield position, unit
        position += len(unit)


def _needs_attempt(latest: TrialRecord | None) -> bool:
    """Never recorded, or its latest attempt failed."""
    return latest is None or latest.status == "failed"


RESUME_WARMUP = "resume-warmup"


def with_resume_warmups(plan: Plan, pending: list[TrialSpec], done: set[str]) -> list[TrialSpec]:
    """On resume, a condition whose planned warm-ups were recorded by an earlier process
    loads its model anew: warm it up again before its first pending trial, so no measured
    trial runs cold. These extra warm-ups are kept as records (role ``warmup``) with ids
    ``<condition>/resume-warmup-<session>-<k>`` and never replace a planned trial."""
    if plan.warmups == 0:
        return pending
    result: list[TrialSpec] = []
    warmed: set[str] = set()
    for trial in pending:
        condition_id = trial.condition_id
        if condition_id not in warmed:
            warmed.add(condition_id)
            if trial.role == "measured" and f"{condition_id}/warmup-0" in done:
                prefix = f"{condition_id}/{RESUME_WARMUP}-"
                session = 1 + len({d.split("-")[-2] for d in done if d.startswith(prefix)})
                result.extend(
                    replace(
                        trial,
                        trial_id=f"{prefix}{session}-{k}",
                        input_id=trial.input_id,
                        role="warmup",
                        repetition=k,
                        seed=plan.sampling.seed_base + k,
                        user=0,
                        concurrency=1,
                    )
                    for k in range(plan.warmups)
                )
        result.append(trial)
    return result


@contextmanager
def native_output_to(log_path: Path) -> Iterator[None]:
    """Send what native engine code prints on file descriptor 2 to the campaign's log
    (an artifact listed in the manifest); Python's ``sys.stderr`` keeps the terminal."""
    try:
        log = log_path.open("ab")
    except OSError as exc:
        raise StorageError.from_os_error(exc, "open the engine log", log_path) from exc
    sys.stderr.flush()
    saved_fd = os.dup(2)
    python_stderr = sys.stderr
    with log:
        os.dup2(log.fileno(), 2)
        sys.stderr = os.fdopen(
            os.dup(saved_fd), "w", buffering=1, encoding="utf-8", errors="replace"
        )
        try:
            yield
        finally:
            sys.stderr.close()
            sys.stderr = python_stderr
            os.dup2(saved_fd, 2)
            os.close(saved_fd)


def _conditions_after(pending: list[TrialSpec], index: int) -> set[str]:
    return {trial.condition_id for trial in pending[index:]}


@dataclass(frozen=True)
class _Round:
    """What one round of requests produced, beside the records."""

    outcomes: list[_Outcome]
    wall_s: float
    """First request handed to the engine → last request ended."""
    peaks: list[DeviceMemory]
    telemetry: TelemetrySampler
    cpu_time: list[DeviceTelemetry]


def _round_info(members: list[TrialSpec], measured: _Round, started_at: str) -> RoundInfo | None:
    """The shared figures of a concurrent round (``None`` for a request alone)."""
    if len(members) == 1:
        return None
    first = members[0]
    tokens = sum(o.end.generated_tokens or 0 for o in measured.outcomes if o.end is not None)
    wall = measured.wall_s
    return RoundInfo(
        run_id=f"{first.condition_id}/{first.input_id}/r{first.repetition}@{started_at}",
        size=len(members),
        wall_s=round(wall, 6),
        generated_tokens=tokens,
        aggregate_tps=round(tokens / wall, 4) if wall > 0 else None,
    )


class _Runner:
    def __init__(
        self,
        plan: Plan,
        store: CampaignStore,
        engine_class: type[Engine],
        node: NodeInfo | None = None,
        phase: Phase | None = None,
        engines: dict[str, Engine] | None = None,
    ) -> None:
        self.plan = plan
        self.node = node
        self.phase = phase or (lambda condition_id, phase, detail: None)
        self.phases: dict[str, str] = {}
        """The phase each condition was last reported in (reported once per change)."""
        self.store = store
        self.engine_class = engine_class
        self.engines: dict[str, Engine] = dict(engines or {})
        self.descriptions = {cid: engine.describe() for cid, engine in self.engines.items()}
        self.prompts: dict[str, str] = {}
        self.host = _host_info()
        self.env = {name: os.environ.get(name) for name in plan.record_env}
        self.conditions = {c.id: c for c in plan.conditions}
        self.items = plan_items(plan)

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

    def close_all(self, keep: set[str] = frozenset()) -> None:
        for condition_id in [c for c in self.engines if c not in keep]:
            self.engines.pop(condition_id).close()

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
        self._enter(condition.id, "warm-up" if first.role == "warmup" else "measuring")
        spec = self.items[first.input_id]
        started_at = datetime.now(UTC).isoformat(timespec="milliseconds")
        recorded = [t for t in members if t.trial_id in attempts]
        if isinstance(engine, str):
            outcome = _Outcome(prompt=spec.text, failure=engine, engine_failed=True)
            return self._records(recorded, attempts, started_at, lambda _: outcome)
        try:
            prompt = self.prompts.get(spec.item_id) or fit_prompt(
                spec.text, spec.target_prompt_tokens, self.plan.filler, engine.count_tokens
            )
        except SitegenError as exc:
            outcome = _Outcome(prompt=spec.text, failure=f"input length: {exc}")
            return self._records(recorded, attempts, started_at, lambda _: outcome)
        self.prompts[spec.item_id] = prompt
        requests = self._requests(condition, spec, prompt, members)
        measured = self._measure_round(engine, requests)
        samples = measured.telemetry.raw_samples()
        if samples:
            self._log_samples([t.trial_id for t in recorded], samples)
        by_id = dict(zip([t.trial_id for t in members], measured.outcomes, strict=True))
        return self._records(
            recorded,
            attempts,
            started_at,
            lambda trial: by_id[trial.trial_id],
            _round_info(members, measured, started_at),
            measured.peaks,
            measured.telemetry.summaries() + measured.cpu_time,
        )

    def _requests(
        self, condition: ConditionSpec, spec: PlanItem, prompt: str, members: list[TrialSpec]
    ) -> list[GenerationRequest]:
        """One request per member of the round (each with its own seed)."""
        sampling = self.plan.sampling_for(condition)
        return [
            GenerationRequest(
                prompt=prompt,
                max_output_tokens=spec.max_output_tokens,
                temperature=sampling.temperature,
                top_p=sampling.top_p,
                top_k=sampling.top_k,
                seed=trial.seed,
                timeout_s=self.plan.request_timeout_s,
                template_kwargs=self.plan.template_kwargs,
            )
            for trial in members
        ]

    def _measure_round(self, engine: Engine, requests: list[GenerationRequest]) -> _Round:
        """Send the requests together (one alone, several from a thread each) while memory,
        device telemetry and CPU time are sampled."""
        probes = engine.memory_probes()
        memory = PeakMemorySampler(probes)
        telemetry, cpu_clocks = telemetry_for(probes, self.plan.telemetry.interval_s)
        with memory, telemetry, ExitStack() as cpu:
            for clock in cpu_clocks:
                cpu.enter_context(clock)
            started = time.monotonic()
            if len(requests) == 1:
                outcomes = [_request(engine, requests[0])]
            else:
                with ThreadPoolExecutor(len(requests), thread_name_prefix="user") as users:
                    outcomes = list(users.map(lambda r: _request(engine, r), requests))
            wall = time.monotonic() - started
        return _Round(
            outcomes, wall, memory.peaks(), telemetry, [clock.summary() for clock in cpu_clocks]
        )

    def _records(
        self,
        recorded: list[TrialSpec],
        attempts: dict[str, int],
        started_at: str,
        outcome_of: Callable[[TrialSpec], _Outcome],
        round_info: RoundInfo | None = None,
        peaks: list[DeviceMemory] = (),
        telemetry: list[DeviceTelemetry] = (),
    ) -> list[tuple[TrialRecord, bool]]:
        """Each recorded trial's record, with whether its engine failed as a whole."""
        return [
            (
                self._record(
                    trial,
                    attempts[trial.trial_id],
                    started_at,
                    outcome_of(trial),
                    round_info,
                    peaks,
                    telemetry,
                ),
                outcome_of(trial).engine_failed,
            )
            for trial in recorded
        ]

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

    def _record(
        self,
        trial: TrialSpec,
        attempt: int,
        started_at: str,
        outcome: _Outcome,
        round_info: RoundInfo | None,
        peaks: list[DeviceMemory],
        telemetry: list[DeviceTelemetry],
    ) -> TrialRecord:
        condition = self.conditions[trial.condition_id]
        spec = self.items[trial.input_id]
        sampling = self.plan.sampling_for(condition)
        end = outcome.end
        failure = outcome.failure
        metrics = None
        if end is not None and outcome.t0 is not None:
            metrics = compute_metrics(outcome.t0, outcome.chunks, end)
            failure = failure or (f"engine error: {end.error}" if end.error else None)
            failure = failure or _length_miss(spec.target_prompt_tokens, end, self.plan)
        description = self.descriptions.get(condition.id)
        return TrialRecord(
            campaign_id=self.store.campaign_id,
            plan_sha256=self.store.plan_sha256,
            trial_id=trial.trial_id,
            attempt=attempt,
            condition_id=trial.condition_id,
            input_id=trial.input_id,
            role=trial.role,
            repetition=trial.repetition,
            order_index=trial.order_index,
            started_at=started_at,
            speculative=condition.speculative,
            sampling=Sampling(
                temperature=sampling.temperature,
                top_p=sampling.top_p,
                top_k=sampling.top_k,
                seed=trial.seed,
            ),
            context_capacity=condition.context_capacity,
            max_output_tokens=spec.max_output_tokens,
            target_prompt_tokens=spec.target_prompt_tokens,
            prompt_tolerance_tokens=self.plan.prompt_tolerance_tokens,
            status="failed" if failure else "ok",
            failure_reason=failure,
            prompt_tokens=end.prompt_tokens if end else None,
            prompt=outcome.prompt,
            metrics=metrics,
            # Readings belong to a request that ran: none without an end.
            peak_memory=list(peaks) if end is not None else [],
            text="".join(c.answer for c in outcome.chunks),
            reasoning_text="".join(c.reasoning for c in outcome.chunks),
            provenance=self._provenance(description, condition),
            telemetry=list(telemetry) if end is not None else [],
            round=round_info,
            engine_context_per_slot=description.context_per_slot if description else None,
        )

    def _gpu_runtime(self, devices: list[DeviceInfo]) -> str | None:
        """The driver's CUDA version when the engine runs on this host's GPUs (asked once)."""
        if not any(d.id.startswith("cuda") for d in devices):
            return None
        if not hasattr(self, "_cuda_version"):
            self._cuda_version = nvml_cuda_version()
        return self._cuda_version

    def _provenance(
        self, description: EngineDescription | None, condition: ConditionSpec
    ) -> Provenance:
        if description is None:
            model = self.plan.model_for(condition)
            description = EngineDescription(
                engine=EngineInfo(id=self.plan.engine, version="unknown", build="unknown", api="-"),
                model=ModelInfo(
                    name=model.name,
                    file=model.source,
                    sha256="",
                    size_bytes=0,
                    quantization=model.quantization,
                ),
                devices=[],
                flags={},
            )
        host = self.host.model_copy(
            update={
                "devices": description.devices,
                "driver": description.driver,
                "interconnect": description.interconnect,
                "gpu_runtime": self._gpu_runtime(description.devices),
            }
        )
        return Provenance(
            engine=description.engine,
            model=description.model,
            host=host,
            flags=description.flags,
            env=self.env,
            template_kwargs=self.plan.template_kwargs,
            sitegen_version=__version__,
            node=self.node,
        )


@dataclass
class _Outcome:
    """One request as it ran: what streamed, how it ended, and why it failed."""

    prompt: str
    chunks: list[StreamChunk] = field(default_factory=list)
    end: StreamEnd | None = None
    failure: str | None = None
    engine_failed: bool = False
    t0: float | None = None
    """Monotonic time the request was handed to the engine."""


def _request(engine: Engine, request: GenerationRequest) -> _Outcome:
    """Stream one request to its end (run in a thread per user in a concurrent round)."""
    outcome = _Outcome(prompt=request.prompt, t0=time.monotonic())
    try:
        for event in engine.generate(request):
            if isinstance(event, StreamEnd):
                outcome.end = event
            else:
                outcome.chunks.append(event)
    except SitegenError as exc:
        outcome.failure, outcome.engine_failed = f"engine failure: {exc}", True
    if outcome.end is None:
        outcome.failure = outcome.failure or "stream ended without an end event"
    return outcome


def telemetry_for(
    probes: list[MemoryProbe], interval_s: float
) -> tuple[TelemetrySampler, list[ProcessCpuTime]]:
    """Telemetry follows the memory probes: where GPU memory is sampled (NVML) the GPUs'
    counters are sampled too; where a process's memory is, that process's CPU time is
    read instead (CPU runs have no utilization or power counters)."""
    if any(probe.source == "nvml-used" for probe in probes):
        return TelemetrySampler(nvml_telemetry_probes(), interval_s), []
    return TelemetrySampler([], interval_s), [
        ProcessCpuTime(probe.pid) for probe in probes if isinstance(probe, ProcessRssProbe)
    ]


def _length_miss(target: int | None, end: StreamEnd, plan: Plan) -> str | None:
    if target is None or end.prompt_tokens is None:
        return None
    if abs(end.prompt_tokens - target) > plan.prompt_tolerance_tokens:
        return (
            f"input length {end.prompt_tokens} tokens missed the target {target} "
            f"± {plan.prompt_tolerance_tokens}"
        )
    return None


def _host_info() -> HostInfo:
    return HostInfo(
        hostname=socket.gethostname(),
        platform=f"{platform.system()} {platform.release()} {platform.machine()}",
        python=sys.version.split()[0],
        cpu_count=os.cpu_count() or 1,
        devices=[],
        cpu=cpu_name(),
    )
