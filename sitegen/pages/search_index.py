"""The site search's index in parts, so that a version stores only the parts it changed.

material's search reads one file, ``search/search_index.json``, with an entry for every
page section of the version: a version that adds a report would store every other
report's entries again. After mkdocs has written it, the entries are split by report
(both languages together): ``search/reports/<name>.json`` for each report and
``search/site.json`` for the rest. ``search_index.json`` keeps the search's settings, no
entries, and names the parts (``parts``, relative to itself); the theme's
``assets/js/search-parts.js`` joins them when material's script asks for the index. A
part whose report did not change is the same bytes as in the version before, and the
archive stores it once (``publish.archive.link_identical``).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

SEARCH_INDEX = "search/search_index.json"
"""Where material's search script reads its index, relative to the version's root."""

_REPORT_ENTRY = re.compile(r"^(?:[a-z]{2}(?:-[A-Za-z]+)?/)?reports/([^/#]+)/")
"""A report page's section, in the default language (``reports/<name>/…``) or another
(``en/reports/<name>/…``)."""


def split_search_index(index: dict[str, Any]) -> dict[str, bytes]:
    """The index's files (version-relative path → bytes): the parts, in the order of
    their first entry, and ``search_index.json`` naming them."""
    parts: dict[str, list[dict[str, Any]]] = {}
    for entry in index["docs"]:
        report = _REPORT_ENTRY.match(entry["location"])
        name = f"reports/{report.group(1)}.json" if report else "site.json"
        parts.setdefault(name, []).append(entry)
    files = {f"search/{name}": _json({"docs": docs}) for name, docs in parts.items()}
    files[SEARCH_INDEX] = _json({"config": index["config"], "docs": [], "parts": list(parts)})
    return files


def write_search_parts(version_dir: Path) -> None:
    """Replace the version's one search index by its parts (``split_search_index``)."""
    index = json.loads((version_dir / SEARCH_INDEX).read_text(encoding="utf-8"))
    for path, data in split_search_index(index).items():
        (version_dir / path).parent.mkdir(parents=True, exist_ok=True)
        (version_dir / path).write_bytes(data)


def _json(value: Any) -> bytes:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
