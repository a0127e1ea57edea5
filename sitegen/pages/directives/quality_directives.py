"""Directives of the quality page: the pre-registered result, outcomes, pairs,
sensitivity, document items and post-hoc analyses."""

from __future__ import annotations

import jinja2
from markupsafe import Markup

from sitegen.pages.directives.common import cells, render_partial
from sitegen.pages.directives.page_context import PageContext, directive
from sitegen.pages.published_figures import FigureCell
from sitegen.quality.suites import ALL_DOMAINS


def require_quality(ctx: PageContext):
    quality = ctx.require_report().quality
    if quality is None:
        raise jinja2.TemplateRuntimeError("this report has no quality evaluation")
    return quality


def primary_cells(ctx: PageContext) -> dict[str, FigureCell] | None:
    """The primary accuracy result's figures as printed (``quality/…``: the difference
    and its lower bound, plain and signed, and the margin, in percentage points; each
    cell's value the proportion behind it), by name; ``None`` without a primary result."""
    quality = ctx.require_report().quality
    primary = quality.primary if quality is not None else None
    if primary is None:
        return None
    values = {
        "difference": primary.difference,
        "difference_signed": primary.difference,
        "lower_bound": primary.lower_bound,
        "lower_bound_signed": primary.lower_bound,
        "margin": primary.margin,
    }
    return cells(ctx, "quality", values)


@directive("quality_result")
def quality_result(ctx: PageContext) -> Markup:
    """The pre-registered non-inferiority result with its margin, counts and caveats."""
    report = ctx.require_report()
    quality = require_quality(ctx)
    return render_partial(
        ctx,
        "quality_result.html",
        report=report,
        quality=quality,
        figures=primary_cells(ctx),
        outcomes=quality.outcomes.set_index("factor").to_dict("index"),
    )


@directive("quality_outcomes")
def quality_outcomes(ctx: PageContext, documents: bool = False) -> Markup:
    """Outcome counts per factor: correct beside length-capped, not reached … (C-TRUNC)."""
    quality = require_quality(ctx)
    frame = quality.document_outcomes if documents else quality.outcomes
    limits = [
        limit
        for limit in ctx.require_report().quality_limits
        if (limit.task_id is not None) == documents
    ]
    return render_partial(
        ctx, "quality_outcomes.html", rows=frame.to_dict("records"), limits=limits
    )


@directive("quality_pairs")
def quality_pairs(ctx: PageContext, by: str | None = None) -> Markup:
    """Pair table (both / off only / on only / neither), overall or per domain."""
    quality = require_quality(ctx)
    frame = quality.pairs_by_domain if by == "domain" else quality.pairs
    labels = {d.domain_id: d.label[ctx.lang] for d in ALL_DOMAINS}
    return render_partial(
        ctx,
        "quality_pairs.html",
        rows=frame.to_dict("records"),
        by=by,
        labels=labels,
        outcomes=quality.outcomes.set_index("factor").to_dict("index"),
    )


@directive("quality_sensitivity")
def quality_sensitivity(ctx: PageContext) -> Markup:
    return render_partial(ctx, "quality_sensitivity.html", quality=require_quality(ctx))


@directive("document_items")
def document_items(ctx: PageContext) -> Markup:
    """Per-item pair table of the document tasks, with pass counts and outcomes."""
    quality = require_quality(ctx)
    return render_partial(
        ctx,
        "document_items.html",
        rows=quality.document_pairs_by_item.to_dict("records"),
        totals=quality.document_pairs.to_dict("records"),
        outcomes=quality.document_outcomes.set_index("factor").to_dict("index")
        if len(quality.document_outcomes)
        else {},
        limits=[
            limit for limit in ctx.require_report().quality_limits if limit.task_id is not None
        ],
    )


@directive("quality_post_hoc")
def quality_post_hoc(ctx: PageContext) -> Markup:
    """Post-hoc analyses beside (never instead of) the primary result (C-POSTHOC)."""
    require_quality(ctx)
    return render_partial(ctx, "post_hoc.html", results=ctx.require_report().post_hoc)
