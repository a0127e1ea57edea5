"""The summary page shows beside the headline what the seed reports put there: each
condition's concurrency and truncations and the plan's declared memory limit; the method
page names the engine's own source of prompt-processing time."""

from __future__ import annotations

from pathlib import Path

import pytest

from sitegen.commands.build import render_site
from sitegen.plan.plan_models import SpeculationHealthSpec
from tests.conftest import make_plan
from tests.sitefixtures import publishable_campaign

PROJECT = Path(__file__).resolve().parents[2]


def _page(site, name: str, lang: str) -> str:
    suffix = f"/{name}.md" if lang == "ja" else f"/{name}.{lang}.md"
    return next(v.decode() for k, v in site.docs.items() if k.endswith(suffix) and "reports/" in k)


def _truncated(record: dict) -> None:
    metrics = record["metrics"]
    if record["role"] != "measured" or metrics is None:
        return
    if record["condition_id"] == "on" and record["input_id"] == "short":
        metrics.update(finish="length", t_natural_finish_s=None)
    if record["trial_id"] == "off/padded/r0":
        metrics.update(answer_reached=False, t_first_answer_s=None)


def test_truncations_concurrency_and_memory_limit_beside_the_headline(tmp_path):
    plan = make_plan(speculation_health=SpeculationHealthSpec(max_device_memory_mib=76800))
    publishable_campaign(tmp_path, plan, mutate=_truncated)
    site = render_site(tmp_path, PROJECT)
    for lang in ("ja", "en"):
        summary = _page(site, "index", lang)
        table = summary.split('data-claim="beside-headline"')[1]
        assert summary.index('data-claim="beside-headline"') > summary.index("speed-summary")
        assert (
            'data-condition="off" data-concurrency="1" data-length-capped="0" data-not-reached="1"'
            in table
        )
        assert (
            'data-condition="on" data-concurrency="1" data-length-capped="3" data-not-reached="0"'
            in table
        )
        assert 'data-memory-limit="76800.0"' in table and "75.00 GiB" in table
    assert "3/6" in _page(site, "index", "en")


def test_no_declared_memory_limit_is_stated(tmp_path):
    publishable_campaign(tmp_path, make_plan())
    summary = _page(render_site(tmp_path, PROJECT), "index", "en")
    assert "The plan declares no memory limit per device." in summary


@pytest.mark.parametrize(
    ("engine", "source", "latency"),
    [
        (
            "llamacpp-http",
            "<code>llama.cpp timings.prompt_ms</code>",
            "llama.cpp timings.prompt_ms",
        ),
        ("exllamav3", "<code>ExLlamaV3 time_prefill</code>", "ExLlamaV3 time_prefill"),
        ("openai", "this engine reports no prefill time", "none reported by this engine"),
    ],
)
def test_the_prefill_definition_names_the_engines_own_source(tmp_path, engine, source, latency):
    """The audit's case: ExLlamaV3 pages said prompt time was llama.cpp's timings.prompt_ms."""

    def on_engine(record: dict) -> None:
        record["provenance"]["engine"]["id"] = engine

    publishable_campaign(tmp_path, make_plan(), mutate=on_engine)
    site = render_site(tmp_path, PROJECT)
    method, speed = _page(site, "method", "en"), _page(site, "speed", "en")
    assert source in method and f"prefill time ({latency})" in speed
    others = {"llama.cpp timings.prompt_ms", "ExLlamaV3 time_prefill"} - {latency}
    assert not any(other in method or other in speed for other in others)
