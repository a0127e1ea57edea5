"""Every engine, one row each, registered by id: what a plan's ``engine`` may name.

A row says all sitegen needs to know about an engine without importing it: the class that
runs it and the model of its ``engine_options`` (both ``module:Name``, imported on use, so
listing engines or checking a plan's options loads neither xllamacpp nor exllamav3), where
the prompt processing time it reports comes from, and whether its records may reach a
published page. It belongs to the plan's schema, below the engines themselves: loading a
plan checks its engine and each condition's ``engine_options`` here
(``validate_engine_options``), and ``sitegen.engine.engines`` gives the engine layer the
class a row names. A new engine is its module (an ``Engine`` subclass whose
``engine_id`` is the row's id), its options model (by convention in
``sitegen.plan.engine_options``) and one row here.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import import_module
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from sitegen.core.errors import ConfigError, error_message
from sitegen.plan.plan_models import ConditionSpec, Plan

if TYPE_CHECKING:
    from sitegen.plan.engine_options import EngineOptions


def load_target(target: str) -> Any:
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
    def engine_class(self) -> type[Any]:
        """The engine class (imports its module; heavy packages load when it is built).
        Untyped here, below the engines: ``sitegen.engine.engines.get_engine_class`` gives
        it as an ``Engine`` subclass."""
        return load_target(self.engine)

    @property
    def options_model(self) -> type[EngineOptions]:
        """The model of ``engine_options``."""
        return load_target(self.options)


def _options(name: str) -> str:
    return f"sitegen.plan.engine_options:{name}"


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


def options_model(engine_id: str) -> type[EngineOptions]:
    """The model of ``engine_id``'s options (a ``ConfigError`` for an unknown engine)."""
    return engine_entry(engine_id).options_model


def location_options(engine_id: str) -> frozenset[str]:
    """Options of ``engine_id`` that only locate a server (base URL, process id …): recorded
    as flags, but two conditions that differ only in them are configured alike."""
    return options_model(engine_id).location_keys()


def parse_engine_options(engine_id: str, condition: ConditionSpec) -> EngineOptions:
    """``condition.engine_options`` as the engine's typed options; a ``ConfigError`` names
    the condition, the engine and each bad key."""
    model = options_model(engine_id)
    try:
        return model.model_validate(condition.engine_options)
    except ValidationError as exc:
        unknown, invalid = _option_problems(exc)
        problems = _describe(engine_id, unknown, invalid)
        raise ConfigError(f"condition '{condition.id}': {problems}") from None


def validate_engine_options(plan: Plan) -> None:
    """Refuse an unknown engine, an unknown option key or an ill-typed option value in any
    condition, in one line that names each problem once with the conditions it is in."""
    model = options_model(plan.engine)
    # A key set in a grid's ``common`` fails in every condition: it is named once.
    unknown_in: dict[str, list[str]] = {}
    invalid_in: dict[str, list[str]] = {}
    for condition in plan.conditions:
        try:
            model.model_validate(condition.engine_options)
        except ValidationError as exc:
            unknown, invalid = _option_problems(exc)
            for key in unknown:
                unknown_in.setdefault(key, []).append(condition.id)
            for problem in invalid:
                invalid_in.setdefault(problem, []).append(condition.id)
    groups: dict[tuple[str, ...], tuple[list[str], list[str]]] = {}
    for key, ids in unknown_in.items():
        groups.setdefault(tuple(ids), ([], []))[0].append(key)
    for problem, ids in invalid_in.items():
        groups.setdefault(tuple(ids), ([], []))[1].append(problem)
    alone = [c.id for c in plan.conditions if c.concurrency > 1]
    if alone and not model.concurrent_requests:
        raise ConfigError(
            f"{_conditions(tuple(alone))}: engine '{plan.engine}' serves one request at a "
            "time; concurrency must be 1"
        )
    if groups:
        raise ConfigError(
            "; ".join(
                f"{_conditions(ids)}: {_describe(plan.engine, unknown, invalid)}"
                for ids, (unknown, invalid) in groups.items()
            )
        )


def _option_problems(exc: ValidationError) -> tuple[list[str], list[str]]:
    """Unknown keys, and one problem per ill-typed key (a value that fits no branch of a
    union fails each branch; the first is told)."""
    unknown: list[str] = []
    invalid: dict[str, str] = {}
    for error in exc.errors():
        key = str(error["loc"][0])
        if error["type"] == "extra_forbidden":
            unknown.append(key)
        elif key not in invalid:
            if error["type"] == "value_error":  # our own validators quote the value
                message = error_message(error)
            else:
                message = f"{error['msg'][:1].lower()}{error['msg'][1:]} (got {error['input']!r})"
            invalid[key] = f"option '{key}': {message}"
    return unknown, list(invalid.values())


def _describe(engine_id: str, unknown: list[str], invalid: list[str]) -> str:
    problems = list(invalid)
    if unknown:
        allowed = ", ".join(sorted(options_model(engine_id).model_fields))
        keys = ", ".join(f"'{key}'" for key in unknown)
        noun = "option" if len(unknown) == 1 else "options"
        problems.insert(0, f"has no {noun} {keys} (allowed: {allowed})")
    return f"engine '{engine_id}' " + "; ".join(problems)


def _conditions(ids: tuple[str, ...]) -> str:
    if len(ids) == 1:
        return f"condition '{ids[0]}'"
    return "conditions " + ", ".join(f"'{i}'" for i in ids)
