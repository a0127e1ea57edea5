"""`sitegen audit` on a real plan's report (absolute model paths, a server address, host
names and environment values, all redacted) and against every way a host could change
what it serves: pages, figure marks, scripts, styles, chart data, objects, search parts,
the version lists, the lists themselves, the key. Each tamper fails the audit with a line
naming what changed."""

from __future__ import annotations

import gzip
import hashlib
import json
import re
import shutil
import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

import sitegen.commands.audit
from sitegen.cli import main
from sitegen.commands.build import build_site
from sitegen.commands.init_project import init_project
from sitegen.core.signing import KEY_ENV, PUBLIC_KEY_FILE, init_keys, load_signer
from sitegen.plan.plan_models import ModelSpec
from sitegen.publish.signed_files import FILE_LIST
from sitegen.records.verify import sign_existing
from tests.conftest import make_plan
from tests.sitefixtures import publishable_campaign, report_address

VERSION = "a"
MODEL_PATH = "/models/GLM-5.3-Flash-GGUF/GLM-5.3-Flash-UD-IQ3_XXS-00001-of-00004.gguf"
HOST = "gpu-node-7.corp.example"
SERVER = "http://10.20.30.40:8081"


def gpu_style_record(record: dict) -> None:
    """What a GPU host records: its host name, a server address in the engine flags, a
    home directory in an environment value."""
    provenance = record["provenance"]
    provenance["host"]["hostname"] = HOST
    provenance["flags"]["server"] = f"{SERVER}/v1/chat/completions"
    provenance["env"]["HF_HOME"] = "/home/alice/.cache/huggingface"


@pytest.fixture(scope="module")
def signed_site(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, str, Path]:
    """A signed site of a real-looking GPU plan, built once: (site, report slug, key
    fingerprint, data directory)."""
    root = tmp_path_factory.mktemp("tamper")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("XDG_CONFIG_HOME", str(root / "config"))
        patch.delenv(KEY_ENV, raising=False)
        project = root / "project"
        init_project(project)
        _, _, key = init_keys(project)
        plan = make_plan(
            name="glm-h100",
            model=ModelSpec(name="GLM-5.3-Flash", source=MODEL_PATH, quantization="UD-IQ3_XXS"),
        )
        directory = publishable_campaign(root / "data", plan=plan, mutate=gpu_style_record).parent
        if not (directory / "manifest.json.sig").exists():
            sign_existing(directory, load_signer(project))
        build_site(root / "data", root / "site", project, version=VERSION)
    return (root / "site").resolve(), report_address(directory), key, root / "data"


@pytest.fixture
def site(signed_site: tuple[Path, str, str, Path], tmp_path: Path) -> Path:
    return Path(shutil.copytree(signed_site[0], tmp_path / "site", symlinks=True))


def audit(site: Path | str, capsys: pytest.CaptureFixture[str], *options: str) -> tuple[int, str]:
    code = main(["audit", str(site), *options])
    captured = capsys.readouterr()
    return code, captured.out + captured.err


def test_a_report_of_a_real_gpu_plan_audits_clean_with_every_figure_recomputed(
    signed_site, capsys
) -> None:
    site, slug, key, _ = signed_site
    code, out = audit(site, capsys, "--key", key)
    assert code == 0, out
    assert f"signing key {key}: the pinned key" in out
    figures = int(re.search(r"(\d+) figure\(s\) on", out)[1])
    recomputed = int(re.search(r"(\d+) derived download\(s\) recomputed", out)[1])
    assert figures > 300 and recomputed >= 15
    assert "not checked" not in out and "cannot rebuild" not in out
    # What was published is redacted: nothing of the machine is in the downloads.
    published = b"".join(path.read_bytes() for path in site.rglob("*") if path.is_file())
    published += b"".join(
        gzip.decompress(path.read_bytes()) for path in site.rglob("records.jsonl.gz")
    )
    for secret in (MODEL_PATH, HOST, "10.20.30.40", "/home/alice"):
        assert secret.encode() not in published, secret


