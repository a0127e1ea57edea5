"""Directives of the examples page: curated and drawn examples, who reviewed the
answers, and threshold claims."""

from __future__ import annotations

from markupsafe import Markup

from sitegen.pages.directives.common import render_partial
from sitegen.pages.directives.page_context import PageContext, directive


@directive("examples")
def examples(ctx: PageContext) -> Markup:
    """Curated examples (with reason and notice), then a seeded random draw (C-EXAMPLE)."""
    report = ctx.require_report()
    return render_partial(
        ctx,
        "examples.html",
        examples=report.examples,
        labels=ctx.labels(report),
        draw=report.plan.examples,
        annotations=report.campaign.annotations,
    )


@directive("review")
def review(ctx: PageContext) -> Markup:
    """Who reviewed the full answers (C-REVIEW)."""
    return render_partial(ctx, "review.html", annotations=ctx.require_report().campaign.annotations)


@directive("thresholds")
def thresholds(ctx: PageContext) -> Markup:
    """Threshold claims as observed in k of n trials (C-THRESHOLD)."""
    report = ctx.require_report()
    return render_partial(
        ctx, "thresholds.html", report=report, rows=report.thresholds, labels=ctx.labels(report)
    )
