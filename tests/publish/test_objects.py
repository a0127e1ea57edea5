"""The content-addressed archive: versions share their non-page files as objects stored
once at the site root, every link of every version resolves, a changed object is refused
naming it and its versions, and a site of the layout before objects is migrated with its
versions' bytes kept."""

from __future__ import annotations

import json
import os
import shutil
from dataclasses import dataclass
from pathlib import Path

import pytest

import sitegen.commands.build
import sitegen.publish.site
from sitegen.commands.build import build_site
from sitegen.core.errors import ArchiveError
from sitegen.publish.archive import PublishedVersion, read_archive, sha256_bytes
from sitegen.publish.objects import Placement, place_objects, rewrite_page
from tests.builtsites import published_file, published_objects, tree_bytes
from tests.conftest import make_plan
from tests.links import broken_internal_links
from tests.sitefixtures import PROJECT, publishable_campaign, report_address

pytestmark = pytest.mark.usefixtures("reuse_renders")


@dataclass(frozen=True)
class TwoVersions:
    data: Path
    site: Path
    slug: str


@pytest.fixture(scope="module")
def two_versions(tmp_path_factory) -> TwoVersions:
    """Versions v1 and v2 of the same records."""
    from tests.builtsites import reusing_renders

    root = tmp_path_factory.mktemp("objects")
    records = publishable_campaign(root / "data")
    with reusing_renders():
        for label in ("v1", "v2"):
            assert build_site(root / "data", root / "site", PROJECT, version=label).outcome == (
                "published"
            )
    return TwoVersions(root / "data", root / "site", report_address(records.parent))


def _copy(site: Path, folder: Path) -> Path:
    """The site as a real directory of its own (copies: it shares no file with ``site``)."""
    shutil.copytree(site, folder / "site", symlinks=True)
    return folder / "site"


def test_two_versions_of_the_same_data_store_each_file_once(two_versions):
    site = two_versions.site
    v1, v2 = published_objects(site / "v" / "v1"), published_objects(site / "v" / "v2")
    assert v1 == v2
    download = f"reports/{two_versions.slug}/downloads/records.jsonl.gz"
    assert v1[download].startswith("objects/") and v1[download].endswith("/records.jsonl.gz")
    assert not (site / "v" / "v1" / download).exists()
    stored = sorted(p.relative_to(site).as_posix() for p in (site / "objects").rglob("*"))
    assert sorted(v1.values()) == [p for p in stored if (site / p).is_file()]
    # Each object is named by its content: a single file by its bytes' SHA-256.
    manifest = PublishedVersion.from_manifest(site / "v" / "v2" / ".sitegen-version.json")
    digest = v1[download].split("/")[1]
    assert sha256_bytes((site / v1[download]).read_bytes()) == digest
    assert manifest.objects[v1[download]] == digest
    # Pages that do not name the version are one file on disk.
    for page in ("index.html", f"en/reports/{two_versions.slug}/speed/index.html"):
        assert os.path.samefile(site / "v" / "v1" / page, site / "v" / "v2" / page), page
    changelog = "changelog/index.html"
    assert not os.path.samefile(site / "v" / "v1" / changelog, site / "v" / "v2" / changelog)


def test_every_link_of_every_version_resolves(two_versions):
    site = two_versions.site
    assert broken_internal_links(site) == []
    speed = site / "v" / "v2" / "reports" / two_versions.slug / "speed" / "index.html"
    assert 'href="../../../../../objects/' in speed.read_text(encoding="utf-8")
    # The 404 page is served at any address: its links start at the site root.
    not_found = (site / "404.html").read_text(encoding="utf-8")
    assert 'src="/objects/' in not_found and 'href="/latest/"' in not_found
    # Only the root's 404 is served, the newest version's; only search engines read the
    # .gz sitemap: no version keeps either. The version selector's sitemap.xml stays.
    assert 'href="/v/v2/' in not_found
    for label in ("v1", "v2"):
        assert not (site / "v" / label / "404.html").exists()
        assert not (site / "v" / label / "sitemap.xml.gz").exists()
        assert (site / "v" / label / "sitemap.xml").is_file()
    # Answer shards and table pages are fetched by a name a script builds: their folder
    # moved whole, the page names the folder.
    data = (site / "v" / "v2" / "reports" / two_versions.slug / "data" / "index.html").read_text()
    moved = published_objects(site / "v" / "v2")
    (answers,) = {obj.rsplit("/", 1)[0] for path, obj in moved.items() if "/answers/" in path}
    assert f'data-base="../../../../../{answers}/"' in data


def test_source_maps_are_not_published(two_versions):
    site = two_versions.site
    assert list(site.rglob("*.map")) == []
    scripts = [*site.rglob("*.js"), *site.rglob("*.css")]
    assert len(scripts) > 10
    assert [p for p in scripts if b"sourceMappingURL" in p.read_bytes()] == []


