"""Plotly figures as JSON specs; the page script draws them with the site's own plotly.js.

The specs are plain dicts in plotly.js's schema (tests check them against plotly's own
figure validation): building them through plotly.py's figure objects validated every point
again, a cost that grows with the campaign.
"""

from __future__ import annotations

import html
import math
import re
import unicodedata
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from sitegen.core.formatting import hover
from sitegen.pages.i18n import Catalog

PALETTE = ("#4c72b0", "#dd8452", "#55a868", "#c44e52", "#8172b3", "#937860")

TEMPLATE_NONE = {"data": {"scatter": [{"type": "scatter"}]}}
"""Plotly's ``none`` template as plotly.py writes it: plotly.js's plain defaults."""


def _scatter(**properties: Any) -> dict:
    """A scatter trace; a property given as ``None`` is left out."""
    return {"type": "scatter", **{k: v for k, v in properties.items() if v is not None}}


def _figure(traces: list[dict], layout: dict) -> dict:
    return _plain({"data": traces, "layout": {"template": TEMPLATE_NONE, **layout}})


def _plain(value: Any) -> Any:
    """``value`` as JSON can hold it, as plotly.py's encoder writes it: numpy numbers as
    Python numbers, a missing or infinite number as ``None`` (no point)."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def rows_by_condition(
    columns: Mapping[str, Sequence[Any]], names: list[str]
) -> dict[str, dict[str, list]]:
    """The ``names`` of ``columns`` (lists of one table's rows) split by ``condition_id``
    (rows in their order): one pass, where a boolean mask per condition copied every column
    of the frame once per condition and chart."""
    positions: dict[str, list[int]] = {}
    for position, condition_id in enumerate(columns["condition_id"]):
        positions.setdefault(condition_id, []).append(position)
    return {
        condition_id: {name: [columns[name][i] for i in chosen] for name in names}
        for condition_id, chosen in positions.items()
    }


def _values(column: Sequence[Any]) -> list[float | None]:
    """Chart values rounded for the page; a missing value (a one-token answer has no
    generation rate) is ``None``, drawn as no point."""
    return [None if pd.isna(v) else round(float(v), 4) for v in column]


def trials_chart(
    trials: Mapping[str, Sequence[Any]],
    medians: Sequence[Mapping[str, Any]],
    metric: str,
    condition_labels: dict[str, str],
    catalog: Catalog,
) -> dict:
    """Every measured trial as a point and each condition's median as a bar-shaped marker,
    grouped by input. ``trials``: the trials' columns by name (``condition_id``,
    ``input_id``, ``trial_id``, ``metric``, ``outlier`` where known) as lists; ``medians``:
    rows with ``condition_id``, ``input_id`` and ``<metric>_median``."""
    traces: list[dict] = []
    columns = ["input_id", metric, "trial_id"] + (["outlier"] if "outlier" in trials else [])
    points = rows_by_condition(trials, columns)
    median_names = ["input_id", f"{metric}_median"]
    medians_by = rows_by_condition(
        {name: [row[name] for row in medians] for name in ["condition_id", *median_names]},
        median_names,
    )
    for index, (condition_id, label) in enumerate(condition_labels.items()):
        color = PALETTE[index % len(PALETTE)]
        rows = points.get(condition_id) or {c: [] for c in columns}
        traces.append(
            _scatter(
                x=rows["input_id"],
                y=_values(rows[metric]),
                text=rows["trial_id"],
                mode="markers",
                name=f"{label} · {catalog.t('chart.trial')}",
                legendgroup=condition_id,
                offsetgroup=condition_id,
                marker={
                    "color": color,
                    "size": 9,
                    "opacity": 0.75,
                    # An outlier (the plan's declared rule) is a cross, never left out.
                    "symbol": ["x" if o else "circle" for o in rows["outlier"]]
                    if "outlier" in rows
                    else "circle",
                },
                hovertemplate=f"%{{text}}<br>{hover('y')}<extra></extra>",
            )
        )
        median_rows = medians_by.get(condition_id) or {name: [] for name in median_names}
        traces.append(
            _scatter(
                x=median_rows["input_id"],
                y=_values(median_rows[f"{metric}_median"]),
                mode="markers",
                name=f"{label} · {catalog.t('chart.median')}",
                legendgroup=condition_id,
                offsetgroup=condition_id,
                marker={"color": color, "symbol": "line-ew-open", "size": 34, "line": {"width": 3}},
                hovertemplate=f"{catalog.t('chart.median')} {hover('y')}<extra></extra>",
            )
        )
    return _layout(
        traces,
        catalog.t("col.input"),
        axis_title(catalog, metric),
        {"scattermode": "group", "height": 400},
        type="category",
    )


FONT = "system-ui, 'Noto Sans CJK JP', sans-serif"


def axis_title(catalog: Catalog, metric: str) -> str:
    """A chart's axis title: the metric's short name (``axis.<metric>``) where the catalog
    has one, so the title fits beside a plot of any width; the caption and the table name
    the metric in full."""
    key = f"axis.{metric}"
    return catalog.t(key) if key in catalog.strings else catalog.t(f"metric.{metric}")


def cdf_chart(
    series: list[tuple[str, list[float], list[float]]], metric_title: str, catalog: Catalog
) -> dict:
    """One step line per series (``label, values, fractions``): the share of requests at
    or below each value."""
    traces = [
        _scatter(
            x=[round(v, 6) for v in values],
            y=[round(f, 4) for f in fractions],
            mode="lines",
            line={"shape": "hv", "color": PALETTE[index % len(PALETTE)]},
            name=label,
            hovertemplate=f"{hover('x')}<br>{hover('y', share=True)}<extra></extra>",
        )
        for index, (label, values, fractions) in enumerate(series)
    ]
    return _layout(traces, metric_title, catalog.t("chart.cdf_share"), None, rangemode="tozero")


LEGEND_LINE = 38
"""The most characters of a legend line (a wide character counts twice): an entry's name
wraps at spaces to fit a phone's chart (390 px window), never running past the chart."""
LEGEND_LINE_PX = 20
"""Height of a legend line (plotly's entries at the site's 12 px font), with room to spare."""
LEGEND_GROUP_PX = 10
"""The gap plotly leaves between legend groups (``tracegroupgap``)."""


