"""The chart specs are written as plain dicts: plotly's own figure validation accepts each
one, and what reaches the page is strict JSON (numpy numbers as numbers, missing ones as
null)."""

from __future__ import annotations

import json
import math

import numpy as np
import plotly.graph_objects as go
import pytest

from sitegen.pages.charts import load_chart, pareto_chart, sweep_chart, trials_chart
from sitegen.pages.i18n import load_catalogs


@pytest.fixture(scope="module")
def catalog():
    return load_catalogs()["en"]


def _valid(spec: dict) -> dict:
    """``spec`` after plotly's validation (raises on an unknown or ill-typed property) and
    a strict JSON round trip."""
    go.Figure(spec)  # raises ValueError naming any property plotly.js does not have
    return json.loads(json.dumps(spec, allow_nan=False))


def test_the_trials_chart_is_a_valid_figure_with_every_trial(catalog):
    trials = {
        "condition_id": ["off", "off", "on", "on"],
        "input_id": ["a", "b", "a", "b"],
        "trial_id": ["t1", "t2", "t3", "t4"],
        "gen_tps": [np.float64(10.0), np.nan, 12.5, 13.0],
        "outlier": [False, False, True, False],
    }
    medians = [
        {"condition_id": "off", "input_id": "a", "gen_tps_median": 10.0},
        {"condition_id": "on", "input_id": "a", "gen_tps_median": 12.75},
    ]
    spec = _valid(trials_chart(trials, medians, "gen_tps", {"off": "Off", "on": "On"}, catalog))
    points = [t for t in spec["data"] if t["mode"] == "markers" and "text" in t]
    assert [p["y"] for p in points] == [[10.0, None], [12.5, 13.0]]
    assert points[1]["marker"]["symbol"] == ["x", "circle"]
    assert spec["layout"]["yaxis"]["rangemode"] == "tozero"


def test_the_sweep_chart_draws_the_reference_and_the_intervals(catalog):
    lines = [
        {
            "name": "n-gram",
            "x": [np.int64(0), np.int64(4)],
            "y": [1.0, 1.2],
            "error": [None, [1.1, 1.3]],
        }
    ]
    spec = _valid(sweep_chart(lines, "ratio", catalog, reference=1.0))
    (line,) = spec["data"]
    assert line["x"] == [0, 4]
    assert line["error_y"]["array"][1] == pytest.approx(0.1)
    assert line["error_y"]["arrayminus"][1] == pytest.approx(0.1)
    assert spec["layout"]["shapes"][0]["y0"] == 1.0
    assert spec["layout"]["xaxis"]["ticktext"][0] == catalog.t("sweep.off")


def test_the_pareto_chart_dashes_the_front_and_a_missing_value_is_null(catalog):
    lines = [{"name": "a", "x": [10.0, 18.0], "y": [10.0, math.nan], "text": ["×1", "×2"]}]
    spec = _valid(pareto_chart(lines, {"x": [10.0], "y": [10.0]}, catalog))
    assert spec["data"][0]["y"] == [10.0, None]
    assert spec["data"][-1]["line"]["dash"] == "dash"


def test_the_load_chart_draws_the_diagonal_and_rings_the_saturation_point(catalog):
    lines = [
        {
            "name": "off · a",
            "x": [1.0, 2.0, 4.0],
            "y": [1.0, np.float64(1.9), None],
            "color": "#4c72b0",
        },
        {
            "name": "off · a · goodput",
            "x": [1.0, 2.0, 4.0],
            "y": [1.0, 1.5, np.nan],
            "color": "#4c72b0",
            "dash": "dot",
        },
    ]
    spec = _valid(
        load_chart(
            lines, "req/s", catalog, [{"name": "off · a", "x": 4.0, "y": 2.2}], [1.0, 2.0, 4.0]
        )
    )
    diagonal, achieved, goodput, ring = spec["data"]
    assert diagonal["x"] == diagonal["y"] == [1.0, 2.0, 4.0]
    assert achieved["y"] == [1.0, 1.9, None] and goodput["y"][2] is None
    assert goodput["line"]["dash"] == "dot" and ring["marker"]["symbol"] == "circle-open"
    assert spec["layout"]["xaxis"]["title"]["text"] == catalog.t("chart.load_offered")


def test_a_sweep_over_an_engine_option_names_the_option_in_both_languages():
    # The option's name is a placeholder called ``key``, as the catalog's own first
    # parameter is: it must reach the text, not collide with the parameter.
    catalogs = load_catalogs()
    assert catalogs["en"].t("factor.option", key="n_draft") == "engine option n_draft"
    assert "n_draft" in catalogs["ja"].t("factor.option", key="n_draft")
