"""The project, prose and page checks of every rule (the catalog is ``rules.yaml``):
project checks read a project file the pages' claims rest on (the price list), prose
checks see the visible text an author wrote on a content page, page checks one rendered
page's claims (``PageFacts``)."""

from __future__ import annotations

import re
from pathlib import Path

from sitegen.core.errors import Issue
from sitegen.core.price_list import read_price_list
from sitegen.records.inclusion import MIN_VALUES
from sitegen.validation.page_facts import PageFacts
from sitegen.validation.rules import check, violation

# --- project checks --------------------------------------------------------------------


@check("C-COST", "project")
def _prices_declared_whole(project_dir: Path) -> list[Issue]:
    """The price list every cost comes from: a bad entry (a price that is not a finite
    positive number, no source, a device priced twice …) stops the build, named by file,
    entry and field, rather than leaving its devices without a cost."""
    _, issues = read_price_list(project_dir)
    return [violation("C-COST", issue.location, issue.message) for issue in issues]


# --- prose checks ------------------------------------------------------------------------

REVIEW_CLAIM = re.compile(
    r"\b(?:review(?:ed|er|ers|ing|s)?|proof-?read|hand-checked|human-checked|vetted)\b"
    r"|checked by (?:a |an |our )?(?:human|person|people|expert|team)"
    r"|レビュー|目視|人手|人の目|査読|検収|人間が|専門家が",
    re.IGNORECASE,
)
"""Words that claim someone looked at the answers: that claim is the review directive's,
made from the declaration in annotations.yaml."""


@check("C-REVIEW", "prose")
def _review_claims_only_from_the_declaration(template: str, prose: str) -> list[Issue]:
    found = sorted({m.group().lower() for m in REVIEW_CLAIM.finditer(prose)})
    if not found:
        return []
    return [
        violation(
            "C-REVIEW",
            f"content/{template} → prose",
            f"a claim about review written by hand ({', '.join(repr(f) for f in found)}); "
            "the review() directive states it from annotations.yaml",
        )
    ]


# --- page checks -------------------------------------------------------------------------


@check("C-CONFDIFF", "page")
def _ratios_only_for_the_factor(path: str, facts: PageFacts) -> list[Issue]:
    issues = []
    for claim in facts.claims_of("speed-ratio"):
        if claim.attrs.get("data-factor-only") != "true":
            issues.append(
                violation(
                    "C-CONFDIFF",
                    f"{path} (claim 'speed-ratio')",
                    "a ratio between conditions that differ in more than the declared factor",
                )
            )
    for claim in facts.claims_of("completion-time"):
        if "data-time-ratio" in claim.attrs and claim.attrs.get("data-factor-only") != "true":
            issues.append(
                violation(
                    "C-CONFDIFF",
                    f"{path} (completion_time('{claim.attrs.get('data-input', '?')}', ratio=True))",
                    "a time ratio between conditions that differ in more than the declared factor",
                )
            )
    for claim in facts.claims_of("configuration-comparison"):
        named = claim.attrs.get("data-differing") or claim.attrs.get("data-unrecorded")
        if not named or "data-ratio" in claim.attrs:
            issues.append(
                violation(
                    "C-CONFDIFF",
                    f"{path} (claim 'configuration-comparison')",
                    "a configuration comparison must list the differing or unrecorded fields "
                    "and print no ratio",
                )
            )
    return issues


@check("C-SPECHEALTH", "page")
def _ratios_only_for_running_speculation(path: str, facts: PageFacts) -> list[Issue]:
    return [
        violation(
            "C-SPECHEALTH",
            f"{path} (claim '{claim.kind}', {claim.attrs.get('data-treatment', '?')})",
            "a ratio shown as a speculation effect for a condition whose speculation did not "
            "run as declared",
        )
        for name in ("speed-ratio", "sweep-ratio")
        for claim in facts.claims_of(name)
        if claim.attrs.get("data-healthy") != "true"
    ]


@check("C-TAIL", "page")
def _percentiles_from_enough_values(path: str, facts: PageFacts) -> list[Issue]:
    issues = []
    for claim in facts.claims_of("percentile"):
        p, n = claim.attrs.get("data-p", ""), claim.attrs.get("data-n", "")
        needed = MIN_VALUES.get(int(p)) if p.isdigit() else None
        if needed is None or not n.isdigit() or int(n) < needed:
            issues.append(
                violation(
                    "C-TAIL",
                    f"{path} (claim 'percentile', P{p or '?'})",
                    f"a percentile from {n or 'an unknown number of'} value(s), fewer than "
                    f"the {needed or '?'} it needs",
                )
            )
    return issues


_INTERVAL = r"[0-9][0-9,]*(?:\.[0-9]+)?–[0-9][0-9,]*(?:\.[0-9]+)?"
_INTERVALS = re.compile(rf"{_INTERVAL}(?: {_INTERVAL})*")
"""``data-ci``: one or more ``low–high`` intervals, space-separated; nothing else (not
``none``, not empty) is an interval."""


@check("C-SPREAD", "page")
def _ratios_with_interval(path: str, facts: PageFacts) -> list[Issue]:
    return [
        violation(
            "C-SPREAD",
            f"{path} (claim '{claim.kind}', {claim.attrs.get('data-treatment', '?')})",
            f"a ratio without its bootstrap interval (data-ci={claim.attrs.get('data-ci')!r})",
        )
        for name in ("speed-ratio", "sweep-ratio")
        for claim in facts.claims_of(name)
        if not _INTERVALS.fullmatch(claim.attrs.get("data-ci") or "")
    ]


@check("C-LENGTH", "page")
def _no_time_ratio_across_lengths(path: str, facts: PageFacts) -> list[Issue]:
    return [
        violation(
            "C-LENGTH",
            f"{path} (completion_time('{claim.attrs.get('data-input', '?')}', ratio=True))",
            f"output lengths differ ({claim.attrs.get('data-lengths', '?')} tokens); a "
            "completion-time ratio would present shorter answers as speed",
        )
        for claim in facts.claims_of("completion-time")
        if "data-time-ratio" in claim.attrs and claim.attrs.get("data-lengths-differ") == "true"
    ]


@check("C-POSTHOC", "page")
def _post_hoc_beside_primary(path: str, facts: PageFacts) -> list[Issue]:
    if facts.claims_of("post-hoc") and not any(
        c.attrs.get("data-primary") == "true" for c in facts.claims_of("accuracy")
    ):
        return [
            violation(
                "C-POSTHOC",
                path,
                "a post-hoc result is shown without the pre-registered primary result",
            )
        ]
    return []