def test_a_changed_object_is_refused_naming_it_and_its_versions(two_versions, tmp_path):
    site = _copy(two_versions.site.resolve(), tmp_path)
    download = published_objects(site / "v" / "v1")[
        f"reports/{two_versions.slug}/downloads/records.jsonl.gz"
    ]
    (site / download).write_bytes(b"tampered")
    with pytest.raises(ArchiveError, match=rf"changed object {download} \(used by v1, v2\)"):
        read_archive(site)
    (site / download).unlink()
    with pytest.raises(ArchiveError, match=rf"missing object {download} \(used by v1, v2\)"):
        build_site(two_versions.data, site, PROJECT, version="v3")
    assert not (site / "v" / "v3").exists()


def test_the_manifest_names_objects_by_path_and_a_folder_object_is_checked_whole(
    two_versions, tmp_path
):
    site = _copy(two_versions.site.resolve(), tmp_path)
    manifest = json.loads((site / "v" / "v1" / ".sitegen-version.json").read_bytes())
    # Each object's name is its SHA-256: the manifest needs no second copy of the hashes.
    assert manifest["schema_version"] == 3 and isinstance(manifest["objects"], list)
    theme = next(p for p in manifest["objects"] if p.endswith("/"))
    (site / theme / "added.js").write_text("added")
    with pytest.raises(ArchiveError, match=rf"changed object {theme} \(used by v1, v2\)"):
        read_archive(site)


def test_objects_of_earlier_versions_are_carried_into_every_release(two_versions, tmp_path):
    site = tmp_path / "site"
    shutil.copytree(two_versions.site.with_name(".site.releases"), tmp_path / ".site.releases")
    os.symlink(os.readlink(two_versions.site), site)
    before = tree_bytes(site.resolve())
    assert build_site(two_versions.data, site, PROJECT, version="v3").outcome == "published"
    after = tree_bytes(site.resolve())
    kept = {p for p in before if p.startswith(("objects/", "v/v1/", "v/v2/"))}
    assert {p: after.get(p) for p in kept} == {p: before[p] for p in kept}
    assert {v.label for v in read_archive(site)} == {"v1", "v2", "v3"}


def test_an_older_version_published_later_leaves_the_newest_versions_404(
    two_versions, tmp_path, monkeypatch
):
    site = tmp_path / "site"
    shutil.copytree(two_versions.site.with_name(".site.releases"), tmp_path / ".site.releases")
    os.symlink(os.readlink(two_versions.site), site)
    not_found = (site / "404.html").read_bytes()
    record_time = sitegen.commands.build.latest_record_time
    # A day before v1 and v2: v0 sorts first, v2 stays the newest.
    monkeypatch.setattr(
        sitegen.commands.build, "latest_record_time", lambda *a: (record_time(*a)[0] - 86400, "v0")
    )
    assert build_site(two_versions.data, site, PROJECT, version="v0").outcome == "published"
    assert (site / "404.html").read_bytes() == not_found
    assert [v.label for v in read_archive(site)] == ["v0", "v1", "v2"]
    assert broken_internal_links(site) == []


def test_a_manifest_of_schema_2_is_read_and_its_version_carried(two_versions, tmp_path):
    """Schema 2 listed every object file with its hash (the files of folder objects one by
    one): such a version is still verified and carried into the next release."""
    site = _copy(two_versions.site.resolve(), tmp_path)
    manifest_path = site / "v" / "v1" / ".sitegen-version.json"
    manifest = json.loads(manifest_path.read_bytes())
    files = {}
    for path in manifest["objects"]:
        stored = [site / path] if not path.endswith("/") else (site / path).rglob("*")
        files |= {
            p.relative_to(site).as_posix(): sha256_bytes(p.read_bytes())
            for p in stored
            if p.is_file()
        }
    manifest |= {"schema_version": 2, "objects": files}
    manifest_path.write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n")
    assert read_archive(site)[0].objects == files
    assert build_site(two_versions.data, site, PROJECT, version="v3").outcome == "published"
    assert broken_internal_links(site) == []
    theme_file = next(path for path in files if path.endswith("/sitegen.css"))
    (site.resolve() / theme_file).unlink()
    with pytest.raises(ArchiveError, match=f"missing object {theme_file} \\(used by v1\\)"):
        read_archive(site)


@pytest.fixture(scope="module")
def old_layout_site(tmp_path_factory) -> TwoVersions:
    """A site published before objects: v1 holds every file of its own (the publishing of
    the time: no objects, source maps kept, a manifest of schema 1)."""
    from tests.builtsites import reusing_renders

    root = tmp_path_factory.mktemp("old-layout")
    records = publishable_campaign(root / "data")
    with pytest.MonkeyPatch.context() as patch, reusing_renders():
        patch.setattr(sitegen.publish.site, "_store_objects", lambda *_: ({}, {}))
        build_site(root / "data", root / "site", PROJECT, version="v1")
    manifest_path = root / "site" / "v" / "v1" / ".sitegen-version.json"
    manifest = json.loads(manifest_path.read_bytes())
    del manifest["objects"]
    manifest["schema_version"] = 1
    manifest_path.write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n")
    return TwoVersions(root / "data", root / "site", report_address(records.parent))


