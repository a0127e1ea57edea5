from __future__ import annotations

from sitegen.engine.openai_stream import OpenAIStreamParser


def test_completion_stream_with_timings_and_drafts():
    parser = OpenAIStreamParser(speculative=True)
    assert (
        parser.feed({"choices": [{"text": " apple", "finish_reason": None}]}, 1.0).answer
        == " apple"
    )
    assert parser.feed({"choices": [{"text": "", "finish_reason": None}]}, 1.1) is not None
    final = {
        "choices": [{"text": "", "finish_reason": "length"}],
        "usage": {"completion_tokens": 48, "prompt_tokens": 23},
        "timings": {"predicted_per_second": 64.1, "draft_n": 39, "draft_n_accepted": 38},
    }
    assert parser.feed(final, 1.5) is None  # the final empty chunk is not a token
    end = parser.end()
    assert (end.t, end.finish, end.generated_tokens, end.prompt_tokens) == (1.5, "length", 48, 23)
    assert (end.native_tps, end.draft_proposed, end.draft_accepted) == (64.1, 39, 38)


def test_chat_stream_reasoning_role_chunk_and_missing_draft_counters():
    parser = OpenAIStreamParser(speculative=True)
    assert (
        parser.feed({"choices": [{"delta": {"role": "assistant", "content": None}}]}, 0.9) is None
    )
    chunk = parser.feed({"choices": [{"delta": {"reasoning_content": "think"}}]}, 1.0)
    assert chunk.reasoning == "think" and chunk.answer == ""
    parser.feed({"choices": [{"delta": {"content": "42"}}]}, 1.2)
    parser.feed(
        {
            "choices": [{"delta": {}, "finish_reason": "stop"}],
            "timings": {"predicted_n": 2, "prompt_n": 10, "cache_n": 1},
        },
        1.3,
    )
    end = parser.end()
    assert end.finish == "stop" and end.generated_tokens == 2 and end.prompt_tokens == 11
    # llama.cpp omits draft counters when nothing was drafted: zero, not unknown
    assert (end.draft_proposed, end.draft_accepted) == (0, 0)


def test_error_object_and_missing_finish():
    parser = OpenAIStreamParser(speculative=False)
    parser.feed({"error": {"code": 400, "message": "request exceeds the context"}}, 0.2)
    end = parser.end()
    assert end.finish == "error" and "exceeds" in end.error
    assert OpenAIStreamParser(False).end(t=1.0).error == "stream ended without a finish reason"
