"""Comparisons across campaigns: a declared set of campaigns, their medians
side by side, and every field in which they differ.

A ratio is offered only when the campaigns differ in the declared factor alone, on
positive evidence (C-CONFDIFF, ``setups.compare_records``); otherwise the row is a
configuration comparison naming the differing fields and, apart, those not recorded on
both sides. Inputs are matched by their prompt text, never by id alone. Fields that only
locate a server (address, port, pid) are never a difference.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, cast

from sitegen.core.comparison_spec import ComparisonSpec
from sitegen.records.record_models import TrialRecord
from sitegen.statistics.dispersion import median_ratio_interval
from sitegen.statistics.health import HealthFinding
from sitegen.statistics.imported_report import ImportedReport
from sitegen.statistics.report import Report
from sitegen.statistics.setups import (
    SETUP_FIELDS,
    Setup,
    compare_records,
    describe_setup,
    setup_records,
)
from sitegen.statistics.speed import present
from sitegen.statistics.trials import generation_rates


@dataclass(frozen=True)
class CampaignCell:
    """One campaign's figures for one condition × input."""

    slug: str
    input_id: str
    """The campaign's own id of the input (inputs are matched by their text, not by id)."""
    median: float | None
    n: int
    prompt_tokens: int
    setup: Setup
    """What the cell's usable records show, field by field."""


@dataclass(frozen=True)
class CrossRow:
    """One condition × input (the same prompt text) measured by several of the campaigns."""

    condition_id: str
    input_id: str
    """The input's id in the first campaign that measured it."""
    cells: list[CampaignCell]
    differing: tuple[str, ...]
    """Fields recorded in every campaign whose values differ (display order), the factor
    included."""
    unrecorded: tuple[str, ...]
    """Fields other than the factor that some campaign's records do not record."""
    factor_only: bool
    """Every campaign differs from the first in the declared factor, and every other field
    is recorded in both and equal (``setups.compare_records``)."""
    ratios: list[float | None]
    """Each cell's median ÷ the first cell's, only when ``factor_only``, the condition's
    speculation ran as declared on this input in every campaign, and the ratio has its
    interval (two or more trials a side)."""
    intervals: list[tuple[float, float] | None]
    """Bootstrap interval of each ratio (the campaign's plan's ``dispersion``)."""
    health: list[tuple[str, tuple[HealthFinding, ...]]]
    """Campaigns (slug) in which this condition's speculation did not run as declared on
    this input, with what was observed: then no ratio is shown (C-SPECHEALTH)."""

    @property
    def shows_ratio(self) -> bool:
        """At least one campaign's ratio to the first is shown."""
        return any(ratio is not None for ratio in self.ratios[1:])

    @property
    def unrecorded_by(self) -> list[str]:
        """Campaigns (slug) whose records leave one of ``unrecorded`` unrecorded."""
        return [cell.slug for cell in self.cells if cell.setup.unrecorded & set(self.unrecorded)]


def _input_keys(report: Report) -> dict[tuple[str, str], str]:
    """(condition, input id) → the SHA-256 of the prompt texts its usable records sent
    (several joined when they differ): what matches an input across campaigns."""
    table = report.campaign.table
    rows = table.rows.loc[table.usable, ["condition_id", "input_id", "prompt_sha256"]]
    rows = rows.dropna(subset=["prompt_sha256"])
    groups = rows.groupby(["condition_id", "input_id"], sort=False)["prompt_sha256"]
    # Grouped by two columns of ids: each key is a (condition, input) pair of strings.
    return {cast(tuple[str, str], key): " ".join(sorted(set(hashes))) for key, hashes in groups}


Side = tuple[Report, dict[str, Any]]
"""One campaign's speed summary row of a condition × input."""


