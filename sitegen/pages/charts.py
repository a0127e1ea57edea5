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
                marker={"color": color, "size": 9, "opacity": 0.75},
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
