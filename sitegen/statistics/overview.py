"""Every campaign's headline in one table (the home page): per campaign and input, the
speed-up with its interval, how the measured condition ran (engine, model, devices,
interconnect, capacity, draft length, temperature), its acceptance, TTFT and peak memory.
Pure functions of the reports; the page marks each row as the claim it is.

A measured campaign gives one row per headline comparison; one without a comparison (a
baseline only) one row per condition and input it measured. An imported campaign gives
one row per condition and input, its figures as imported, with the speed-up its own
report computes against its baseline where it has one (no ratio across campaigns).

A project's overview page may name the campaigns (in its order) and the columns it shows
(``OVERVIEW_COLUMNS``); ``overview_selection`` checks the names.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, cast

import pandas as pd
from pydantic import ValidationError

from sitegen.core.formatting import setting
from sitegen.plan.plan_models import HeadlineSpec
from sitegen.statistics.headlines import HeadlineRow
from sitegen.statistics.imported_report import ImportedComparison, ImportedReport, ImportedRow
from sitegen.statistics.report import Report
from sitegen.statistics.setups import is_unrecorded
from sitegen.statistics.speed import records_of
from sitegen.statistics.system import SystemCondition

SPLIT_FLAG_WORDS = ("split", "tensor_parallel", "pipeline_parallel")
"""Engine flags that say how a model is spread over devices (llama.cpp ``split_mode``,
``tensor_split``; vLLM ``tensor_parallel_size`` …): shown beside the devices."""


OVERVIEW_COLUMNS = (
    "speedup",
    "rate",
    "engine",
    "model",
    "devices",
    "interconnect",
    "capacity",
    "draft",
    "temperature",
    "acceptance",
    "ttft",
    "memory",
)
"""The columns of the overview table in their order, each row's campaign always first."""


@dataclass(frozen=True)
class Setup:
    """How one condition ran, as its records (or an import's declaration) show it; every
    value is display text, ``None`` when not recorded."""

    engine: str | None
    model: str | None
    devices: str | None
    split: str | None
    interconnect: str | None
    temperature: str | None
    draft: str | None
    device_kind: str | None = None
    """``gpu``, ``cpu`` or ``accelerator``: what ``devices`` names (``None``: mixed or
    not recorded), so the row says which it is."""
    build_recorded: bool = True
    """Whether the engine reported its build (llama.cpp's ``b0-unknown`` did not)."""


@dataclass(frozen=True)
class MeasuredRow:
    """One headline comparison of a measured campaign (or one condition and input of a
    campaign without a comparison)."""

    report: Report
    input_id: str
    condition_id: str
    """The condition the configuration, acceptance, TTFT and memory columns describe: the
    comparison's treatment, or the measured condition."""
    headline: HeadlineRow | None
    summary: dict[str, Any]
    """The speed summary row of ``condition_id`` on ``input_id``."""
    baseline_median: float | None
    setup: Setup
    ttft: dict[str, Any] | None
    """The TTFT percentile row of ``condition_id`` on ``input_id`` (``report.latency``)."""
    peak_memory_mib: float | None
    memory_limit_mib: float | None
    trials: int
    """Measured trials behind the row: both sides of its comparison on its input."""
    imported = False

    @property
    def ttft_p95(self) -> float | None:
        return None if self.ttft is None else _number(self.ttft.get("p95"))

    @property
    def ttft_median(self) -> float | None:
        if self.ttft is not None and _number(self.ttft.get("p50")) is not None:
            return _number(self.ttft.get("p50"))
        return _number(self.summary.get("ttft_s_median"))


@dataclass(frozen=True)
class ImportedOverviewRow:
    """One condition and input of an imported campaign."""

    report: ImportedReport
    row: ImportedRow
    setup: Setup
    comparison: ImportedComparison | None
    """The imported report's comparison of this condition with its baseline on this input;
    ``None`` for the baseline, or where the baseline did not run this input."""
    imported = True


def _number(value: Any) -> float | None:
    if value is None:
        return None
    try:
        return None if pd.isna(value) else float(value)
    except (TypeError, ValueError):
        return None


def _values(system: SystemCondition | None, field: str) -> list[Any]:
    if system is None:
        return []
    return [v.value for row in system.rows if row.field == field for v in row.values]


def _joined(values: list[Any]) -> str | None:
    shown = [str(v) for v in dict.fromkeys(values) if v is not None and str(v).strip()]
    return " | ".join(shown) or None


