from __future__ import annotations

import pytest

from sitegen.records.metrics import compute_metrics
from sitegen.records.stream import StreamChunk, StreamEnd


def test_gen_tps_excludes_first_token_and_uses_engine_count():
    # 3 chunks, but the engine generated 9 tokens (speculative bursts): (9-1)/(2.0-1.0)
    chunks = [
        StreamChunk(1.0, answer="a"),
        StreamChunk(1.5, answer="bcd"),
        StreamChunk(2.0, answer="efghi"),
    ]
    end = StreamEnd(t=2.1, finish="stop", generated_tokens=9, native_tps=7.5)
    m = compute_metrics(0.5, chunks, end)
    assert m.gen_tps == pytest.approx(8.0)
    assert m.native_tps == 7.5
    assert m.ttft_s == pytest.approx(0.5)
    assert m.e2e_s == pytest.approx(1.6)
    assert m.t_natural_finish_s == pytest.approx(1.6)
    assert m.chunks == 3


def test_first_answer_after_thinking_and_first_visible():
    chunks = [
        StreamChunk(1.0),  # a token that renders as nothing
        StreamChunk(1.2, reasoning="let me think"),
        StreamChunk(1.4, answer=" "),
        StreamChunk(1.9, answer="42"),
    ]
    m = compute_metrics(0.0, chunks, StreamEnd(t=2.0, finish="length", generated_tokens=4))
    assert m.ttft_s == pytest.approx(1.0)
    assert m.t_first_visible_s == pytest.approx(1.2)
    assert m.t_first_answer_s == pytest.approx(1.9)
    assert m.answer_reached
    assert m.t_natural_finish_s is None  # length cap is not a natural finish
    assert m.finish == "length"


def test_answer_never_reached_and_single_token():
    chunks = [StreamChunk(1.0, reasoning="hmm")]
    m = compute_metrics(0.0, chunks, StreamEnd(t=1.1, finish="length", generated_tokens=1))
    assert m.t_first_answer_s is None
    assert not m.answer_reached
    assert m.gen_tps is None  # undefined with one token


def test_no_chunks_error():
    m = compute_metrics(0.0, [], StreamEnd(t=0.3, finish="error", error="boom"))
    assert m.ttft_s is None and m.gen_tps is None and m.e2e_s == pytest.approx(0.3)
