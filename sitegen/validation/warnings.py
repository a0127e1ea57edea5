"""Warnings: what a site publishes correctly, but rarely as its author meant. Each is an
``Issue`` of severity ``warning`` with the rule or topic it concerns; ``sitegen check``
prints them after its verdict and ``sitegen check --strict`` fails on them."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from sitegen.core.errors import Issue

if TYPE_CHECKING:
    from sitegen.statistics.comparison import CrossCampaign
    from sitegen.statistics.report import Report


def warning(location: str, message: str, topic: str) -> Issue:
    return Issue(location, message, topic, "warning")


def site_warnings(
    project_dir: Path, reports: Sequence[Report], comparisons: Sequence[CrossCampaign]
) -> list[Issue]:
    """Every warning of a rendered site: the project's key and palette, each report's
    summary, registration and observations, each comparison's rows."""
    return (
        project_warnings(project_dir)
        + [issue for report in reports for issue in report_warnings(report)]
        + [
            warning(f"comparison {comparison.spec.id}", text, "comparison")
            for comparison in comparisons
            for text in comparison.warnings
        ]
    )


def project_warnings(project_dir: Path) -> list[Issue]:
    """An undeclared signing key, and a palette whose text fails WCAG AA contrast."""
    from sitegen.core.signing import PUBLIC_KEY_FILE, undeclared_key
    from sitegen.pages.contrast import palette_warning
    from sitegen.pages.mkdocs import read_site_settings

    issues = []
    if declaration := undeclared_key(project_dir):
        issues.append(
            warning(
                str(project_dir / PUBLIC_KEY_FILE),
                f"not declared in {project_dir / 'mkdocs.yml'}: add `{declaration}` to it, so "
                "that a missing or replaced key file is refused",
                "C-SIGNED",
            )
        )
    palette = read_site_settings(project_dir).palette
    if palette and (text := palette_warning(palette.primary, palette.accent)):
        location, _, message = text.partition(": ")  # "mkdocs.yml → palette: …"
        issues.append(warning(location, message, "contrast"))
    return issues


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
