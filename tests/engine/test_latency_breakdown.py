"""The latency breakdown against the real llama.cpp server (gemma-3-270m on CPU): the
engine's own prompt-processing time from the final chunk, and thinking vs answer token
counts on the chat API (llama.cpp streams thinking apart), through both llama.cpp engines."""

from __future__ import annotations

import pytest

from sitegen.engine.contract import GenerationRequest
from sitegen.engine.llamacpp_embedded import EmbeddedLlamaCpp
from sitegen.plan.plan_models import ConditionSpec, InputSpec, Plan
from sitegen.records.stream import StreamEnd
from tests.engine.conftest import CONTEXT, GEMMA
from tests.engine.test_llamacpp_http import make_plan, measure

pytestmark = pytest.mark.slow

REQUEST = GenerationRequest(
    prompt="Name three colours.",
    max_output_tokens=8,
    temperature=0.0,
    top_p=1.0,
    top_k=0,
    seed=1,
    timeout_s=60,
)


def _end(api: str) -> StreamEnd:
    condition = ConditionSpec(id="c", context_capacity=CONTEXT, threads=1)
    plan = Plan(
        name="latency",
        title={"ja": "遅延", "en": "latency"},
        api=api,
        model=GEMMA,
        conditions=[condition],
        inputs=[InputSpec(id="unused", text="-", max_output_tokens=1)],
    )
    engine = EmbeddedLlamaCpp(plan, condition)
    try:
        events = list(engine.generate(REQUEST))
    finally:
        engine.close()
    end = events[-1]
    assert isinstance(end, StreamEnd) and end.error is None
    return end


def test_embedded_engine_reports_prefill_time_and_split_counts():
    chat = _end("chat")
    assert chat.prompt_processing_s is not None and 0 < chat.prompt_processing_s < 60
    # gemma-3 does not think: no thinking tokens, an answer within the generated count
    # (the end-of-turn token is generated but is not answer text).
    assert chat.reasoning_tokens == 0
    assert chat.answer_tokens is not None and 0 < chat.answer_tokens <= chat.generated_tokens
    completion = _end("completion")
    assert completion.prompt_processing_s is not None and completion.prompt_processing_s > 0
    # The completion API keeps any think tags inside the text: nothing is separated.
    assert completion.reasoning_tokens is None and completion.answer_tokens is None


def test_http_engine_records_the_breakdown(server_url, tmp_path):
    inputs = [InputSpec(id="ask", text="Name three colours.", max_output_tokens=8)]
    for record in measure(make_plan(server_url, api="chat", inputs=inputs), tmp_path):
        assert record.status == "ok", record.failure_reason
        metrics = record.metrics
        assert metrics.prompt_processing_s is not None
        assert 0 < metrics.prompt_processing_s <= metrics.ttft_s
        assert metrics.reasoning_tokens == 0
        assert 0 < metrics.answer_tokens <= metrics.generated_tokens
