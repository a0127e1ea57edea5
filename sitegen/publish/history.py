"""History across versions: per report, the headline of every archived version that holds
it (ratio with its interval, both medians, acceptance, engine builds, date), as a chart
and a table. Made at publish time from the archive's recorded figures, like the changelog."""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any

from sitegen.core.formatting import hover
from sitegen.core.text import LANGUAGES
from sitegen.pages.i18n import Catalog
from sitegen.pages.render import page_name, to_version_root
from sitegen.pages.safe_json import script_json
from sitegen.publish.archive import PublishedVersion
from sitegen.publish.changelog import html_page, language_prefix, publish_templates, to_versions

HISTORY_PAGE = "history"
"""Each report's history page: ``reports/<address>/history/``."""
_PAGE_DEPTH = 3
"""A history page's folders below its version's root: ``reports/<address>/history/``."""
HISTORY_DIR = "history"
"""Site-root folder of every report's history across the versions."""


@dataclass(frozen=True)
class HistoryRow:
    """One archived version's headline of one report."""

    label: str
    date: str
    current: bool
    headline: dict[str, Any] | None
    """``headline_figures``' headline (``None``: no ratio then, or not recorded)."""
    recorded: bool
    """Whether the version recorded headlines at all (older versions did not)."""
    engine_builds: list[str] | None
    """``None``: the version did not record them."""


def history_rows(
    published: list[PublishedVersion], current: PublishedVersion, address: str
) -> list[HistoryRow]:
    """Every version holding the report at ``address``, oldest first, ``current`` included."""
    versions = sorted(
        [v for v in published if v.label != current.label] + [current], key=lambda v: v.sort_key
    )
    rows = []
    for version in versions:
        entry = next((f for f in version.figures.values() if f.get("address") == address), None)
        if entry is None:
            continue
        rows.append(
            HistoryRow(
                version.label,
                # The report's own latest record; a version that did not record it, the
                # version's (its latest record over every report).
                entry.get("data_date")
                or datetime.fromtimestamp(version.data_epoch, UTC).date().isoformat(),
                version.label == current.label,
                # Versions published before verdicts recorded none: their headline was
                # printed as a figure then, and is shown as one.
                {"inconclusive": False, **entry["headline"]} if entry.get("headline") else None,
                "headline" in entry,
                entry.get("engine_builds"),
            )
        )
    return rows


def history_chart(rows: list[HistoryRow], catalog: Catalog) -> dict:
    """The headline ratio of each version with its interval as error bars."""
    shown = [(row.label, row.headline) for row in rows if row.headline is not None]
    return {
        "data": [
            {
                "type": "scatter",
                "mode": "lines+markers",
                "x": [label for label, _ in shown],
                "y": [headline["ratio"] for _, headline in shown],
                "error_y": {
                    "type": "data",
                    "symmetric": False,
                    "array": [round(h["high"] - h["ratio"], 4) for _, h in shown],
                    "arrayminus": [round(h["ratio"] - h["low"], 4) for _, h in shown],
                },
                # An inconclusive headline is an open marker, its word in the hover.
                "marker": {
                    "symbol": [
                        "circle-open" if headline.get("inconclusive") else "circle"
                        for _, headline in shown
                    ]
                },
                "text": [
                    catalog.t("verdict.inconclusive") if headline.get("inconclusive") else ""
                    for _, headline in shown
                ],
                "hovertemplate": f"%{{x}}<br>{hover('y')}× %{{text}}<extra></extra>",
                "name": catalog.t("history.ratio"),
            }
        ],
        "layout": {
            "template": {"data": {"scatter": [{"type": "scatter"}]}},
            "height": 360,
            "margin": {"l": 60, "r": 20, "t": 20, "b": 60},
            "xaxis": {"title": {"text": catalog.t("history.version")}, "type": "category"},
            "yaxis": {"title": {"text": catalog.t("history.ratio")}},
            "showlegend": False,
        },
    }


def _addresses(versions: list[PublishedVersion]) -> list[str]:
    """Every measured report's address (an imported report has no headline history)."""
    return sorted(
        {
            f["address"]
            for v in versions
            for f in v.figures.values()
            if "address" in f and "imported" not in f
        }
    )


def history_data_path(address: str, lang: str) -> str:
    """The site-root path of a report's history in one language (a chart spec with the
    table's HTML under ``html``): rewritten by every build, like ``versions.json``."""
    return f"{HISTORY_DIR}/{address}/{lang}.json"


def history_files(
    versions: list[PublishedVersion], catalogs: dict[str, Catalog]
) -> dict[str, bytes]:
    """Every report's history across ``versions`` (the new one included), by site-root path:
    a report's history pages in every version read it, so a version's page need not list
    the versions after it (it never changes) nor repeat those before it."""
    env = publish_templates()
    newest = max(versions, key=lambda v: v.sort_key)
    files = {}
    for address in _addresses(versions):
        rows = [replace(row, current=False) for row in history_rows(versions, newest, address)]
        for lang in LANGUAGES:
            catalog = catalogs[lang]
            table = env.get_template("history_table.html").render(
                t=catalog.t,
                rows=rows,
                address=address,
                to_versions=to_versions(lang, _PAGE_DEPTH),
                prefix=language_prefix(lang),
            )
            data = {**history_chart(rows, catalog), "html": table}
            files[history_data_path(address, lang)] = script_json(data).encode()
    return files


def history_docs(current: PublishedVersion, catalogs: dict[str, Catalog]) -> dict[str, bytes]:
    """The history page of every report of ``current`` in both languages: its own row
    (without its label: the page is the same in every version of the same figures), which
    the site's history of every version replaces where scripts can fetch it."""
    env = publish_templates()
    docs = {}
    for address in _addresses([current]):
        (row,) = history_rows([], current, address)
        entry = next(f for f in current.figures.values() if f.get("address") == address)
        titles = entry["title"]
        for lang in LANGUAGES:
            catalog = catalogs[lang]
            # The site root is one level above v/.
            data = f"{to_versions(lang, _PAGE_DEPTH)}../{history_data_path(address, lang)}"
            body = env.get_template("history.html").render(
                t=catalog.t,
                rows=[row],
                address=address,
                data=data,
                chart=row.headline is not None,
                # A build of a series: its series' page, every build's figures and verdicts.
                series=entry.get("series"),
                to_root=to_version_root(_PAGE_DEPTH, lang),
            )
            title = catalog.t("history.title", title=titles[lang])
            docs[f"reports/{address}/{page_name(HISTORY_PAGE, lang)}"] = html_page(
                title, body, searched=False
            )
    return docs
