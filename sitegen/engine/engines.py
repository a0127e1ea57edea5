"""The ``Engine`` class each row of the engine registry names. The rows themselves are
part of the plan's schema (``sitegen.plan.engine_registry``: a new engine gets its row
there), so a plan is checked without importing any engine; this is the engine layer's
typed way to the class.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

from sitegen.plan.engine_registry import engine_entry

if TYPE_CHECKING:
    from sitegen.engine.contract import Engine


def get_engine_class(engine_id: str) -> type[Engine]:
    """The engine class registered under ``engine_id`` (imports its module)."""
    return cast("type[Engine]", engine_entry(engine_id).engine_class)
