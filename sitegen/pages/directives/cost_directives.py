"""Directive of the speed page's cost section: per condition and input, the throughput at
the plan's concurrency and the cost per million output tokens beside the declared price
it comes from and its definition (``statistics.token_cost``; C-COST)."""

from __future__ import annotations

from markupsafe import Markup

from sitegen.core.formatting import count
from sitegen.pages.directives.common import cells, render_partial
from sitegen.pages.directives.page_context import PageContext, directive
from sitegen.pages.published_figures import FigureCell
from sitegen.statistics.token_cost import SECONDS_PER_HOUR, TOKENS_PER_UNIT, TokenCost


def cost_cells(ctx: PageContext, cost: TokenCost) -> dict[str, FigureCell]:
    """A computed cost's figures as printed (``cost/<condition>/<input>/…``); none where
    it is refused (no figure is shown then, only the reason)."""
    if cost.cost_per_million is None:
        return {}
    values = {
        "throughput": cost.throughput_tps,
        "per_hour": cost.per_hour,
        "cost": cost.cost_per_million,
    }
    return cells(ctx, f"cost/{cost.condition_id}/{cost.input_id}", values)


@directive("cost_table")
def cost_table(ctx: PageContext) -> Markup:
    """Each condition × speed input's cost per million output tokens with the declared
    price (per device-hour, devices used, source, date) and the definition, or why it has
    none; without a price list, the sentence that no price is declared (never a default
    price)."""
    report = ctx.require_report()
    costs = report.token_costs
    return render_partial(
        ctx,
        "cost_table.html",
        prices=costs.prices,
        rows=[(cost, cost_cells(ctx, cost)) for cost in costs.rows],
        labels=ctx.labels(report),
        unit=count(TOKENS_PER_UNIT),
        seconds=count(SECONDS_PER_HOUR),
    )
