"""``fake``: a deterministic engine for unit tests. The build refuses its records.

Options: ``FakeOptions`` (``sitegen.plan.engine_options``).

Test knob ``SITEGEN_FAKE_DOWN``: the path of a flag file. While that file exists the
engine is down for the conditions it names (one id per line; an empty file: every
condition): loading and every request raise ``EngineError``, like a server that died. A
test stages an outage and its end by creating and deleting the file, without changing the
plan (which would start a new campaign).
"""

from __future__ import annotations

import hashlib
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from sitegen.core.errors import EngineError
from sitegen.engine.contract import Engine, EngineDescription, GenerationRequest
from sitegen.plan.engine_options import FakeOptions
from sitegen.plan.plan_models import ConditionSpec, Plan
from sitegen.records.record_models import DeviceInfo, EngineInfo, ModelInfo
from sitegen.records.stream import StreamChunk, StreamEnd, StreamEvent

if TYPE_CHECKING:
    from sitegen.engine.contract import WaitReport

FAKE_WORDS = ("alpha", "beta", "gamma", "delta", "epsilon")
FAKE_PREFILL_S = 0.01
"""The prefill time the fake engine reports, and the delay of its first token."""
DOWN_FLAG_ENV = "SITEGEN_FAKE_DOWN"
"""Test knob: the flag file that takes the fake engine down (see the module docstring)."""


def _down(condition_id: str) -> bool:
    flag = os.environ.get(DOWN_FLAG_ENV)
    if not flag:
        return False
    try:
        named = Path(flag).read_text(encoding="utf-8").split()
    except FileNotFoundError:
        return False
    return not named or condition_id in named


class FakeEngine(Engine):
    engine_id = "fake"
    options: FakeOptions

    def __init__(self, plan: Plan, condition: ConditionSpec) -> None:
        super().__init__(plan, condition)
        if _down(condition.id):
            raise EngineError(f"fake engine down ({DOWN_FLAG_ENV})")

    @classmethod
    def preflight(cls, plan: Plan, condition: ConditionSpec, on_wait: WaitReport) -> FakeEngine:
        return cls(plan, condition)  # nothing to load: the run keeps it, as a server engine's

    def generate(self, request: GenerationRequest) -> Iterator[StreamEvent]:
        if _down(self.condition.id):
            raise EngineError(f"fake engine down ({DOWN_FLAG_ENV})")
        fail_input = self.options.fail_input
        if fail_input and fail_input in request.prompt:
            yield StreamEnd(t=time.monotonic(), finish="error", error="fake engine failure")
            return
        seconds_per_token = 1.0 / self.options.tps
        thinking = self.options.thinking_tokens
        n = min(request.max_output_tokens, thinking + 8 + request.seed % 5)
        start = time.monotonic()
        for i in range(n):
            word = FAKE_WORDS[i % 5] + " "
            t = start + FAKE_PREFILL_S + i * seconds_per_token
            yield (
                StreamChunk(t=t, reasoning=word) if i < thinking else StreamChunk(t=t, answer=word)
            )
        spec = self.condition.speculative.mode != "off"
        yield StreamEnd(
            t=start + FAKE_PREFILL_S + n * seconds_per_token,
            finish="length" if n == request.max_output_tokens else "stop",
            generated_tokens=n,
            prompt_tokens=self.count_tokens(request.prompt),
            native_tps=1.0 / seconds_per_token,
            draft_proposed=n if spec else None,
            draft_accepted=n // 2 if spec else None,
            prompt_processing_s=FAKE_PREFILL_S,
            reasoning_tokens=min(n, thinking) if thinking else None,
            answer_tokens=max(n - thinking, 0) if thinking else None,
        )

    def count_tokens(self, text: str) -> int:
        return len(text.split())

    def describe(self) -> EngineDescription:
        return EngineDescription(
            engine=EngineInfo(id=self.engine_id, version="0", build="fake", api="in-process"),
            model=ModelInfo(
                name=self.plan.model_for(self.condition).name,
                file="fake.gguf",
                sha256=hashlib.sha256(b"fake").hexdigest(),
                size_bytes=0,
                quantization=self.plan.model_for(self.condition).quantization,
            ),
            devices=[DeviceInfo(id="cpu", name="fake cpu")],
            flags={"spec_type": self.condition.speculative.mode},
        )
