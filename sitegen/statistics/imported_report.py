"""What an imported campaign's pages show: per condition and input, the figures its source
allows, the ratios its declaration allows, and the claims its source cannot support.
Pure functions of the records and the registration.

Every figure here is computed from imported data and carries C-IMPORTED on the page. A
figure whose field the source lacks is not a figure: it is a refusal naming the field.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime

import numpy as np
import pandas as pd

from sitegen.records.import_source import ImportedMeasurement
from sitegen.records.imported_campaign import ImportedCampaign, ImportRegistration
from sitegen.statistics.dispersion import median_ratio_interval
from sitegen.statistics.latency import latency_percentiles, tpot

FIGURES = (
    "gen_tps",
    "tokens_per_s",
    "tool_tokens_per_s",
    "ttft_s",
    "e2e_s",
    "output_tokens",
    "prompt_tokens",
    "acceptance",
    "peak_memory_mib",
)
"""Figures summarized per condition and input, each a median with its range
(``acceptance``: each request's accepted ÷ proposed draft tokens, where it proposed any)."""
LOAD_FIELDS = ("format", "load_pattern", "concurrency", "request_rate", "backend")
"""How the tool sent the requests: conditions that differ in any of these differ in more
than the declared factor (C-CONFDIFF), so no ratio is shown between them."""
RATE_METRICS = ("gen_tps", "tokens_per_s", "tool_tokens_per_s")
"""The rate a ratio compares: sitegen's generation rate where the source's times give it,
else llama-bench's rate (``samples_ts``), else the tool's rate column of a CSV (by the
tool's declared definition, labelled as the tool's)."""
TRUNCATED = "length"
"""The finish reason of a request stopped by its output cap (OpenAI-compatible servers)."""


@dataclass(frozen=True)
class Figure:
    """One figure of one condition and input: a median with its range, or absent."""

    median: float | None
    low: float | None
    high: float | None
    n: int

    @property
    def present(self) -> bool:
        return self.median is not None


@dataclass(frozen=True)
class ImportedRow:
    condition_id: str
    input_id: str
    measure: str | None
    """llama-bench's test as it prints it (``pp16``), else ``None``."""
    ok: int
    failed: int
    warmups: int
    figures: dict[str, Figure]
    load: dict[str, str]
    """The load fields (``LOAD_FIELDS``) of the condition's sources, as stated."""
    truncated: int | None = None
    """Measured requests stopped by the output cap: finish reason ``length``, or as many
    output tokens as the stated cap; ``None`` where the source states neither."""
    truncation_known: int = 0
    """Measured requests whose finish reason or output cap the source states."""


@dataclass(frozen=True)
class ImportedComparison:
    treatment: str
    baseline: str
    input_id: str
    metric: str | None
    """The rate compared (``RATE_METRICS``); ``None`` when no rate is on both sides."""
    ratio: float | None
    """Treatment median ÷ baseline median; only with its interval (C-SPREAD)."""
    interval: tuple[float, float] | None
    differing: tuple[str, ...]
    """Load fields that differ between the two sides, ``model`` when their declared models
    differ, and ``group`` when both sides declare the same speculative decoding (they then
    differ in something undeclared): no ratio then (C-CONFDIFF). Sides are always one
    input: figures of different inputs are never pooled into a ratio."""


@dataclass(frozen=True)
class PooledAcceptance:
    """Draft acceptance pooled over a whole run, as the source states it (vLLM's totals)."""

    condition_id: str
    file: str
    accepted: int
    proposed: int

    @property
    def rate(self) -> float:
        return self.accepted / self.proposed


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


@dataclass(frozen=True)
class ImportedReport:
    campaign: ImportedCampaign
    rows: list[ImportedRow]
    comparisons: list[ImportedComparison]
    acceptance: list[PooledAcceptance]
    refused: list[tuple[str, str]]
    """``(claim, missing field)`` for every claim the source cannot support."""
    tool_label: str
    """``GuideLLM 0.8.1``: the tool and version every figure is imported from."""
    absent: set[str] = field(default_factory=set)
    """Figures (``FIGURES``) no record of the campaign has."""
    run: list[RunRow] = field(default_factory=list)
    """The tool's run-level figures per source group (``RUN_FIGURES``)."""
    latency: pd.DataFrame = field(default_factory=pd.DataFrame)
    """Percentiles of TTFT, TPOT, ITL and end-to-end time per condition and input, under the
    measured reports' rules (``statistics/latency.py``); ITL only from per-chunk gaps."""
    frame: pd.DataFrame = field(default_factory=pd.DataFrame)
    """One row per record (``imported_frame``): the records table offered for download."""

    @property
    def latency_records(self) -> list[dict]:
        """The latency rows with ``None`` for a percentile without enough values."""
        table = self.latency.astype(object).where(self.latency.notna(), None)
        return table.to_dict("records")

    @property
    def has_chunk_gaps(self) -> bool:
        """Whether any record keeps per-chunk gaps (ITL): vLLM and AIPerf do, GuideLLM not."""
        return bool(len(self.latency)) and (self.latency["metric"] == "itl_s").any()

    def summary_table(self) -> pd.DataFrame:
        """The figures table as one row per condition and input (each figure's median,
        min, max and n), for download."""
        rows = []
        for row in self.rows:
            line: dict[str, object] = {
                "condition_id": row.condition_id,
                "input_id": row.input_id,
                "measure": row.measure,
                "ok": row.ok,
                "failed": row.failed,
                "warmups": row.warmups,
                "truncated": row.truncated,
            }
            for name, figure in row.figures.items():
                if name in self.absent:
                    continue
                line |= {
                    f"{name}_median": figure.median,
                    f"{name}_min": figure.low,
                    f"{name}_max": figure.high,
                    f"{name}_n": figure.n,
                }
            rows.append(line | {f"load_{name}": value for name, value in row.load.items()})
        return pd.DataFrame(rows)

    def run_table(self) -> pd.DataFrame:
        """The run-level figures, one row per source group, each with where it comes from
        (the tool's key, or ``computed`` over the records' window), for download."""
        rows = []
        for run in self.run:
            line: dict[str, object] = {
                "condition_id": run.condition_id,
                "file": run.file,
                "group": run.group,
                "window_s": run.window_s,
            }
            for name, figure in run.figures.items():
                line[name] = figure.value
                line[f"{name}_source"] = figure.key if figure.stated else "computed"
            line |= {"gen_tps_median": run.gen_tps.median, "gen_tps_n": run.gen_tps.n}
            rows.append(line)
        return pd.DataFrame(rows)

    @property
    def registration(self) -> ImportRegistration:
        return self.campaign.registration

    @property
    def slug(self) -> str:
        return self.campaign.slug

    @property
    def title(self) -> dict[str, str]:
        return self.registration.title

    @property
    def condition_labels(self) -> dict[str, dict[str, str]]:
        return {c.id: dict(c.label) for c in self.registration.declaration.conditions}

    @property
    def is_llama_bench(self) -> bool:
        return self.registration.format == "llama-bench"

    @property
    def tool_rate_definition(self) -> dict[str, str] | None:
        """How the tool defines its rate column, as declared (``None``: no such column)."""
        mapping = self.registration.declaration.csv
        column = None if mapping is None else mapping.columns.get("tool_tokens_per_s")
        return None if column is None or column.definition is None else dict(column.definition)

    @property
    def shows_truncation(self) -> bool:
        """Whether any row's source states finish reasons or output caps."""
        return any(row.truncated is not None for row in self.rows)


def imported_frame(campaign: ImportedCampaign) -> pd.DataFrame:
    """One row per record: ids, role and status, its figures and its source's load."""
    sources = {s.file: s for s in campaign.registration.sources}
    rows = []
    for record in campaign.records:
        m = record.measurement
        source = sources[record.origin.file]
        rows.append(
            {
                "trial_id": record.trial_id,
                "condition_id": record.condition_id,
                "input_id": record.input_id,
                "measure": m.measure,
                "role": record.role,
                "status": record.status,
                "file": record.origin.file,
                "group": m.group,
                "location": record.origin.location,
                "started_at": m.started_at,
                "started_monotonic_s": m.started_monotonic_s,
                "generation_s": record.generation_s,
                "gen_tps": record.gen_tps,
                "tokens_per_s": m.tokens_per_s,
                "tool_tokens_per_s": m.tool_tokens_per_s,
                "ttft_s": m.ttft_s,
                "e2e_s": m.e2e_s,
                "last_token_s": m.last_token_s,
                "chunk_gaps": len(m.inter_chunk_latencies_s)
                if m.inter_chunk_latencies_s is not None
                else None,
                "output_tokens": m.output_tokens,
                "prompt_tokens": m.prompt_tokens,
                "acceptance": m.accepted_tokens / m.draft_tokens
                if m.draft_tokens and m.accepted_tokens is not None
                else None,
                "peak_memory_mib": m.peak_memory_mib,
                "truncated": _truncated(m),
                "output_text": m.output_text is not None,
                "format": source.format,
                "backend": source.backend,
                "load_pattern": m.load_pattern,
                "concurrency": m.concurrency,
                "request_rate": m.request_rate,
            }
        )
    return pd.DataFrame(rows)


def _truncated(m: ImportedMeasurement) -> bool | None:
    """Whether the request stopped at its output cap, as its finish reason or its stated cap
    says; ``None`` where the source states neither."""
    if m.finish_reason is None and m.output_cap is None:
        return None
    if m.finish_reason is not None and m.finish_reason.strip().lower() == TRUNCATED:
        return True
    return (
        m.output_cap is not None
        and m.output_tokens is not None
        and (m.output_tokens >= m.output_cap)
    )


def tool_label(registration: ImportRegistration) -> str:
    """The tools and versions the files state, e.g. ``GuideLLM 0.8.1``; a version the file
    does not state is said so."""
    labels = dict.fromkeys(
        f"{s.tool} {s.tool_version}"
        if s.tool_version
        else s.tool
        if s.format == "csv"  # a table of any tool's making: it has no version to state
        else f"{s.tool} (version not stated)"
        for s in registration.sources
    )
    return ", ".join(labels)


def _figure(values: pd.Series) -> Figure:
    present = values.dropna().astype(float)
    if present.empty:
        return Figure(None, None, None, 0)
    return Figure(float(present.median()), float(present.min()), float(present.max()), len(present))


def _load(group: pd.DataFrame) -> dict[str, str]:
    return {
        name: ", ".join(sorted({str(v) for v in group[name].dropna()})) or "—"
        for name in LOAD_FIELDS
    }


def make_imported_report(campaign: ImportedCampaign) -> ImportedReport:
    registration = campaign.registration
    frame = imported_frame(campaign)
    measured = frame[frame["role"] == "measured"]
    usable = measured[measured["status"] == "ok"]
    rows = []
    for (condition, input_id), group in measured.groupby(["condition_id", "input_id"], sort=False):
        ok = group[group["status"] == "ok"]
        known = group["truncated"].dropna()
        rows.append(
            ImportedRow(
                condition,
                input_id,
                next(iter(group["measure"].dropna()), None),
                len(ok),
                len(group) - len(ok),
                int(((frame["role"] == "warmup") & (frame["condition_id"] == condition)).sum()),
                {name: _figure(ok[name]) for name in FIGURES},
                _load(group),
                int(known.astype(bool).sum()) if len(known) else None,
                len(known),
            )
        )
    baseline = registration.declaration.baseline
    speculative = {c.id: c.speculative for c in registration.declaration.conditions}
    comparisons = []
    for row in rows:
        if row.condition_id == baseline:
            continue
        base = next(
            (r for r in rows if r.condition_id == baseline and r.input_id == row.input_id), None
        )
        if base is None:
            continue
        differing = tuple(f for f in LOAD_FIELDS if row.load[f] != base.load[f])
        declaration = registration.declaration
        if declaration.model_of(row.condition_id) != declaration.model_of(baseline):
            differing += ("model",)
        if not differing and speculative[row.condition_id] == speculative[baseline]:
            # Same declared factor and nothing the files state differs: they differ in
            # something undeclared (where the load differs, that says it).
            differing = ("group",)
        metric = next(
            (m for m in RATE_METRICS if row.figures[m].present and base.figures[m].present), None
        )
        ratio = interval = None
        if metric is not None and not differing and base.figures[metric].median:
            ratio = row.figures[metric].median / base.figures[metric].median
            pick = usable["input_id"] == row.input_id
            interval = median_ratio_interval(
                usable[pick & (usable["condition_id"] == row.condition_id)][metric].to_numpy(float),
                usable[pick & (usable["condition_id"] == baseline)][metric].to_numpy(float),
                registration.dispersion,
            )
            if interval is None:  # C-SPREAD: no ratio without its interval
                ratio = None
        comparisons.append(
            ImportedComparison(
                row.condition_id, baseline, row.input_id, metric, ratio, interval, differing
            )
        )
    absent = {name for name in FIGURES if frame.empty or frame[name].isna().all()}
    return ImportedReport(
        campaign,
        rows,
        comparisons,
        _pooled_acceptance(registration),
        _refusals(registration, frame, absent),
        tool_label(registration),
        absent,
        _run_rows(campaign, frame),
        _latency(campaign, usable),
        frame,
    )


def _latency(campaign: ImportedCampaign, usable: pd.DataFrame) -> pd.DataFrame:
    """Percentiles per condition × input of the usable requests, by ``latency_percentiles``
    (TPOT by ``tpot``; ITL from each record's per-chunk gaps, where the source keeps them)."""
    columns = ["condition_id", "input_id", "ttft_s", "tpot_s", "e2e_s"]
    if usable.empty:
        return latency_percentiles(pd.DataFrame(columns=columns), pd.DataFrame())
    trials = usable.assign(generated_tokens=usable["output_tokens"])
    trials = trials.assign(tpot_s=tpot(trials))
    trials = trials[columns].astype({"ttft_s": float, "tpot_s": float, "e2e_s": float})
    gaps = [
        (index, gap)
        for index, record in zip(usable.index, _records_at(campaign, usable.index), strict=True)
        for gap in record.measurement.inter_chunk_latencies_s or ()
    ]
    return latency_percentiles(trials, pd.DataFrame(gaps, columns=["record", "gap_s"]))


def _records_at(campaign: ImportedCampaign, index: pd.Index) -> list:
    return [campaign.records[i] for i in index]


def _run_rows(campaign: ImportedCampaign, frame: pd.DataFrame) -> list[RunRow]:
    """Per source group of measured records: the tool's stated run-level figures, else
    sitegen's over the records' window (first start → last end)."""
    if frame.empty:
        return []
    sources = {s.file: s for s in campaign.registration.sources}
    measured = frame[frame["role"] == "measured"]
    rows = []
    keys = ["condition_id", "file", "group"]
    for (condition, file, group), part in measured.groupby(keys, sort=False, dropna=False):
        group = None if pd.isna(group) else group
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
            RunRow(condition, file, group, figures, window, _figure(ok["gen_tps"]), concurrency)
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
    if values.get("error_percent") is not None:
        found["error_rate"] = RunFigure(values["error_percent"] / 100, keys["error_percent"])
    elif values.get("ok") is not None and values.get("errored") is not None:
        failed = values["errored"] + (values.get("incomplete") or 0)
        total = values["ok"] + failed
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


def _pooled_acceptance(registration: ImportRegistration) -> list[PooledAcceptance]:
    by_file = {
        ref.file: condition.id
        for condition in registration.declaration.conditions
        for ref in condition.sources
    }
    return [
        PooledAcceptance(
            by_file[s.file], s.file, s.speculative.accepted_tokens, s.speculative.draft_tokens
        )
        for s in registration.sources
        if s.speculative is not None and s.speculative.draft_tokens and s.file in by_file
    ]


def _refusals(
    registration: ImportRegistration, frame: pd.DataFrame, absent: set[str]
) -> list[tuple[str, str]]:
    """Each claim the source cannot support, with the field it lacks."""
    refused = []
    if "ttft_s" in absent:
        refused.append(("ttft", "ttft_s"))
    if "gen_tps" in absent:
        refused.append(("gen_tps", "generation_s"))
    # llama-bench times prompt processing and generation in separate tests.
    if registration.format == "llama-bench" or "e2e_s" in absent:
        refused.append(("e2e", "e2e_s"))
    if frame.empty or not frame["output_text"].any():
        refused.append(("quality", "output_text"))
        refused.append(("examples", "output_text"))
    if "acceptance" in absent:
        refused.append(("acceptance_per_trial", "draft_accepted"))
    if "peak_memory_mib" in absent:
        refused.append(("memory", "peak_memory"))
    if frame.empty or frame["truncated"].isna().all():
        refused.append(("truncation", "finish_reason"))
    return refused
