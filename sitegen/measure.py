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

import os
import platform
import socket
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path

from sitegen import __version__
from sitegen.engine.base import Engine, EngineDescription, GenerationRequest, StreamChunk, StreamEnd
from sitegen.engine.llamacpp_embedded import cpu_name
from sitegen.engine.memory import PeakMemorySampler
from sitegen.engine.nvml import nvml_cuda_version
from sitegen.engine.registry import get_engine_class, validate_engine_options
from sitegen.errors import SitegenError, StorageError
from sitegen.plan.expand import TrialSpec, expand_trials
from sitegen.plan.items import plan_items
from sitegen.plan.models import ConditionSpec, Plan
from sitegen.plan.prompts import fit_prompt
from sitegen.records.campaign import CAMPAIGNS_DIR, CampaignStore
from sitegen.records.metrics import compute_metrics
from sitegen.records.models import (
    DeviceInfo,
    EngineInfo,
    HostInfo,
    ModelInfo,
    NodeInfo,
    Provenance,
    Sampling,
    TrialMetrics,
    TrialRecord,
)

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


def run_campaign(plan: Plan, data_dir: Path, progress: Progress | None = None) -> CampaignResult:
    """Attempt every planned trial without an ok record, appending one record per attempt.

    Nothing is created on disk for an invalid plan or engine option. The campaign is
    locked for the whole run and checked against its manifest before anything is appended
    (``LockedError``, ``IntegrityError``)."""
    validate_engine_options(plan)
    engine_class = get_engine_class(plan.engine)
    with CampaignStore.open(data_dir / CAMPAIGNS_DIR, plan) as store:
        result = _run(plan, store, engine_class, progress)
        store.sign()  # covers what the engine logged after the last record
    return result


def _run(
    plan: Plan,
    store: CampaignStore,
    engine_class: type[Engine],
    progress: Progress | None,
    node: NodeInfo | None = None,
) -> CampaignResult:
    """``node``: the Ray node of a fleet run, recorded in every record's provenance."""
    latest = store.latest_attempts()
    planned = expand_trials(plan)
    pending = [t for t in planned if _needs_attempt(latest.get(t.trial_id))]
    queue = with_resume_warmups(plan, pending, set(latest))
    planned_ids = {trial.trial_id for trial in pending}
    total = len(queue)
    attempted = succeeded = failed = retried = 0
    streaks: Counter[str] = Counter()
    stopped: list[StoppedCondition] = []
    stopped_ids: set[str] = set()
    with native_output_to(store.engine_log_path):
        runner = _Runner(plan, store, engine_class, node)
        try:
            for position, trial in enumerate(queue):
                if trial.condition_id in stopped_ids:
                    continue
                previous = latest.get(trial.trial_id)
                attempt = previous.attempt + 1 if previous else 1
                keep = _conditions_after(queue, position + 1) - stopped_ids
                record, engine_failed = runner.run(trial, attempt, keep_loaded=keep)
                store.append(record)
                attempted += 1
                if trial.trial_id in planned_ids:
                    succeeded += record.status == "ok"
                    failed += record.status == "failed"
                    retried += previous is not None
                condition_id = trial.condition_id
                streaks[condition_id] = streaks[condition_id] + 1 if engine_failed else 0
                if streaks[condition_id] >= MAX_CONSECUTIVE_ENGINE_FAILURES:
                    # An outage: leave the condition's other trials pending, not burnt.
                    rest = [t for t in queue[position + 1 :] if t.condition_id == condition_id]
                    if rest:
                        total -= len(rest)
                        stopped_ids.add(condition_id)
                        stopped.append(
                            StoppedCondition(
                                condition_id,
                                record.failure_reason or "",
                                sum(t.trial_id in planned_ids for t in rest),
                            )
                        )
                if progress:
                    progress(attempted, total, record)
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


