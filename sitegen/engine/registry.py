"""Engines registered by name and imported lazily (heavy dependencies load on use); their
options are registered beside them and checked without importing any engine."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from pydantic import ValidationError

from sitegen.engine.options import (
    EmbeddedLlamaCppOptions,
    EngineOptions,
    ExLlamaV3Options,
    FakeOptions,
    LlamaCppHttpOptions,
    OpenAIOptions,
)
from sitegen.errors import ConfigError, error_message

if TYPE_CHECKING:
    from sitegen.engine.base import Engine
    from sitegen.plan.models import ConditionSpec, Plan

ENGINES: dict[str, str] = {
    "llamacpp-embedded": "sitegen.engine.llamacpp_embedded:EmbeddedLlamaCpp",
    "llamacpp-http": "sitegen.engine.llamacpp_http:LlamaCppHttp",
    "openai": "sitegen.engine.openai_compat:OpenAICompatible",
    "exllamav3": "sitegen.engine.exllamav3:ExLlamaV3",
    "fake": "sitegen.engine.fake:FakeEngine",
}
"""Engine id → ``module:class``."""

ENGINE_OPTIONS: dict[str, type[EngineOptions]] = {
    "llamacpp-embedded": EmbeddedLlamaCppOptions,
    "llamacpp-http": LlamaCppHttpOptions,
    "openai": OpenAIOptions,
    "exllamav3": ExLlamaV3Options,
    "fake": FakeOptions,
}
"""Engine id → the model of its ``engine_options``."""

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


def _require_registered(engine_id: str) -> None:
    if engine_id not in ENGINES:
        known = ", ".join(sorted(ENGINES))
        raise ConfigError(f"unknown engine '{engine_id}' (known: {known})")


def get_engine_class(engine_id: str) -> type[Engine]:
    """The engine class registered under ``engine_id``."""
    _require_registered(engine_id)
    module_name, class_name = ENGINES[engine_id].split(":")
    return getattr(importlib.import_module(module_name), class_name)


def is_publishable(engine_id: str) -> bool:
    """Whether records of this engine may appear on a published page.

    Unknown engines are refused too. Checked without importing the engine module.
    """
    return engine_id in ENGINES and engine_id not in TEST_ENGINES


def location_options(engine_id: str) -> frozenset[str]:
    """Options of ``engine_id`` that only locate a server (base URL, process id …): recorded
    as flags, but two conditions that differ only in them are configured alike."""
    _require_registered(engine_id)
    return ENGINE_OPTIONS[engine_id].location_keys()


def parse_engine_options(engine_id: str, condition: ConditionSpec) -> EngineOptions:
    """``condition.engine_options`` as the engine's typed options; a ``ConfigError`` names
    the condition, the engine and each bad key."""
    _require_registered(engine_id)
    try:
        return ENGINE_OPTIONS[engine_id].model_validate(condition.engine_options)
    except ValidationError as exc:
        unknown, invalid = _option_problems(exc)
        problems = _describe(engine_id, unknown, invalid)
        raise ConfigError(f"condition '{condition.id}': {problems}") from None


def validate_engine_options(plan: Plan) -> None:
    """Refuse an unknown engine, an unknown option key or an ill-typed option value in any
    condition, in one line that names each problem once with the conditions it is in."""
    _require_registered(plan.engine)
    # A key set in a grid's ``common`` fails in every condition: it is named once.
    unknown_in: dict[str, list[str]] = {}
    invalid_in: dict[str, list[str]] = {}
    for condition in plan.conditions:
        try:
            ENGINE_OPTIONS[plan.engine].model_validate(condition.engine_options)
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
    if alone and not ENGINE_OPTIONS[plan.engine].concurrent_requests:
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
        allowed = ", ".join(sorted(ENGINE_OPTIONS[engine_id].model_fields))
        keys = ", ".join(f"'{key}'" for key in unknown)
        noun = "option" if len(unknown) == 1 else "options"
        problems.insert(0, f"has no {noun} {keys} (allowed: {allowed})")
    return f"engine '{engine_id}' " + "; ".join(problems)


def _conditions(ids: tuple[str, ...]) -> str:
    if len(ids) == 1:
        return f"condition '{ids[0]}'"
    return "conditions " + ", ".join(f"'{i}'" for i in ids)
