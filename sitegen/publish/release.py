"""Switching the site in one atomic step, one build at a time, whatever a kill left.

The site (``site``) is a relative symlink to a complete release directory
(``.site.releases/<n>/``, see ``sitegen.core.site_layout``). A build completes a new release
that carries every version of the current one (hard links), then ``os.replace``-s a new
symlink over ``site``: a reader sees the old site or the new one, never a mix or nothing.
The releases the switch replaced are removed after it.

``exclusive_site`` lets one build publish at a time: it holds ``.site.lock`` from reading
the archive to the switch and refuses at once (``LockedError`` naming the holder's pid)
rather than waiting. Under the lock it first repairs whatever a killed build left:

- staging directories and temporary symlinks are removed;
- releases other than the current one are removed (never switched to, or replaced by a
  switch whose clean-up was cut short);
- a missing ``site`` (possible only where the file system cannot exchange two paths
  atomically, between the two renames of the one-time migration of a real ``site/``
  directory) is pointed at the newest release, which carries every version of the older
  ones.

States no kill can leave (a symlink to a missing release or to something sitegen did
not make; a missing site while an earlier sitegen's moved-aside site lies beside it) are
refused rather than published with fewer versions. Safe against kills, not power loss:
files are not fsynced.
"""

from __future__ import annotations

import ctypes
import errno
import os
import re
import shutil
import signal
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path

from sitegen.core.errors import ArchiveError, ConfigError, StorageError
from sitegen.core.lock import exclusive_lock
from sitegen.core.site_layout import LOCK_SUFFIX, RELEASES_SUFFIX

KILL_AT_ENV = "SITEGEN_TEST_KILL_AT"
"""Test hook (see ``kill_point``), never set outside tests. Steps, in order:
``after-render``, ``after-release-written``, ``after-release-named``,
``after-symlink-temp``, ``after-site-moved`` (migration only), ``after-switch``."""

_RELEASE_NAME = re.compile(r"[0-9]+")


@dataclass(frozen=True)
class SiteHome:
    """The site and the publisher's files beside it."""

    site: Path
    """The symlink readers use (or, before the first switch, a real directory)."""
    releases: Path
    lock: Path

    @classmethod
    def of(cls, site_dir: Path) -> SiteHome:
        # Absolute without following ``site`` itself: that is the symlink to switch.
        site = Path(os.path.abspath(site_dir))
        if not site.name:
            raise ConfigError(f"the site cannot be the root directory {site}: name a folder")
        return cls(
            site,
            site.with_name(f".{site.name}{RELEASES_SUFFIX}"),
            site.with_name(f".{site.name}{LOCK_SUFFIX}"),
        )

    def link_text(self, release: Path) -> str:
        """What ``site`` holds when it points at ``release`` (relative: the folder can move)."""
        return f"{self.releases.name}/{release.name}"

    def numbered_releases(self) -> list[Path]:
        """Every release, oldest first."""
        if not self.releases.is_dir():
            return []
        releases = [p for p in self.releases.iterdir() if _RELEASE_NAME.fullmatch(p.name)]
        return sorted(releases, key=lambda p: int(p.name))


def kill_point(step: str) -> None:
    """Test hook: a process run with ``SITEGEN_TEST_KILL_AT=<step>`` kills itself with
    SIGKILL at ``step``, so tests see what a kill at each step of publishing leaves."""
    if os.environ.get(KILL_AT_ENV) == step:
        os.kill(os.getpid(), signal.SIGKILL)


@contextmanager
def exclusive_site(site_dir: Path) -> Iterator[SiteHome]:
    """Hold the site's lock (refused at once while another build holds it) and bring the
    site back to the last release switched in; the block reads the archive and publishes."""
    home = SiteHome.of(site_dir)
    with exclusive_lock(home.lock, f"site {home.site}"):
        try:
            _recover(home)
        except OSError as exc:
            raise StorageError.from_os_error(exc, "repair the site", home.site) from exc
        yield home


def new_staging(home: SiteHome) -> Path:
    """An empty directory for this build's files (removed by the next build if killed)."""
    staging = home.releases / f"staging-{os.getpid()}"
    try:
        staging.mkdir(parents=True)
    except OSError as exc:
        raise StorageError.from_os_error(exc, "create", staging) from exc
    return staging