def _wide(char: str) -> bool:
    return unicodedata.east_asian_width(char) in "WF"


def _width(text: str) -> int:
    return sum(2 if _wide(c) else 1 for c in text)


def legend_name(name: str, limit: int = LEGEND_LINE) -> str:
    """``name`` in lines of at most ``limit`` characters (plotly's ``<br>``), broken at
    spaces or between wide characters (Japanese breaks anywhere); a longer word of plain
    text is cut at ``limit``. What it says is unchanged."""
    # Units that a line may end after: words, and each wide character on its own; with
    # whether a space comes before each.
    units: list[tuple[str, bool]] = []
    for word in name.split(" "):
        pieces = re.findall(r"[^\s]*?[\u3000-\u30ff\u4e00-\u9fff\uff00-\uffef]|[^\s]+$", word)
        for index, piece in enumerate(pieces or [word]):
            while _width(piece) > limit and not set(piece) & set("<>&;"):
                cut = 0
                while _width(piece[: cut + 1]) <= limit:
                    cut += 1
                units.append((piece[:cut], index == 0))
                piece, index = piece[cut:], 1
            units.append((piece, index == 0))
    lines: list[str] = []
    line_width = 0  # of the last line, kept as it grows (not measured anew per unit)
    for unit, spaced in units:
        joined = (" " if spaced else "") + unit
        joined_width = _width(joined)
        if lines and line_width + joined_width <= limit:
            lines[-1] += joined
            line_width += joined_width
        else:
            lines.append(unit)
            line_width = _width(unit)
    return "<br>".join(lines)


def _legend(traces: list[dict]) -> int:
    """Each trace's legend name wrapped (``legend_name``); returns the height the legend
    needs in px, the same at every width: one entry a line."""
    lines, groups = 0, set()
    for trace in traces:
        if "name" in trace and trace.get("showlegend", True):
            trace["name"] = legend_name(str(trace["name"]))
            lines += trace["name"].count("<br>") + 1
            groups.add(trace.get("legendgroup", id(trace)))
    return lines * LEGEND_LINE_PX + len(groups) * LEGEND_GROUP_PX + 2 * LEGEND_GROUP_PX


