"""Directives of a comparison page: several campaigns side by side."""

from __future__ import annotations

import pandas as pd
from markupsafe import Markup

from sitegen.pages.directives.common import markdown_inline_text, render_partial
from sitegen.pages.directives.page_context import PageContext, directive
from sitegen.statistics.comparison import CrossCampaign


@directive("comparison_title")
def comparison_title(ctx: PageContext) -> Markup:
    """The comparison's title as plain text inside Markdown (see ``report_title``)."""
    return markdown_inline_text(ctx.require_comparison().spec.title[ctx.lang])


@directive("comparison_table")
def comparison_table(ctx: PageContext) -> Markup:
    """The campaigns side by side: per condition × input, each campaign's median and the
    fields that differ; a ratio only for a factor-only difference (C-CONFDIFF)."""
    comparison = ctx.require_comparison()
    return render_partial(
        ctx,
        "comparison.html",
        comparison=comparison,
        titles=comparison.campaign_names(ctx.lang),
        reports={r.slug: r for r in comparison.reports},
        extras=comparison_extras(comparison),
    )


def comparison_extras(comparison: CrossCampaign) -> dict[tuple[str, str, str], dict]:
    """Per campaign, condition and input: what a comparison shows beside the generation
    rate (TTFT median, draft acceptance, the condition's peak memory)."""
    extras: dict[tuple[str, str, str], dict] = {}
    for report in comparison.reports:
        memory = {o.condition_id: o.peak_memory_mib for o in report.condition_overview}
        for row in report.summary_records:
            key = (report.slug, row["condition_id"], row["input_id"])
            extras[key] = {
                name: None if pd.isna(row.get(name)) else row.get(name)
                for name in ("ttft_s_median", "acceptance", "draft_proposed")
            } | {
                "speculative_mode": row.get("speculative_mode"),
                "peak_memory_mib": memory.get(row["condition_id"]),
            }
    return extras
