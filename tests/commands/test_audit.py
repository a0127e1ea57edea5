"""`sitegen audit`: a published version checks clean from its directory and over HTTP, and
a changed figure, table cell or record (re-hashed or not, signed or not) is named."""

from __future__ import annotations

import functools
import gzip
import hashlib
import json
import re
import shutil
import socket
import threading
from collections.abc import Iterator
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import quote

import jinja2
import pytest

from sitegen.cli import main
from sitegen.commands.audit_checks import linked_pages, pick_version
from sitegen.commands.build import build_site
from sitegen.commands.init_project import init_project
from sitegen.core.errors import UsageError
from sitegen.core.signing import (
    KEY_ENV,
    PUBLIC_KEY_FILE,
    Signer,
    init_keys,
    load_signer,
)
from sitegen.pages.i18n import Catalog
from sitegen.pages.published_figures import figure_span
from sitegen.publish.signed_files import (
    FILE_LIST,
    LIST_FILES,
    site_list,
    version_list,
    write_list,
)
from sitegen.records.layout import sha256_file
from sitegen.records.verify import sign_existing
from tests.sitefixtures import publishable_campaign, report_address

VERSION = "a"


@pytest.fixture(scope="module")
def published(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, Signer]:
    """A signed site built once (the unit plan on the fake engine), its report's address
    and the publisher's key; tests audit copies of it."""
    root = tmp_path_factory.mktemp("audit")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("XDG_CONFIG_HOME", str(root / "config"))
        patch.delenv(KEY_ENV, raising=False)
        project = root / "project"
        init_project(project)
        init_keys(project)
        directory = publishable_campaign(root / "data").parent
        signer = load_signer(project)
        sign_existing(directory, signer)
        build_site(root / "data", root / "site", project, version=VERSION)
    return (root / "site").resolve(), report_address(directory), signer


@pytest.fixture
def site(published: tuple[Path, str, Signer], tmp_path: Path) -> Path:
    """A copy of the published site to change."""
    return Path(shutil.copytree(published[0], tmp_path / "site"))


