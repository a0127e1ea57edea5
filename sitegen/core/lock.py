"""Exclusive locks between sitegen processes (one ``measure`` per campaign, one ``build``
per site).

A lock is an advisory ``flock`` on a file holding the holder's pid. The kernel releases
it when the holder dies, however it dies, so a lock file left by a killed process is
simply taken over by the next one.
"""

from __future__ import annotations

import fcntl
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path

from sitegen.core.errors import LockedError, StorageError


@contextmanager
def exclusive_lock(path: Path, what: str) -> Iterator[None]:
    """Hold the lock at ``path`` for the duration of the block; raise ``LockedError``
    naming the holder's pid at once if another process holds it. ``what`` names the
    locked thing in the message (e.g. ``campaign data/campaigns/x``)."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        handle = path.open("a+")
    except OSError as exc:
        raise StorageError.from_os_error(exc, "create the lock file", path) from exc
    with handle:
        try:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.seek(0)
            holder = handle.read().split("\n", 1)[0].strip() or "unknown"
            raise LockedError(
                f"{what} is in use by another sitegen process (pid {holder}, lock {path}); "
                "wait for it to finish"
            ) from None
        handle.seek(0)
        handle.truncate()
        # The pid first (what the refusal above names), then what the holder is doing.
        since = datetime.now(UTC).astimezone().isoformat(timespec="seconds")
        command = " ".join(["sitegen", *sys.argv[1:]])[:300].replace("\n", " ")
        handle.write(f"{os.getpid()}\n{command}\n{since}\n")
        handle.flush()
        try:
            yield
        finally:
            handle.seek(0)
            handle.truncate()
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)


def lock_holder(path: Path) -> str | None:
    """Who holds the lock at ``path`` now, as ``pid N (COMMAND, since TIME)``; ``None``
    when no process holds it (or there is no lock file). Takes nothing: a shared lock is
    tried and let go at once, and no lock file is created."""
    try:
        handle = path.open("r", encoding="utf-8", errors="replace")
    except OSError:
        return None
    with handle:
        try:
            fcntl.flock(handle.fileno(), fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            pid, command, since = [*handle.read(1000).splitlines(), "", "", ""][:3]
            details = ", ".join(
                part for part in (command, f"since {since}" if since else "") if part
            )
            return f"pid {pid.strip() or 'unknown'}" + (f" ({details})" if details else "")
        except OSError:
            return None
        fcntl.flock(handle.fileno(), fcntl.LOCK_UN)
        return None