class _Runner:
    def __init__(
        self,
        plan: Plan,
        store: CampaignStore,
        engine_class: type[Engine],
        node: NodeInfo | None = None,
    ) -> None:
        self.plan = plan
        self.node = node
        self.store = store
        self.engine_class = engine_class
        self.engines: dict[str, Engine] = {}
        self.descriptions: dict[str, EngineDescription] = {}
        self.prompts: dict[str, str] = {}
        self.host = _host_info()
        self.env = {name: os.environ.get(name) for name in plan.record_env}
        self.conditions = {c.id: c for c in plan.conditions}
        self.items = plan_items(plan)

    def engine_for(self, condition: ConditionSpec) -> Engine | str:
        """The loaded engine of ``condition``, or why it would not load. A failed load is
        not remembered: the next trial tries again, as an outage may be over."""
        if condition.id not in self.engines:
            try:
                engine = self.engine_class(self.plan, condition)
            except SitegenError as exc:
                return f"load failure: {exc}"
            self.engines[condition.id] = engine
            self.descriptions[condition.id] = engine.describe()
        return self.engines[condition.id]

    def close_all(self, keep: set[str] = frozenset()) -> None:
        for condition_id in [c for c in self.engines if c not in keep]:
            self.engines.pop(condition_id).close()

    def run(
        self, trial: TrialSpec, attempt: int, keep_loaded: set[str]
    ) -> tuple[TrialRecord, bool]:
        """The record of one attempt, and whether the engine as a whole failed (would not
        load, or raised during the request) rather than this one request."""
        condition = self.conditions[trial.condition_id]
        # Sequential blocks: free the previous condition's model before loading the next.
        self.close_all(keep=keep_loaded | {condition.id})
        engine = self.engine_for(condition)
        spec = self.items[trial.input_id]
        sampling = self.plan.sampling_for(condition)
        base = dict(
            campaign_id=self.store.campaign_id,
            plan_sha256=self.store.plan_sha256,
            trial_id=trial.trial_id,
            attempt=attempt,
            condition_id=trial.condition_id,
            input_id=trial.input_id,
            role=trial.role,
            repetition=trial.repetition,
            order_index=trial.order_index,
            started_at=datetime.now(UTC).isoformat(timespec="milliseconds"),
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
        )
        if isinstance(engine, str):
            return TrialRecord(
                **base,
                status="failed",
                failure_reason=engine,
                prompt_tokens=None,
                prompt=spec.text,
                metrics=None,
                peak_memory=[],
                text="",
                reasoning_text="",
                provenance=self._provenance(None, condition),
            ), True
        try:
            prompt = self.prompts.get(spec.item_id) or fit_prompt(
                spec.text, spec.target_prompt_tokens, self.plan.filler, engine.count_tokens
            )
        except SitegenError as exc:
            prompt, prompt_error = spec.text, f"input length: {exc}"
        else:
            self.prompts[spec.item_id] = prompt
            prompt_error = None
        request = GenerationRequest(
            prompt=prompt,
            max_output_tokens=spec.max_output_tokens,
            temperature=sampling.temperature,
            top_p=sampling.top_p,
            top_k=sampling.top_k,
            seed=trial.seed,
            timeout_s=self.plan.request_timeout_s,
            template_kwargs=self.plan.template_kwargs,
        )
        chunks: list[StreamChunk] = []
        end: StreamEnd | None = None
        metrics: TrialMetrics | None = None
        failure = prompt_error
        engine_failed = False
        sampler = PeakMemorySampler(engine.memory_probes())
        if failure is None:
            with sampler:
                t0 = time.monotonic()
                try:
                    for event in engine.generate(request):
                        if isinstance(event, StreamEnd):
                            end = event
                        else:
                            chunks.append(event)
                except SitegenError as exc:
                    failure, engine_failed = f"engine failure: {exc}", True
            if end is None:
                failure = failure or "stream ended without an end event"
            else:
                metrics = compute_metrics(t0, chunks, end)
                failure = failure or (f"engine error: {end.error}" if end.error else None)
                failure = failure or _length_miss(spec.target_prompt_tokens, end, self.plan)
        return TrialRecord(
            **base,
            status="failed" if failure else "ok",
            failure_reason=failure,
            prompt_tokens=end.prompt_tokens if end else None,
            prompt=prompt,
            metrics=metrics,
            peak_memory=sampler.peaks() if end is not None else [],
            text="".join(c.answer for c in chunks),
            reasoning_text="".join(c.reasoning for c in chunks),
            provenance=self._provenance(self.descriptions[condition.id], condition),
        ), engine_failed

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
