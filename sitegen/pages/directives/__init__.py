"""Content directives: the functions report pages call to place data.

Pages in ``content/<lang>/`` are jinja2 templates (autoescaped). Prose is written
there; every figure, table, chart and number comes from a directive such as
``{{ speed_chart("gen_tps") }}``. A directive is a function ``(ctx, …) -> Markup``
registered by name with ``@directive("speed_chart")`` in the module of its topic
(``speed_directives``, ``latency_directives`` … ``home_directives``,
``series_directives``, and ``prose``); ``directive_functions`` gives a page every
registered directive bound to its ``PageContext`` (both in ``page_context``). A
directive renders an autoescaped partial
from ``theme/partials/`` (``common.render_partial``) and carries its caveats in the page's
language. Names and arguments are a public interface: a project's own content pages call
them.
"""

from __future__ import annotations

# The topic modules register their directives when imported: importing the package
# registers them all.
from sitegen.pages.directives import (  # noqa: F401
    comparison_directives,
    cost_directives,
    examples_directives,
    home_directives,
    imported_directives,
    latency_directives,
    load_directives,
    method_directives,
    prose,
    quality_directives,
    series_directives,
    speed_directives,
    sweep_directives,
)
from sitegen.pages.directives.common import (
    CHART_INLINE_BYTES,
    TABLE_PAGE_ROWS,
    format_utc,
    html_environment,
    markdown_inline_text,
    text_block,
)
from sitegen.pages.directives.page_context import (
    DIRECTIVES,
    Directive,
    PageContext,
    Quote,
    directive,
    directive_functions,
)

__all__ = [
    "CHART_INLINE_BYTES",
    "DIRECTIVES",
    "TABLE_PAGE_ROWS",
    "Directive",
    "PageContext",
    "Quote",
    "directive",
    "directive_functions",
    "format_utc",
    "html_environment",
    "markdown_inline_text",
    "text_block",
]
