"""The report checks of every rule (the catalog is ``rules.yaml``): they see every rendered
page of one report in one language beside the report itself, and hold the pages to what
the records show (declared targets, an unhashed model, speculation's health, excluded
counts, the review declared).

Validation sits below the statistics that compute a report: the checks read it as a
``CheckedReport``."""

from __future__ import annotations

from sitegen.core.errors import Issue
from sitegen.plan.slo_targets import slo_key
from sitegen.validation.checked_report import CheckedReport
from sitegen.validation.page_facts import PageFacts
from sitegen.validation.rules import check, violation


@check("C-LOAD", "report")
def _goodput_against_declared_targets(
    pages: dict[str, PageFacts], paths: dict[str, str], report: CheckedReport
) -> list[Issue]:
    declared = slo_key(report.plan.slo)
    issues = []
    for name, facts in pages.items():
        for claim in facts.claims_of("goodput"):
            shown = claim.attrs.get("data-slo", "")
            if not declared or shown != declared:
                issues.append(
                    violation(
                        "C-LOAD",
                        f"{paths[name]} (claim 'goodput')",
                        f"goodput against targets '{shown}', the plan declares "
                        f"'{declared or 'none'}' (slo)",
                    )
                )
    return issues


@check("C-MODELID", "report")
def _unhashed_model_stated(
    pages: dict[str, PageFacts], paths: dict[str, str], report: CheckedReport
) -> list[Issue]:
    if not report.unhashed_model or "index" not in pages:
        return []
    if "C-MODELID" in pages["index"].caveats:
        return []
    return [
        violation(
            "C-MODELID",
            paths["index"],
            "the model could not be hashed and the summary page does not say so",
        )
    ]


@check("C-SPECHEALTH", "report")
def _health_as_observed(
    pages: dict[str, PageFacts], paths: dict[str, str], report: CheckedReport
) -> list[Issue]:
    unhealthy = {(c.treatment, c.input_id) for c in report.comparisons if c.health}
    issues = []
    for name, facts in pages.items():
        for claim_name in ("speed-ratio", "sweep-ratio"):
            for claim in facts.claims_of(claim_name):
                pair = (claim.attrs.get("data-treatment"), claim.attrs.get("data-input"))
                if pair in unhealthy:
                    issues.append(
                        violation(
                            "C-SPECHEALTH",
                            f"{paths[name]} (claim '{claim_name}', {pair[0]} on {pair[1]})",
                            "the records show this condition's speculation did not run as "
                            "declared; no ratio may be shown as its effect",
                        )
                    )
    return issues


@check("C-EXCLUDED", "report")
def _excluded_counts_match(
    pages: dict[str, PageFacts], paths: dict[str, str], report: CheckedReport
) -> list[Issue]:
    issues = []
    counted = ("warmup", "failed", "planned", "missing")
    expected = {k: report.excluded[k] for k in counted}
    for name, facts in pages.items():
        for claim in facts.claims_of("excluded"):
            shown = {k: int(claim.attrs.get(f"data-{k}", -1)) for k in counted}
            if shown != expected:
                issues.append(
                    violation(
                        "C-EXCLUDED", paths[name], f"shows {shown}, the records have {expected}"
                    )
                )
    return issues


@check("C-REVIEW", "report")
def _review_as_declared(
    pages: dict[str, PageFacts], paths: dict[str, str], report: CheckedReport
) -> list[Issue]:
    declared = report.campaign.annotations.review
    return [
        violation(
            "C-REVIEW",
            f"{paths[name]} (claim 'review')",
            f"states review '{claim.attrs.get('data-review', '?')}', annotations.yaml → review "
            f"declares '{declared}'",
        )
        for name, facts in pages.items()
        for claim in facts.claims_of("review")
        if claim.attrs.get("data-review") != declared
    ]
