"""What an imported campaign's pages show: per condition and input, the figures its source
allows, the ratios its declaration allows, and the claims its source cannot support.
Pure functions of the records and the registration.

Every figure here is computed from imported data and carries C-IMPORTED on the page. A
figure whose field the source lacks is not a figure: it is a refusal naming the field.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, cast

import pandas as pd

from sitegen.records.imported_campaign import ImportedCampaign, ImportedRecord, ImportRegistration
from sitegen.statistics.dispersion import median_ratio_interval
from sitegen.statistics.imported_figures import FIGURES, Figure, figure_of, imported_frame
from sitegen.statistics.imported_run import RunRow, run_rows
from sitegen.statistics.latency import latency_percentiles, tpot

LOAD_FIELDS = ("format", "load_pattern", "concurrency", "request_rate", "backend")
"""How the tool sent the requests: conditions that differ in any of these differ in more
than the declared factor (C-CONFDIFF), so no ratio is shown between them."""
RATE_METRICS = ("gen_tps", "tokens_per_s", "tool_tokens_per_s")
"""The rate a ratio compares: sitegen's generation rate where the source's times give it,
else llama-bench's rate (``samples_ts``), else the tool's rate column of a CSV (by the
tool's declared definition, labelled as the tool's)."""


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
    absent: set[str]
    """Figures (``FIGURES``) no record of the campaign has."""
    run: list[RunRow]
    """The tool's run-level figures per source group (``RUN_FIGURES``)."""
    latency: pd.DataFrame
    """Percentiles of TTFT, TPOT, ITL and end-to-end time per condition and input, under the
    measured reports' rules (``statistics/latency.py``); ITL only from per-chunk gaps."""
    latency_records: list[dict[str, Any]]
    """The latency rows with ``None`` for a percentile without enough values."""
    has_chunk_gaps: bool
    """Whether any record keeps per-chunk gaps (ITL): vLLM and AIPerf do, GuideLLM not."""
    frame: pd.DataFrame
    """One row per record (``imported_frame``): the records table offered for download."""
    figures_frame: pd.DataFrame
    """The figures table as one row per condition and input (``figures_table``)."""
    run_frame: pd.DataFrame
    """The run-level figures, one row per source group (``run_table``)."""

    def summary_table(self) -> pd.DataFrame:
        """The figures table offered for download (``figures_frame``)."""
        return self.figures_frame

    def run_table(self) -> pd.DataFrame:
        """The run-level figures offered for download (``run_frame``)."""
        return self.run_frame

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


def _load(group: pd.DataFrame) -> dict[str, str]:
    return {
        name: ", ".join(sorted({str(v) for v in group[name].dropna()})) or "—"
        for name in LOAD_FIELDS
    }


def make_imported_report(campaign: ImportedCampaign) -> ImportedReport:
    """Every figure, ratio and refusal of the imported ``campaign``, computed now, before
    any page is rendered."""
    registration = campaign.registration
    frame = imported_frame(campaign)
    measured = frame[frame["role"] == "measured"]
    usable = measured[measured["status"] == "ok"]
    rows = _imported_rows(frame, measured)
    absent = {name for name in FIGURES if frame.empty or frame[name].isna().all()}
    run = run_rows(campaign, frame)
    latency = _latency(campaign, usable)
    return ImportedReport(
        campaign=campaign,
        rows=rows,
        comparisons=_comparisons(registration, rows, usable),
        acceptance=_pooled_acceptance(registration),
        refused=_refusals(registration, frame, absent),
        tool_label=tool_label(registration),
        absent=absent,
        run=run,
        latency=latency,
        latency_records=_latency_records(latency),
        has_chunk_gaps=bool(len(latency)) and bool((latency["metric"] == "itl_s").any()),
        frame=frame,
        figures_frame=figures_table(rows, absent),
        run_frame=run_table(run),
    )