# --------------------------------------------------------------------------- tampering


def version(site: Path) -> Path:
    return site / "v" / VERSION


def stored(site: Path, path: str) -> Path:
    """Where the site holds version ``VERSION``'s file ``path``."""
    objects = json.loads((version(site) / "objects.json").read_text())
    return site / objects[path] if path in objects else version(site) / path


def listed(site: Path, suffix: str) -> Path:
    """The first file of the version's list whose path ends with ``suffix``."""
    listing = json.loads((version(site) / FILE_LIST).read_text())
    return site / next(path for path in listing["files"] if path.endswith(suffix))


def append(path: Path, data: bytes) -> None:
    path.write_bytes(path.read_bytes() + data)


def replace_text(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text, (path, old)
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


def first_mark(page: Path) -> tuple[str, str]:
    found = re.search(r'<span data-figure="([^"]+)">([^<]+)</span>', page.read_text())
    return found[1], found[2]


def summary_page(site: Path, slug: str) -> Path:
    return version(site) / "en" / "reports" / slug / "index.html"


def mark_replaced(site: Path, slug: str) -> str:
    page = summary_page(site, slug)
    figure_id, text = first_mark(page)
    replace_text(page, f'<span data-figure="{figure_id}">{text}</span>', "<span>99.99</span>")
    return f"{figure_id}: the signed figure {text!r} is not on the page"


def mark_renamed(site: Path, slug: str) -> str:
    page = summary_page(site, slug)
    figure_id, text = first_mark(page)
    replace_text(page, f'data-figure="{figure_id}"', 'data-figure="ratio/x/y/z/ratio"')
    return "ratio/x/y/z/ratio: " + repr(text) + " is marked but not signed"


def mark_added(site: Path, slug: str) -> str:
    page = summary_page(site, slug)
    replace_text(page, "</article>", '<span data-figure="speed/on/short/n">9</span></article>')
    return "speed/on/short/n: '9' is marked but not signed"


def mark_text_changed(site: Path, slug: str) -> str:
    page = version(site) / "reports" / slug / "speed" / "index.html"
    figure_id, text = first_mark(page)
    replace_text(page, f'"{figure_id}">{text}<', f'"{figure_id}">{text}0<')
    return f"{figure_id}: the signed figure {text!r} is not on the page"


def prose_changed(site: Path, slug: str) -> str:
    page = version(site) / "index.html"
    replace_text(page, "</h1>", " — 3× faster</h1>")
    return f"v/{VERSION}/index.html · altered"


def script_appended(site: Path, slug: str) -> str:
    script = listed(site, "tables.js")
    append(
        script,
        b"\ndocument.querySelectorAll('[data-figure]').forEach(e => e.textContent = '99');\n",
    )
    return f"{script.relative_to(site).as_posix()} · altered"


def style_appended(site: Path, slug: str) -> str:
    style = listed(site, ".css")
    append(style, b"\n[data-caveat]{display:none}\n")
    return f"{style.relative_to(site).as_posix()} · altered"


def chart_data_tripled(site: Path, slug: str) -> str:
    """The speed page's chart specs (inline JSON) with every value of a ``y`` series
    tripled."""
    page = version(site) / "reports" / slug / "speed" / "index.html"
    text = page.read_text(encoding="utf-8")
    tripled = re.sub(
        r'("y":\[)([0-9.,]+)',
        lambda m: m[1] + ",".join(str(float(v) * 3) for v in m[2].split(",") if v),
        text,
    )
    assert tripled != text
    page.write_text(tripled, encoding="utf-8")
    return f"v/{VERSION}/reports/{slug}/speed/index.html · altered"


def object_not_in_sums_changed(site: Path, slug: str) -> str:
    shard = listed(site, "/0.json")
    append(shard, b" ")
    return f"{shard.relative_to(site).as_posix()} · altered"


def object_changed_and_relisted(site: Path, slug: str) -> str:
    """The host edits an object and writes its new hash into the version's list, without
    the key: the list's signature fails."""
    shard = listed(site, "/0.json")
    append(shard, b" ")
    listing = version(site) / FILE_LIST
    relative = shard.relative_to(site).as_posix()
    data = json.loads(listing.read_text())
    data["files"][relative] = {
        "sha256": hashlib.sha256(shard.read_bytes()).hexdigest(),
        "size_bytes": shard.stat().st_size,
    }
    listing.write_text(json.dumps(data, indent=1) + "\n")
    return f"v/{VERSION}/{FILE_LIST} · changed after it was signed"


def object_folder_gains_a_file(site: Path, slug: str) -> str:
    folder = listed(site, "tables.js").parent
    (folder / "extra.js").write_text("alert(1)")
    added = (folder / "extra.js").relative_to(site).as_posix()
    return f"{added} · added: no signed list names it"


def version_gains_a_file(site: Path, slug: str) -> str:
    (version(site) / "reports" / slug / "notice.html").write_text("<p>3× faster</p>")
    return f"v/{VERSION}/reports/{slug}/notice.html · added: no signed list names it"


def page_removed(site: Path, slug: str) -> str:
    (version(site) / "reports" / slug / "method" / "index.html").unlink()
    return f"v/{VERSION}/reports/{slug}/method/index.html · listed in v/{VERSION}/{FILE_LIST} but not published"


def script_removed(site: Path, slug: str) -> str:
    script = listed(site, "tables.js")
    script.unlink()
    return f"{script.relative_to(site).as_posix()} · listed in"


def search_index_changed(site: Path, slug: str) -> str:
    index = version(site) / "search" / "search_index.json"
    replace_text(index, '"docs":[', '"docs":[{"location":"","title":"3× faster","text":""},')
    return f"v/{VERSION}/search/search_index.json · altered"


def sitemap_changed(site: Path, slug: str) -> str:
    replace_text(version(site) / "sitemap.xml", "<urlset", "<!-- -->\n<urlset")
    return f"v/{VERSION}/sitemap.xml · altered"


def object_map_redirected(site: Path, slug: str) -> str:
    listing = version(site) / "objects.json"
    objects = json.loads(listing.read_text())
    path = f"reports/{slug}/downloads/trials.csv"
    objects[path] = objects[f"reports/{slug}/downloads/memory.csv"]
    listing.write_text(json.dumps(objects, indent=1, sort_keys=True) + "\n")
    return f"v/{VERSION}/objects.json · altered"


def versions_gain_an_entry(site: Path, slug: str) -> str:
    listing = site / "versions.json"
    versions = json.loads(listing.read_text())
    versions.append({"version": "old", "title": "old", "aliases": []})
    listing.write_text(json.dumps(versions))
    return f"versions.json · lists {VERSION}, old; {FILE_LIST} signs {VERSION}"


def selector_list_changed(site: Path, slug: str) -> str:
    append(site / "v" / "versions.json", b" ")
    return "v/versions.json · altered"


def changelog_data_changed(site: Path, slug: str) -> str:
    changelog = next((site / "changelog").glob("*.json"))
    append(changelog, b" ")
    return f"{changelog.relative_to(site).as_posix()} · altered"


def history_data_changed(site: Path, slug: str) -> str:
    history = next((site / "history").rglob("*.json"))
    append(history, b" ")
    return f"{history.relative_to(site).as_posix()} · altered"


def root_redirect_changed(site: Path, slug: str) -> str:
    replace_text(
        site / "index.html", 'data-target="latest/"', 'data-target="https://evil.example/"'
    )
    return "index.html · altered"


def latest_redirect_changed(site: Path, slug: str) -> str:
    page = site / "latest" / "index.html"
    append(page, b"<p>3x</p>")
    return "latest/index.html · altered"


def not_found_page_changed(site: Path, slug: str) -> str:
    append(site / "404.html", b"<p>3x</p>")
    return "404.html · altered"


def root_gains_a_file(site: Path, slug: str) -> str:
    (site / "press.html").write_text("<p>3× faster</p>")
    return "press.html · added: no signed list names it"


def version_list_removed(site: Path, slug: str) -> str:
    (version(site) / FILE_LIST).unlink()
    (version(site) / (FILE_LIST + ".sig")).unlink()
    return f"v/{VERSION}/{FILE_LIST} · not the list {FILE_LIST} signs for this version"


def every_list_removed(site: Path, slug: str) -> str:
    for folder in (site, version(site)):
        (folder / FILE_LIST).unlink()
        (folder / (FILE_LIST + ".sig")).unlink()
    return f"v/{VERSION}/{FILE_LIST} · missing: this version's reports publish"


def version_signature_removed(site: Path, slug: str) -> str:
    (version(site) / (FILE_LIST + ".sig")).unlink()
    return f"v/{VERSION}/{FILE_LIST} · unsigned: no {FILE_LIST}.sig"


def root_list_hash_changed(site: Path, slug: str) -> str:
    listing = site / FILE_LIST
    data = json.loads(listing.read_text())
    data["files"]["versions.json"]["sha256"] = "0" * 64
    listing.write_text(json.dumps(data, indent=1) + "\n")
    return f"{FILE_LIST} · changed after it was signed"


def oversized_file(site: Path, slug: str) -> str:
    page = version(site) / "en" / "index.html"
    append(page, b" " * 100_000)
    return f"v/{VERSION}/en/index.html · altered: larger than the"


def record_changed_and_every_hash_rewritten(site: Path, slug: str) -> str:
    """A forger who can write the host but has no key: a record changed, its new hash in
    SHA256SUMS and in the list: the signatures fail."""
    records = stored(site, f"reports/{slug}/downloads/records.jsonl.gz")
    lines = gzip.decompress(records.read_bytes()).decode().splitlines()
    lines[-1] = lines[-1].replace('"role":"measured"', '"role":"warmup"')
    records.write_bytes(gzip.compress(("\n".join(lines) + "\n").encode(), mtime=0))
    sums = stored(site, f"reports/{slug}/downloads/SHA256SUMS")
    digest = hashlib.sha256(records.read_bytes()).hexdigest()
    text = re.sub(r"(?m)^[0-9a-f]{64}(?=  records\.jsonl\.gz$)", digest, sums.read_text())
    sums.write_text(text)
    return f"reports/{slug}/downloads/SHA256SUMS · changed after it was signed"


def key_file_removed(site: Path, slug: str) -> str:
    (version(site) / PUBLIC_KEY_FILE).unlink()
    return f"v/{VERSION}/{PUBLIC_KEY_FILE} · listed in v/{VERSION}/{FILE_LIST} but not published"


TAMPERS: list[Callable[[Path, str], str]] = [
    mark_replaced,
    mark_renamed,
    mark_added,
    mark_text_changed,
    prose_changed,
    script_appended,
    style_appended,
    chart_data_tripled,
    object_not_in_sums_changed,
    object_changed_and_relisted,
    object_folder_gains_a_file,
    version_gains_a_file,
    page_removed,
    script_removed,
    search_index_changed,
    sitemap_changed,
    object_map_redirected,
    versions_gain_an_entry,
    selector_list_changed,
    changelog_data_changed,
    history_data_changed,
    root_redirect_changed,
    latest_redirect_changed,
    not_found_page_changed,
    root_gains_a_file,
    version_list_removed,
    every_list_removed,
    version_signature_removed,
    root_list_hash_changed,
    oversized_file,
    record_changed_and_every_hash_rewritten,
    key_file_removed,
]


@pytest.mark.parametrize("tamper", TAMPERS, ids=lambda tamper: tamper.__name__)
def test_a_tampered_site_fails_the_audit_naming_what_changed(
    tamper, site: Path, signed_site, capsys
) -> None:
    expected = tamper(site, signed_site[1])
    code, out = audit(site, capsys, "--key", signed_site[2])
    assert code == 1, out
    assert expected in out, out
    assert out.splitlines()[-1].startswith("FAILED")


def test_a_site_rebuilt_with_another_key_passes_only_without_the_pinned_key(
    signed_site, capsys, tmp_path: Path, monkeypatch
) -> None:
    """What a host can do without the publisher's key: take the data, sign it with a key of
    its own and build the whole site again. Consistent in itself, it differs only in the
    key: pinning the publisher's fingerprint fails it."""
    _, _, key, measured = signed_site
    data = Path(shutil.copytree(measured, tmp_path / "data"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    project = tmp_path / "project"
    init_project(project)
    _, _, other = init_keys(project)
    for signature in data.rglob("manifest.json.sig"):
        signature.unlink()
        sign_existing(signature.parent, load_signer(project))
    build_site(data, tmp_path / "site", project, version=VERSION)
    code, out = audit(tmp_path / "site", capsys)
    assert code == 0, out
    assert f"signing key {other}" in out
    code, out = audit(tmp_path / "site", capsys, "--key", key)
    assert code == 1
    assert f"the site is signed by key {other}, not the pinned {key}" in out


# --------------------------------------------------------------------------- bounded


def test_bad_json_from_the_host_is_one_line_naming_the_file(site: Path, capsys) -> None:
    (site / "versions.json").write_text("[" * 100_000 + "]" * 100_000)
    code, out = audit(site, capsys)
    assert code == 1 and "versions.json: JSON nested too deeply" in out
    assert "Traceback" not in out
    (site / "versions.json").write_text(json.dumps([{"version": VERSION, "aliases": ["latest"]}]))
    (version(site) / "objects.json").unlink()
    (version(site) / "objects.json").write_text("{" * 50_000)
    code, out = audit(site, capsys)
    assert code == 1 and "objects.json:" in out and "Traceback" not in out


class _Hostile(BaseHTTPRequestHandler):
    """Serves ``versions.json`` without end (``endless``) or one byte a second."""

    mode = "endless"

    def do_GET(self) -> None:  # noqa: N802 (the standard library's name)
        self.send_response(200)
        self.end_headers()
        try:
            self.wfile.write(b"[")
            while True:
                if self.mode == "endless":
                    self.wfile.write(b"[]," * 10_000)
                else:
                    self.wfile.write(b" ")
                    self.wfile.flush()
                    time.sleep(0.2)
        except (BrokenPipeError, ConnectionResetError):
            return

    def log_message(self, *args) -> None:
        pass


@pytest.fixture
def hostile_server() -> Iterator[Callable[[str], str]]:
    servers = []

    def start(mode: str) -> str:
        handler = type("Handler", (_Hostile,), {"mode": mode})
        server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        server.daemon_threads = True
        threading.Thread(target=server.serve_forever, daemon=True).start()
        servers.append(server)
        return f"http://127.0.0.1:{server.server_address[1]}/"

    yield start
    for server in servers:
        server.shutdown()
        server.server_close()


def test_an_endless_body_stops_at_the_limit(hostile_server, capsys, monkeypatch) -> None:
    monkeypatch.setattr(sitegen.commands.audit, "UNLISTED_LIMIT", 1 << 20)
    code, out = audit(hostile_server("endless"), capsys)
    assert code == 1
    assert re.search(r"versions\.json: more than 1,048,576 bytes", out), out


def test_a_drip_ends_at_the_deadline(hostile_server, capsys) -> None:
    started = time.monotonic()
    code, out = audit(hostile_server("drip"), capsys, "--deadline", "2")
    assert code == 1 and "the audit's deadline passed" in out, out
    assert time.monotonic() - started < 10
