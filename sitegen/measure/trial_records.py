"""Turning what a round produced into one ``TrialRecord`` per recorded trial: its metrics,
why it failed, and the provenance of the engine, the model, the host and the node."""

from __future__ import annotations

import os
import platform
import socket
import sys
from collections.abc import Callable, Sequence

from sitegen import __version__
from sitegen.engine.contract import EngineDescription
from sitegen.engine.memory import cpu_name
from sitegen.engine.nvml import nvml_cuda_version
from sitegen.measure.requests import MeasuredRound, Outcome
from sitegen.plan.expand import TrialSpec, rate_label
from sitegen.plan.items import PlanItem
from sitegen.plan.plan_models import ConditionSpec, Plan
from sitegen.records.metrics import compute_metrics
from sitegen.records.record_models import (
    ENGINE_NOT_LOADED_API,
    DeviceInfo,
    DeviceMemory,
    DeviceTelemetry,
    EngineInfo,
    HostInfo,
    LoadInfo,
    ModelInfo,
    NodeInfo,
    Provenance,
    RoundInfo,
    Sampling,
    TrialRecord,
)
from sitegen.records.store import TrialSink
from sitegen.records.stream import StreamEnd


class TrialRecorder:
    """Makes the records of one campaign (its ids, host and environment are read once)."""

    def __init__(
        self, plan: Plan, store: TrialSink, items: dict[str, PlanItem], node: NodeInfo | None
    ) -> None:
        self.plan = plan
        self.store = store
        self.items = items
        self.node = node
        self.conditions = {c.id: c for c in plan.conditions}
        self.host = _host_info()
        self.env = {name: os.environ.get(name) for name in plan.record_env}

    def records(
        self,
        recorded: list[TrialSpec],
        attempts: dict[str, int],
        started_at: str,
        description: EngineDescription | None,
        outcome_of: Callable[[TrialSpec], Outcome],
        round_info: RoundInfo | None = None,
        peaks: Sequence[DeviceMemory] = (),
        telemetry: Sequence[DeviceTelemetry] = (),
        load_of: Callable[[TrialSpec], LoadInfo | None] = lambda _: None,
    ) -> list[tuple[TrialRecord, bool]]:
        """Each recorded trial's record, with whether its engine failed as a whole.
        ``description``: the engine of the round's condition as it was last loaded
        (``None`` if it never loaded)."""
        return [
            (
                self._record(
                    trial,
                    attempts[trial.trial_id],
                    started_at,
                    description,
                    outcome_of(trial),
                    round_info,
                    peaks,
                    telemetry,
                    load_of(trial),
                ),
                outcome_of(trial).engine_failed,
            )
            for trial in recorded
        ]

    def _record(
        self,
        trial: TrialSpec,
        attempt: int,
        started_at: str,
        description: EngineDescription | None,
        outcome: Outcome,
        round_info: RoundInfo | None,
        peaks: Sequence[DeviceMemory],
        telemetry: Sequence[DeviceTelemetry],
        load: LoadInfo | None = None,
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
            provenance=self.provenance(description, condition),
            telemetry=list(telemetry) if end is not None else [],
            round=round_info,
            engine_context_per_slot=description.context_per_slot if description else None,
            load=load,
        )

    def _gpu_runtime(self, devices: list[DeviceInfo]) -> str | None:
        """The driver's CUDA version when the engine runs on this host's GPUs (asked once)."""
        if not any(d.id.startswith("cuda") for d in devices):
            return None
        if not hasattr(self, "_cuda_version"):
            self._cuda_version = nvml_cuda_version()
        return self._cuda_version

    def provenance(
        self, description: EngineDescription | None, condition: ConditionSpec
    ) -> Provenance:
        """The provenance of a record of ``condition`` whose engine described itself as
        ``description`` (``None``: it never loaded, and the plan stands in for it)."""
        if description is None:
            model = self.plan.model_for(condition)
            description = EngineDescription(
                engine=EngineInfo(
                    id=self.plan.engine,
                    version="unknown",
                    build="unknown",
                    api=ENGINE_NOT_LOADED_API,
                ),
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


def round_info(
    members: list[TrialSpec], measured: MeasuredRound, started_at: str
) -> RoundInfo | None:
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


def load_info(
    plan: Plan, members: list[TrialSpec], measured: MeasuredRound | None, started_at: str
) -> Callable[[TrialSpec], LoadInfo | None]:
    """Each request's ``LoadInfo`` in a load run: its schedule, its actual send and the
    run's shared figures (``measured`` ``None``: the run sent nothing). ``None`` for
    trials of closed rounds."""
    first = members[0]
    rate = first.load_rate
    # a rate is an open-loop run's: the concurrency profile takes none
    if plan.load is None or rate is None or plan.load.profile == "concurrency":
        return lambda _: None
    profile = plan.load.profile
    outcomes = measured.outcomes if measured else []
    sent = {
        t.trial_id: o.t0 - measured.started
        for t, o in zip(members, outcomes, strict=False)
        if measured and o.t0 is not None
    }
    completed = sum(o.end is not None and not o.end.error and not o.failure for o in outcomes)
    tokens = sum(o.end.generated_tokens or 0 for o in outcomes if o.end is not None)
    run_id = f"{first.condition_id}/{first.input_id}/load-{rate_label(rate)}@{started_at}"

    def info(trial: TrialSpec) -> LoadInfo:
        offset = sent.get(trial.trial_id)
        return LoadInfo(
            profile=profile,
            offered_rate=rate,
            request_index=trial.user,
            scheduled_s=trial.scheduled_s or 0.0,
            sent_s=round(max(offset, 0.0), 6) if offset is not None else None,
            run_id=run_id,
            run_requests=len(members),
            run_wall_s=round(measured.wall_s, 6) if measured else 0.0,
            run_completed=completed,
            run_generated_tokens=tokens,
        )

    return info


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
