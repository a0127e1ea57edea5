"""``sitegen check``: every validation of the build, without writing a site.

Records and annotations are validated with the data rules, every page is rendered in
memory and checked against the caveat rules and for ja/en figure parity.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from sitegen.pages.i18n import Catalog, load_catalogs
from sitegen.pages.render import render_docs
from sitegen.pages.report import Report, make_report
from sitegen.validation.load import load_campaigns


@dataclass(frozen=True)
class CheckedSite:
    """Everything a build writes, validated and held in memory."""

    reports: list[Report]
    catalogs: dict[str, Catalog]
    docs: dict[str, bytes]

    @property
    def records(self) -> int:
        return sum(len(r.campaign.records) for r in self.reports)


def check_site(data_dir: Path, project_dir: Path) -> CheckedSite:
    """Raise ``DataError`` listing every problem; return the rendered pages otherwise."""
    campaigns = load_campaigns(data_dir)
    catalogs = load_catalogs(project_dir / "theme")
    reports = [make_report(campaign) for campaign in campaigns]
    return CheckedSite(reports, catalogs, render_docs(reports, catalogs, project_dir))
