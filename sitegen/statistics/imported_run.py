"""The tool's run-level figures of an imported campaign, per source group (a file, or
GuideLLM's benchmark in it): as the file states them, else computed by sitegen over the
records' run window (pure).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from typing import cast

import numpy as np
import pandas as pd

from sitegen.records.imported_campaign import ImportedCampaign
from sitegen.statistics.imported_figures import Figure, figure_of

RUN_FIGURES = ("requests_per_s", "output_tokens_per_s", "error_rate")
"""The tool's run-level figures, per source group: completed requests per second and output
tokens per second over the run's wall time, and the share of requests that failed."""
STATED_RUN_KEYS: dict[str, dict[str, str]] = {
    "guidellm": {
        "requests_per_s": "{group}.metrics.requests_per_second.successful.mean",
        "output_tokens_per_s": "{group}.metrics.output_tokens_per_second.successful.mean",
        "ok": "{group}.metrics.request_totals.successful",
        "errored": "{group}.metrics.request_totals.errored",
        "incomplete": "{group}.metrics.request_totals.incomplete",
    },
    "vllm": {
        "requests_per_s": "request_throughput",
        "output_tokens_per_s": "output_throughput",
        "ok": "completed",
        "errored": "failed",
    },
    "aiperf": {
        "requests_per_s": "request_throughput.avg",
        "output_tokens_per_s": "output_token_throughput.avg",
        "error_percent": "request_error_rate.avg",
    },
}
"""Where each format's file states a run-level figure (``SourceInfo.stated`` keys, the
importers keep them under the source's own names; ``{group}``: GuideLLM's benchmark). The
error rate is the failed share of the stated counts, or AIPerf's stated percentage."""


@dataclass(frozen=True)
class RunFigure:
    """One run-level figure: as the tool states it (``key``: where in its file), or computed
    by sitegen from the records' times over the run window (``key`` ``None``)."""

    value: float | None
    key: str | None = None

    @property
    def present(self) -> bool:
        return self.value is not None

    @property
    def stated(self) -> bool:
        return self.key is not None


@dataclass(frozen=True)
class RunRow:
    """The run-level figures of one source group (a file, or GuideLLM's benchmark in it)."""

    condition_id: str
    file: str
    group: str | None
    figures: dict[str, RunFigure]
    window_s: float | None
    """The records' run window: first request start → last request end (s), where the
    records' times give it."""
    gen_tps: Figure
    """sitegen's per-request generation rate over the same requests (median, range, n)."""
    concurrency: int | None = None
    """Requests the tool kept in flight, as it states it (``None``: it does not, or its
    requests state different ones)."""


def run_rows(campaign: ImportedCampaign, frame: pd.DataFrame) -> list[RunRow]:
    """Per source group of measured records: the tool's stated run-level figures, else
    sitegen's over the records' window (first start → last end)."""
    if frame.empty:
        return []
    sources = {s.file: s for s in campaign.registration.sources}
    measured = frame[frame["role"] == "measured"]
    rows = []
    keys = ["condition_id", "file", "group"]
    for key, part in measured.groupby(keys, sort=False, dropna=False):
        # The records' condition and file (strings), and their group: a string, or NaN.
        condition, file, stated_group = cast(tuple[str, str, object], key)
        group = stated_group if isinstance(stated_group, str) else None
        source = sources[file]
        ok = part[part["status"] == "ok"]
        window = _window(part)
        computed = {
            "requests_per_s": len(ok) / window if window else None,
            "output_tokens_per_s": float(ok["output_tokens"].sum()) / window
            if window and ok["output_tokens"].notna().any()
            else None,
            "error_rate": (len(part) - len(ok)) / len(part) if len(part) else None,
        }
        stated = _stated_run(source.format, source.stated, group)
        figures = {
            name: stated[name] if name in stated else RunFigure(computed[name])
            for name in RUN_FIGURES
        }
        if source.format == "llama-bench":  # no requests, no run window: none of these
            continue
        stated_concurrency = part["concurrency"].dropna().unique()
        concurrency = int(stated_concurrency[0]) if len(stated_concurrency) == 1 else None
        rows.append(
            RunRow(condition, file, group, figures, window, figure_of(ok["gen_tps"]), concurrency)
        )
    return rows


def _stated_number(stated: dict[str, str], key: str) -> float | None:
    text = stated.get(key)
    if text is None:
        return None
    try:
        value = json.loads(text)
    except ValueError:
        return None
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _stated_run(format: str, stated: dict[str, str], group: str | None) -> dict[str, RunFigure]:
    """The run-level figures the source states for ``group`` (``STATED_RUN_KEYS``)."""
    keys = {
        name: key.format(group=group)
        for name, key in STATED_RUN_KEYS.get(format, {}).items()
        if group is not None or "{group}" not in key
    }
    values = {name: _stated_number(stated, key) for name, key in keys.items()}
    found = {
        name: RunFigure(values[name], keys[name])
        for name in ("requests_per_s", "output_tokens_per_s")
        if values.get(name) is not None
    }
    error_percent, ok, errored = (values.get(n) for n in ("error_percent", "ok", "errored"))
    if error_percent is not None:
        found["error_rate"] = RunFigure(error_percent / 100, keys["error_percent"])
    elif ok is not None and errored is not None:
        failed = errored + (values.get("incomplete") or 0)
        total = ok + failed
        if total:
            named = [keys[n] for n in ("ok", "errored", "incomplete") if values.get(n) is not None]
            found["error_rate"] = RunFigure(failed / total, ", ".join(named))
    return found


def _window(part: pd.DataFrame) -> float | None:
    """First request start → last request end of ``part`` (s): from the wall-clock starts,
    else the tool's monotonic ones; ``None`` where the records hold neither with e2e."""
    if part["started_at"].notna().all() and len(part):
        starts = np.array([datetime.fromisoformat(t).timestamp() for t in part["started_at"]])
    elif part["started_monotonic_s"].notna().all() and len(part):
        starts = part["started_monotonic_s"].to_numpy(float)
    else:
        return None
    ends = starts + part["e2e_s"].to_numpy(float, na_value=np.nan)
    if np.isnan(ends).all():
        return None
    window = float(np.nanmax(ends) - starts.min())
    return window if window > 0 else None