def switch(home: SiteHome, staged_site: Path) -> None:
    """Make the complete site ``staged_site`` the site in one atomic step, then remove
    the releases it replaced."""
    try:
        migrating = home.site.is_dir() and not home.site.is_symlink()
        newest = max((int(p.name) for p in home.numbered_releases()), default=0)
        # A real site/ directory moves in as the release before this one.
        release = home.releases / str(newest + (2 if migrating else 1))
        staged_site.rename(release)
        kill_point("after-release-named")
        link = home.releases / f"link-{os.getpid()}"
        os.symlink(home.link_text(release), link)
        kill_point("after-symlink-temp")
        if migrating and exchange_paths(link, home.site):
            # The real directory now lies at ``link``: removed below, or by the next build.
            kill_point("after-site-moved")
            _remove(link)
        else:
            if migrating:
                # Without an atomic exchange a directory cannot be replaced by a symlink in
                # one step: until the replace below the site is missing, and recovery
                # would point it at ``release``.
                home.site.rename(home.releases / str(int(release.name) - 1))
                kill_point("after-site-moved")
            os.replace(link, home.site)
    except OSError as exc:
        raise StorageError.from_os_error(exc, "switch the site", home.site) from exc
    kill_point("after-switch")
    # Published now: whatever of the older releases stays, the next build removes.
    with suppress(OSError):
        _remove_releases_but(home, release)


_RENAME_EXCHANGE = 2
_AT_FDCWD = -100


def exchange_paths(first: Path, second: Path) -> bool:
    """Swap two paths in one atomic step (Linux ``renameat2`` with ``RENAME_EXCHANGE``);
    ``False`` where the C library or the file system cannot."""
    renameat2 = getattr(ctypes.CDLL(None, use_errno=True), "renameat2", None)
    if renameat2 is None:
        return False
    done = renameat2(
        _AT_FDCWD, os.fsencode(first), _AT_FDCWD, os.fsencode(second), _RENAME_EXCHANGE
    )
    if done == 0:
        return True
    error = ctypes.get_errno()
    if error in (errno.ENOSYS, errno.EINVAL, errno.EOPNOTSUPP):
        return False
    raise OSError(error, os.strerror(error), str(second))


def _recover(home: SiteHome) -> None:
    leftovers = [*home.releases.glob("staging-*"), *home.releases.glob("link-*")]
    # Where sitegen before releases staged a build.
    leftovers += home.site.parent.glob(f".{home.site.name}.staging-*")
    for leftover in leftovers:
        _remove(leftover)
    if not os.path.lexists(home.site):
        releases = home.numbered_releases()
        if not releases:
            _refuse_a_site_moved_aside(home)
            return  # the first build
        os.symlink(home.link_text(releases[-1]), home.site)
    _remove_releases_but(home, _current_release(home))


def _current_release(home: SiteHome) -> Path | None:
    """The release ``site`` points at; ``None`` for a real directory (it becomes a
    release at the next switch)."""
    if not home.site.is_symlink():
        if home.site.is_dir():
            return None
        raise ArchiveError(f"{home.site} is not a directory; move it aside before building")
    text = os.readlink(home.site)
    release = home.releases / Path(text).name
    if not _RELEASE_NAME.fullmatch(release.name) or text != home.link_text(release):
        raise ArchiveError(
            f"{home.site} is a symlink to {text}, not to a release in {home.releases}; "
            "move it aside or build into another --site"
        )
    if not release.is_dir():
        raise ArchiveError(
            f"{home.site} points at {release}, which is missing; restore it from a backup "
            "before building"
        )
    return release


def _refuse_a_site_moved_aside(home: SiteHome) -> None:
    """sitegen before releases moved the site aside and back in two steps; a kill between
    them left the whole archive in ``.site.old-<pid>`` and no site."""
    moved_aside = sorted(home.site.parent.glob(f".{home.site.name}.old-*"))
    if moved_aside:
        raise ArchiveError(
            f"{home.site} is missing but {moved_aside[-1]} holds a site moved aside by an "
            f"interrupted build; rename it to {home.site.name} and build again"
        )


def _remove_releases_but(home: SiteHome, current: Path | None) -> None:
    for release in home.numbered_releases():
        if release != current:
            _remove(release)


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    else:
        path.unlink(missing_ok=True)
