"""Engines registered by name and imported lazily (heavy dependencies load on use)."""

from __future__ import annotations

import importlib

from sitegen.engine.base import Engine
from sitegen.errors import ConfigError

ENGINES: dict[str, str] = {
    "llamacpp-embedded": "sitegen.engine.llamacpp_embedded:EmbeddedLlamaCpp",
    "llamacpp-http": "sitegen.engine.llamacpp_http:LlamaCppHttp",
    "openai": "sitegen.engine.openai_compat:OpenAICompatible",
    "exllamav3": "sitegen.engine.exllamav3:ExLlamaV3",
    "fake": "sitegen.engine.fake:FakeEngine",
}
"""Engine id → ``module:class``."""

TEST_ENGINES = frozenset({"fake"})
"""Engines for tests only; their records never reach a published page."""


def get_engine_class(engine_id: str) -> type[Engine]:
    """The engine class registered under ``engine_id``."""
    try:
        target = ENGINES[engine_id]
    except KeyError:
        known = ", ".join(sorted(ENGINES))
        raise ConfigError(f"unknown engine '{engine_id}' (known: {known})") from None
    module_name, class_name = target.split(":")
    return getattr(importlib.import_module(module_name), class_name)


def is_publishable(engine_id: str) -> bool:
    """Whether records of this engine may appear on a published page.

    Unknown engines are refused too. Checked without importing the engine module.
    """
    return engine_id in ENGINES and engine_id not in TEST_ENGINES
