"""An xllamacpp build whose speculative settings are laid out otherwise is refused in
words before anything is registered, never an AttributeError mid-campaign."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
import xllamacpp

from sitegen.core.errors import ConfigError
from sitegen.engine.llamacpp_embedded import EmbeddedLlamaCpp, _missing_speculative_fields
from tests.conftest import make_plan


def test_the_installed_build_has_every_speculative_field():
    assert _missing_speculative_fields(xllamacpp, xllamacpp.CommonParams()) is None


def test_an_older_layout_is_named_with_the_first_build_that_has_it():
    # 2026.4's flat layout: a single type, n_max and the n-gram sizes side by side.
    older = SimpleNamespace(speculative=SimpleNamespace(type=0, n_max=8, ngram_size_n=3))
    why = _missing_speculative_fields(SimpleNamespace(__version__="2026.4.8672"), older)
    assert why is not None
    assert "xllamacpp 2026.4.8672" in why and "speculative.types" in why
    assert "2026.5.9294 or later" in why


def test_preflight_refuses_a_speculative_condition_on_such_a_build(monkeypatch):
    plan = make_plan()
    condition = next(c for c in plan.conditions if c.speculative.mode != "off")
    flat = SimpleNamespace(speculative=SimpleNamespace(type=0))
    monkeypatch.setattr(xllamacpp, "CommonParams", lambda: flat)
    with pytest.raises(ConfigError, match="lays out its speculative settings otherwise"):
        EmbeddedLlamaCpp.preflight(plan, condition, lambda *_: None)
