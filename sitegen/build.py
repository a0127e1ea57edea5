"""``sitegen build``: records → validation → statistics → pages.

Everything is read and checked first, every page is rendered in memory, and only
then is the site written (to a staging directory swapped in when complete), so a
failed build leaves the previous site as it was.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from sitegen.pages.i18n import load_catalogs
from sitegen.pages.render import render_docs
from sitegen.pages.report import make_report
from sitegen.pages.site import write_site
from sitegen.validation.load import load_campaigns


@dataclass(frozen=True)
class BuildResult:
    site_dir: Path
    campaigns: int
    records: int


def build_site(data_dir: Path, site_dir: Path, project_dir: Path) -> BuildResult:
    campaigns = load_campaigns(data_dir)
    catalogs = load_catalogs(project_dir / "theme")
    reports = [make_report(campaign) for campaign in campaigns]
    docs = render_docs(reports, catalogs, project_dir)
    latest = max(
        (datetime.fromisoformat(r.started_at) for c in campaigns for r in c.records), default=None
    )
    write_site(
        docs, reports, catalogs, project_dir, site_dir, int(latest.timestamp()) if latest else 0
    )
    return BuildResult(site_dir, len(campaigns), sum(len(c.records) for c in campaigns))
