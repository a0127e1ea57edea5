"""Engine options as the engine layer uses them: whether a server runs on this machine,
and each engine's typed ``engine_options`` with the checks on them.

The option models and their checks are part of the plan's schema and live with it
(``sitegen.plan.engine_options``, ``sitegen.plan.engine_registry``), so a plan is checked
without importing any engine; the engines, the runner and the statistics take them from
here, the engine layer's one place for them.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from sitegen.plan.engine_options import (
    EmbeddedLlamaCppOptions,
    EngineOptions,
    ExLlamaV3Options,
    FakeOptions,
    LlamaCppHttpOptions,
    OpenAIOptions,
    ServerOptions,
)
from sitegen.plan.engine_registry import (
    location_options,
    options_model,
    parse_engine_options,
    validate_engine_options,
)

__all__ = [
    "EmbeddedLlamaCppOptions",
    "EngineOptions",
    "ExLlamaV3Options",
    "FakeOptions",
    "LlamaCppHttpOptions",
    "OpenAIOptions",
    "ServerOptions",
    "is_local",
    "location_options",
    "options_model",
    "parse_engine_options",
    "validate_engine_options",
]


def is_local(base_url: str) -> bool:
    """Whether a server runs on this machine (its GPUs and processes are visible here)."""
    host = urlsplit(base_url).hostname or ""
    return host == "localhost" or host == "::1" or host.startswith("127.")
