"""The CUDA-free parts of the ``exllamav3`` engine, fed plain dicts shaped like the results
of ExLlamaV3 1.6's ``Generator.iterate()``. The engine itself runs in
``scripts/gpu_check_exllamav3.py`` on a CUDA machine."""

from __future__ import annotations

import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
from pydantic import ValidationError

from sitegen.core.errors import ConfigError
from sitegen.engine.contract import GenerationRequest
from sitegen.engine.exllamav3 import (
    ExLlamaV3,
    LoadStep,
    cache_arguments,
    load_arguments,
    load_order,
    map_eos_reason,
    result_to_events,
    sampler_settings,
)
from sitegen.measure import run_campaign
from sitegen.plan.engine_options import ExLlamaV3Options
from sitegen.plan.plan_models import SpeculativeSpec
from sitegen.records.stream import StreamChunk, StreamEnd
from tests.conftest import make_plan


def request(**overrides) -> GenerationRequest:
    fields = dict(
        prompt="p", max_output_tokens=8, temperature=0.0, top_p=1.0, top_k=0, seed=1, timeout_s=5
    )
    fields.update(overrides)
    return GenerationRequest(**fields)


def clock(t: float = 10.0):
    return lambda: t


def streaming(text: str | None = "x", **fields) -> dict:
    result = {"stage": "streaming", "eos": False, "token_ids": [[7]], **fields}
    if text is not None:
        result["text"] = text
    return result


def eos(reason: str = "max_new_tokens", **fields) -> dict:
    """The final result; the last token's text and ids come in ``fields`` when it has them."""
    return {
        "stage": "streaming",
        "eos": True,
        "eos_reason": reason,
        "new_tokens": 8,
        "prompt_tokens": 12,
        "time_generate": 0.5,
        "cached_tokens": 0,
        **fields,
    }


@pytest.mark.parametrize(
    ("reason", "finish"),
    [("max_new_tokens", "length"), ("stop_token", "stop"), ("stop_string", "stop")],
)
def test_natural_and_capped_ends(reason, finish):
    assert map_eos_reason(reason) == (finish, None)


@pytest.mark.parametrize("reason", ["end_filter", "loop_detected", None])
def test_other_ends_are_errors_with_the_reason(reason):
    finish, error = map_eos_reason(reason)
    assert finish == "error" and str(reason or "no reason given") in error


def test_sampler_is_greedy_at_temperature_zero():
    assert sampler_settings(request()) == ("ArgmaxSampler", {})
    assert sampler_settings(request(temperature=0.7, top_p=0.9, top_k=40)) == (
        "ComboSampler",
        {"temperature": 0.7, "top_p": 0.9, "top_k": 40},
    )


def test_drafts_load_before_the_model():
    model, draft = Path("/m"), Path("/d")
    assert load_order(SpeculativeSpec(), model, None) == [LoadStep("model", model, "text")]
    mtp = load_order(SpeculativeSpec(mode="draft-mtp", draft_max=2), model, None)
    assert mtp == [LoadStep("draft", model, "mtp"), LoadStep("model", model, "text")]
    separate = load_order(SpeculativeSpec(mode="draft", draft_max=4), model, draft)
    assert separate[0] == LoadStep("draft", draft, "text") and separate[1].role == "model"


def test_unsupported_speculative_modes_are_refused():
    with pytest.raises(ConfigError, match="draft_model"):
        load_order(SpeculativeSpec(mode="draft", draft_max=4), Path("/m"), None)
    with pytest.raises(ConfigError, match="not 'ngram-simple'"):
        load_order(SpeculativeSpec(mode="ngram-simple", draft_max=8), Path("/m"), None)


def options(**values) -> ExLlamaV3Options:
    return ExLlamaV3Options.model_validate(values)


def test_load_arguments_from_engine_options():
    given = options(tensor_p=True, use_per_device="23, 23.5", reserve_per_device=1)
    assert load_arguments(given) == {
        "tensor_p": True,
        "tp_backend": "native",
        "use_per_device": [23.0, 23.5],
        "reserve_per_device": 1.0,
    }
    assert load_arguments(options(tensor_p=True, tp_backend="nccl"))["tp_backend"] == "nccl"
    # Drafts load without tensor parallelism, as in ExLlamaV3's model_init.
    assert load_arguments(options(tensor_p=True, device="cuda:1"), draft=True) == {
        "device": "cuda:1"
    }
    with pytest.raises(ValidationError, match="GB per device"):
        options(use_per_device="lots")


