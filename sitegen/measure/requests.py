"""Sending one round's requests to an engine while memory, device telemetry and CPU time
are sampled, and keeping what each request streamed."""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack
from dataclasses import dataclass, field

from sitegen.core.errors import SitegenError
from sitegen.engine.contract import Engine, GenerationRequest
from sitegen.engine.memory import MemoryProbe, PeakMemorySampler, ProcessRssProbe
from sitegen.engine.telemetry_probe import ProcessCpuTime, TelemetrySampler, nvml_telemetry_probes
from sitegen.plan.expand import TrialSpec
from sitegen.plan.items import PlanItem
from sitegen.plan.plan_models import ConditionSpec, Plan
from sitegen.records.record_models import DeviceMemory, DeviceTelemetry
from sitegen.records.stream import StreamChunk, StreamEnd


@dataclass
class Outcome:
    """One request as it ran: what streamed, how it ended, and why it failed."""

    prompt: str
    chunks: list[StreamChunk] = field(default_factory=list)
    end: StreamEnd | None = None
    failure: str | None = None
    engine_failed: bool = False
    t0: float | None = None
    """Monotonic time the request was handed to the engine."""


@dataclass(frozen=True)
class MeasuredRound:
    """What one round of requests produced, beside the records."""

    outcomes: list[Outcome]
    wall_s: float
    """First request handed to the engine → last request ended."""
    peaks: list[DeviceMemory]
    telemetry: TelemetrySampler
    cpu_time: list[DeviceTelemetry]
    started: float = 0.0
    """Monotonic time the round (a load run: its schedule) started."""


def generation_requests(
    plan: Plan, condition: ConditionSpec, spec: PlanItem, prompt: str, members: list[TrialSpec]
) -> list[GenerationRequest]:
    """One request per member of the round (each with its own seed)."""
    sampling = plan.sampling_for(condition)
    return [
        GenerationRequest(
            prompt=prompt,
            max_output_tokens=spec.max_output_tokens,
            temperature=sampling.temperature,
            top_p=sampling.top_p,
            top_k=sampling.top_k,
            seed=trial.seed,
            timeout_s=plan.request_timeout_s,
            template_kwargs=plan.template_kwargs,
        )
        for trial in members
    ]


def measure_round(
    engine: Engine, requests: list[GenerationRequest], interval_s: float
) -> MeasuredRound:
    """Send the requests together (one alone, several from a thread each) while memory,
    device telemetry and CPU time are sampled (telemetry every ``interval_s``)."""
    probes = engine.memory_probes()
    memory = PeakMemorySampler(probes)
    telemetry, cpu_clocks = telemetry_for(probes, interval_s)
    with memory, telemetry, ExitStack() as cpu:
        for clock in cpu_clocks:
            cpu.enter_context(clock)
        started = time.monotonic()
        if len(requests) == 1:
            outcomes = [send_request(engine, requests[0])]
        else:
            with ThreadPoolExecutor(len(requests), thread_name_prefix="user") as users:
                outcomes = list(users.map(lambda r: send_request(engine, r), requests))
        wall = time.monotonic() - started
    return MeasuredRound(
        outcomes,
        wall,
        memory.peaks(),
        telemetry,
        [clock.summary() for clock in cpu_clocks],
        started,
    )


def measure_load_run(
    engine: Engine,
    requests: list[GenerationRequest],
    offsets: Sequence[float],
    interval_s: float,
) -> MeasuredRound:
    """Send each request at its scheduled offset after the run's start, open loop: a
    dispatcher sleeps until each request's time and hands it to a thread of its own, never
    waiting for an earlier request to end; the run ends when every request has ended.
    Memory, telemetry and CPU time are sampled over the whole run."""
    probes = engine.memory_probes()
    memory = PeakMemorySampler(probes)
    telemetry, cpu_clocks = telemetry_for(probes, interval_s)
    outcomes: list[Outcome | None] = [None] * len(requests)

    def send(index: int, request: GenerationRequest) -> None:
        outcomes[index] = send_request(engine, request)

    with memory, telemetry, ExitStack() as cpu:
        for clock in cpu_clocks:
            cpu.enter_context(clock)
        threads: list[threading.Thread] = []
        started = time.monotonic()
        for index, (offset, request) in enumerate(zip(offsets, requests, strict=True)):
            delay = started + offset - time.monotonic()
            if delay > 0:
                time.sleep(delay)
            thread = threading.Thread(
                target=send, args=(index, request), name=f"load-{index}", daemon=True
            )
            thread.start()
            threads.append(thread)
        for thread in threads:
            thread.join()
        wall = time.monotonic() - started
    done = [
        o if o is not None else Outcome(prompt=r.prompt, failure="request thread died")
        for o, r in zip(outcomes, requests, strict=True)
    ]
    return MeasuredRound(
        done,
        wall,
        memory.peaks(),
        telemetry,
        [clock.summary() for clock in cpu_clocks],
        started,
    )


def send_request(engine: Engine, request: GenerationRequest) -> Outcome:
    """Stream one request to its end (run in a thread per user in a concurrent round)."""
    outcome = Outcome(prompt=request.prompt, t0=time.monotonic())
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