def audit(location: str | Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    code = main(["audit", str(location)])
    return code, capsys.readouterr().out


@pytest.fixture
def served(published: tuple[Path, str]) -> Iterator[str]:
    """The published site over HTTP on 127.0.0.1, as any static host serves it."""
    handler = functools.partial(SimpleHTTPRequestHandler, directory=str(published[0]))
    handler.log_message = lambda *args: None
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


def checked_figures(output: str) -> int:
    return int(re.search(r"(\d+) figure\(s\) on", output)[1])


def test_a_published_version_audits_clean_from_its_directory_and_over_http(
    published, served, capsys
) -> None:
    site, slug, _ = published
    code, out = audit(site, capsys)
    assert code == 0, out
    assert f"version {VERSION} of" in out and "signing key sha256:" in out
    # Every kind of covered figure was compared: the cards, the speed table, percentiles.
    assert checked_figures(out) > 100 and "ok: every figure" in out
    assert "not recomputed: annotations" in out
    code, over_http = audit(served, capsys)
    assert code == 0, over_http
    assert checked_figures(over_http) == checked_figures(out)


def version_file(site: Path, path: str) -> Path:
    """Where the site holds version ``VERSION``'s file ``path``: through its
    ``objects.json``, else at the plain path."""
    version = site / "v" / VERSION
    listing = version / "objects.json"
    objects = json.loads(listing.read_text()) if listing.is_file() else {}
    return site / objects[path] if path in objects else version / path


def first_figure(page: Path) -> tuple[str, str]:
    found = re.search(r'<span data-figure="([^"]+)">([^<]+)</span>', page.read_text())
    return found[1], found[2]


def test_a_changed_figure_is_named_with_its_page(site: Path, published, capsys) -> None:
    slug = published[1]
    page = site / "v" / VERSION / "en" / "reports" / slug / "speed" / "index.html"
    figure_id, text = first_figure(page)
    html = page.read_text()
    page.write_text(html.replace(f'"{figure_id}">{text}<', f'"{figure_id}">9{text}<', 1))
    code, out = audit(site, capsys)
    assert code == 1
    line = f"en/reports/{slug}/speed/ · {figure_id} · published 9{text} · recomputed {text}"
    assert line in out.splitlines()
    # The page's bytes and marks are no longer the ones the version's list signs.
    assert f"en/reports/{slug}/speed/ · {figure_id}: the signed figure {text!r} is not" in out
    assert f"v/{VERSION}/en/reports/{slug}/speed/index.html · altered" in out
    assert out.splitlines()[-1].startswith("FAILED: 4 mismatch(es)")


def test_a_changed_csv_cell_is_named_by_row_and_column(site: Path, published, capsys) -> None:
    slug = published[1]
    table = version_file(site, f"reports/{slug}/downloads/speed_summary.csv")
    lines = table.read_text(encoding="utf-8-sig").split("\n")
    header = lines[0].split(",")
    column = header.index('"gen_tps_median"')
    cells = lines[1].split(",")
    original = cells[column]
    cells[column] = "1234.5"
    lines[1] = ",".join(cells)
    table.write_text("\n".join(lines), encoding="utf-8-sig")
    code, out = audit(site, capsys)
    assert code == 1
    where = f"reports/{slug}/downloads/speed_summary.csv"
    assert f"{where} · altered: its SHA-256 is not the one SHA256SUMS lists" in out
    assert (
        f"{where} · row 1 · column gen_tps_median · published 1234.5 · recomputed {original}" in out
    )


def change_a_record_and_rehash(site: Path, slug: str) -> None:
    """Raise one measured trial's peak memory in ``records.jsonl.gz`` above every other and
    write the new hashes into ``manifest.json`` and ``SHA256SUMS``: what a forger who can
    write the host would do."""
    records = version_file(site, f"reports/{slug}/downloads/records.jsonl.gz")
    lines = gzip.decompress(records.read_bytes()).decode().splitlines()
    index = next(i for i, line in enumerate(lines) if '"role":"measured"' in line)
    record = json.loads(lines[index])
    record["peak_memory"][0]["peak_mib"] = 99_999.0
    lines[index] = json.dumps(record)
    unpacked = ("\n".join(lines) + "\n").encode()
    records.write_bytes(gzip.compress(unpacked, mtime=0))
    manifest = version_file(site, f"reports/{slug}/downloads/manifest.json")
    stated = json.loads(manifest.read_text())
    stated["records_sha256"] = hashlib.sha256(unpacked).hexdigest()
    manifest.write_text(json.dumps(stated, indent=1) + "\n")
    sums = version_file(site, f"reports/{slug}/downloads/SHA256SUMS")
    listed = sums.read_text()
    for name, path in (("records.jsonl.gz", records), ("manifest.json", manifest)):
        digest = hashlib.sha256(path.read_bytes()).hexdigest()
        listed = re.sub(rf"(?m)^[0-9a-f]{{64}}(?=  {re.escape(name)}$)", digest, listed)
    sums.write_text(listed)


def test_a_changed_record_is_refused_by_the_signature(site: Path, published, capsys) -> None:
    change_a_record_and_rehash(site, published[1])
    code, out = audit(site, capsys)
    assert code == 1
    assert f"reports/{published[1]}/downloads/SHA256SUMS · changed after it was signed" in out


def test_a_changed_record_of_an_unsigned_site_is_named_by_its_figures(
    site: Path, published, capsys
) -> None:
    slug = published[1]
    version_file(site, PUBLIC_KEY_FILE).unlink()
    version_file(site, f"reports/{slug}/downloads/SHA256SUMS.sig").unlink()
    change_a_record_and_rehash(site, slug)
    code, out = audit(site, capsys)
    assert code == 1
    assert "signing key sha256" not in out and "publishes no signing key" in out
    assert "not the one SHA256SUMS lists" not in out  # the hashes were made to match
    # The memory table names the figure on both languages' speed pages.
    for page in (f"reports/{slug}/speed/", f"en/reports/{slug}/speed/"):
        assert re.search(
            rf"^{page} · memory/\S+/max · published \S+ · recomputed 97\.66$", out, re.M
        )
    assert f"reports/{slug}/downloads/memory.csv · row " in out


def test_a_version_published_before_objects_is_read_at_its_plain_paths(
    site: Path, published, capsys
) -> None:
    """A version without ``objects.json`` (published before the content-addressed archive):
    every file under ``v/<label>/``, the pages linking there."""
    version, slug = site / "v" / VERSION, published[1]
    objects = json.loads((version / "objects.json").read_text())
    for path, stored in objects.items():
        (version / path).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(site / stored, version / path)
    (version / "objects.json").unlink()
    shutil.rmtree(site / "objects")
    # The pages still link the objects, which are gone: each download link is named.
    code, out = audit(site, capsys)
    assert code == 1
    stored = objects[f"reports/{slug}/downloads/trials.csv"]
    assert f"en/reports/{slug}/data/ · links {stored}, which is not a file SHA256SUMS lists" in out
    plain = {quote(stored): path for path, stored in objects.items()}
    for page in version.rglob("index.html"):
        up = "../" * len(page.parent.relative_to(version).parts)
        html = re.sub(
            r'href="(?:\.\./)*(objects/[^"]+)"',
            lambda link, up=up: f'href="{up}{plain.get(link[1], link[1])}"',
            page.read_text(),
        )
        page.write_text(html)
    list_again(site, published[2])
    code, out = audit(site, capsys)
    assert code == 0, out
    trials = version / "reports" / slug / "downloads" / "trials.csv"
    trials.write_bytes(trials.read_bytes().replace(b"\n", b"\n ", 1))
    code, out = audit(site, capsys)
    assert code == 1 and f"reports/{slug}/downloads/trials.csv · altered" in out


def list_again(site: Path, signer: Signer) -> None:
    """The signed lists made again from the files of ``site`` (one version), as a
    publisher who rearranged the files would."""
    version = site / "v" / VERSION
    files = {
        path.relative_to(version).as_posix(): sha256_file(path)
        for path in version.rglob("*")
        if path.is_file() and path.name not in LIST_FILES
    }
    objects = {
        path.relative_to(site).as_posix(): sha256_file(path)
        for path in (site / "objects").rglob("*")
        if path.is_file()
    }
    shared = {
        p.relative_to(site).as_posix(): p.read_bytes()
        for p in (site / "assets").rglob("*")
        if p.is_file()
    }
    digests = write_list(version, version_list(site, VERSION, files, objects, shared), signer, 0)
    root = site_list(site, VERSION, {VERSION: digests[FILE_LIST]})
    write_list(site, root, signer, 0)


def test_no_site_or_no_such_version_is_exit_2(published, tmp_path: Path, capsys) -> None:
    assert main(["audit", str(tmp_path)]) == 2
    assert main(["audit", str(published[0]), "--version", "b"]) == 2
    assert "--version b: not published (known: a)" in capsys.readouterr().err
    # The v/ folder holds a copy of versions.json (for the version selector), not the pages.
    assert main(["audit", str(published[0] / "v")]) == 2
    assert "has no pages at v/a/; give the site's root" in capsys.readouterr().err


def test_the_version_is_the_latest_unless_named() -> None:
    listing = json.dumps(
        [{"version": "b", "aliases": ["latest"]}, {"version": "a", "aliases": []}]
    ).encode()
    assert pick_version(listing, None) == "b" and pick_version(listing, "a") == "a"
    with pytest.raises(UsageError, match="--version c: not published"):
        pick_version(listing, "c")


def test_links_resolve_against_the_page_and_stay_in_the_version() -> None:
    links = ["../speed/", "../../../objects/ab/x.csv", "../../../../b/index.html", "#top"]
    assert linked_pages("reports/x/data/", links, "a") == ["reports/x/speed/"]
    assert linked_pages("en/", ["reports/x/", "https://example.com/"], "a") == ["en/reports/x/"]


def test_labels_a_project_declares_are_taken_as_published(tmp_path: Path, capsys) -> None:
    """A host label and an environment value the project publishes as recorded are the
    records' own: the rebuilt campaign keeps them (its system table is the published one)."""
    project = tmp_path / "project"
    init_project(project)
    with (project / "mkdocs.yml").open("a") as config:
        config.write(
            f'\nredact:\n  hosts: {{"{socket.gethostname()}": "node A"}}\n'
            "  env:\n    keep: [OMP_NUM_THREADS, PATH]\n"
        )

    def with_path(record: dict) -> None:
        record["provenance"]["env"]["PATH"] = "/usr/bin"

    directory = publishable_campaign(tmp_path / "data", mutate=with_path).parent
    build_site(tmp_path / "data", tmp_path / "site", project, version=VERSION)
    system = f"reports/{report_address(directory)}/downloads/system.csv"
    assert "node A" in version_file(tmp_path / "site", system).read_text(encoding="utf-8-sig")
    code, out = audit(tmp_path / "site", capsys)
    assert code == 0, out


def test_a_template_prints_only_the_figures_of_the_table() -> None:
    figures = {"speed/off/q/gen_tps_median": "1,234.50"}
    span = figure_span(figures, "speed/off/q/gen_tps_median")
    assert str(span) == '<span data-figure="speed/off/q/gen_tps_median">1,234.50</span>'
    assert (span.value, span.text, span.id) == (None, "1,234.50", "speed/off/q/gen_tps_median")
    with pytest.raises(jinja2.TemplateRuntimeError, match="not a figure of this report"):
        figure_span(figures, "speed/off/q/gen_tps_max")
    # In a catalog string the mark stays markup and the string's own text is escaped.
    catalog = Catalog("en", {"kpi.percent": {"ja": "{value}%", "en": "<{value}%>"}})
    assert catalog.t("kpi.percent", value=span) == f"&lt;{span}%&gt;"
    assert catalog.t("kpi.percent", value="<b>") == "<<b>%>"  # plain text: escaped later
