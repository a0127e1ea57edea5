"""What every directive shares: the partials' environment and filters, text placed in
Markdown, rendering a partial as one raw-HTML block, and a report's figures as printed."""

from __future__ import annotations

import html
import re
from collections.abc import Iterable
from datetime import UTC, datetime
from functools import cache
from typing import TYPE_CHECKING, Any, cast

import jinja2
import numpy as np
import pandas as pd
from markupsafe import Markup, escape

from sitegen.core.formatting import FILTERS
from sitegen.core.text import CONTROL_CHARACTERS
from sitegen.pages.author_text import render_author_text
from sitegen.pages.published_figures import FigureCell, figure_cells, report_figures
from sitegen.pages.safe_json import script_json
from sitegen.pages.template_cache import bytecode_cache
from sitegen.statistics.dispersion import IQR_FENCE

if TYPE_CHECKING:
    from sitegen.pages.directives.page_context import PageContext

CHART_INLINE_BYTES = 60_000
"""A chart spec larger than this is a JSON file the page loads, not part of the page."""
TABLE_PAGE_ROWS = 200
"""Rows of a chart's number table per page; more rows are JSON pages loaded on demand."""


@cache
def html_environment(partials_dir: str) -> jinja2.Environment:
    """The environment for partials: autoescape on, undefined names are errors. One per
    folder and process: its templates are loaded once, not at every build (Jinja still
    reloads a template whose file changed)."""
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(partials_dir),
        bytecode_cache=bytecode_cache(),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=False,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters.update(FILTERS)
    env.filters["script_json"] = lambda value: Markup(script_json(value))
    env.filters["text_block"] = text_block
    env.filters["utc"] = format_utc
    env.filters["author_text"] = render_author_text
    env.globals["iqr_fence"] = IQR_FENCE
    return env


def format_utc(value: datetime | None) -> str:
    """``YYYY-MM-DD HH:MM UTC``, or ``-``."""
    return value.astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC") if value else "-"


_MARKDOWN_PUNCTUATION = re.compile(r"([\\`*_{}\[\]()#+\-.!])")
"""Python-Markdown's backslash-escapable characters (``<`` and ``>`` are escaped as HTML)."""


def markdown_inline_text(text: str) -> Markup:
    """Untrusted one-line text placed in Markdown source: ``&``, ``<`` and ``>`` escaped
    (so entities stay literal) and every Markdown punctuation character backslash-escaped;
    line breaks become spaces."""
    flat = " ".join(str(text).split())
    # Only &, < and > become entities: their names hold no Markdown punctuation, so the
    # backslashes below never split an entity (quotes need no escaping in element text).
    return Markup(_MARKDOWN_PUNCTUATION.sub(r"\\\1", html.escape(flat, quote=False)))


def text_block(text: str) -> Markup:
    """Untrusted multi-line text, escaped, control characters shown as their Unicode
    pictures (␀, ␛ …), newlines as character references so the surrounding HTML block has
    no blank line (Markdown would end the block there)."""
    visible = CONTROL_CHARACTERS.sub(_control_picture, str(text).replace("\r", ""))
    return Markup(str(escape(visible)).replace("\n", "&#10;"))


def _control_picture(match: re.Match[str]) -> str:
    code = ord(match.group())
    return chr(0x2400 + code) if code < 0x20 else "\u2421" if code == 0x7F else "\ufffd"


def one_block(html: str) -> Markup:
    """Partials become one raw-HTML block for the Markdown renderer: no blank lines."""
    # split("\n"), not splitlines(): model text may hold U+2028, form feeds and the like.
    return Markup("\n".join(line for line in html.split("\n") if line.strip()))


def render_partial(ctx: PageContext, partial: str, **context: Any) -> Markup:
    """The partial ``partial`` rendered for the page of ``ctx`` with ``context``, as one
    raw-HTML block; every partial also gets the catalog (``t``), the language, the site
    root and ``field_list``. No partial looks a figure up: its directive hands it the
    cells it prints (``cells``)."""
    template = ctx.env.get_template(partial)
    return one_block(
        template.render(
            t=ctx.catalog.t,
            lang=ctx.catalog.lang,
            site_root=ctx.site_root,
            field_list=lambda names: field_list(ctx, names),
            **context,
        )
    )


def printed(ctx: PageContext) -> dict[str, str]:
    """The figures of the page's report as ``report_figures`` prints them (once a report
    for every page and language)."""
    report = ctx.require_report()
    if report.slug not in ctx.printed_figures:
        ctx.printed_figures[report.slug] = report_figures(report)
    return ctx.printed_figures[report.slug]


def cells(ctx: PageContext, prefix: str, values: dict[str, Any]) -> dict[str, FigureCell]:
    """The figures ``<prefix>/<name>`` of the report, by name, as cells a partial prints
    (``figure_cells``)."""
    return figure_cells(printed(ctx), prefix, values)


def frame_records(frame: pd.DataFrame) -> list[dict[str, Any]]:
    """The rows of ``frame`` as ``to_dict("records")`` gives them, built from whole
    columns where each column's values come out of ``tolist`` as that method gives them
    (it takes each row through pandas); any other frame goes through it."""
    if not frame.columns.is_unique or not all(map(_listed_as_records, frame.dtypes)):
        return cast(list[dict[str, Any]], frame.to_dict("records"))
    names = list(frame.columns)
    columns = [frame[name].tolist() for name in names]
    return [dict(zip(names, row, strict=True)) for row in zip(*columns, strict=True)]


def _listed_as_records(dtype: object) -> bool:
    """Whether ``tolist`` gives a column of ``dtype`` as ``to_dict("records")`` does: a
    numpy column of numbers, booleans or times, or text missing as NaN (an object column's
    numpy values and a missing ``pd.NA`` that method turns into Python values and None)."""
    if isinstance(dtype, np.dtype):
        return dtype != np.dtype(object)
    return isinstance(dtype, pd.StringDtype) and dtype.na_value is not pd.NA


def field_list(ctx: PageContext, names: Iterable[str]) -> str:
    """Compared fields as readers name them (``compare.field.<name>``), comma-separated."""
    catalog = ctx.catalog
    return list_separator(ctx).join(
        catalog.t(f"compare.field.{name}") if f"compare.field.{name}" in catalog.strings else name
        for name in names
    )


def list_separator(ctx: PageContext) -> str:
    """Between the items of a list in a sentence: ``、`` in Japanese, ``, `` otherwise."""
    return "、" if ctx.catalog.lang == "ja" else ", "
