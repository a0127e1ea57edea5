"""The figure detector alone: what author text may not state, and the names it may."""

from __future__ import annotations

import pytest

from sitegen.validation.figures import find_figures, readable


@pytest.mark.parametrize(
    ("text", "figures"),
    [
        ("above 50 tok/s", ["50"]),
        ("MTP:62.27 and x1.22", ["62.27", "x1.22"]),
        ("2x, x2 and ×3", ["2x", "x2", "3"]),
        ("&#50;&#215;", ["2"]),
        ("1\u200b.5", ["1.5"]),
        ("½ ② ٢", ["½", "②", "٢", "1", "2", "2"]),
        ("tenfold, halves, two times", ["tenfold", "halves", "two"]),
        ("三倍速く、半分になり、二分の一", ["三倍", "半分", "二分の"]),
    ],
)
def test_figures_are_found(text, figures):
    assert find_figures(text) == figures


@pytest.mark.parametrize(
    "text",
    [
        "H100, gemma-3-270m, Q4_K_M, ngram8, mtp2, Qwen2.5, GLM-5.3-Flash, ng2-t0.7",
        "倍率は指令が示します。最初の一つを除き、十分に確かめます。",
        "SHA-256 of every record; the manifest signs it.",
        "scaffold, unfold, scheduling, oneself",
    ],
)
def test_names_and_words_are_not_figures(text):
    assert find_figures(text) == []


def test_readable_folds_what_a_reader_cannot_tell_apart():
    assert readable("&#65298;\u200d\u00ad１") == "21"
