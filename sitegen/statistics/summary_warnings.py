"""The statistics stage's warnings: what a computed summary or comparison shows correctly,
but rarely as its author meant (``validation.warnings`` has the project's; ``sitegen
check`` gathers both). Each is an ``Issue`` of severity ``warning``; ``sitegen check``
prints them and ``--strict`` fails on them."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from sitegen.core.errors import Issue

if TYPE_CHECKING:
    from sitegen.statistics.comparison import CrossCampaign
    from sitegen.statistics.report import Report


def warning(location: str, message: str, topic: str) -> Issue:
    """An ``Issue`` of severity ``warning`` about ``location``."""
    return Issue(location, message, topic, "warning")


def summary_warnings(
    reports: Sequence[Report], comparisons: Sequence[CrossCampaign]
) -> list[Issue]:
    """Each report's summary, registration and observations, each comparison's rows."""
    return [issue for report in reports for issue in report_warnings(report)] + [
        warning(f"comparison {comparison.spec.id}", text, "comparison")
        for comparison in comparisons
        for text in comparison.warnings
    ]


def report_warnings(report: Report) -> list[Issue]:
    """A summary without a factor-only comparison (medians but no ratio, rarely what the
    plan meant), a registration taken from the first record, and the report's observations."""
    where = f"campaign {report.slug}"
    issues = []
    if report.headline_warning:
        issues.append(
            warning(
                where,
                "the summary carries no comparison (no factor-only comparison with both "
                f"medians): {report.headline_warning}",
                "headline",
            )
        )
    if not report.campaign.registration_recorded:
        issues.append(
            warning(
                where,
                "written before manifest.json recorded the registration (registered_at); its "
                "registration is taken as the first record's start, as its method page states",
                "C-PLANNED",
            )
        )
    issues += [warning(where, text, "observation") for text in report.observation_warnings]
    return issues
