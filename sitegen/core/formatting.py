"""Every figure a page prints, by what it is: one entry point per kind of figure, each
with the one style readers see for that kind in both languages. Templates reach them as
filters (``{{ row.gen_tps_median|rate }}``), page code calls them; nothing else formats a
number for a reader.

The styles: rates (tok/s, requests/s) and seconds with 2 decimals, milliseconds with 1,
ratios with 2 (the ``×`` comes from the text around them), percentages of fractions with
1 decimal (the ``%`` comes from the catalogs, written without a space in both languages),
memory in GiB with 2, money with 2 (4 under one unit), counts as whole numbers; thousands separated by a comma (both
languages write them so). A missing value (None, NaN, pandas NA) is ``-``.
"""

from __future__ import annotations

import math
from typing import Any

MISSING = "-"


def _missing(value: Any) -> bool:
    try:
        return value is None or math.isnan(float(value))
    except TypeError:  # pandas NA refuses float()
        return True


def fixed(value: Any, digits: int | None = None) -> str:
    """``digits`` decimals with thousands separators, a whole number when ``digits`` is
    None. The base of every entry point; a template reaches it as ``num`` only where the
    digits are declared with the figure (a threshold as its author wrote it) or for a
    figure no reader sees (an attribute the build checks)."""
    if _missing(value):
        return MISSING
    if digits is None:
        return f"{round(float(value)):,}"
    return f"{float(value):,.{digits}f}"


def count(value: Any) -> str:
    """A count or any whole number of a unit (tokens, trials, bytes, MHz): ``12,345``."""
    return fixed(value)


def median_count(value: Any) -> str:
    """The median of counts, which may fall between two: ``187.5``."""
    return fixed(value, 1)


def rate(value: Any) -> str:
    """A rate (tokens/s, requests/s): ``62.27``."""
    return fixed(value, 2)


def seconds(value: Any) -> str:
    """A time in seconds: ``0.42``."""
    return fixed(value, 2)


def milliseconds(value: Any) -> str:
    """A time in milliseconds: ``12.3``."""
    return fixed(value, 1)


def seconds_as_ms(value: Any) -> str:
    """A time recorded in seconds, shown in milliseconds (token intervals)."""
    return MISSING if _missing(value) else milliseconds(float(value) * 1000)


def ratio(value: Any) -> str:
    """A ratio or a bound of its interval, without the ``×`` its text adds: ``1.22``."""
    return fixed(value, 2)


def percent(fraction: Any, digits: int = 1) -> str:
    """A fraction as percent, without the ``%`` its text adds: ``0.217`` → ``21.7``;
    ``digits`` 0 for a declared level (``95``), 2 for a quality difference in points."""
    return MISSING if _missing(fraction) else fixed(float(fraction) * 100, digits)


def utilization(value: Any) -> str:
    """A utilization already in percent (a device's busy share): ``87.5``."""
    return fixed(value, 1)


def watts(value: Any) -> str:
    """Power in watts: ``312.4``."""
    return fixed(value, 1)


def joules(value: Any) -> str:
    """Energy in joules (per generated token): ``0.42``."""
    return fixed(value, 2)


def gib(mib: Any) -> str:
    """Memory recorded in MiB, shown in GiB: ``80.00``."""
    return MISSING if _missing(mib) else fixed(float(mib) / 1024, 2)


def money(value: Any) -> str:
    """An amount of money (a price, a cost per million tokens), without its currency, which
    its text adds: ``2.50``; under one unit with 4 decimals, so a cheap cost keeps its
    digits (``0.0123``)."""
    if _missing(value):
        return MISSING
    return fixed(value, 2 if abs(float(value)) >= 1 else 4)


def signed(value: Any, digits: int = 1) -> str:
    """``fixed`` with an explicit sign (``+21.7``, ``-3.0``); a value that rounds to zero
    has none (``0.0``)."""
    shown = fixed(value, digits)
    if shown == MISSING:
        return shown
    if not shown.strip("-0.,"):
        return shown.lstrip("-")
    return shown if shown.startswith("-") else f"+{shown}"


def setting(value: Any) -> str:
    """A declared setting (a temperature, a draft length) as its declaration wrote it:
    ``0.7``, ``8``; not a measurement, so no fixed decimals."""
    return f"{value:g}" if isinstance(value, float) else str(value)


def hover(axis: str, share: bool = False) -> str:
    """A chart's hover text for the value on ``axis`` (plotly's d3 format): 2 decimals, as
    the page prints rates, seconds and ratios; a ``share`` (0–1) as percent with 1."""
    return f"%{{{axis}:{'.1%' if share else ',.2f'}}}"


FILTERS = {
    "num": fixed,
    "count": count,
    "median_count": median_count,
    "rate": rate,
    "seconds": seconds,
    "ms": milliseconds,
    "seconds_as_ms": seconds_as_ms,
    "ratio": ratio,
    "percent": percent,
    "utilization": utilization,
    "watts": watts,
    "joules": joules,
    "gib": gib,
    "money": money,
    "signed": signed,
    "setting": setting,
}
"""The template filters, by name."""
