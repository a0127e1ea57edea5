"""Everything one report page needs, computed once per campaign (pure)."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import pandas as pd

from sitegen.plan.items import plan_items
from sitegen.plan.models import Plan
from sitegen.statistics.quality_records import QualitySummary, score_quality, summarize_quality
from sitegen.statistics.speed import (
    Comparison,
    compare_conditions,
    excluded_counts,
    measured,
    speed_summary,
    trials_frame,
)
from sitegen.validation.campaign import Campaign
from sitegen.validation.rules import campaign_registered_at


@dataclass(frozen=True)
class Report:
    """One campaign's statistics, ready to render in any language."""

    campaign: Campaign
    trials: pd.DataFrame
    """Every record as a row."""
    summary: pd.DataFrame
    """Per condition × input speed summary (measured, ok trials)."""
    comparisons: list[Comparison]
    excluded: dict[str, int]
    quality: QualitySummary | None
    """Paired quality results (``None`` when the plan has no quality evaluation)."""

    @property
    def pages(self) -> tuple[str, ...]:
        """This report's pages in navigation order (speed and quality only when measured)."""
        pages = ["index"]
        if self.plan.inputs:
            pages.append("speed")
        if self.quality is not None:
            pages.append("quality")
        return (*pages, "examples", "method", "data")

    @property
    def plan(self) -> Plan:
        return self.campaign.plan

    @property
    def slug(self) -> str:
        return self.campaign.campaign_id

    @cached_property
    def measured_trials(self) -> pd.DataFrame:
        """Measured, successful trials of the speed inputs (quality answers have their page)."""
        speed_ids = {i.id for i in self.plan.inputs}
        trials = measured(self.trials)
        return trials[trials["input_id"].isin(speed_ids)]

    @property
    def hardware(self) -> str:
        """Devices as recorded by the first record with devices, e.g. ``cpu: AMD EPYC``."""
        for record in self.campaign.records:
            devices = record.provenance.host.devices
            if devices:
                names = sorted({d.name for d in devices})
                return f"{len(devices)}× " + " / ".join(names)
        return "-"

    @property
    def registered_at(self) -> str:
        """When the plan was registered: before the first record started (UTC)."""
        registered = campaign_registered_at(self.campaign)
        return registered.strftime("%Y-%m-%d %H:%M UTC") if registered else "-"

    @property
    def uses_ngram(self) -> bool:
        """Whether a condition uses n-gram self-speculation (never to be called MTP)."""
        return any(c.speculative.mode.startswith("ngram") for c in self.plan.conditions)

    def condition_label(self, condition_id: str) -> str:
        condition = next(c for c in self.plan.conditions if c.id == condition_id)
        return f"{condition.id}: {condition.speculative.label}"


def make_report(campaign: Campaign) -> Report:
    items = plan_items(campaign.plan)
    speed_ids = {i for i, item in items.items() if item.kind == "speed"}
    frame = trials_frame(campaign.records)
    summary = speed_summary(frame[frame["input_id"].isin(speed_ids)])
    return Report(
        campaign=campaign,
        trials=frame,
        summary=summary,
        comparisons=compare_conditions(campaign.plan, summary),
        excluded=excluded_counts(frame),
        quality=summarize_quality(
            campaign.plan, score_quality(campaign.plan, items, campaign.records)
        )
        if campaign.plan.quality
        else None,
    )
