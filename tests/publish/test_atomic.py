"""Publishing is atomic and lossless: whatever step a build is killed at, whatever two
builds run at once, whatever leftovers lie beside the site, the next build ends with a
site that holds every version any build reported as published, and nothing else lying
around. Kills use the ``SITEGEN_TEST_KILL_AT`` hook of ``sitegen.publish.release``."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

import sitegen.commands.build
from sitegen.cli import main
from sitegen.commands.build import build_site
from sitegen.core.errors import ArchiveError
from sitegen.core.lock import exclusive_lock
from sitegen.publish.archive import read_archive
from sitegen.publish.release import KILL_AT_ENV, exchange_paths
from tests.builtsites import reusing_renders, tree_bytes
from tests.sitefixtures import PROJECT, publishable_campaign

# Every build here is of the same records: it renders them once (what is tested is
# publishing); the builds in subprocesses render for themselves.
pytestmark = pytest.mark.usefixtures("reuse_renders")

LOCKED = re.compile(
    r"error: site .+ is in use by another sitegen process \(pid (\d+), lock .+\); wait for it "
    r"to finish\n"
)
"""The one line a build refused by another's lock prints."""


@dataclass(frozen=True)
class Published:
    data: Path
    site: Path
    """``site`` → ``.site.releases/1``, holding version v1."""
    v1: dict[str, bytes]


@pytest.fixture(scope="module")
def published(tmp_path_factory) -> Published:
    root = tmp_path_factory.mktemp("published")
    publishable_campaign(root / "data")
    with reusing_renders():
        build = build_site(root / "data", root / "site", PROJECT, version="v1")
    assert build.outcome == "published"
    return Published(root / "data", root / "site", tree_bytes(root / "site" / "v" / "v1"))


def _copy_site(published: Published, folder: Path, layout: str = "release") -> Path:
    """The published site in ``folder``: as sitegen releases it (a symlink to a release)
    or as sitegen before releases left it (a real directory)."""
    site = folder / "site"
    if layout == "release":
        releases = published.site.with_name(".site.releases")
        shutil.copytree(releases, folder / releases.name)
        os.symlink(os.readlink(published.site), site)
    else:
        shutil.copytree(published.site, site)
    return site


def _labels(site: Path) -> set[str]:
    """The versions of ``site``, each verified against its manifest."""
    return {version.label for version in read_archive(site)}


def _assert_clean(site: Path) -> None:
    """``site`` links to the only release; nothing else lies beside it."""
    assert site.is_symlink()
    assert sorted(p.name for p in site.parent.iterdir()) == [".site.lock", ".site.releases", "site"]
    assert [p.name for p in site.with_name(".site.releases").iterdir()] == [site.resolve().name]


def _command(published: Published, site: Path, label: str) -> list[str]:
    command = [sys.executable, "-m", "sitegen", "build", "--data", str(published.data)]
    return [*command, "--site", str(site), "--project", str(PROJECT), "--version", label]


def _environment(kill_at: str | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != KILL_AT_ENV}
    return env | ({KILL_AT_ENV: kill_at} if kill_at else {})


@contextmanager
def _watching(site: Path) -> Iterator[list[str]]:
    """Reads the site's version list over and over while the block runs; yields the
    failed reads."""
    failures: list[str] = []
    stop = threading.Event()

    def read() -> None:
        while not stop.wait(0.001):
            try:
                (site / "versions.json").read_bytes()
            except OSError as exc:
                failures.append(str(exc))

    reader = threading.Thread(target=read)
    reader.start()
    try:
        yield failures
    finally:
        stop.set()
        reader.join()


def exchange_paths_supported(directory: Path) -> bool:
    """Whether this file system swaps two paths atomically (the migration has no gap)."""
    (directory / "probe-a").mkdir()
    (directory / "probe-b").symlink_to("probe-a")
    try:
        return exchange_paths(directory / "probe-a", directory / "probe-b")
    finally:
        for name in ("probe-a", "probe-b"):
            path = directory / name
            path.rmdir() if path.is_dir() and not path.is_symlink() else path.unlink()


KILL_POINTS = [
    ("release", "after-render"),
    ("release", "after-release-written"),
    ("release", "after-release-named"),
    ("release", "after-symlink-temp"),
    ("release", "after-switch"),
    ("directory", "after-release-named"),
    ("directory", "after-site-moved"),
    ("directory", "after-switch"),
]


@pytest.mark.slow
@pytest.mark.parametrize(
    ("layout", "kill_at"), KILL_POINTS, ids=[f"{a}-{b}" for a, b in KILL_POINTS]
)
def test_a_build_killed_at_any_step_loses_nothing(published, tmp_path, layout, kill_at, capsys):
    site = _copy_site(published, tmp_path, layout)
    with _watching(site) as failed_reads:
        killed = subprocess.run(
            _command(published, site, "v2"),
            env=_environment(kill_at),
            cwd=PROJECT,
            capture_output=True,
        )
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    leftovers = [p for p in tmp_path.iterdir() if p.name not in {"site", ".site.lock"}]
    assert leftovers, "every kill point leaves something to clean"
    gap = kill_at == "after-site-moved" and not exchange_paths_supported(tmp_path)
    if gap:
        # Without an atomic exchange: a real site/ directory has moved into the releases,
        # the symlink is not in place yet. The new release holds every version.
        assert not os.path.lexists(site)
    else:
        assert failed_reads == []
        assert _labels(site) >= {"v1"}

    # The next build, in this process: it reuses the rendering (what it must do right is
    # to publish beside what the killed one left).
    with _watching(site) as failed_reads:
        recovered = main(_command(published, site, "v3")[3:])
    said = capsys.readouterr()
    assert recovered == 0, said.err
    assert "version v3 published" in said.out
    assert failed_reads == []
    switched = {"v2"} if kill_at in {"after-switch", "after-site-moved"} else set()
    assert _labels(site) == {"v1", "v3"} | switched
    assert tree_bytes(site / "v" / "v1") == published.v1
    _assert_clean(site)


