"""Engines registered by name and imported lazily (heavy dependencies load on use). Their
options models are registered in ``engine.options`` (``ENGINE_OPTIONS``), so a plan's
options are checked without importing any engine."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from sitegen.engine.options import require_known_engine

if TYPE_CHECKING:
    from sitegen.engine.base import Engine

ENGINES: dict[str, str] = {
    "llamacpp-embedded": "sitegen.engine.llamacpp_embedded:EmbeddedLlamaCpp",
    "llamacpp-http": "sitegen.engine.llamacpp_http:LlamaCppHttp",
    "openai": "sitegen.engine.openai_compat:OpenAICompatible",
    "exllamav3": "sitegen.engine.exllamav3:ExLlamaV3",
    "fake": "sitegen.engine.fake:FakeEngine",
}
"""Engine id → ``module:class``."""

PREFILL_SOURCES: dict[str, str | None] = {
    "llamacpp-embedded": "llama.cpp timings.prompt_ms",
    "llamacpp-http": "llama.cpp timings.prompt_ms",
    "openai": None,
    "exllamav3": "ExLlamaV3 time_prefill",
    "fake": "fake engine (a fixed value)",
}
"""Engine id → the engine's own figure that ``prompt_processing_s`` records (``None``: the
engine reports no prefill time)."""

TEST_ENGINES = frozenset({"fake"})
"""Engines for tests only; their records never reach a published page."""


def get_engine_class(engine_id: str) -> type[Engine]:
    """The engine class registered under ``engine_id``."""
    require_known_engine(engine_id)
    module_name, class_name = ENGINES[engine_id].split(":")
    return getattr(importlib.import_module(module_name), class_name)


def is_publishable(engine_id: str) -> bool:
    """Whether records of this engine may appear on a published page.

    Unknown engines are refused too. Checked without importing the engine module.
    """
    return engine_id in ENGINES and engine_id not in TEST_ENGINES
