"""The archive: published versions stay frozen, versions.json and latest/ point at the
newest, the changelog says what changed, nothing runs but the site's own script files."""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from html.parser import HTMLParser
from importlib import resources
from pathlib import Path

import plotly.offline
import pytest

from sitegen.cli import main
from sitegen.commands.build import build_site
from sitegen.core.errors import ArchiveError
from sitegen.core.project import packaged_theme
from sitegen.pages.mkdocs import CONTENT_SECURITY_POLICY, PLOTLY_BUNDLE
from tests.builtsites import reusing_renders, tree_bytes
from tests.sitefixtures import (
    PROJECT,
    publishable_campaign,
    read_records,
    report_address,
    write_records,
)


@dataclass(frozen=True)
class Archive:
    root: Path
    site: Path
    slug: str
    """The report's folder under ``reports/``."""
    campaign: str
    """The campaign's directory name under ``data/campaigns/``."""
    first_tree: dict[str, bytes]
    """``v/v1/`` right after it was published."""


@pytest.fixture(scope="module")
def archive(tmp_path_factory) -> Archive:
    """v1: the first half of a campaign (as an interrupted campaign leaves it); v2: all
    of it, with the 'off' condition's generation rate 1.5× (a figure that moved)."""
    root = tmp_path_factory.mktemp("archive")
    records_path = publishable_campaign(root / "data")
    campaign = records_path.parent
    records = read_records(records_path)
    early = root / "early" / "campaigns" / campaign.name
    early.mkdir(parents=True)
    for name in ("plan.json", "manifest.json", "logs"):
        copy = shutil.copytree if (campaign / name).is_dir() else shutil.copy
        copy(campaign / name, early / name)
    write_records(early / "records.jsonl", records[: len(records) // 2])
    for record in records:
        if record["condition_id"] == "off" and record["metrics"]:
            record["metrics"]["gen_tps"] *= 1.5  # as if generated in two thirds of the time
            record["metrics"]["generation_s"] /= 1.5
    write_records(records_path, records)
    site = root / "site"
    with reusing_renders():  # the tests' builds of these inputs reuse the rendering
        assert build_site(root / "early", site, PROJECT, version="v1").outcome == "published"
        first_tree = tree_bytes(site / "v" / "v1")
        assert build_site(root / "data", site, PROJECT, version="v2").outcome == "published"
    return Archive(root, site, report_address(campaign), campaign.name, first_tree)


def _refresh_target(page: Path) -> Path:
    """Where a redirect page sends the reader, as a directory on disk: its script's
    target (a directory URL), which its refresh without scripts names with index.html."""
    text = page.read_text()
    scripted = re.search(r'data-target="([^"]+)"', text)
    refresh = re.search(r'http-equiv="refresh" content="0; url=([^"]+)"', text)
    assert scripted and refresh, page
    assert refresh.group(1) == scripted.group(1) + "index.html"
    return (page.parent / scripted.group(1)).resolve()


def test_versions_layout_and_redirects(archive):
    site = archive.site
    listing = json.loads((site / "versions.json").read_text())
    assert listing == [
        {"version": "v2", "title": "v2", "aliases": ["latest"]},
        {"version": "v1", "title": "v1", "aliases": []},
    ]
    # mkdocs-material's selector reads ../versions.json from a version's root.
    assert (site / "v" / "versions.json").read_bytes() == (site / "versions.json").read_bytes()
    assert _refresh_target(site / "index.html") == (site / "latest").resolve()
    assert _refresh_target(site / "latest" / "index.html") == (site / "v" / "v2").resolve()
    deep = site / "latest" / "en" / "reports" / archive.slug / "speed" / "index.html"
    target = _refresh_target(deep)
    assert target == (site / "v" / "v2" / "en" / "reports" / archive.slug / "speed").resolve()
    assert (target / "index.html").is_file()
    assert not (site / "latest").is_symlink()


def test_a_later_build_leaves_the_first_version_byte_identical(archive):
    assert tree_bytes(archive.site / "v" / "v1") == archive.first_tree


def test_plotly_is_served_once_at_the_site_root(archive):
    site = archive.site
    bundles = [p.relative_to(site).as_posix() for p in site.rglob("plotly*.js")]
    assert bundles == [f"assets/{PLOTLY_BUNDLE}"]
    speed = site / "v" / "v1" / "en" / "reports" / archive.slug / "speed" / "index.html"
    # charts.js loads it (once a chart comes near the window): no <script> of its own.
    assert not re.findall(r'<script src="[^"]*plotly[^"]*"', speed.read_text())
    (src,) = re.findall(r'<script src="[^"]*charts\.js" data-plotly="([^"]*)"', speed.read_text())
    assert (speed.parent / src).resolve() == (site / "assets" / PLOTLY_BUNDLE).resolve()
    home = (site / "v" / "v1" / "index.html").read_text()
    assert "plotly" not in home  # pages without charts do not load it


def test_the_shared_plotly_bundle_is_the_version_plotly_py_writes_for():
    bundle = packaged_theme() / "assets" / "shared" / PLOTLY_BUNDLE
    version = plotly.offline.get_plotlyjs_version()
    assert f"-{version}." in PLOTLY_BUNDLE
    assert f"plotly.js (basic - minified) v{version}" in bundle.read_text()[:200]


def test_changelog_lists_records_and_moved_figures_in_both_languages(archive):
    version = archive.site / "v" / "v2"
    ja = (version / "changelog" / "index.html").read_text()
    en = (version / "en" / "changelog" / "index.html").read_text()
    # Every version's changes, newest first, each naming the version before it: a
    # site-level file every build rewrites, which each version's page names.
    every = {
        lang: json.loads((archive.site / "changelog" / f"{lang}.json").read_bytes())["html"]
        for lang in ("ja", "en")
    }
    for page, lang in ((ja, "ja"), (en, "en")):
        assert (
            f'data-all-versions="../../{"../" if lang == "en" else ""}../changelog/{lang}.json"'
            in page
        )
        # The version's own changes, naming neither version (a published page never
        # changes, and the same changes make the same page).
        assert "v1" not in re.sub(r"<[^>]+>", "", page)
        assert "50.00" in page and "75.00" in page and "+50.0%" in page
        assert re.search(r"7\D+14", page)  # records 7 → 14
        assert every[lang].index(">v2</a>") < every[lang].index(">v1</a>")
        assert "50.00" in every[lang] and re.search(r"7\D+14", every[lang])
    assert "Changes since the previous version, v1" in every["en"]
    first = (archive.site / "v" / "v1" / "en" / "changelog" / "index.html").read_text()
    assert "first published version" in first


def test_rebuilding_with_nothing_changed_is_up_to_date_and_fast(archive):
    before = tree_bytes(archive.site)
    started = time.monotonic()
    result = build_site(archive.root / "data", archive.site, PROJECT, version="v2")
    assert result.outcome == "up-to-date" and result.records == 14
    assert time.monotonic() - started < 2
    assert tree_bytes(archive.site) == before


def test_republishing_identical_content_is_a_no_op(archive):
    before = tree_bytes(archive.site)
    (archive.site / ".sitegen-build.json").unlink()  # force a render
    result = build_site(archive.root / "data", archive.site, PROJECT, version="v2")
    assert result.outcome == "unchanged"
    assert tree_bytes(archive.site) == before


@pytest.mark.usefixtures("reuse_renders")  # a build of these inputs has rendered them
def test_republishing_a_label_with_other_content_is_refused_and_writes_nothing(archive, tmp_path):
    site = tmp_path / "site"
    shutil.copytree(archive.site, site)
    data = tmp_path / "data"
    shutil.copytree(archive.root / "data", data)
    records_path = data / "campaigns" / archive.campaign / "records.jsonl"
    records = read_records(records_path)
    records[-1]["text"] = "a different answer"
    write_records(records_path, records)
    before = tree_bytes(site)
    with pytest.raises(ArchiveError, match="version 'v2' is already published with different"):
        build_site(data, site, PROJECT, version="v2")
    assert tree_bytes(site) == before
    # The lock and the (empty) releases folder; no staging left.
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        ".site.lock",
        ".site.releases",
        "data",
        "site",
    ]
    assert list((tmp_path / ".site.releases").iterdir()) == []
    # The same records under a new label are fine.
    assert build_site(data, site, PROJECT, version="v3").outcome == "published"
    assert tree_bytes(site / "v" / "v2") == {
        k.removeprefix("v/v2/"): v for k, v in before.items() if k.startswith("v/v2/")
    }


@pytest.mark.usefixtures("reuse_renders")  # a build of these inputs has rendered them
def test_a_modified_published_version_stops_the_build(archive, tmp_path):
    site = tmp_path / "site"
    shutil.copytree(archive.site, site)
    page = site / "v" / "v1" / "index.html"
    page.write_bytes(page.read_bytes() + b"<!-- edited -->")
    (site / ".sitegen-build.json").unlink()
    before = tree_bytes(site)
    with pytest.raises(ArchiveError, match=r"version 'v1'.*changed index\.html"):
        build_site(archive.root / "data", site, PROJECT, version="v3")
    assert tree_bytes(site) == before


@pytest.mark.usefixtures("reuse_renders")  # a build of these inputs has rendered them
def test_default_label_is_the_date_of_the_latest_record(archive, tmp_path):
    records = read_records(archive.root / "data" / "campaigns" / archive.campaign / "records.jsonl")
    latest = max(datetime.fromisoformat(r["started_at"]) for r in records)
    result = build_site(archive.root / "data", tmp_path / "site", PROJECT)
    assert result.version == latest.astimezone(UTC).date().isoformat()
    assert (tmp_path / "site" / "v" / result.version / "index.html").is_file()


@pytest.mark.parametrize("label", ["../x", "latest", "", "a/b", "x" * 65])
def test_unsafe_labels_are_refused(archive, tmp_path, label):
    with pytest.raises(ArchiveError, match="version label"):
        build_site(archive.root / "data", tmp_path / "site", PROJECT, version=label)
    assert not (tmp_path / "site").exists()


@pytest.mark.usefixtures("reuse_renders")  # a build of these inputs has rendered them
def test_cli_build_takes_a_version_label(archive, tmp_path, capsys):
    args = ["build", "--data", str(archive.root / "data"), "--site", str(tmp_path / "site")]
    args += ["--project", str(PROJECT), "--version", "cli-1"]
    assert main(args) == 0
    assert "version cli-1 published" in capsys.readouterr().out
    assert main(args) == 0
    assert "nothing changed since version cli-1" in capsys.readouterr().out


class _ScriptsAndPolicy(HTMLParser):
    """The first element of <head> after the charset, and every <script>'s attributes."""

    def __init__(self) -> None:
        super().__init__()
        self.scripts: list[dict[str, str | None]] = []
        self.first_in_head: tuple[str, dict[str, str | None]] | None = None
        self._in_head = False

    def handle_starttag(self, tag, attrs):
        attributes = dict(attrs)
        if tag == "head":
            self._in_head = True
        elif self._in_head and self.first_in_head is None and "charset" not in attributes:
            self.first_in_head = (tag, attributes)
        if tag == "script":
            self.scripts.append(attributes)


def test_every_page_has_the_policy_first_and_no_inline_script(archive):
    pages = sorted(archive.site.rglob("*.html"))
    assert len(pages) > 20
    for page in pages:
        parser = _ScriptsAndPolicy()
        parser.feed(page.read_text(encoding="utf-8"))
        tag, attrs = parser.first_in_head
        assert (tag, attrs.get("http-equiv")) == ("meta", "Content-Security-Policy"), page
        assert attrs["content"] == CONTENT_SECURITY_POLICY
        for script in parser.scripts:
            if script.get("src"):
                # 404.html links from the site root: it is served for any missing path.
                base = archive.site if script["src"].startswith("/") else page.parent
                assert (base / script["src"].lstrip("/")).resolve().is_file(), (page, script)
            else:
                assert script.get("type") == "application/json", (page, script)
    assert "'unsafe-inline'" not in CONTENT_SECURITY_POLICY.split("script-src")[1].split(";")[0]
    for directive in ("object-src 'none'", "base-uri 'none'", "default-src 'none'"):
        assert directive in CONTENT_SECURITY_POLICY


REPLACED_MATERIAL_PARTIALS = {
    "nav.html": "af33f6e032f632eb055c365eb5f1a975bf8456152fa768e69a1aad6d470b843f",
    "javascripts/base.html": "d6113712bc4deb30b4bd810ee0dfc28b6f04d2f88cc0016c0f1766eac7b762b6",
    "javascripts/content.html": "3722e156f0f6339de39fbbfc178b6e401d1a4fb890f189ac5b80c2504bda7dcf",
    "javascripts/palette.html": "8790389765ea6036effddba548b15093bb05bdc75624eaeaf8b13f3c24be4ab5",
    "javascripts/outdated.html": "13165dec361fce13130f73f747aab982f7e1979608c061e5953b10286abc7447",
}


def test_material_partials_we_replace_are_the_ones_we_copied():
    """theme/overrides/partials/ and theme/assets/js/md-*.js copy these material
    partials; a material upgrade that changes them must be looked at."""
    partials = resources.files("material") / "templates" / "partials"
    for name, digest in REPLACED_MATERIAL_PARTIALS.items():
        actual = hashlib.sha256(partials.joinpath(name).read_bytes()).hexdigest()
        assert actual == digest, f"material's {name} changed: review its replacement"
