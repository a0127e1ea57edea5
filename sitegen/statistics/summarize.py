"""The summarize stage: one campaign's statistics, measured or imported."""

from __future__ import annotations

from sitegen.core.price_list import PriceList
from sitegen.records.campaign import AnyCampaign
from sitegen.statistics.imported_report import ImportedReport, make_imported_report
from sitegen.statistics.report import Report, make_report

AnyReport = Report | ImportedReport
"""A campaign's statistics, of either kind (``report.campaign.imported`` tells which)."""


def summarize(campaign: AnyCampaign, prices: PriceList | None = None) -> AnyReport:
    """The statistics of ``campaign`` (redacted: the build summarizes what it publishes);
    ``prices``: the project's declared device prices (a measured campaign's costs)."""
    if campaign.imported:
        return make_imported_report(campaign)
    return make_report(campaign, prices)
