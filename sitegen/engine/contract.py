"""The engine contract: load one condition once, then stream requests.

An engine reports what arrives and when (``StreamChunk``), then how it ended
(``StreamEnd``). Turning that into metrics is done once, in
``sitegen.records.metrics``, so every engine is measured by the same definitions.
"""

from __future__ import annotations

import os
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import ClassVar

from sitegen.engine.memory import MemoryProbe, ProcessRssProbe
from sitegen.plan.engine_options import EngineOptions
from sitegen.plan.engine_registry import parse_engine_options
from sitegen.plan.plan_models import ConditionSpec, Plan
from sitegen.records.record_models import DeviceInfo, EngineInfo, ModelInfo
from sitegen.records.stream import StreamEvent

WaitReport = Callable[[str, float, float], None]
"""Called while a server is waited for: (its URL, seconds waited, seconds allowed)."""


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
        options included: ``engine_registry.location_options`` tells them apart)."""
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
