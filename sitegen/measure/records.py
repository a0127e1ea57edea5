"""Turning what a round produced into one ``TrialRecord`` per recorded trial: its metrics,
why it failed, and the provenance of the engine, the model, the host and the node."""

from __future__ import annotations

import os
import platform
import socket
import sys
from collections.abc import Callable

from sitegen import __version__
from sitegen.engine.base import EngineDescription
from sitegen.engine.memory import cpu_name
from sitegen.engine.nvml import nvml_cuda_version
from sitegen.measure.requests import MeasuredRound, Outcome
from sitegen.plan.expand import TrialSpec
from sitegen.plan.items import PlanItem
from sitegen.plan.models import ConditionSpec, Plan
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
from sitegen.records.stream import StreamEnd


class TrialRecorder:
    """Makes the records of one campaign (its ids, host and environment are read once)."""

    def __init__(
        self, plan: Plan, store: CampaignStore, items: dict[str, PlanItem], node: NodeInfo | None
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
        peaks: list[DeviceMemory] = (),
        telemetry: list[DeviceTelemetry] = (),
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
