"""``sitegen engines``: the registered engines, what each runs and whether it is published."""

from __future__ import annotations

import argparse


def list_engines(args: argparse.Namespace) -> None:
    """Two lines per engine: its id, use and description; where its prefill time comes from
    and its class."""
    from sitegen.plan.engine_registry import ENGINES

    for entry in ENGINES.values():
        use = "publishable" if entry.publishable else "tests only, never published"
        prefill = entry.prefill_source or "none reported"
        print(f"{entry.id:<18} {use:<28} {entry.description}")
        print(f"{'':<18} prefill time: {prefill}; class {entry.engine}")
