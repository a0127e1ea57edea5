"""Comparisons across campaigns: a declared set of campaigns, their medians
side by side, and every field in which they differ.

A ratio is offered only when the campaigns differ in the declared factor alone
(C-CONFDIFF); otherwise the row is a configuration comparison listing the differing
fields. Fields that only locate a server (address, port, pid) are never a difference.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Literal

from pydantic import Field

from sitegen.engine.registry import ENGINES, location_options
from sitegen.models import StrictModel
from sitegen.statistics.dispersion import median_ratio_interval
from sitegen.statistics.health import HealthFinding
from sitegen.statistics.report import Report
from sitegen.statistics.trials import enters_statistics, generation_rates
from sitegen.text import Bilingual

ComparedField = Literal[
    "engine",
    "engine_build",
    "interface",
    "model_file",
    "quantization",
    "devices",
    "device_count",
    "context_capacity",
    "sampling",
    "speculative",
    "output_cap",
    "flags",
]
COMPARED_FIELDS: tuple[str, ...] = ComparedField.__args__
"""Every field a cross-campaign comparison compares, in display order."""


class ComparisonSpec(StrictModel):
    """A report over several campaigns (``content/comparisons/<id>.yaml``)."""

    schema_version: Literal[1] = 1
    """Version of this format."""
    id: str = Field(pattern=r"^[a-z0-9][a-z0-9_.-]*$")
    """Identifier, used in the page address ``compare/<id>/``."""
    title: Bilingual
    """Title in both languages (plain text)."""
    campaigns: list[str] = Field(min_length=2)
    """The campaigns compared: campaign directory names, or plan names that name one
    published campaign. The first is the baseline of any ratio."""
    factor: ComparedField | None = None
    """The one field the campaigns are meant to differ in; a ratio is printed only where
    it is the only difference (``None``: never a ratio)."""


@dataclass(frozen=True)
class CampaignCell:
    """One campaign's figures for one condition × input."""

    slug: str
    median: float | None
    n: int
    prompt_tokens: int
    setup: dict[str, str]


@dataclass(frozen=True)
class CrossRow:
    """One condition × input measured by several of the campaigns."""

    condition_id: str
    input_id: str
    cells: list[CampaignCell]
    differing: tuple[str, ...]
    """Fields whose values differ between the campaigns (display order)."""
    factor_only: bool
    ratios: list[float | None]
    """Each cell's median ÷ the first cell's, only when ``factor_only`` and the condition's
    speculation ran as declared in every campaign."""
    intervals: list[tuple[float, float] | None]
    """Bootstrap interval of each ratio (the campaign's plan's ``dispersion``)."""
    health: list[tuple[str, tuple[HealthFinding, ...]]]
    """Campaigns (slug) in which this condition's speculation did not run as declared,
    with what was observed: then no ratio is shown (C-SPECHEALTH)."""


def campaign_setup(report: Report, condition_id: str, input_id: str) -> dict[str, str]:
    """The compared fields of one condition × input of a campaign, from what its usable
    records show (distinct values joined with `` | `` when records disagree)."""
    records = [
        r
        for r in report.campaign.records
        if enters_statistics(r) and r.condition_id == condition_id and r.input_id == input_id
    ]

    def location(engine_id: str) -> frozenset[str]:
        return location_options(engine_id) if engine_id in ENGINES else frozenset()

    def values(get) -> str:
        return " | ".join(sorted({str(get(r)) for r in records})) or "-"

    return {
        "engine": values(lambda r: r.provenance.engine.id),
        "engine_build": values(
            lambda r: f"{r.provenance.engine.version} {r.provenance.engine.build}"
        ),
        "interface": values(lambda r: r.provenance.engine.api),
        "model_file": values(
            lambda r: f"{r.provenance.model.file} ({r.provenance.model.sha256[:12]})"
        ),
        "quantization": values(lambda r: r.provenance.model.quantization),
        "devices": values(
            lambda r: " / ".join(sorted({d.name for d in r.provenance.host.devices}))
        ),
        "device_count": values(lambda r: len(r.provenance.host.devices)),
        "context_capacity": values(lambda r: r.context_capacity),
        "sampling": values(
            lambda r: (
                f"t={r.sampling.temperature} top_p={r.sampling.top_p} top_k={r.sampling.top_k}"
            )
        ),
        "speculative": values(lambda r: r.speculative.label),
        "output_cap": values(lambda r: r.max_output_tokens),
        "flags": values(
            lambda r: json.dumps(
                {
                    k: v
                    for k, v in r.provenance.flags.items()
                    if k not in location(r.provenance.engine.id)
                },
                sort_keys=True,
                ensure_ascii=False,
            )
        ),
    }


