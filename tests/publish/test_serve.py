"""``sitegen serve`` and ``sitegen --version``: a preview of the built site over HTTP."""

from __future__ import annotations

import subprocess
import sys
import urllib.request

import pytest

from sitegen.cli import main
from sitegen.commands.build import build_site
from tests.builtsites import published_objects
from tests.sitefixtures import PROJECT, publishable_campaign


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    root = tmp_path_factory.mktemp("serve")
    publishable_campaign(root / "data")
    build_site(root / "data", root / "site", PROJECT, version="v1")
    return root / "site"


def _get(url: str) -> tuple[int, str, bytes]:
    with urllib.request.urlopen(url, timeout=10) as response:
        return response.status, response.headers["Content-Type"], response.read()


def test_serve_prints_its_url_and_serves_pages_and_data_with_their_types(site):
    server = subprocess.Popen(
        [sys.executable, "-m", "sitegen", "serve", "--site", str(site), "--port", "0"],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        line = server.stdout.readline()
        url = line.split(" at ", 1)[1].split()[0]
        assert url.startswith("http://127.0.0.1:")
        status, kind, body = _get(url)
        assert status == 200 and kind.startswith("text/html") and b"latest/" in body
        status, kind, _ = _get(f"{url}latest/")
        assert status == 200 and kind.startswith("text/html")
        status, kind, _ = _get(f"{url}versions.json")
        assert status == 200 and kind == "application/json"
        status, kind, _ = _get(f"{url}v/v1/search/search_index.json")
        assert kind == "application/json"
        script = published_objects(site / "v" / "v1")["assets/js/charts.js"]
        assert _get(f"{url}{script}")[1].startswith("text/javascript")
    finally:
        server.terminate()
        server.wait(timeout=10)


def test_serve_without_a_built_site_says_what_to_do(tmp_path, capsys):
    assert main(["serve", "--site", str(tmp_path), "--port", "0"]) == 1
    assert "run 'sitegen build' first" in capsys.readouterr().err


def test_version(capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["--version"])
    assert exit_.value.code == 0
    assert capsys.readouterr().out.startswith("sitegen 0.")