def test_an_old_layout_site_is_migrated_keeping_its_versions_bytes(old_layout_site, tmp_path):
    site = _copy(old_layout_site.site.resolve(), tmp_path)  # a real site/ directory
    v1 = site / "v" / "v1"
    old = tree_bytes(v1)
    assert not (v1 / "objects.json").exists() and list(v1.rglob("*.map"))
    assert build_site(old_layout_site.data, site, PROJECT, version="v2").outcome == "published"
    assert site.is_symlink()
    assert {v.label for v in read_archive(site)} == {"v1", "v2"}
    assert tree_bytes(site / "v" / "v1") == old  # a published version is never changed
    assert broken_internal_links(site) == []
    # The new version uses objects; the files it shares with v1 are one file on disk.
    download = f"reports/{old_layout_site.slug}/downloads/records.jsonl.gz"
    moved = published_file(site / "v" / "v2", download)
    assert moved.is_relative_to(site / "objects")
    assert os.path.samefile(moved, site / "v" / "v1" / download)


def test_pages_name_objects_relative_to_themselves_and_the_404_from_the_root():
    placement = place_objects(
        {
            "reports/r/downloads/a.csv": "ab" * 32,
            "assets/css/x.css": "cd" * 32,
            "reports/r/index.html": "ef" * 32,
        },
        {
            "reports/r/index.html": '<a href="downloads/a.csv?x=1#t">a</a>',
        },
    )
    assert placement.moved["reports/r/downloads/a.csv"] == f"objects/{'ab' * 32}/a.csv"
    (theme,) = placement.folders.values()
    assert placement.moved["assets/css/x.css"] == f"{theme}/css/x.css"
    page = rewrite_page(
        "reports/r/index.html",
        '<a href="downloads/a.csv?x=1#t">a</a><a href="/docs/v/l/en/">en</a>'
        '<link rel="canonical" href="https://e.org/docs/v/l/reports/r/">'
        '<link href="../../assets/css/x.css"><a href="https://e.org/v/l/">x</a>',
        placement,
        "https://e.org/docs/v/l/",
    )
    assert page == (
        f'<a href="../../../../objects/{"ab" * 32}/a.csv?x=1#t">a</a><a href="../../en/">en</a>'
        '<link rel="canonical" href="./">'
        f'<link href="../../../../{theme}/css/x.css"><a href="https://e.org/v/l/">x</a>'
    )
    not_found = rewrite_page(
        "404.html",
        '<link href="/docs/v/l/assets/css/x.css"><a href="/docs/v/l//../../latest/">latest</a>',
        placement,
        "https://e.org/docs/v/l/",
    )
    assert not_found == f'<link href="/docs/{theme}/css/x.css"><a href="/docs/latest/">latest</a>'


def test_a_percent_encoded_name_is_found_and_kept_encoded():
    files = {"r/a b.csv": "ab" * 32, "r/index.html": "cd" * 32}
    text = '<a href="a%20b.csv">a</a>'
    placement = place_objects(files, {"r/index.html": text})
    assert placement.moved == {"r/a b.csv": f"objects/{'ab' * 32}/a b.csv"}
    rewritten = rewrite_page("r/index.html", text, placement, "https://e.org/v/l/")
    assert rewritten == f'<a href="../../../objects/{"ab" * 32}/a%20b.csv">a</a>'


def test_an_unreferenced_file_stays_in_the_version():
    files = {"search/search_index.json": "ab" * 32, "index.html": "cd" * 32}
    placement = place_objects(files, {"index.html": "<p>nothing</p>"})
    assert placement == Placement({}, {})


def test_a_version_that_adds_a_report_stores_the_other_reports_pages_once(tmp_path):
    first = report_address(publishable_campaign(tmp_path / "data").parent)
    site = tmp_path / "site"
    build_site(tmp_path / "data", site, PROJECT, version="v1")
    added_plan = make_plan(name="added", title={"ja": "追加", "en": "Added"})
    added = report_address(publishable_campaign(tmp_path / "data", added_plan).parent)
    build_site(tmp_path / "data", site, PROJECT, version="v2")
    v1, v2 = site / "v" / "v1", site / "v" / "v2"
    # A page's navigation lists only its own report: the first report's pages are the
    # same bytes in both versions, one file on disk.
    for lang in ("", "en/"):
        for page in ("", "speed/", "method/", "data/"):
            path = f"{lang}reports/{first}/{page}index.html"
            assert os.path.samefile(v1 / path, v2 / path), path
            assert f"reports/{added}/" not in (v2 / path).read_text(), path
        home = (v2 / lang / "index.html").read_text()
        assert f"reports/{first}/" in home and f"reports/{added}/" in home
        added_page = (v2 / f"{lang}reports/{added}/speed/index.html").read_text()
        assert f"reports/{first}/" not in added_page
        assert 'href="../method/"' in added_page  # its own section is in its navigation
