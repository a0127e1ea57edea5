"""Directives of prose on any page: catalog strings, quoted literals and their list, the
report's title, links to the report's other pages, and what content can branch on."""

from __future__ import annotations

import jinja2
from markupsafe import Markup

from sitegen.pages.directives.common import markdown_inline_text, render_partial
from sitegen.pages.directives.page_context import PageContext, Quote, directive
from sitegen.pages.i18n import shipped_keys
from sitegen.validation.figure_checks import has_placeholders


@directive("t")
def t(ctx: PageContext, key: str) -> str:
    """A catalog string that takes no values, as it is (a figure never enters a page this
    way: such strings are checked by C-FIGURE)."""
    strings = ctx.catalog.strings
    if key not in shipped_keys() or key not in strings:
        raise jinja2.TemplateRuntimeError(f"t('{key}'): not a key of the shipped catalog")
    if has_placeholders(strings[key][ctx.lang]):
        raise jinja2.TemplateRuntimeError(
            f"t('{key}'): not a catalog string without values (theme/i18n/*.yml)"
        )
    return ctx.catalog.t(key)


@directive("literal")
def literal(ctx: PageContext, value: str, source: str = "", **unknown: object) -> Markup:
    """A figure that is not a measurement (e.g. a model card's context length), quoted
    from a declared source (``content/sources.yaml``) and marked as not measured in this
    report; the only way to write a number in prose."""
    cited = ctx.sources.get(str(source))
    if unknown or not str(value).strip() or cited is None:
        known = ", ".join(sorted(ctx.sources)) or "none declared"
        raise jinja2.TemplateRuntimeError(
            f"literal({str(value)!r}, source=…) needs a value and the id of a source of "
            f"content/sources.yaml (known: {known}); the report's own data is shown "
            "by directives, never quoted"
        )
    ctx.quoted.append(Quote(str(value), cited))
    return render_partial(ctx, "literal.html", value=str(value), source=cited)


@directive("literals")
def literals(ctx: PageContext) -> Markup:
    """Every literal the report's pages quote, with its source (method page)."""
    return render_partial(ctx, "literals.html", quotes=list(dict.fromkeys(ctx.quoted)))


@directive("report_title")
def report_title(ctx: PageContext) -> Markup:
    """The plan's title as plain text inside Markdown (a heading line): HTML-escaped and
    Markdown punctuation backslash-escaped, so a title never becomes markup or a link."""
    return markdown_inline_text(ctx.require_report().plan.title[ctx.lang])


@directive("see_also")
def see_also(ctx: PageContext, *pages: str) -> Markup:
    """Links to those of ``pages`` (``speed``, ``quality``, ``data`` …) that this report
    has: a page never sends readers to a page the report does not have."""
    report = ctx.require_report()
    unknown = [page for page in pages if f"page.{page}" not in ctx.catalog.strings]
    if unknown:
        raise jinja2.TemplateRuntimeError(f"see_also: unknown page(s) {unknown}")
    return render_partial(
        ctx,
        "see_also.html",
        report=report,
        pages=[page for page in pages if page in ctx.report_pages],
    )


@directive("has_speed")
def has_speed(ctx: PageContext) -> bool:
    """Whether the report has speed inputs (content can branch on it)."""
    return bool(ctx.require_report().plan.inputs)


@directive("report_has_load")
def report_has_load(ctx: PageContext) -> bool:
    """Whether the report has open-loop load runs (content can branch on it)."""
    return not ctx.require_report().load.empty


@directive("report_has_quality")
def report_has_quality(ctx: PageContext) -> bool:
    return ctx.require_report().quality is not None
