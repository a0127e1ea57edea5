"""The engines a plan may name, as the engine layer uses them: the registry's rows
(``sitegen.plan.engine_registry``, part of the plan's schema, where a new engine gets its
row) and the ``Engine`` class each row names.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

from sitegen.plan.engine_registry import (
    ENGINES,
    EngineEntry,
    engine_entry,
    is_publishable,
    prefill_source,
)

if TYPE_CHECKING:
    from sitegen.engine.contract import Engine

__all__ = [
    "ENGINES",
    "EngineEntry",
    "engine_entry",
    "get_engine_class",
    "is_publishable",
    "prefill_source",
]


def get_engine_class(engine_id: str) -> type[Engine]:
    """The engine class registered under ``engine_id`` (imports its module)."""
    return cast("type[Engine]", engine_entry(engine_id).engine_class)