def measured_setup(report: Report, condition_id: str) -> Setup:
    """How ``condition_id`` of ``report`` ran, from its usable records' provenance."""
    system = next((s for s in report.system if s.condition_id == condition_id), None)
    condition = next(c for c in report.plan.conditions if c.id == condition_id)
    names = [n for n in _values(system, "device_model") if n]
    counts = [c for c in _values(system, "device_count") if c]
    devices = None
    if names:
        count = _joined(counts)
        devices = f"{count}× {_joined(names)}" if count else _joined(names)
    split = (
        _joined(
            [
                f"{row.key}={v.value}"
                for row in system.rows
                if row.field == "flags"
                and row.key
                and any(word in row.key for word in SPLIT_FLAG_WORDS)
                for v in row.values
                if v.value is not None
            ]
        )
        if system
        else None
    )
    builds = _values(system, "engine_build") or [None]
    engine = _joined(
        [_engine_text(e, b) for e in _values(system, "engine") or [None] for b in builds]
    )
    model = _joined(_values(system, "model"))
    quantization = _joined(_values(system, "quantization"))
    temperature = _joined([setting(float(v)) for v in _values(system, "sampling_temperature")])
    return Setup(
        engine=engine,
        model=f"{model} · {quantization}" if model and quantization else model or quantization,
        devices=devices,
        split=split,
        interconnect=_joined(_values(system, "interconnect")),
        temperature=temperature,
        draft=condition.speculative.label,
        device_kind=_device_kind(report, condition_id),
        build_recorded=not any(b is None or is_unrecorded(str(b)) for b in builds),
    )


def _device_kind(report: Report, condition_id: str) -> str | None:
    """``cpu`` when every record of the condition ran on the CPU alone, ``gpu`` when none
    did (``None``: both, or no device recorded)."""
    rows = report.campaign.rows
    indices = rows.loc[rows["condition_id"] == condition_id, "provenance"].unique()
    provenances = report.campaign.table.provenances
    ids = {d.id for i in indices for d in provenances[int(i)].host.devices}
    if not ids:
        return None
    if ids == {"cpu"}:
        return "cpu"
    return None if "cpu" in ids else "gpu"


def _engine_text(engine: Any, build: Any) -> str:
    """An engine and its build, each word once (a llama.cpp version is its build:
    ``llama-server b9745``), an unrecorded word (``unknown``, ``b0-unknown``) left out."""
    words: list[str] = []
    for part in (engine, build):
        for word in str(part or "").split():
            if word not in words and not is_unrecorded(word):
                words.append(word)
    return " ".join(words)


def measured_rows(report: Report, choice: HeadlineSpec | None = None) -> list[MeasuredRow]:
    """The campaign's rows: one per headline comparison, else one per condition × input
    it measured. A chosen headline (``choice``, else the plan's ``headline``) keeps the
    comparisons of its pair on its input(s) only, where it has any."""
    summary = {(r["condition_id"], r["input_id"]): r for r in report.summary_records}
    latency = report.latency
    ttft_rows = {
        (r["condition_id"], r["input_id"]): r
        for r in records_of(latency[latency["metric"] == "ttft_s"])
    }
    memory = {o.condition_id: o.peak_memory_mib for o in report.condition_overview}
    limit = report.plan.speculation_health.max_device_memory_mib
    setups: dict[str, Setup] = {}

    def row(condition_id: str, input_id: str, headline: HeadlineRow | None) -> MeasuredRow:
        if condition_id not in setups:
            setups[condition_id] = measured_setup(report, condition_id)
        return MeasuredRow(
            report=report,
            input_id=input_id,
            condition_id=condition_id,
            headline=headline,
            summary=summary[(condition_id, input_id)],
            baseline_median=None
            if headline is None
            else _number(headline.baseline.get("gen_tps_median")),
            setup=setups[condition_id],
            ttft=ttft_rows.get((condition_id, input_id)),
            peak_memory_mib=memory.get(condition_id),
            memory_limit_mib=limit,
            trials=int(summary[(condition_id, input_id)]["n"])
            + (0 if headline is None else int(headline.baseline["n"])),
        )

    choice = choice or report.plan.headline
    headlines = report.headline
    if choice is not None:
        chosen = [
            h
            for h in headlines
            if (h.comparison.baseline, h.comparison.treatment)
            == (choice.baseline, choice.treatment)
            and choice.input in (None, h.comparison.input_id)
        ]
        headlines = chosen or headlines
    if headlines:
        return [row(h.comparison.treatment, h.comparison.input_id, h) for h in headlines]
    # A campaign measured for quality alone: its verdict's row.
    return [row(c, i, None) for (c, i) in summary] or quality_rows(report)  # type: ignore[return-value]


def imported_setup(report: ImportedReport, condition_id: str) -> Setup:
    """How an imported condition ran, as its publisher declared it."""
    d = report.registration.declaration
    condition = next(c for c in d.conditions if c.id == condition_id)
    devices = " + ".join(
        f"{device.count}× {device.name}" if device.count else device.name
        for device in d.hardware.devices
    )
    # A fact declared unknown is None: left out, never shown as a value.
    engine = _engine_text(
        d.engine.name, " ".join(p for p in (d.engine.version, d.engine.build) if p)
    )
    kinds = {device.kind for device in d.hardware.devices}
    model = d.model_of(condition_id)
    temperature = d.sampling.temperature
    return Setup(
        engine=engine,
        model=" · ".join(p for p in (model.name, model.quantization) if p),
        devices=devices,
        split=None,
        interconnect=d.hardware.interconnect,
        temperature=None if temperature is None else setting(float(temperature)),
        draft=condition.speculative.label,
        device_kind=next(iter(kinds)) if len(kinds) == 1 else None,
        build_recorded=d.engine.build is not None and not is_unrecorded(d.engine.build),
    )


