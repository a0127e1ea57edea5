"""Parsing OpenAI-style stream objects (llama.cpp server, vLLM, SGLang) into stream events."""

from __future__ import annotations

from typing import Any

from sitegen.engine.contract import GenerationRequest
from sitegen.records.record_models import Finish
from sitegen.records.stream import StreamChunk, StreamEnd

_FINISH: dict[str, Finish] = {
    "stop": "stop",
    "eos": "stop",
    "tool_calls": "stop",
    "length": "length",
}


def prompt_fields(request: GenerationRequest, api: str) -> dict[str, Any]:
    """The prompt part of an OpenAI-style request: one user message for ``chat`` (with the
    chat-template arguments), the raw text for ``completion``."""
    if api != "chat":
        return {"prompt": request.prompt}
    fields: dict[str, Any] = {"messages": [{"role": "user", "content": request.prompt}]}
    if request.template_kwargs:
        fields["chat_template_kwargs"] = request.template_kwargs
    return fields


class OpenAIStreamParser:
    """Feeds on decoded stream objects in arrival order; ``end()`` summarizes the request.

    A chunk counts as a token delivery when it carries text, or an empty text with no
    finish reason (a token that renders as nothing). Role-only and usage-only chunks
    and the final empty chunk are not tokens.
    """

    def __init__(self, speculative: bool) -> None:
        self.speculative = speculative
        self.finish: str | None = None
        self.usage: dict[str, Any] = {}
        self.timings: dict[str, Any] = {}
        self.error: str | None = None
        self.t_last_event: float | None = None

    def feed(self, obj: dict[str, Any], t: float) -> StreamChunk | None:
        self.t_last_event = t
        if "error" in obj:
            error = obj["error"]
            self.error = error.get("message", str(error)) if isinstance(error, dict) else str(error)
            return None
        self.timings = obj.get("timings") or self.timings
        self.usage = obj.get("usage") or self.usage
        choices = obj.get("choices") or []
        if not choices:
            return None
        choice = choices[0]
        finish_reason = choice.get("finish_reason")
        if finish_reason:
            self.finish = finish_reason
        delta = choice.get("delta")
        if delta is not None:
            answer, reasoning = delta.get("content"), delta.get("reasoning_content")
            if reasoning is None:
                reasoning = delta.get("reasoning")
        else:
            answer, reasoning = choice.get("text"), None
        if answer is None and reasoning is None:
            return None
        if not answer and not reasoning and finish_reason:
            return None
        return StreamChunk(t=t, answer=answer or "", reasoning=reasoning or "")

    def end(self, t: float | None = None, error: str | None = None) -> StreamEnd:
        """The request's end at ``t`` (default: the last event); ``error`` overrides."""
        end_t = t if t is not None else self.t_last_event
        if end_t is None:
            raise ValueError("end() needs a time when no event was received")
        error = error or self.error
        if error is None and self.finish is None:
            error = "stream ended without a finish reason"
        if error is None and self.finish not in _FINISH:
            error = f"unknown finish reason '{self.finish}'"
        timings = self.timings
        proposed = timings.get("draft_n")
        accepted = timings.get("draft_n_accepted")
        if self.speculative and proposed is None:
            # llama.cpp omits the draft counters when nothing was drafted.
            proposed, accepted = 0, 0
        prompt_tokens = self.usage.get("prompt_tokens")
        if prompt_tokens is None and "prompt_n" in timings:
            prompt_tokens = timings["prompt_n"] + timings.get("cache_n", 0)
        return StreamEnd(
            t=end_t,
            finish="error" if error or self.finish is None else _FINISH[self.finish],
            generated_tokens=self.usage.get("completion_tokens", timings.get("predicted_n")),
            prompt_tokens=prompt_tokens,
            native_tps=timings.get("predicted_per_second"),
            draft_proposed=proposed,
            draft_accepted=accepted,
            error=error,
            prompt_processing_s=_seconds(timings.get("prompt_ms")),
        )


def _seconds(milliseconds: Any) -> float | None:
    """A llama.cpp ``timings`` duration in ms as seconds; ``None`` when absent or not a
    number."""
    if isinstance(milliseconds, bool) or not isinstance(milliseconds, int | float):
        return None
    return milliseconds / 1000