def _layout(
    traces: list[dict], x_title: str, y_title: str, extra: dict | None = None, **xaxis: Any
) -> dict:
    # The legend lists one entry a line above the plot (names wrapped to a phone's width),
    # as high at every width, and the chart grows by its height: it never scrolls over the
    # plot or runs past the chart's box. Every margin grows to what it holds (automargin):
    # an axis title never runs into the legend or past the chart's box at any width.
    extra = dict(extra or {})
    legend = _legend(traces)
    return _figure(
        traces,
        {
            "autosize": True,
            "margin": {"l": 10, "r": 10, "t": 10, "b": 10},
            "legend": {
                "orientation": "v",
                "x": 0,
                "xanchor": "left",
                "y": 1.02,
                "yanchor": "bottom",
                "maxheight": legend + 10 * LEGEND_LINE_PX,
            },
            "xaxis": {"title": {"text": x_title}, "automargin": True, **xaxis},
            "yaxis": {"title": {"text": y_title}, "rangemode": "tozero", "automargin": True},
            "font": {"family": FONT},
            **extra,
            "height": extra.get("height", 460) + legend,
        },
    )


def sweep_chart(
    lines: list[dict],
    metric_title: str,
    catalog: Catalog,
    reference: float | None = None,
) -> dict:
    """One line per series against draft length (0 = speculation off): every trial as a
    point (outliers as crosses), the line through each level's median, or for a ratio the
    median ratio with its bootstrap interval as error bars. ``lines`` are
    ``{"name", "x", "y", "trials": {"x", "y", "text", "outlier"}, "error": [[low, high]]}``."""
    traces: list[dict] = []
    for index, line in enumerate(lines):
        color = PALETTE[index % len(PALETTE)]
        trials = line.get("trials")
        if trials and trials["x"]:
            traces.append(
                _scatter(
                    x=trials["x"],
                    y=trials["y"],
                    text=trials["text"],
                    mode="markers",
                    name=f"{line['name']} · {catalog.t('chart.trial')}",
                    legendgroup=line["name"],
                    marker={
                        "color": color,
                        "size": 7,
                        "opacity": 0.55,
                        "symbol": ["x" if o else "circle" for o in trials["outlier"]],
                    },
                    hovertemplate=f"%{{text}}<br>{hover('y')}<extra></extra>",
                )
            )
        error = line.get("error")
        traces.append(
            _scatter(
                x=line["x"],
                y=line["y"],
                mode="lines+markers",
                name=line["name"],
                legendgroup=line["name"],
                line={"color": color, "width": 2},
                marker={"color": color, "size": 10, "symbol": "diamond"},
                error_y=_error_bars(error, line["y"]) if error else None,
                hovertemplate=f"{line['name']}<br>{hover('y')}<extra></extra>",
            )
        )
    # A horizontal line across the plot at the reference value (plotly's add_hline).
    shapes = [
        {
            "type": "line",
            "line": {"dash": "dash", "color": "#888", "width": 1},
            "x0": 0,
            "x1": 1,
            "xref": "x domain",
            "y0": reference,
            "y1": reference,
            "yref": "y",
        }
    ]
    ticks = sorted({x for line in lines for x in line["x"]})
    return _layout(
        traces,
        catalog.t("factor.draft_max"),
        metric_title,
        {"shapes": shapes} if reference is not None else None,
        tickmode="array",
        tickvals=ticks,
        ticktext=[catalog.t("sweep.off") if x == 0 else str(x) for x in ticks],
    )


def _error_bars(intervals: list[list[float] | None], values: list[float]) -> dict:
    """Plotly's asymmetric error bars of ``values`` from their intervals (``[low, high]``;
    ``None``: no bar)."""
    return {
        "type": "data",
        "symmetric": False,
        "array": [None if e is None else e[1] - y for e, y in zip(intervals, values, strict=True)],
        "arrayminus": [
            None if e is None else y - e[0] for e, y in zip(intervals, values, strict=True)
        ],
    }


def pareto_chart(lines: list[dict], front: dict, catalog: Catalog) -> dict:
    """Per-user rate against aggregate rate: one line per configuration through its
    concurrency levels (points labelled ``×N``), and the Pareto front dashed. ``lines``
    are ``{"name", "x", "y", "text"}``; ``front`` is ``{"x", "y"}``."""
    traces: list[dict] = []
    for index, line in enumerate(lines):
        color = PALETTE[index % len(PALETTE)]
        traces.append(
            _scatter(
                x=line["x"],
                y=line["y"],
                text=line["text"],
                mode="lines+markers+text",
                textposition="top center",
                name=line["name"],
                line={"color": color, "width": 2},
                marker={"color": color, "size": 10},
                hovertemplate=(
                    f"{line['name']} %{{text}}<br>{catalog.t('pareto.aggregate')} {hover('x')}"
                    f"<br>{catalog.t('pareto.per_user')} {hover('y')}<extra></extra>"
                ),
            )
        )
    if front["x"]:
        traces.append(
            _scatter(
                x=front["x"],
                y=front["y"],
                mode="lines",
                name=catalog.t("pareto.front"),
                line={"color": "#444", "dash": "dash", "width": 1},
                hoverinfo="skip",
            )
        )
    return _layout(
        traces,
        axis_title(catalog, "aggregate_tps"),
        axis_title(catalog, "per_user_tps"),
        rangemode="tozero",
    )