@pytest.mark.slow
def test_concurrent_builds_publish_one_after_the_other_or_refuse(published, tmp_path):
    site = _copy_site(published, tmp_path)
    builds = {
        label: subprocess.Popen(
            _command(published, site, label),
            env=_environment(),
            cwd=PROJECT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for label in ("c1", "c2", "c3")
    }
    reported = {"v1"}
    for label, build in builds.items():
        out, err = build.communicate(timeout=120)
        if build.returncode == 0:
            assert f"version {label} published" in out
            reported.add(label)
        else:
            assert build.returncode == 1
            refusal = LOCKED.fullmatch(err)
            assert refusal, err
            assert int(refusal[1]) in {other.pid for other in builds.values()}
    assert len(reported) > 1
    assert _labels(site) >= reported
    _assert_clean(site)


def test_a_build_while_another_publishes_is_refused_naming_its_pid(published, tmp_path, capsys):
    site = _copy_site(published, tmp_path)
    args = _command(published, site, "refused")[3:]
    with exclusive_lock(tmp_path / ".site.lock", "site"):
        assert main(args) == 1
    error = capsys.readouterr().err
    refusal = LOCKED.fullmatch(error)
    assert refusal and int(refusal[1]) == os.getpid()
    assert _labels(site) == {"v1"}


def test_a_version_published_while_a_build_renders_is_kept(published, tmp_path, monkeypatch):
    site = _copy_site(published, tmp_path)
    render_site = sitegen.commands.build.render_site

    def render_while_another_build_publishes(data_dir, project_dir, skip=(), signer=None):
        rendered = render_site(data_dir, project_dir, skip, signer)
        monkeypatch.setattr(sitegen.commands.build, "render_site", render_site)
        assert build_site(data_dir, site, PROJECT, version="v2-meanwhile").outcome == "published"
        return rendered

    monkeypatch.setattr(sitegen.commands.build, "render_site", render_while_another_build_publishes)
    assert build_site(published.data, site, PROJECT, version="v3-late").outcome == "published"
    assert _labels(site) == {"v1", "v2-meanwhile", "v3-late"}
    # Compared with the version published meanwhile: every version's changes name it.
    changelog = json.loads((site / "changelog" / "en.json").read_bytes())["html"]
    late = changelog[: changelog.index(">v2-meanwhile</a></h2>")]
    assert ">v3-late</a></h2>" in late and "previous version, v2-meanwhile" in late


def test_leftovers_of_killed_builds_are_cleaned(published, tmp_path):
    site = _copy_site(published, tmp_path)
    releases = tmp_path / ".site.releases"
    (releases / "staging-999999" / "site" / "v" / "x").mkdir(parents=True)
    os.symlink(".site.releases/7", releases / "link-999999")
    (releases / "7" / "v").mkdir(parents=True)  # a release never switched to, half deleted
    (releases / "0").mkdir()  # a release replaced by a switch
    (tmp_path / ".site.staging-999999" / "site").mkdir(parents=True)  # sitegen before releases
    assert build_site(published.data, site, PROJECT, version="v2").outcome == "published"
    assert _labels(site) == {"v1", "v2"}
    _assert_clean(site)


def test_the_first_build_makes_the_site_a_symlink_to_its_release(published, tmp_path):
    site = tmp_path / "site"
    assert build_site(published.data, site, PROJECT, version="first").outcome == "published"
    assert os.readlink(site) == ".site.releases/1"
    _assert_clean(site)


def _release_gone(site: Path) -> None:
    shutil.rmtree(site.resolve())


def _version_gone(site: Path) -> None:
    shutil.rmtree(site / "v" / "v1")


def _foreign_symlink(site: Path) -> None:
    elsewhere = site.with_name("elsewhere")
    shutil.copytree(site, elsewhere)
    site.unlink()
    site.symlink_to(elsewhere.name)


def _moved_aside_by_an_earlier_sitegen(site: Path) -> None:
    shutil.copytree(site, site.with_name(".site.old-4242"))
    shutil.rmtree(site.resolve())
    site.unlink()


@pytest.mark.parametrize(
    ("damage", "message"),
    [
        (_release_gone, r"points at .*\.site\.releases/1, which is missing"),
        (_version_gone, r"published version\(s\) v1 listed in .*versions\.json are missing"),
        (_foreign_symlink, r"is a symlink to elsewhere, not to a release"),
        (_moved_aside_by_an_earlier_sitegen, r"is missing but .*\.site\.old-4242 holds a site"),
    ],
    ids=["release-gone", "version-gone", "foreign-symlink", "moved-aside"],
)
def test_a_damaged_site_is_refused_not_published_with_fewer_versions(
    published, tmp_path, damage: Callable[[Path], None], message
):
    site = _copy_site(published, tmp_path)
    damage(site)
    before = {p.name for p in tmp_path.iterdir()}
    with pytest.raises(ArchiveError, match=message):
        build_site(published.data, site, PROJECT, version="v2")
    assert {p.name for p in tmp_path.iterdir()} == before | {".site.lock"}
    assert not list(tmp_path.glob(".site.releases/staging-*"))