def compare_campaigns(spec: ComparisonSpec, reports: list[Report]) -> list[CrossRow]:
    """Every condition × input (matched by condition id and prompt text) that at least two
    of the campaigns measured, in the baseline's order, with the fields that differ or
    are not recorded and, for a factor-only difference, the ratios to the first campaign."""
    by_slug = {report.slug: report for report in reports}
    return [
        _cross_row(spec, condition_id, found, by_slug)
        for (condition_id, _), found in _matched_sides(reports).items()
        if len(found) >= 2
    ]


def _matched_sides(reports: list[Report]) -> dict[tuple[str, str | None], list[Side]]:
    """The campaigns' summary rows by condition and prompt text, at most one a campaign,
    in the order of the campaigns and their rows."""
    sides: dict[tuple[str, str | None], list[Side]] = {}
    for report in reports:
        keys = _input_keys(report)
        for row in report.summary_records if len(report.summary) else []:
            text = keys.get((row["condition_id"], row["input_id"]))
            found = sides.setdefault((row["condition_id"], text), [])
            # One cell a campaign: two inputs of one plan with the same text are not two sides.
            if text is not None and all(seen is not report for seen, _ in found):
                found.append((report, row))
    return sides


def _measured(report: Report, condition_id: str, input_id: str) -> list[TrialRecord]:
    """The usable records of one condition × input of ``report``, as the setups read them."""
    rows = report.campaign.rows
    selected = (
        report.campaign.table.usable
        & (rows["condition_id"] == condition_id)
        & (rows["input_id"] == input_id)
    )
    return setup_records(report.campaign, rows[selected])


def _cross_row(
    spec: ComparisonSpec, condition_id: str, found: list[Side], by_slug: dict[str, Report]
) -> CrossRow:
    """One row: each campaign's cell, what differs from the first, and the ratios to it
    where only the declared factor differs and the speculation ran as declared."""
    sides = [_measured(report, condition_id, row["input_id"]) for report, row in found]
    cells = [
        CampaignCell(
            report.slug,
            row["input_id"],
            present(row["gen_tps_median"]),
            int(row["n"]),
            int(row["prompt_tokens"]),
            describe_setup(side, spec.factor),
        )
        for (report, row), side in zip(found, sides, strict=True)
    ]
    pairs = [compare_records(sides[0], side, spec.factor) for side in sides[1:]]
    differing = tuple(
        name
        for name in SETUP_FIELDS
        if any(name in pair.differing for pair in pairs)
        or (name == spec.factor and any(pair.factor_differs for pair in pairs))
    )
    unrecorded = tuple(
        name for name in SETUP_FIELDS if any(name in pair.unrecorded for pair in pairs)
    )
    factor_only = spec.factor is not None and all(
        pair.factor_alone and pair.factor_differs for pair in pairs
    )
    health = _row_health(condition_id, cells, by_slug)
    intervals = _intervals(condition_id, cells, by_slug, factor_only and not health)
    base = cells[0].median
    ratios = [
        cell.median / base if interval is not None and base and cell.median is not None else None
        for cell, interval in zip(cells, intervals, strict=True)
    ]
    return CrossRow(
        condition_id,
        cells[0].input_id,
        cells,
        differing,
        unrecorded,
        factor_only,
        ratios,
        intervals,
        health,
    )


def _row_health(
    condition_id: str, cells: list[CampaignCell], by_slug: dict[str, Report]
) -> list[tuple[str, tuple[HealthFinding, ...]]]:
    """The campaigns in which the condition's speculation did not run as declared on the
    cell's input (or on every input), with what was observed."""
    return [
        (cell.slug, findings)
        for cell in cells
        if (
            findings := tuple(
                f
                for f in by_slug[cell.slug].health.get(condition_id, ())
                if f.input_id in (None, cell.input_id)
            )
        )
    ]


