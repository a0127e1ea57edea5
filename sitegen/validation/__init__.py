"""Validation: records and annotations before statistics, rendered pages after.

``validate_campaigns`` runs every campaign check; ``check_report_pages`` runs the
generic caveat requirements of the catalog (claims and pages) and every page and report
check over one report's rendered pages; ``check_language_parity`` compares ja and en.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from sitegen.core.errors import Issue
from sitegen.records.campaign import AnyCampaign
from sitegen.validation.checked_report import CheckedReport
from sitegen.validation.page_facts import PageFacts
from sitegen.validation.rules import capped, load_rules, registered_checks, violation

# The modules of rule-specific checks register them when imported: here, once, so that
# whatever imports the validation package finds every check registered (in this order).
from sitegen.validation import campaign_checks, page_checks, report_checks  # noqa: E402, F401  isort: skip
from sitegen.validation import figure_checks, host_labels, plausibility  # noqa: E402, F401  isort: skip

"""A check that finds the same problem in every record reports the first few and counts
the rest, so the one real cause stays readable."""


def validate_campaigns(campaigns: Sequence[AnyCampaign]) -> list[Issue]:
    """Every campaign check of every rule, each campaign by the checks of its kind
    (measured or imported)."""
    load_rules()
    return [
        issue
        for campaign in campaigns
        for registered in registered_checks("campaign")
        if registered.imported == campaign.imported
        for issue in capped(registered.function(campaign))
    ]


def check_project(project_dir: Path) -> list[Issue]:
    """Every project check over the project's own files (catalogs, comparisons, mkdocs.yml)."""
    return [issue for c in registered_checks("project") for issue in c.function(project_dir)]


def check_prose(template: str, prose: str) -> list[Issue]:
    """Every prose check over the visible text of a content page's rendered prose
    (directive outputs taken out)."""
    return [issue for c in registered_checks("prose") for issue in c.function(template, prose)]


def check_page(path: str, facts: PageFacts) -> list[Issue]:
    """Every claim carries the caveats the catalog requires, and every page check holds."""
    issues = []
    rules = load_rules()
    for claim in facts.claims:
        have = facts.effective_caveats(claim)
        for r in rules:
            if claim.kind in r.claims and r.id not in have:
                issues.append(
                    violation(
                        r.id,
                        f"{path} (claim '{claim.kind}')",
                        f"missing the {r.id} caveat ({r.title.en})",
                    )
                )
    for registered in registered_checks("page"):
        issues.extend(registered.function(path, facts))
    return issues


def check_report_pages(
    pages: dict[str, PageFacts], paths: dict[str, str], report: CheckedReport
) -> list[Issue]:
    """One report in one language: each page's checks, the caveats each page must show
    (catalog ``pages``) and every report check. ``pages`` maps a page name (``index``,
    ``method`` …) to its facts."""
    issues = [issue for name, facts in pages.items() for issue in check_page(paths[name], facts)]
    for r in load_rules():
        for page in r.pages:
            if page in pages and r.id not in pages[page].caveats:
                issues.append(
                    violation(
                        r.id,
                        paths[page],
                        f"the page does not show the {r.id} caveat ({r.title.en})",
                    )
                )
    for registered in registered_checks("report"):
        issues.extend(registered.function(pages, paths, report))
    return issues


def check_language_parity(path_ja: str, ja: PageFacts, en: PageFacts) -> list[Issue]:
    """The ja and en versions of a page carry the same figures."""
    in_ja, in_en = Counter(ja.figures()), Counter(en.figures())
    if in_ja == in_en:
        return []
    # Counts, not sets: the same figure shown more often in one language is a difference.
    more_ja = _counted(in_ja - in_en)
    more_en = _counted(in_en - in_ja)
    return [
        Issue(
            path_ja,
            f"ja and en pages carry different figures (more in ja: {more_ja}; more in en: "
            f"{more_en})",
            "i18n",
        )
    ]


def _counted(extra: Counter[str], limit: int = 5) -> str:
    """``'50' ×2, '3' ×1`` for the first ``limit`` figures of ``extra``; ``none`` if empty."""
    shown = [f"'{figure}' ×{count}" for figure, count in sorted(extra.items())[:limit]]
    return ", ".join(shown) + (" …" if len(extra) > limit else "") if shown else "none"
