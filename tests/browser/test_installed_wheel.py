"""sitegen as a team adopts it: the wheel installed into a fresh venv outside the checkout,
then ``init``, ``measure``, ``build`` and ``serve`` run from that venv alone.

The new venv reaches the dependencies through a ``.pth`` line naming the running venv's
site-packages (no download, no network), and ``import sitegen`` must resolve to the
installed wheel: a file missing from the package data fails here, not in a user's build.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
import time
import urllib.request
import zipfile
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]
TITLE = {"ja": "チームの推論ベンチマーク", "en": "Team inference benchmarks"}
SITE_URL = "https://bench.example.org/reports/"


def _run(args: list, cwd: Path, env: dict, timeout: float = 600) -> str:
    done = subprocess.run(
        [str(a) for a in args], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout
    )
    assert done.returncode == 0, f"{args}: {done.stdout[-2000:]}{done.stderr[-4000:]}"
    return done.stdout


def build_wheel(tmp: Path) -> Path:
    """The wheel of this checkout, built from a copy (the build writes egg-info and build/
    beside its sources). The build backend alone comes from the package index: the shared
    venv's setuptools may predate building wheels without the ``wheel`` package."""
    source = tmp / "source"
    source.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(REPO / name, source / name)
    shutil.copytree(
        REPO / "sitegen", source / "sitegen", ignore=shutil.ignore_patterns("__pycache__")
    )
    wheels = tmp / "wheels"
    _run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", wheels, source],
        tmp,
        os.environ | {"PIP_DISABLE_PIP_VERSION_CHECK": "1"},
    )
    return next(wheels.glob("sitegen-*.whl"))


def fresh_venv(tmp: Path) -> tuple[Path, dict]:
    """A venv without pip whose dependencies are the running venv's (a ``.pth`` line adds
    its site-packages after the venv's own), and an environment without this checkout."""
    venv = tmp / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", venv], check=True)
    python = venv / "bin" / "python"
    purelib = _run(
        [python, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"], tmp, {}
    ).strip()
    shared = {sysconfig.get_path("purelib"), sysconfig.get_path("platlib")}
    Path(purelib, "shared-venv.pth").write_text("".join(f"{p}\n" for p in sorted(shared)))
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    return venv, env


@pytest.mark.slow
def test_the_wheel_installs_inits_measures_builds_and_serves(browser, tmp_path):
    tmp = tmp_path
    assert not tmp.resolve().is_relative_to(REPO)
    wheel = build_wheel(tmp)
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
    assert "sitegen/defaults/theme/overrides/main.html" in names
    assert "sitegen/defaults/content/en/report/index.md" in names
    print(f"\nwheel {wheel.name}: {len(names)} files, {wheel.stat().st_size:,} bytes")

    venv, env = fresh_venv(tmp)
    started = time.monotonic()
    _run(
        [sys.executable, "-m", "pip", "--python", venv / "bin" / "python", "install", "-q"]
        + ["--no-deps", "--no-index", wheel],
        tmp,
        env,
    )
    where = _run(
        [venv / "bin" / "python", "-c", "import sitegen; print(sitegen.__file__)"], tmp, env
    )
    assert Path(where.strip()).is_relative_to(venv), where

    sitegen = venv / "bin" / "sitegen"
    work = tmp / "work"
    work.mkdir()
    done = subprocess.run([sitegen, "build"], cwd=work, env=env, capture_output=True, text=True)
    assert done.returncode == 1 and "sitegen init DIR" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1

    _run([sitegen, "init", "x"], work, env)
    project = work / "x"
    assert (project / ".github" / "workflows" / "pages.yml").is_file()
    assert (project / ".gitignore").read_text().startswith("site/")
    refused = subprocess.run(
        [sitegen, "init", "x"], cwd=work, env=env, capture_output=True, text=True
    )
    assert refused.returncode == 1 and "not an empty directory" in refused.stderr
    config = project / "mkdocs.yml"
    config.write_text(
        config.read_text()
        + yaml.safe_dump({"title": TITLE, "site_url": SITE_URL}, allow_unicode=True)
    )

    _run([sitegen, "measure"], project, env)
    _run([sitegen, "build"], project, env)
    version = next(p for p in (project / "site" / "v").iterdir() if p.is_dir())
    report = next(version.glob("reports/*/index.html")).parent.relative_to(version).as_posix()

    server = subprocess.Popen(
        [sitegen, "serve", "--port", "0"], cwd=project, env=env, stdout=subprocess.PIPE, text=True
    )
    try:
        url = server.stdout.readline().split(" at ", 1)[1].split()[0]
        summary = f"{url}v/{version.name}/en/{report}/"
        with urllib.request.urlopen(summary, timeout=30) as response:
            status, page = response.status, response.read().decode()
        served_s = time.monotonic() - started
    finally:
        server.terminate()
        server.wait(timeout=10)
    assert status == 200
    assert TITLE["en"] in page and "noindex" not in page
    assert "Made with" not in page
    print(f"install to served site: {served_s:.1f} s")

    file_url = (version / report / "index.html").as_uri()
    with browser.new_page() as tab:
        tab.goto(file_url)
        tab.wait_for("article h1")
        assert "Index of" not in tab.text("body")
        assert tab.evaluate("() => document.title").endswith(TITLE["ja"])
