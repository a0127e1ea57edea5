"""What an imported campaign's pages show: per condition and input, the figures its source
allows, the ratios its declaration allows, and the claims its source cannot support.
Pure functions of the records and the registration.

Every figure here is computed from imported data and carries C-IMPORTED on the page. A
figure whose field the source lacks is not a figure: it is a refusal naming the field.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd

from sitegen.importers.base import ImportedMeasurement
from sitegen.records.imported import ImportedCampaign, ImportRegistration
from sitegen.statistics.dispersion import median_ratio_interval

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
                "condition_id": record.condition_id,
                "input_id": record.input_id,
                "measure": m.measure,
                "role": record.role,
                "status": record.status,
                "gen_tps": record.gen_tps,
                "tokens_per_s": m.tokens_per_s,
                "tool_tokens_per_s": m.tool_tokens_per_s,
                "ttft_s": m.ttft_s,
                "e2e_s": m.e2e_s,
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
        if speculative[row.condition_id] == speculative[baseline]:
            # Same declared factor on both sides: they differ in something undeclared.
            differing += ("group",)
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
    )


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
