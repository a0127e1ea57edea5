"""``openai`` against the real llama-server listener of ``xllamacpp.Server`` (it speaks the
OpenAI API), and the SSE reader's failure paths against a raw socket on 127.0.0.1."""

from __future__ import annotations

import json
import os
import socket
import threading
import time
from pathlib import Path

import httpx
import pytest

from sitegen.engine.contract import GenerationRequest
from sitegen.engine.openai_compat import openai_request_body
from sitegen.engine.openai_stream import OpenAIStreamParser
from sitegen.engine.sse import error_message, stream_openai
from sitegen.measure import run_campaign
from sitegen.plan.plan_models import ConditionSpec, InputSpec, ModelSpec, Plan
from sitegen.records.record_models import TrialRecord
from sitegen.records.stream import StreamChunk, StreamEnd
from tests.engine.conftest import CONTEXT, GEMMA

REMOTE_GEMMA = GEMMA.model_copy(
    update={"source": "/srv/models/gemma-3-270m-q4_k_m.gguf", "remote_unhashable": True}
)
"""The served model as a plan names it when its file is on the server's host."""


def make_plan(
    base_url: str,
    *,
    api: str = "completion",
    target: int | None = None,
    spec: ModelSpec = REMOTE_GEMMA,
    **options,
):
    return Plan(
        name="openai",
        title={"ja": "OpenAI互換テスト", "en": "OpenAI-compatible test"},
        engine="openai",
        api=api,
        model=spec,
        conditions=[
            ConditionSpec(
                id="c",
                context_capacity=CONTEXT,
                engine_options={"base_url": base_url, "server_pid": os.getpid(), **options},
            )
        ],
        inputs=[
            InputSpec(
                id="prose",
                text="The harbour town began as a fishing village that",
                target_prompt_tokens=target,
                max_output_tokens=8,
            )
        ],
        repetitions=2,
        warmups=0,
        request_timeout_s=60,
    )


def measure(plan: Plan, data_dir: Path) -> list[TrialRecord]:
    result = run_campaign(plan, data_dir)
    lines = (result.directory / "records.jsonl").read_text(encoding="utf-8").splitlines()
    return [TrialRecord.model_validate_json(line) for line in lines]


@pytest.mark.parametrize("api", ["completion", "chat"])
def test_campaign_against_a_real_openai_compatible_server(server_url, tmp_path, api):
    records = measure(make_plan(server_url, api=api), tmp_path)
    assert len(records) == 2
    for record in records:
        assert record.status == "ok", record.failure_reason
        metrics = record.metrics
        assert metrics.generated_tokens == 8 and metrics.finish == "length"
        assert metrics.gen_tps is not None and metrics.gen_tps > 0
        # Not in the OpenAI API, so not taken from llama-server's extra `timings` either.
        assert metrics.native_tps is None and metrics.draft_proposed is None
        assert record.prompt_tokens and record.prompt_tokens > 5
    provenance = records[0].provenance
    assert provenance.engine.id == "openai"
    assert provenance.model.sha256 == "unknown-remote"
    assert provenance.model.file == "gemma-3-270m-q4_k_m.gguf"
    assert provenance.flags["model"].endswith("gemma-3-270m-q4_k_m.gguf")


def test_length_target_needs_vllm_tokenize(server_url, tmp_path):
    records = measure(make_plan(server_url, target=64), tmp_path)
    assert all(r.status == "failed" for r in records)
    assert "no vLLM-style /tokenize" in records[0].failure_reason


def test_unserved_model_is_a_load_failure(server_url, tmp_path):
    records = measure(make_plan(server_url, model="not-this-one"), tmp_path)
    assert all("does not serve 'not-this-one'" in r.failure_reason for r in records)


@pytest.mark.slow
def test_model_readable_here_is_hashed(server_url, tmp_path):
    records = measure(make_plan(server_url, spec=GEMMA), tmp_path)
    assert all(r.status == "ok" for r in records), records[0].failure_reason
    assert len(records[0].provenance.model.sha256) == 64
    assert records[0].provenance.model.file == "gemma-3-270m-q4_k_m.gguf"


@pytest.mark.slow
def test_served_model_that_is_not_the_plans_is_refused(server_url, tmp_path):
    other = ModelSpec(
        name="qwen3-8b",
        source="/srv/models/qwen3-8b-q4_k_m.gguf",
        quantization="Q4_K_M",
        remote_unhashable=True,
    )
    records = measure(make_plan(server_url, spec=other), tmp_path)
    assert [r.status for r in records] == ["failed", "failed"]
    reason = records[0].failure_reason
    assert "load failure" in reason and "gemma-3-270m-q4_k_m.gguf" in reason
    assert "the plan's model is 'qwen3-8b'" in reason


