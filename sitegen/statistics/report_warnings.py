"""Where a measured report states an observation instead of a figure, in words for
``sitegen check`` (pure): why the summary carries no comparison, and each missing median,
speculation that did not run as declared, ratio without its interval and threshold
without trials.

They are computed with the report, from the same comparisons the pages show, so the
check and the pages cannot disagree about what is missing.
"""

from __future__ import annotations

from sitegen.core.formatting import gib, percent
from sitegen.plan.plan_models import Plan
from sitegen.statistics.condition_facts import ThresholdResult
from sitegen.statistics.headlines import HeadlineRow
from sitegen.statistics.health import HealthFinding
from sitegen.statistics.speed import Comparison


def headline_warning(
    plan: Plan, headline: list[HeadlineRow], comparisons: list[Comparison]
) -> str | None:
    """Why the summary carries no comparison (no factor-only comparison with both
    medians), for ``sitegen check``; ``None`` when it carries one, or when the report
    has no speed inputs (a quality evaluation only)."""
    if not plan.inputs:
        return None
    if any(r.comparison.ratio is not None for r in headline):
        return None
    if len(plan.conditions) < 2:
        return "the plan has one condition: nothing to compare"
    configurations: dict[tuple[str, str, tuple[str, ...], tuple[str, ...]], list[str]] = {}
    missing: list[str] = []
    inactive: dict[str, list[str]] = {}
    single: list[str] = []
    for c in comparisons:
        # A side without trials first: its records show no engine or devices, so the
        # observed setups differ too, and that is not the reason.
        if not c.has_medians:
            for condition, median in (
                (c.baseline, c.baseline_median),
                (c.treatment, c.treatment_median),
            ):
                if median is None and f"{condition} on {c.input_id}" not in missing:
                    missing.append(f"{condition} on {c.input_id}")
        elif not c.is_factor_only:
            key = (c.treatment, c.baseline, c.differing_fields, c.unrecorded_fields)
            configurations.setdefault(key, []).append(c.input_id)
        elif c.health:
            texts = inactive.setdefault(c.treatment, [])
            texts += [t for f in c.health if (t := _health_text(f)) not in texts]
        elif c.ratio is None:
            single.append(f"{c.treatment} vs {c.baseline} on {c.input_id}")
    reasons = [
        f"configuration comparison {treatment} vs {baseline} on input(s) "
        f"{', '.join(inputs)}: {_setup_text(fields, unrecorded)}, so not the declared "
        f"factor ({plan.factor}) alone"
        for (treatment, baseline, fields, unrecorded), inputs in configurations.items()
    ]
    reasons += [
        f"speculation of {condition} did not run as declared ({', '.join(observed)}; C-SPECHEALTH)"
        for condition, observed in inactive.items()
    ]
    if single:
        reasons.append(f"fewer than 2 trials on a side, no interval: {', '.join(single)}")
    if missing:
        reasons.append(f"no trials with a generation rate: {', '.join(missing)}")
    return "; ".join(reasons) or "no trials"


def observation_warnings(
    comparisons: list[Comparison], thresholds: list[ThresholdResult]
) -> list[str]:
    """Every place a page states an observation where a figure might be expected, for
    ``sitegen check`` (warnings, not errors), each naming the condition and input: a
    missing median, speculation that did not run as declared (or reported no draft
    counts), a factor-only ratio without its interval (fewer than two trials a side),
    and a threshold without usable trials."""
    warnings: list[str] = []

    def add(text: str) -> None:
        if text not in warnings:
            warnings.append(text)

    for c in comparisons:
        for condition, median in (
            (c.baseline, c.baseline_median),
            (c.treatment, c.treatment_median),
        ):
            if median is None:
                add(f"no generation rate was measured for {condition} on input {c.input_id}")
        for finding in c.health:
            add(
                f"speculation of {c.treatment} on input {c.input_id} did not run as "
                f"declared: {_health_text(finding)} (no ratio shown)"
            )
        if c.is_speculation_effect and c.has_medians and c.ratio_interval is None:
            add(
                f"{c.treatment} vs {c.baseline} on input {c.input_id}: fewer than 2 "
                "trials with a generation rate on a side, so no ratio (medians only)"
            )
    for row in thresholds:
        if row.n == 0:
            claim = row.claim
            add(
                f"threshold {claim.metric} above {claim.above!r} for {claim.condition_id} on "
                f"input {claim.input_id or 'all'}: no usable trials, nothing observed"
            )
    return warnings


def _setup_text(differing: tuple[str, ...], unrecorded: tuple[str, ...]) -> str:
    parts = [f"they differ in {', '.join(differing)}"] if differing else []
    if unrecorded:
        parts.append(f"not recorded on both sides: {', '.join(unrecorded)}")
    return "; ".join(parts)


def _health_text(finding: HealthFinding) -> str:
    on = f" on {finding.input_id}" if finding.input_id else ""
    if finding.kind == "no-counts":
        return f"its engine reported no draft counts{on}"
    if finding.kind == "no-drafts":
        return f"0 drafts proposed in {finding.trials} trials{on}"
    if finding.kind == "low-acceptance":
        observed, limit = percent(finding.observed), percent(finding.limit)
        return f"acceptance {observed}% under the declared {limit}%{on}"
    return (
        f"peak memory {gib(finding.observed)} GiB on {finding.device} over the declared "
        f"{gib(finding.limit)} GiB"
    )
