"""Every engine, one row each, registered by id: what a plan's ``engine`` may name.

A row says all sitegen needs to know about an engine without importing it: the class that
runs it and the model of its ``engine_options`` (both ``module:Name``, imported on use, so
listing engines or checking a plan's options loads neither xllamacpp nor exllamav3), where
the prompt processing time it reports comes from, and whether its records may reach a
published page. A new engine is its module (an ``Engine`` subclass whose ``engine_id`` is
the row's id, with its options model, by convention in ``sitegen.engine.options``) and one
row here.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import import_module
from typing import TYPE_CHECKING, Any

from sitegen.core.errors import ConfigError

if TYPE_CHECKING:
    from sitegen.engine.contract import Engine
    from sitegen.engine.options import EngineOptions


def _load(target: str) -> Any:
    """``module:Name`` → the object it names, importing the module."""
    module_name, _, name = target.partition(":")
    return getattr(import_module(module_name), name)


@dataclass(frozen=True)
class EngineEntry:
    """One engine."""

    id: str
    """The name a plan's ``engine`` takes, e.g. ``llamacpp-http``."""
    engine: str
    """The ``Engine`` subclass, ``module:Class``; imported by ``engine_class``."""
    options: str
    """The model of its ``engine_options``, ``module:Class``; imported by ``options_model``."""
    prefill_source: str | None
    """The engine's own figure that ``prompt_processing_s`` records, named for the method
    page (``None``: the engine reports no prefill time)."""
    publishable: bool
    """Whether its records may appear on a published page (``False``: tests only)."""
    description: str
    """What it runs, for ``sitegen engines`` and ``sitegen measure --help``."""

    @property
    def engine_class(self) -> type[Engine]:
        """The engine class (imports its module; heavy packages load when it is built)."""
        return _load(self.engine)

    @property
    def options_model(self) -> type[EngineOptions]:
        """The model of ``engine_options``."""
        return _load(self.options)


def _options(name: str) -> str:
    return f"sitegen.engine.options:{name}"


ENGINES: dict[str, EngineEntry] = {
    entry.id: entry
    for entry in (
        EngineEntry(
            "llamacpp-embedded",
            "sitegen.engine.llamacpp_embedded:EmbeddedLlamaCpp",
            _options("EmbeddedLlamaCppOptions"),
            "llama.cpp timings.prompt_ms",
            publishable=True,
            description="llama.cpp's server code in-process (the xllamacpp wheel)",
        ),
        EngineEntry(
            "llamacpp-http",
            "sitegen.engine.llamacpp_http:LlamaCppHttp",
            _options("LlamaCppHttpOptions"),
            "llama.cpp timings.prompt_ms",
            publishable=True,
            description="a running llama-server",
        ),
        EngineEntry(
            "openai",
            "sitegen.engine.openai_compat:OpenAICompatible",
            _options("OpenAIOptions"),
            None,
            publishable=True,
            description="any OpenAI-compatible server (vLLM, SGLang, llama-server …)",
        ),
        EngineEntry(
            "exllamav3",
            "sitegen.engine.exllamav3:ExLlamaV3",
            _options("ExLlamaV3Options"),
            "ExLlamaV3 time_prefill",
            publishable=True,
            description="ExLlamaV3's generator in-process, on GPUs",
        ),
        EngineEntry(
            "fake",
            "sitegen.engine.fake:FakeEngine",
            _options("FakeOptions"),
            "fake engine (a fixed value)",
            publishable=False,
            description="a deterministic engine for tests",
        ),
    )
}
"""Engine id → its row."""


def engine_entry(engine_id: str) -> EngineEntry:
    """The row of ``engine_id``; a ``ConfigError`` names the registered ids otherwise."""
    found = ENGINES.get(engine_id)
    if found is None:
        known = ", ".join(sorted(ENGINES))
        raise ConfigError(f"unknown engine '{engine_id}' (known: {known})")
    return found


def get_engine_class(engine_id: str) -> type[Engine]:
    """The engine class registered under ``engine_id``."""
    return engine_entry(engine_id).engine_class


def is_publishable(engine_id: str) -> bool:
    """Whether records of this engine may appear on a published page.

    Unknown engines are refused too. Checked without importing the engine module.
    """
    found = ENGINES.get(engine_id)
    return found is not None and found.publishable


def prefill_source(engine_id: str) -> str | None:
    """Where ``prompt_processing_s`` of this engine comes from (``None``: the engine
    reports none, or is not registered)."""
    found = ENGINES.get(engine_id)
    return found.prefill_source if found is not None else None
