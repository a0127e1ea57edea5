"""YAML read with libyaml's parser when PyYAML has it: the pure-Python parser took most of
the time a build spends loading catalogs and rules."""

from __future__ import annotations

import yaml

SafeLoader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
"""``yaml.SafeLoader``'s rules (plain data only), parsed in C where available."""


def load_yaml(text: str) -> object:
    """``yaml.safe_load`` of ``text``; raises ``yaml.YAMLError`` like it."""
    return yaml.load(text, Loader=SafeLoader)  # noqa: S506 (a safe loader)