def imported_rows(report: ImportedReport) -> list[ImportedOverviewRow]:
    setups = {c: imported_setup(report, c) for c in report.condition_labels}
    comparisons = {(c.treatment, c.input_id): c for c in report.comparisons}
    return [
        ImportedOverviewRow(
            report,
            row,
            setups[row.condition_id],
            comparisons.get((row.condition_id, row.input_id)),
        )
        for row in report.rows
    ]


def overview_headlines(reports: dict[str, Report], headlines: object) -> dict[str, HeadlineSpec]:
    """The headline an overview chooses per measured campaign (folder name → ``baseline``,
    ``treatment``, optional ``input``, as the plan's ``headline``); none when not declared.
    Raises ``ValueError`` naming the campaign and what is wrong."""
    if headlines is None:
        return {}
    if not isinstance(headlines, dict):
        raise ValueError("headlines: a mapping of campaign name to {baseline, treatment, input}")
    chosen = {}
    for name, declared in headlines.items():
        if name not in reports:
            shown = ", ".join(reports) or "none"
            raise ValueError(f"headlines: unknown measured campaign {name!r} (known: {shown})")
        try:
            spec = HeadlineSpec.model_validate(declared)
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(str(part) for part in e['loc']) or 'value'}: {e['msg']}"
                for e in exc.errors()
            )
            raise ValueError(f"headlines[{name!r}]: {problems}") from None
        plan = reports[name].plan
        conditions = {c.id for c in plan.conditions}
        for field in ("baseline", "treatment"):
            if getattr(spec, field) not in conditions:
                raise ValueError(f"headlines[{name!r}].{field}: not a condition id")
        if spec.input is not None and spec.input not in {i.id for i in plan.inputs}:
            raise ValueError(f"headlines[{name!r}].input: not a speed input id")
        chosen[name] = spec
    return chosen


@dataclass(frozen=True)
class QualityOverviewRow:
    """A campaign with a quality evaluation and no speed input: its pre-registered
    non-inferiority verdict, with the truncations of the same answers (C-TRUNC)."""

    report: Report
    setup: Setup
    """How the condition with the factor on ran."""
    outcomes: dict[str, dict[str, Any]]
    """Outcome counts per factor (``off``, ``on``): length-capped, answer not reached …"""
    imported = False
    quality_only = True

    @property
    def result(self) -> Any:
        """The primary result (``None``: no problem pairs)."""
        return self.report.quality.primary if self.report.quality else None

    @property
    def verdict(self) -> str | None:
        """The catalog key of the verdict (``quality.verdict_…``)."""
        r = self.result
        if r is None:
            return None
        if r.no_discordant_pairs:
            return "quality.verdict_degenerate"
        return "quality.verdict_yes" if r.non_inferior else "quality.verdict_no"


def quality_rows(report: Report) -> list[QualityOverviewRow]:
    """The row of a campaign measured for quality alone (none for any other)."""
    quality = report.plan.quality
    if report.quality is None or quality is None or report.summary_records:
        return []
    outcomes = report.quality.outcomes
    return [
        QualityOverviewRow(
            report,
            measured_setup(report, quality.on_condition),
            # Indexed by the factor (off, on), the columns named: string labels.
            cast(dict[str, dict[str, Any]], outcomes.set_index("factor").to_dict("index"))
            if len(outcomes)
            else {},
        )
    ]


def overview_selection(
    known: list[str], campaigns: object, columns: object
) -> tuple[list[str], list[str]]:
    """The campaigns (folder names, in the declared order) and columns (in the table's
    order) an overview shows: every one of ``known`` and ``OVERVIEW_COLUMNS`` when not
    declared. Raises ``ValueError`` naming the field and the unknown name."""
    chosen_campaigns = _names("campaigns", campaigns, known)
    chosen_columns = _names("columns", columns, list(OVERVIEW_COLUMNS))
    return chosen_campaigns, [c for c in OVERVIEW_COLUMNS if c in chosen_columns]


def _names(field: str, declared: object, known: list[str]) -> list[str]:
    if declared is None:
        return known
    kind = field.removesuffix("s")
    if isinstance(declared, str) or not isinstance(declared, list | tuple) or not declared:
        raise ValueError(f"{field}: a list of {kind} names in brackets, e.g. {field}=[…]")
    for name in declared:
        if name not in known:
            shown = ", ".join(known) or "none"
            raise ValueError(f"{field}: unknown {kind} {name!r} (known: {shown})")
    if len(set(declared)) != len(declared):
        raise ValueError(f"{field}: a {kind} named more than once")
    return list(declared)