def _imported_rows(frame: pd.DataFrame, measured: pd.DataFrame) -> list[ImportedRow]:
    """One row per condition × input of the measured records, in their order: counts,
    each figure of the requests that succeeded, the load and the truncation."""
    rows = []
    for key, group in measured.groupby(["condition_id", "input_id"], sort=False):
        # Grouped by two columns of ids: each key is a (condition, input) pair of strings.
        condition, input_id = cast(tuple[str, str], key)
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
                {name: figure_of(ok[name]) for name in FIGURES},
                _load(group),
                int(known.astype(bool).sum()) if len(known) else None,
                len(known),
            )
        )
    return rows


def _comparisons(
    registration: ImportRegistration, rows: list[ImportedRow], usable: pd.DataFrame
) -> list[ImportedComparison]:
    """Each condition's comparison with the declared baseline on the same input: the
    ratio of the first rate both sides have, only with its interval and only where
    nothing but the declared factor differs (C-CONFDIFF, C-SPREAD)."""
    declaration = registration.declaration
    baseline = declaration.baseline
    speculative = {c.id: c.speculative for c in declaration.conditions}
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
        if declaration.model_of(row.condition_id) != declaration.model_of(baseline):
            differing += ("model",)
        if not differing and speculative[row.condition_id] == speculative[baseline]:
            # Same declared factor and nothing the files state differs: they differ in
            # something undeclared (where the load differs, that says it).
            differing = ("group",)
        metric = next(
            (m for m in RATE_METRICS if row.figures[m].present and base.figures[m].present), None
        )
        ratio, interval = (
            _ratio(registration, row, base, metric, usable)
            if metric is not None and not differing
            else (None, None)
        )
        comparisons.append(
            ImportedComparison(
                row.condition_id, baseline, row.input_id, metric, ratio, interval, differing
            )
        )
    return comparisons


def _ratio(
    registration: ImportRegistration,
    row: ImportedRow,
    base: ImportedRow,
    metric: str,
    usable: pd.DataFrame,
) -> tuple[float | None, tuple[float, float] | None]:
    """``row``'s median of ``metric`` ÷ ``base``'s with its bootstrap interval; neither
    without the interval (C-SPREAD) or without a baseline median."""
    treatment, baseline = row.figures[metric].median, base.figures[metric].median
    if treatment is None or not baseline:
        return None, None
    pick = usable["input_id"] == row.input_id
    interval = median_ratio_interval(
        usable[pick & (usable["condition_id"] == row.condition_id)][metric].to_numpy(float),
        usable[pick & (usable["condition_id"] == base.condition_id)][metric].to_numpy(float),
        registration.dispersion,
    )
    if interval is None:
        return None, None
    return treatment / baseline, interval


def _latency_records(latency: pd.DataFrame) -> list[dict[str, Any]]:
    """The latency rows with ``None`` for a percentile without enough values."""
    table = latency.astype(object).where(latency.notna(), None)
    # The columns of ``latency_percentiles``: string labels.
    return cast(list[dict[str, Any]], table.to_dict("records"))


def figures_table(rows: list[ImportedRow], absent: set[str]) -> pd.DataFrame:
    """The figures table as one row per condition and input (each figure's median,
    min, max and n), for download."""
    lines = []
    for row in rows:
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
            if name in absent:
                continue
            line |= {
                f"{name}_median": figure.median,
                f"{name}_min": figure.low,
                f"{name}_max": figure.high,
                f"{name}_n": figure.n,
            }
        lines.append(line | {f"load_{name}": value for name, value in row.load.items()})
    return pd.DataFrame(lines)


def run_table(run: list[RunRow]) -> pd.DataFrame:
    """The run-level figures, one row per source group, each with where it comes from
    (the tool's key, or ``computed`` over the records' window), for download."""
    lines = []
    for row in run:
        line: dict[str, object] = {
            "condition_id": row.condition_id,
            "file": row.file,
            "group": row.group,
            "window_s": row.window_s,
        }
        for name, figure in row.figures.items():
            line[name] = figure.value
            line[f"{name}_source"] = figure.key if figure.stated else "computed"
        line |= {"gen_tps_median": row.gen_tps.median, "gen_tps_n": row.gen_tps.n}
        lines.append(line)
    return pd.DataFrame(lines)


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


def _records_at(campaign: ImportedCampaign, index: pd.Index) -> list[ImportedRecord]:
    return [campaign.records[i] for i in index]


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