def _intervals(
    condition_id: str, cells: list[CampaignCell], by_slug: dict[str, Report], shown: bool
) -> list[tuple[float, float] | None]:
    """The bootstrap interval of each cell's median ratio to the first cell's (each
    campaign's plan's ``dispersion``), only where a ratio may be ``shown``."""
    rates = [
        generation_rates(by_slug[cell.slug].usable_speed_trials, condition_id, cell.input_id)
        for cell in cells
    ]
    return [
        median_ratio_interval(rate, rates[0], by_slug[cell.slug].plan.dispersion)
        if shown and index
        else None
        for index, (cell, rate) in enumerate(zip(cells, rates, strict=True))
    ]


@dataclass(frozen=True)
class SideBySide:
    """One campaign's median generation rate for one condition × input, in the table of a
    comparison that holds an imported campaign (never a ratio: an imported campaign
    records none of the compared fields, nor the prompt texts inputs are matched by)."""

    slug: str
    imported_from: str | None
    """The tool an imported campaign comes from (``GuideLLM 0.8.1``); ``None``: measured."""
    condition_id: str
    condition_label: dict[str, str]
    """What the campaign calls the condition, per language (``Report.condition_labels``,
    an imported campaign's declared label)."""
    input_id: str
    median: float | None
    n: int


@dataclass(frozen=True)
class CrossCampaign:
    """A comparison report: its declaration, the campaigns' reports and the rows."""

    spec: ComparisonSpec
    reports: list[Report]
    rows: list[CrossRow]
    imported: list[ImportedReport]
    """Imported campaigns the declaration names: shown side by side, never in a ratio."""
    side_by_side: list[SideBySide]
    """Every campaign's medians per condition × input, in the declaration's order, when an
    imported campaign is among them (else empty: the rows say it all)."""
    warnings: list[str]
    """Where the page states an observation instead of the declared factor's ratio, for
    ``sitegen check`` (``comparison_warnings``)."""

    def campaign_names(self, lang: str) -> dict[str, str]:
        """What the page calls each campaign (slug → name), measured ones first, in the
        declaration's order: its title in ``lang``; a title several of them share is
        followed by the campaign's place in that order, ``(2)``, never by its id."""
        titles = {r.slug: r.plan.title[lang] for r in self.reports}
        titles |= {r.slug: r.title[lang] for r in self.imported}
        shared = list(titles.values())
        return {
            slug: f"{title} ({place})" if shared.count(title) > 1 else title
            for place, (slug, title) in enumerate(titles.items(), start=1)
        }

    def condition_label(self, slug: str, condition_id: str, lang: str) -> str:
        """What campaign ``slug`` calls ``condition_id`` in ``lang``: the plan's (or the
        import declaration's) label, else a description of its settings
        (``plan.labels``), never its id."""
        reports: list[Report | ImportedReport] = [*self.reports, *self.imported]
        report = next(r for r in reports if r.slug == slug)
        return report.condition_labels[condition_id][lang]

    def factor_not_shown(self, row: CrossRow) -> list[str]:
        """Campaigns (slug) of ``row`` after the first that are not shown to differ from it
        in the declared factor: equal in it, or it is not recorded on both sides (empty
        without a factor)."""
        factor = self.spec.factor
        if factor is None:
            return []
        first = row.cells[0].setup
        return [
            cell.slug
            for cell in row.cells[1:]
            if factor in first.unrecorded
            or factor in cell.setup.unrecorded
            or cell.setup.keys[factor] == first.keys[factor]
        ]


def side_by_side(reports: list[Report], imported: list[ImportedReport]) -> list[SideBySide]:
    """Every campaign's medians per condition × input, in the declaration's order, when an
    imported campaign is among them (else empty: the rows say it all)."""
    if not imported:
        return []
    cells = []
    by_slug: dict[str, Report | ImportedReport] = {r.slug: r for r in reports}
    by_slug |= {r.slug: r for r in imported}
    for slug, report in by_slug.items():
        if isinstance(report, ImportedReport):
            cells += [
                SideBySide(
                    slug,
                    report.tool_label,
                    row.condition_id,
                    report.condition_labels[row.condition_id],
                    row.measure or row.input_id,
                    row.figures["gen_tps"].median,
                    row.figures["gen_tps"].n,
                )
                for row in report.rows
            ]
        else:
            cells += [
                SideBySide(
                    slug,
                    None,
                    row["condition_id"],
                    report.condition_labels[row["condition_id"]],
                    row["input_id"],
                    present(row["gen_tps_median"]),
                    int(row["n"]),
                )
                for row in report.summary_records
            ]
    return cells


