"""History across versions: each report's history page lists the headline of every
archived version holding it, linking to that version; the changelog says what each moved
figure changed with."""

from __future__ import annotations

import json
import os
import re

from sitegen.commands.build import build_site
from tests.links import broken_internal_links
from tests.sitefixtures import (
    PROJECT,
    publishable_campaign,
    read_records,
    report_address,
    write_records,
)


def text_of(html: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html))


def text(path) -> str:
    return text_of(path.read_text())


def test_history_lists_every_version_and_the_changelog_names_the_cause(tmp_path):
    records = publishable_campaign(tmp_path / "data")
    slug = report_address(records.parent)
    build_site(tmp_path / "data", tmp_path / "site", PROJECT, version="v1")
    # The same campaign with faster "on" trials: the headline moves with the records.
    changed = read_records(records)
    for record in changed:
        if record["condition_id"] == "on" and record["metrics"] and record["metrics"]["gen_tps"]:
            record["metrics"]["gen_tps"] *= 1.5
            record["metrics"]["generation_s"] /= 1.5
    write_records(records, changed)
    build_site(tmp_path / "data", tmp_path / "site", PROJECT, version="v2")
    site = tmp_path / "site"
    v2 = site / "v" / "v2"
    for prefix, lang in (("", "ja"), ("en/", "en")):
        page = v2 / prefix / "reports" / slug / "history" / "index.html"
        html = page.read_text()
        # A published page never changes: it holds its own row, without its label...
        assert html.count('data-observation="published-headline"') == 1
        assert re.findall(r"\bv[12]\b", text_of(html)) == [] and "/v1/" not in html
        # ...and names the site's history of every version, rewritten by each build.
        source = re.search(r'data-all-versions="([^"]+)"', html)[1]
        assert f'data-spec="{source}"' in html  # the chart of every version too
        history = json.loads((page.parent / source).read_text())
        assert (page.parent / source).resolve() == (
            site / "history" / slug / f"{lang}.json"
        ).resolve()
        assert history["html"].count('data-observation="published-headline"') == 2
        assert (
            f'href="../../../../{"../" if prefix else ""}v1/{prefix}reports/{slug}/"'
            in history["html"]
        )
        assert [point for trace in history["data"] for point in trace["x"]] == ["v1", "v2"]
    table = text_of(json.loads((site / "history" / slug / "en.json").read_text())["html"])
    ratios = re.findall(r"(\d+\.\d\d)× \(", table)
    assert len(ratios) == 2 and ratios[0] != ratios[1]
    assert "this version" in text(v2 / "en" / "reports" / slug / "history" / "index.html")
    # The same figures publish the same history page: one file on disk.
    build_site(tmp_path / "data", site, PROJECT, version="v3")
    v3 = site / "v" / "v3"
    for prefix in ("", "en/"):
        page = f"{prefix}reports/{slug}/history/index.html"
        assert os.path.samefile(v2 / page, v3 / page)
    history = json.loads((site / "history" / slug / "ja.json").read_text())
    assert history["html"].count('data-observation="published-headline"') == 3
    changelog = text(v2 / "en" / "changelog" / "index.html")
    assert "new or changed records" in changelog
    assert broken_internal_links(site) == []