def test_cache_arguments():
    assert cache_arguments(options(), 4096, None) == {"max_num_tokens": 4096, "max_history": 0}
    quant = cache_arguments(options(cache_quant="8,6"), 4096, 4)
    assert (quant["k_bits"], quant["v_bits"], quant["max_history"]) == (8, 6, 4)
    assert cache_arguments(options(cache_quant=4), 256, None)["v_bits"] == 4
    with pytest.raises(ConfigError, match="multiple of 256"):
        cache_arguments(options(), 1000, None)
    with pytest.raises(ValidationError, match="'K' or 'K,V' bits"):
        options(cache_quant="8,6,4")


def test_start_and_prefill_results_deliver_nothing():
    assert result_to_events([{"stage": "started"}, {"stage": "prefill"}], clock()) == []


def test_one_batch_is_one_chunk_at_one_time():
    events = result_to_events([streaming("Hel"), streaming("lo"), streaming(None)], clock(3.5))
    assert events == [StreamChunk(t=3.5, answer="Hello")]


def test_end_carries_exllamav3_counts():
    last = eos(text="b", token_ids=[[9]], accepted_draft_tokens=5, rejected_draft_tokens=3)
    *chunks, end = result_to_events([streaming("a"), last], clock(2.0))
    assert chunks == [StreamChunk(t=2.0, answer="ab")]
    assert end == StreamEnd(
        t=2.0,
        finish="length",
        generated_tokens=8,
        prompt_tokens=12,
        native_tps=16.0,  # new_tokens / time_generate, ExLlamaV3's own definition
        draft_proposed=8,
        draft_accepted=5,
    )


def test_end_without_drafting_has_no_draft_counts():
    end = result_to_events([eos("stop_token")], clock())[-1]
    assert end.finish == "stop" and end.draft_proposed is None and end.draft_accepted is None


def test_reused_prompt_cache_fails_the_trial():
    end = result_to_events([eos(cached_tokens=256)], clock())[-1]
    assert end.finish == "error" and "256 prompt tokens came from the cache" in end.error


def test_generator_error_result_ends_the_stream():
    error = {"stage": "error", "eos": True, "error": RuntimeError("CUDA out of memory")}
    assert result_to_events([error], clock()) == [
        StreamEnd(t=10.0, finish="error", error="exllamav3: CUDA out of memory")
    ]


class ScriptedGenerator:
    """Stands in for ``exllamav3.Generator``: hands out prepared ``iterate()`` batches."""

    def __init__(self, batches: list[list[dict]]) -> None:
        self.batches = batches
        self.pagetable = SimpleNamespace(resets=0)
        self.pagetable.reset_page_table = self._reset
        self.enqueued: list = []
        self.cancelled: list = []

    def _reset(self) -> None:
        self.pagetable.resets += 1

    def enqueue(self, job) -> None:
        self.enqueued.append(job)

    def num_remaining_jobs(self) -> int:
        return 0 if not self.batches or self.cancelled else 1

    def iterate(self) -> list[dict]:
        return self.batches.pop(0) if self.batches else []

    def cancel(self, job) -> None:
        self.cancelled.append(job)


def scripted_engine(batches: list[list[dict]]) -> ExLlamaV3:
    """The engine's request loop with ExLlamaV3 replaced by plain objects."""
    engine = ExLlamaV3.__new__(ExLlamaV3)
    engine.plan = make_plan(engine="exllamav3", api="completion")
    engine._exl3 = SimpleNamespace(Job=lambda **fields: fields, ArgmaxSampler=lambda: "argmax")
    engine._generator = ScriptedGenerator(batches)
    engine._tokenizer = SimpleNamespace(encode=lambda text, add_bos: [[1, 2, 3]])
    engine._chat_template = False
    engine._stop_conditions = [2]
    return engine


def test_request_loop_streams_until_the_end_result():
    engine = scripted_engine([[{"stage": "prefill"}], [streaming("a")], [eos()]])
    events = list(engine.generate(request()))
    assert [type(e) for e in events] == [StreamChunk, StreamEnd] and events[-1].finish == "length"
    job = engine._generator.enqueued[0]
    assert job["sampler"] == "argmax" and job["stop_conditions"] == [2] and job["seed"] == 1
    assert engine._generator.pagetable.resets == 1


def test_request_loop_times_out_and_cancels_the_job():
    engine = scripted_engine([[streaming("a")]] * 1000)
    events = list(engine.generate(request(timeout_s=0.0)))
    assert events[-1].finish == "error" and "timeout" in events[-1].error
    assert engine._generator.cancelled


def test_missing_package_is_a_recorded_load_failure(tmp_path):
    assert "exllamav3" not in sys.modules  # importing the engine module did not import it
    plan = make_plan(engine="exllamav3", repetitions=1, warmups=0)
    result = run_campaign(plan, tmp_path)
    assert result.failed == result.written > 0
    records = (result.directory / "records.jsonl").read_text(encoding="utf-8")
    assert "pip install exllamav3 (CUDA host)" in records