def comparison_warnings(spec: ComparisonSpec, rows: list[CrossRow]) -> list[str]:
    """Where the page states an observation instead of the declared factor's ratio, for
    ``sitegen check``: each row that is not the factor alone (what differs, what is not
    recorded), and in a factor-only row each campaign without a median, with speculation
    that did not run as declared, or with fewer than two trials."""
    factor = spec.factor
    warnings = []
    for row in rows:
        where = f"{row.condition_id} on input {row.input_id}"
        for cell in row.cells:
            if cell.median is None:
                warnings.append(
                    f"no generation rate was measured for {where} in campaign {cell.slug}"
                )
        if factor is None:
            continue
        if not row.factor_only:
            others = [name for name in row.differing if name != factor]
            reasons = [f"differs in {', '.join(others)}"] if others else []
            if row.unrecorded:
                reasons.append(f"not recorded on both sides: {', '.join(row.unrecorded)}")
            if factor not in row.differing:
                reasons.append(f"{factor} does not differ")
            warnings.append(f"{where}: not the declared factor alone ({'; '.join(reasons)})")
        elif row.health:
            slugs = ", ".join(slug for slug, _ in row.health)
            warnings.append(f"{where}: speculation did not run as declared in {slugs}")
        else:
            warnings += [
                f"{where}: fewer than 2 trials with a generation rate in campaign "
                f"{cell.slug} or the first, so no ratio"
                for cell, ratio in zip(row.cells[1:], row.ratios[1:], strict=True)
                if ratio is None and cell.median is not None
            ]
    return warnings


def resolve_campaigns(
    spec: ComparisonSpec, reports: list[Report], imported: Sequence[ImportedReport] = ()
) -> tuple[list[Report | ImportedReport], list[str]]:
    """The reports a declaration names (by campaign directory, by a plan name that names
    one campaign, or by an imported campaign's name), and a problem for each name that
    does not resolve."""
    found: list[Report | ImportedReport] = []
    problems: list[str] = []
    for index, name in enumerate(spec.campaigns):
        matches: list[Report | ImportedReport] = [
            r for r in reports if name in (r.campaign.campaign_id, r.plan.name)
        ]
        matches += [r for r in imported if name == r.slug]
        if len(matches) == 1:
            found.append(matches[0])
        else:
            known = ", ".join(sorted([r.slug for r in reports] + [r.slug for r in imported]))
            what = "no published campaign" if not matches else "several campaigns"
            problems.append(f"campaigns.{index}: '{name}' names {what} (published: {known})")
    return found, problems


def make_comparison(
    spec: ComparisonSpec, campaigns: list[Report | ImportedReport]
) -> CrossCampaign:
    """The comparison of ``campaigns``, computed whole: measured ones matched row by row,
    imported ones beside them, and the warnings ``sitegen check`` prints."""
    measured = [c for c in campaigns if isinstance(c, Report)]
    imported = [c for c in campaigns if isinstance(c, ImportedReport)]
    rows = compare_campaigns(spec, measured)
    return CrossCampaign(
        spec,
        measured,
        rows,
        imported,
        side_by_side(measured, imported),
        comparison_warnings(spec, rows),
    )


NOTHING_TO_COMPARE = (
    "nothing to compare: no condition × input (same condition id and prompt text) was "
    "measured by two or more of the campaigns"
)
"""Why a comparison without a row is refused."""
