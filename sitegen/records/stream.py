"""What an engine streams back for one request: generated text as it arrives, then how
the request ended with the engine's own counts. Engines produce these events; the metrics
of a record are computed from them (``records.metrics``)."""

from __future__ import annotations

from dataclasses import dataclass

from sitegen.records.record_models import Finish


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
