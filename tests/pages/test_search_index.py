"""The search index in parts: each report's entries (both languages) in a part of its own,
the rest in the site's part; the index names the parts and holds the settings."""

from __future__ import annotations

import json

from sitegen.pages.search_index import SEARCH_INDEX, split_search_index

CONFIG = {"lang": ["ja", "en"], "separator": "[\\s]+"}


def _entry(location: str) -> dict:
    return {"location": location, "title": location or "home", "text": "…"}


def test_entries_are_split_by_report_in_both_languages():
    locations = [
        "",
        "overview/",
        "reports/a/",
        "reports/a/speed/#_2",
        "reports/b/",
        "en/",
        "en/reports/a/speed/#generation-rate",
        "en/reports/b/",
        "en/changelog/",
    ]
    files = split_search_index({"config": CONFIG, "docs": [_entry(x) for x in locations]})
    index = json.loads(files[SEARCH_INDEX])
    assert index == {
        "config": CONFIG,
        "docs": [],
        "parts": ["site.json", "reports/a.json", "reports/b.json"],
    }
    part = {
        name: [e["location"] for e in json.loads(files[f"search/{name}"])["docs"]]
        for name in index["parts"]
    }
    assert part == {
        "site.json": ["", "overview/", "en/", "en/changelog/"],
        "reports/a.json": [
            "reports/a/",
            "reports/a/speed/#_2",
            "en/reports/a/speed/#generation-rate",
        ],
        "reports/b.json": ["reports/b/", "en/reports/b/"],
    }
    assert len(files) == 4


def test_a_report_part_is_the_same_bytes_whatever_else_the_site_holds():
    alone = split_search_index({"config": CONFIG, "docs": [_entry("reports/a/")]})
    beside = split_search_index(
        {"config": CONFIG, "docs": [_entry(""), _entry("reports/z/"), _entry("reports/a/")]}
    )
    assert alone["search/reports/a.json"] == beside["search/reports/a.json"]
    assert alone[SEARCH_INDEX] != beside[SEARCH_INDEX]