def load_chart(
    lines: list[dict],
    y_title: str,
    catalog: Catalog,
    saturation: Sequence[dict] = (),
    diagonal: list[float] | None = None,
) -> dict:
    """A figure against the offered rate (requests/s): one line per series (``{"name",
    "x", "y", "dash", "color"}``; a missing value is no point), each saturation point as a
    large open marker (``{"name", "x", "y"}``), and with ``diagonal`` (the offered rates)
    the dashed line where the achieved rate equals the offered one."""
    traces: list[dict] = []
    if diagonal:
        traces.append(
            _scatter(
                x=list(diagonal),
                y=list(diagonal),
                mode="lines",
                name=catalog.t("chart.load_offered_line"),
                line={"color": "#888", "dash": "dash", "width": 1},
                hoverinfo="skip",
            )
        )
    for line in lines:
        traces.append(
            _scatter(
                x=line["x"],
                y=[None if v is None or pd.isna(v) else round(float(v), 4) for v in line["y"]],
                mode="lines+markers",
                name=line["name"],
                line={"color": line["color"], "width": 2, "dash": line.get("dash", "solid")},
                marker={"color": line["color"], "size": 8},
                hovertemplate=f"{line['name']}<br>{hover('x')} → {hover('y')}<extra></extra>",
            )
        )
    if saturation:
        traces.append(
            _scatter(
                x=[point["x"] for point in saturation],
                y=[point["y"] for point in saturation],
                text=[point["name"] for point in saturation],
                mode="markers",
                name=catalog.t("chart.load_saturation"),
                marker={
                    "symbol": "circle-open",
                    "size": 22,
                    "color": "#c44e52",
                    "line": {"width": 3},
                },
                hovertemplate=f"{catalog.t('chart.load_saturation')}<br>%{{text}}<extra></extra>",
            )
        )
    return _layout(traces, catalog.t("chart.load_offered"), y_title, rangemode="tozero")


def series_chart(
    lines: list[dict], builds: Sequence[str], metric_title: str, catalog: Catalog
) -> dict:
    """One line per condition × input over the builds of a series, in series order: each
    build's median, its quartiles (the trials' spread, not an interval) as error bars.
    ``lines`` are ``{"name", "y": [median | None], "quartiles": [(q1, q3) | None]}``; the
    builds are the factor's values as recorded (an engine's own text: escaped, as plotly
    reads tags in labels). The builds are positions on the axis, so two builds that
    report the same value stay two points."""
    positions = list(range(1, len(builds) + 1))
    traces = []
    for index, line in enumerate(lines):
        color = PALETTE[index % len(PALETTE)]
        medians = [None if y is None else round(y, 4) for y in line["y"]]
        bars = [
            None if q is None or y is None else [round(q[0], 4), round(q[1], 4)]
            for q, y in zip(line["quartiles"], medians, strict=True)
        ]
        traces.append(
            _scatter(
                x=positions,
                y=medians,
                mode="lines+markers",
                name=line["name"],
                legendgroup=line["name"],
                line={"color": color, "width": 2},
                marker={"color": color, "size": 9},
                error_y=_error_bars(bars, [y or 0.0 for y in medians]),
                text=[html.escape(build, quote=False) for build in builds],
                hovertemplate=f"%{{text}}<br>{catalog.t('chart.median')} {hover('y')}"
                "<extra></extra>",
            )
        )
    return _layout(
        traces,
        catalog.t("series.axis"),
        metric_title,
        {"height": 400},
        # Half a step beyond the first and last build, so their labels are not cut off.
        range=[0.5, len(builds) + 0.5],
        tickmode="array",
        tickvals=positions,
        ticktext=[html.escape(build, quote=False) for build in builds],
    )
