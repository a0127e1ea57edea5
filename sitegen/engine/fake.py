"""``fake``: a deterministic engine for unit tests. The build refuses its records.

Options (``condition.engine_options``): ``tps`` (tokens per second, default 50),
``fail_input`` (an input id whose requests end with an engine error).
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Iterator

from sitegen.engine.base import (
    Engine,
    EngineDescription,
    GenerationRequest,
    StreamChunk,
    StreamEnd,
    StreamEvent,
)
from sitegen.records.models import DeviceInfo, EngineInfo, ModelInfo

FAKE_WORDS = ("alpha", "beta", "gamma", "delta", "epsilon")


class FakeEngine(Engine):
    engine_id = "fake"

    def generate(self, request: GenerationRequest) -> Iterator[StreamEvent]:
        options = self.condition.engine_options
        if options.get("fail_input") and options["fail_input"] in request.prompt:
            yield StreamEnd(t=time.monotonic(), finish="error", error="fake engine failure")
            return
        seconds_per_token = 1.0 / float(options.get("tps", 50.0))
        n = min(request.max_output_tokens, 8 + request.seed % 5)
        start = time.monotonic()
        for i in range(n):
            yield StreamChunk(
                t=start + 0.01 + i * seconds_per_token, answer=FAKE_WORDS[i % 5] + " "
            )
        spec = self.condition.speculative.mode != "off"
        yield StreamEnd(
            t=start + 0.01 + n * seconds_per_token,
            finish="length" if n == request.max_output_tokens else "stop",
            generated_tokens=n,
            prompt_tokens=self.count_tokens(request.prompt),
            native_tps=1.0 / seconds_per_token,
            draft_proposed=n if spec else None,
            draft_accepted=n // 2 if spec else None,
        )

    def count_tokens(self, text: str) -> int:
        return len(text.split())

    def describe(self) -> EngineDescription:
        return EngineDescription(
            engine=EngineInfo(id=self.engine_id, version="0", build="fake", api="in-process"),
            model=ModelInfo(
                name=self.plan.model.name,
                file="fake.gguf",
                sha256=hashlib.sha256(b"fake").hexdigest(),
                size_bytes=0,
                quantization=self.plan.model.quantization,
            ),
            devices=[DeviceInfo(id="cpu", name="fake cpu")],
            flags={"spec_type": self.condition.speculative.mode},
        )
