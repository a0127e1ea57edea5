"""Plotly figures as JSON specs; the page script draws them with the site's own plotly.js."""

from __future__ import annotations

import json

import pandas as pd
import plotly.graph_objects as go

from sitegen.pages.i18n import Catalog

PALETTE = ("#4c72b0", "#dd8452", "#55a868", "#c44e52", "#8172b3", "#937860")


def _values(column: pd.Series) -> list[float | None]:
    """Chart values rounded for the page; a missing value (a one-token answer has no
    generation rate) is ``None``, drawn as no point."""
    return [None if pd.isna(v) else round(float(v), 4) for v in column]


def trials_chart(
    trials: pd.DataFrame,
    summary: pd.DataFrame,
    metric: str,
    condition_labels: dict[str, str],
    catalog: Catalog,
) -> dict:
    """Every measured trial as a point and each condition's median as a bar-shaped marker,
    grouped by input."""
    figure = go.Figure()
    for index, (condition_id, label) in enumerate(condition_labels.items()):
        color = PALETTE[index % len(PALETTE)]
        rows = trials[trials["condition_id"] == condition_id]
        figure.add_trace(
            go.Scatter(
                x=rows["input_id"].tolist(),
                y=_values(rows[metric]),
                text=rows["trial_id"].tolist(),
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
                hovertemplate="%{text}<br>%{y:.2f}<extra></extra>",
            )
        )
        medians = summary[summary["condition_id"] == condition_id]
        figure.add_trace(
            go.Scatter(
                x=medians["input_id"].tolist(),
                y=_values(medians[f"{metric}_median"]),
                mode="markers",
                name=f"{label} · {catalog.t('chart.median')}",
                legendgroup=condition_id,
                offsetgroup=condition_id,
                marker={"color": color, "symbol": "line-ew-open", "size": 34, "line": {"width": 3}},
                hovertemplate=f"{catalog.t('chart.median')} %{{y:.2f}}<extra></extra>",
            )
        )
    figure.update_layout(
        template="none",
        scattermode="group",
        height=380,
        margin={"l": 60, "r": 20, "t": 20, "b": 50},
        legend={"orientation": "h", "y": -0.2},
        xaxis={"title": {"text": catalog.t("col.input")}, "type": "category"},
        yaxis={"title": {"text": catalog.t(f"metric.{metric}")}, "rangemode": "tozero"},
        font={"family": "system-ui, 'Noto Sans CJK JP', sans-serif"},
    )
    return json.loads(figure.to_json())


def _layout(figure: go.Figure, x_title: str, y_title: str, catalog: Catalog, **xaxis) -> dict:
    figure.update_layout(
        template="none",
        height=460,
        margin={"l": 60, "r": 20, "t": 20, "b": 60},
        legend={"orientation": "h", "yanchor": "top", "y": -0.25},
        xaxis={"title": {"text": x_title}, **xaxis},
        yaxis={"title": {"text": y_title}, "rangemode": "tozero"},
        font={"family": "system-ui, 'Noto Sans CJK JP', sans-serif"},
    )
    return json.loads(figure.to_json())


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
    figure = go.Figure()
    for index, line in enumerate(lines):
        color = PALETTE[index % len(PALETTE)]
        trials = line.get("trials")
        if trials and trials["x"]:
            figure.add_trace(
                go.Scatter(
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
                    hovertemplate="%{text}<br>%{y:.3f}<extra></extra>",
                )
            )
        error = line.get("error")
        figure.add_trace(
            go.Scatter(
                x=line["x"],
                y=line["y"],
                mode="lines+markers",
                name=line["name"],
                legendgroup=line["name"],
                line={"color": color, "width": 2},
                marker={"color": color, "size": 10, "symbol": "diamond"},
                error_y={
                    "type": "data",
                    "symmetric": False,
                    "array": [
                        None if e is None else e[1] - y
                        for e, y in zip(error, line["y"], strict=True)
                    ],
                    "arrayminus": [
                        None if e is None else y - e[0]
                        for e, y in zip(error, line["y"], strict=True)
                    ],
                }
                if error
                else None,
                hovertemplate=f"{line['name']}<br>%{{y:.3f}}<extra></extra>",
            )
        )
    if reference is not None:
        figure.add_hline(y=reference, line={"dash": "dash", "color": "#888", "width": 1})
    ticks = sorted({x for line in lines for x in line["x"]})
    return _layout(
        figure,
        catalog.t("factor.draft_max"),
        metric_title,
        catalog,
        tickmode="array",
        tickvals=ticks,
        ticktext=[catalog.t("sweep.off") if x == 0 else str(x) for x in ticks],
    )


def pareto_chart(lines: list[dict], front: dict, catalog: Catalog) -> dict:
    """Per-user rate against aggregate rate: one line per configuration through its
    concurrency levels (points labelled ``×N``), and the Pareto front dashed. ``lines``
    are ``{"name", "x", "y", "text"}``; ``front`` is ``{"x", "y"}``."""
    figure = go.Figure()
    for index, line in enumerate(lines):
        color = PALETTE[index % len(PALETTE)]
        figure.add_trace(
            go.Scatter(
                x=line["x"],
                y=line["y"],
                text=line["text"],
                mode="lines+markers+text",
                textposition="top center",
                name=line["name"],
                line={"color": color, "width": 2},
                marker={"color": color, "size": 10},
                hovertemplate=(
                    f"{line['name']} %{{text}}<br>{catalog.t('pareto.aggregate')} %{{x:.1f}}"
                    f"<br>{catalog.t('pareto.per_user')} %{{y:.1f}}<extra></extra>"
                ),
            )
        )
    if front["x"]:
        figure.add_trace(
            go.Scatter(
                x=front["x"],
                y=front["y"],
                mode="lines",
                name=catalog.t("pareto.front"),
                line={"color": "#444", "dash": "dash", "width": 1},
                hoverinfo="skip",
            )
        )
    return _layout(
        figure,
        catalog.t("pareto.aggregate"),
        catalog.t("pareto.per_user"),
        catalog,
        rangemode="tozero",
    )