def compare_campaigns(spec: ComparisonSpec, reports: list[Report]) -> list[CrossRow]:
    """Every condition × input that at least two of the campaigns measured, in the
    baseline's order, with the fields that differ and, for a factor-only difference,
    the ratios to the baseline campaign."""
    rows: list[CrossRow] = []
    keys: list[tuple[str, str]] = []
    summaries = {
        report.slug: {
            (r["condition_id"], r["input_id"]): r for r in report.summary.to_dict("records")
        }
        if len(report.summary)
        else {}
        for report in reports
    }
    for report in reports:
        keys += [key for key in summaries[report.slug] if key not in keys]
    for condition_id, input_id in keys:
        cells = [
            CampaignCell(
                report.slug,
                row["gen_tps_median"],
                int(row["n"]),
                int(row["prompt_tokens"]),
                campaign_setup(report, condition_id, input_id),
            )
            for report in reports
            if (row := summaries[report.slug].get((condition_id, input_id))) is not None
        ]
        if len(cells) < 2:
            continue
        differing = tuple(
            name for name in COMPARED_FIELDS if len({cell.setup[name] for cell in cells}) > 1
        )
        factor_only = spec.factor is not None and differing == (spec.factor,)
        by_slug = {report.slug: report for report in reports}
        health = [
            (cell.slug, found)
            for cell in cells
            if (found := by_slug[cell.slug].health.get(condition_id))
        ]
        base = cells[0].median
        shown = factor_only and not health
        ratios = [
            cell.median / base if shown and base and cell.median is not None else None
            for cell in cells
        ]
        rates = [
            generation_rates(by_slug[cell.slug].usable_speed_trials, condition_id, input_id)
            if shown
            else None
            for cell in cells
        ]
        intervals = [
            median_ratio_interval(rate, rates[0], by_slug[cell.slug].plan.dispersion)
            if shown and index
            else None
            for index, (cell, rate) in enumerate(zip(cells, rates, strict=True))
        ]
        rows.append(
            CrossRow(
                condition_id, input_id, cells, differing, factor_only, ratios, intervals, health
            )
        )
    return rows


@dataclass(frozen=True)
class CrossCampaign:
    """A comparison report: its declaration, the campaigns' reports and the rows."""

    spec: ComparisonSpec
    reports: list[Report]
    rows: list[CrossRow]


def resolve_campaigns(
    spec: ComparisonSpec, reports: list[Report]
) -> tuple[list[Report], list[str]]:
    """The reports a declaration names (by campaign directory, or by a plan name that
    names one campaign), and a problem for each name that does not resolve."""
    found, problems = [], []
    for index, name in enumerate(spec.campaigns):
        matches = [r for r in reports if r.slug == name] or [
            r for r in reports if r.plan.name == name
        ]
        if len(matches) == 1:
            found.append(matches[0])
        else:
            known = ", ".join(sorted(r.slug for r in reports))
            what = "no published campaign" if not matches else "several campaigns"
            problems.append(f"campaigns.{index}: '{name}' names {what} (published: {known})")
    return found, problems


def make_comparison(spec: ComparisonSpec, reports: list[Report]) -> CrossCampaign:
    return CrossCampaign(spec, reports, compare_campaigns(spec, reports))
