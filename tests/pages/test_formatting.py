"""The formatting module: each kind of figure in its one style, the same in both
languages, and a missing value as ``-``."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from sitegen.core import formatting as f


@pytest.mark.parametrize(
    ("entry", "value", "shown"),
    [
        (f.rate, 62.2749, "62.27"),
        (f.rate, 12345.678, "12,345.68"),
        (f.seconds, 0.4251, "0.43"),
        (f.milliseconds, 12.345, "12.3"),
        (f.seconds_as_ms, 0.012345, "12.3"),
        (f.ratio, 1.2174, "1.22"),
        (f.percent, 0.4512, "45.1"),
        (f.count, 12345, "12,345"),
        (f.count, 187.5, "188"),
        (f.median_count, 187.5, "187.5"),
        (f.gib, 81_920, "80.00"),
        (f.signed, 21.74, "+21.7"),
        (f.signed, -0.04, "0.0"),
        (f.setting, 0.7, "0.7"),
        (f.setting, 8, "8"),
    ],
)
def test_each_kind_in_its_style(entry, value, shown):
    assert entry(value) == shown


@pytest.mark.parametrize("missing", [None, math.nan, pd.NA])
@pytest.mark.parametrize("entry", [f.rate, f.seconds, f.percent, f.count, f.gib, f.signed])
def test_a_missing_value_is_a_dash(entry, missing):
    assert entry(missing) == f.MISSING


def test_percent_takes_its_digits_for_levels_and_points():
    assert f.percent(0.95, 0) == "95" and f.percent(-0.01234, 2) == "-1.23"


def test_chart_hover_text_prints_as_the_page_does():
    assert f.hover("y") == "%{y:,.2f}" and f.hover("y", share=True) == "%{y:.1%}"


def test_every_entry_is_a_template_filter():
    assert {"count", "rate", "seconds", "ms", "ratio", "percent", "gib"} <= f.FILTERS.keys()