@pytest.mark.slow
def test_unhashable_remote_model_needs_the_declaration(server_url, tmp_path):
    undeclared = REMOTE_GEMMA.model_copy(update={"remote_unhashable": False})
    records = measure(make_plan(server_url, spec=undeclared), tmp_path)
    assert all(r.status == "failed" for r in records)
    assert "cannot be hashed" in records[0].failure_reason


def test_request_body_follows_the_openai_api():
    request = GenerationRequest(
        prompt="Hi", max_output_tokens=4, temperature=0, top_p=1, top_k=0, seed=7, timeout_s=5
    )
    body = openai_request_body(request, "chat", "m")
    assert body["stream_options"] == {"include_usage": True}
    assert body["messages"] == [{"role": "user", "content": "Hi"}] and "top_k" not in body
    assert openai_request_body(request, "completion", "m")["prompt"] == "Hi"


# --- The SSE reader's failure paths, against a raw socket that plays the server ---------


def serve_once(response: bytes, hold_s: float = 0.0) -> str:
    """A listener on 127.0.0.1 that answers one request with ``response`` and hangs up
    after ``hold_s``."""
    listener = socket.create_server(("127.0.0.1", 0))

    def answer() -> None:
        with listener, listener.accept()[0] as connection:
            connection.recv(65536)
            connection.sendall(response)
            time.sleep(hold_s)

    threading.Thread(target=answer, daemon=True).start()
    return f"http://127.0.0.1:{listener.getsockname()[1]}"


def chunked(*parts: str) -> bytes:
    return b"".join(f"{len(p.encode()):x}\r\n{p}\r\n".encode() for p in parts)


HEADERS = (
    b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"
)
TOKEN = 'data: {"choices":[{"text":"a","finish_reason":null}]}\n\n'


def run_stream(base_url: str, timeout_s: float = 5.0) -> list[StreamChunk | StreamEnd]:
    with httpx.Client(base_url=base_url) as client:
        parser = OpenAIStreamParser(speculative=False)
        return list(stream_openai(client, "/v1/completions", {}, timeout_s, parser))


def test_connection_dropped_mid_stream_ends_with_an_error():
    events = run_stream(serve_once(HEADERS + chunked(TOKEN, TOKEN)))  # no terminating chunk
    *chunks, end = events
    assert len(chunks) == 2 and isinstance(end, StreamEnd)
    assert end.finish == "error" and "connection dropped mid-stream" in end.error


def test_stream_closed_without_a_finish_reason_is_an_error():
    events = run_stream(serve_once(HEADERS + chunked(TOKEN) + b"0\r\n\r\n"))
    assert events[-1].error == "stream ended without a finish reason"


def test_done_comments_and_finish():
    final = (
        'data: {"choices":[{"text":"","finish_reason":"stop"}],'
        '"usage":{"completion_tokens":2,"prompt_tokens":3}}\n\n'
    )
    body = chunked(": keep-alive\n\n", TOKEN, TOKEN, final, "data: [DONE]\n\n") + b"0\r\n\r\n"
    *chunks, end = run_stream(serve_once(HEADERS + body))
    assert [c.answer for c in chunks] == ["a", "a"] and chunks[0].t <= chunks[1].t <= end.t
    assert (end.finish, end.generated_tokens, end.prompt_tokens, end.error) == ("stop", 2, 3, None)


def test_error_event_and_malformed_data():
    error_event = 'error: {"code":500,"message":"slot crashed"}\n\n'
    end = run_stream(serve_once(HEADERS + chunked(TOKEN, error_event)))[-1]
    assert end.error == "server error: slot crashed"
    end = run_stream(serve_once(HEADERS + chunked("data: {oops\n\n")))[-1]
    assert end.finish == "error" and "malformed stream data" in end.error


def test_http_error_status_carries_the_body_message():
    body = json.dumps({"object": "error", "message": "model overloaded"}).encode()
    response = b"HTTP/1.1 503 Service Unavailable\r\nContent-Length: %d\r\n\r\n%s" % (
        len(body),
        body,
    )
    end = run_stream(serve_once(response))[-1]
    assert end.error == "HTTP 503: model overloaded"


def test_silent_server_hits_the_total_deadline():
    end = run_stream(serve_once(HEADERS, hold_s=0.5), timeout_s=0.2)[-1]  # headers, then silence
    assert end.finish == "error" and end.error == "timeout: no end after 0.2 s"


def test_error_message_shapes():
    assert error_message('{"error":{"message":"too long","code":400}}') == "too long"
    assert error_message('{"detail":"Not Found"}') == "Not Found"
    assert error_message('{"error":"bad"}') == "bad"
    assert error_message("plain text") == "plain text"
    assert error_message("") == "(empty body)"
