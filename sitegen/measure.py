"""``sitegen measure``: plan → engine → records.

Trials already recorded are skipped, so an interrupted campaign resumes where it
stopped. A failed request, a missed input length or an engine that will not load
becomes a ``failed`` record (failed requests are data) and the campaign goes on.
"""

from __future__ import annotations

import os
import platform
import socket
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path

from sitegen import __version__
from sitegen.engine.base import Engine, EngineDescription, GenerationRequest, StreamChunk, StreamEnd
from sitegen.engine.memory import PeakMemorySampler
from sitegen.engine.registry import get_engine_class
from sitegen.errors import SitegenError
from sitegen.plan.expand import TrialSpec, expand_trials
from sitegen.plan.items import plan_items
from sitegen.plan.models import ConditionSpec, Plan
from sitegen.plan.prompts import fit_prompt
from sitegen.records.campaign import CampaignStore
from sitegen.records.metrics import compute_metrics
from sitegen.records.models import (
    EngineInfo,
    HostInfo,
    ModelInfo,
    Provenance,
    Sampling,
    TrialMetrics,
    TrialRecord,
)


@dataclass(frozen=True)
class CampaignResult:
    """What one ``measure`` invocation did."""

    directory: Path
    written: int
    """Planned trials run now."""
    skipped: int
    """Planned trials already recorded by an earlier invocation."""
    failed: int
    resume_warmups: int = 0
    """Extra warm-ups run because a resumed condition's model was loaded anew."""


Progress = Callable[[int, int, TrialRecord], None]


def run_campaign(plan: Plan, data_dir: Path, progress: Progress | None = None) -> CampaignResult:
    """Run every planned trial that has no record yet, appending one record per trial."""
    store = CampaignStore.open(data_dir / "campaigns", plan)
    done = store.completed_trial_ids()
    planned = expand_trials(plan)
    pending = [trial for trial in planned if trial.trial_id not in done]
    planned_pending = len(pending)
    pending = with_resume_warmups(plan, pending, done)
    failed = 0
    with native_output_to(store.directory / "logs" / "engine.log"):
        runner = _Runner(plan, store)
        try:
            for index, trial in enumerate(pending, start=1):
                record = runner.run(trial, keep_loaded=_conditions_after(pending, index))
                store.append(record)
                failed += record.status == "failed"
                if progress:
                    progress(index, len(pending), record)
        finally:
            runner.close_all()
    store.write_manifest()
    return CampaignResult(
        store.directory,
        planned_pending,
        len(planned) - planned_pending,
        failed,
        len(pending) - planned_pending,
    )


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
    log_path.parent.mkdir(parents=True, exist_ok=True)
    sys.stderr.flush()
    saved_fd = os.dup(2)
    python_stderr = sys.stderr
    with log_path.open("ab") as log:
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
    def __init__(self, plan: Plan, store: CampaignStore) -> None:
        self.plan = plan
        self.store = store
        self.engine_class = get_engine_class(plan.engine)
        self.engines: dict[str, Engine] = {}
        self.descriptions: dict[str, EngineDescription] = {}
        self.load_errors: dict[str, str] = {}
        self.prompts: dict[str, str] = {}
        self.host = _host_info()
        self.env = {name: os.environ.get(name) for name in plan.record_env}
        self.conditions = {c.id: c for c in plan.conditions}
        self.items = plan_items(plan)

    def engine_for(self, condition: ConditionSpec) -> Engine | None:
        if condition.id not in self.engines and condition.id not in self.load_errors:
            try:
                engine = self.engine_class(self.plan, condition)
            except SitegenError as exc:
                self.load_errors[condition.id] = f"load failure: {exc}"
                return None
            self.engines[condition.id] = engine
            self.descriptions[condition.id] = engine.describe()
        return self.engines.get(condition.id)

    def close_all(self, keep: set[str] = frozenset()) -> None:
        for condition_id in [c for c in self.engines if c not in keep]:
            self.engines.pop(condition_id).close()

    def run(self, trial: TrialSpec, keep_loaded: set[str]) -> TrialRecord:
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
        if engine is None:
            return TrialRecord(
                **base,
                status="failed",
                failure_reason=self.load_errors[condition.id],
                prompt_tokens=None,
                prompt=spec.text,
                metrics=None,
                peak_memory=[],
                text="",
                reasoning_text="",
                provenance=self._provenance(None),
            )
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
                    failure = f"engine failure: {exc}"
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
            provenance=self._provenance(self.descriptions[condition.id]),
        )

    def _provenance(self, description: EngineDescription | None) -> Provenance:
        if description is None:
            description = EngineDescription(
                engine=EngineInfo(id=self.plan.engine, version="unknown", build="unknown", api="-"),
                model=ModelInfo(
                    name=self.plan.model.name,
                    file=self.plan.model.source,
                    sha256="",
                    size_bytes=0,
                    quantization=self.plan.model.quantization,
                ),
                devices=[],
                flags={},
            )
        host = self.host.model_copy(
            update={
                "devices": description.devices,
                "driver": description.driver,
                "interconnect": description.interconnect,
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
    )
