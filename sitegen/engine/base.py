"""The engine contract: load one condition once, then stream requests.

An engine reports what arrives and when (``StreamChunk``), then how it ended
(``StreamEnd``). Turning that into metrics is done once, in
``sitegen.records.metrics``, so every engine is measured by the same definitions.
"""

from __future__ import annotations

import os
from abc import ABC, abstractmethod
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, ClassVar

from sitegen.engine.memory import MemoryProbe, ProcessRssProbe
from sitegen.engine.options import EngineOptions
from sitegen.engine.registry import parse_engine_options
from sitegen.plan.models import ConditionSpec, Plan
from sitegen.records.models import DeviceInfo, EngineInfo, Finish, ModelInfo

if TYPE_CHECKING:
    from sitegen.engine.server import WaitReport


@dataclass(frozen=True)
class GenerationRequest:
    """One request as handed to an engine."""

    prompt: str
    max_output_tokens: int
    temperature: float
    top_p: float
    top_k: int
    seed: int
    timeout_s: float
    template_kwargs: dict[str, str | int | float | bool] = field(default_factory=dict)


@dataclass(frozen=True)
class StreamChunk:
    """One or more generated tokens arriving at monotonic time ``t``."""

    t: float
    answer: str = ""
    reasoning: str = ""


@dataclass(frozen=True)
class StreamEnd:
    """How the request ended, with the engine's own counts."""

    t: float
    finish: Finish
    generated_tokens: int | None = None
    prompt_tokens: int | None = None
    native_tps: float | None = None
    draft_proposed: int | None = None
    draft_accepted: int | None = None
    error: str | None = None
    prompt_processing_s: float | None = None
    """Prefill time as the engine reports it (llama.cpp ``timings.prompt_ms`` ÷ 1000)."""
    reasoning_tokens: int | None = None
    """Thinking tokens, only where the engine streams thinking separately (else ``None``)."""
    answer_tokens: int | None = None
    """Answer tokens, counted the same way as ``reasoning_tokens``."""


StreamEvent = StreamChunk | StreamEnd


class Engine(ABC):
    """A loaded model under one condition. Subclasses load in ``__init__``."""

    engine_id: ClassVar[str]
    """Registered name."""
    options: EngineOptions
    """The condition's ``engine_options``, typed by the model registered for this engine
    (subclasses narrow the annotation)."""

    def __init__(self, plan: Plan, condition: ConditionSpec) -> None:
        self.plan = plan
        self.condition = condition
        self.options = parse_engine_options(self.engine_id, condition)

    def option_flags(self) -> dict[str, str]:
        """The options the condition sets, as given, for the provenance flags (location
        options included: ``registry.location_options`` tells them apart)."""
        return {key: str(value) for key, value in self.condition.engine_options.items()}

    @abstractmethod
    def generate(self, request: GenerationRequest) -> Iterator[StreamEvent]:
        """Run one request; yield chunks as they arrive and end with exactly one StreamEnd.

        Errors of the request itself end the stream with ``finish="error"``; only
        failures of the engine as a whole raise ``EngineError``.
        """

    @abstractmethod
    def count_tokens(self, text: str) -> int:
        """Input length of ``text`` as this engine would tokenize the request."""

    @abstractmethod
    def describe(self) -> EngineDescription:
        """Engine, model, devices and flags, for provenance."""

    def memory_probes(self) -> list[MemoryProbe]:
        """What to sample for peak memory; by default this process's RSS (in-process engines)."""
        return [ProcessRssProbe(os.getpid())]

    def close(self) -> None:  # noqa: B027 - optional hook
        """Release the model."""

    @classmethod
    def preflight(cls, plan: Plan, condition: ConditionSpec, on_wait: WaitReport) -> Engine | None:
        """Checks before anything is created: raise a ``SitegenError`` for what is found
        wrong. Returns the engine where constructing it loads nothing here (a server is
        asked), so the run keeps it; ``None`` where the run's first load is the one to
        measure (an in-process model is not loaded twice). ``on_wait`` is told while a
        server is waited for."""
        return None


@dataclass(frozen=True)
class EngineDescription:
    """Provenance an engine reports about itself."""

    engine: EngineInfo
    model: ModelInfo
    devices: list[DeviceInfo]
    flags: dict[str, str]
    driver: str | None = None
    interconnect: str | None = None
    context_per_slot: int | None = None
    """Context per request slot as the engine allocated it (llama.cpp may round the
    requested size up); ``None`` when the engine cannot report it."""
