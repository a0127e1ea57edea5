"""Ray's own output on the driver goes to a log file, not the terminal.

Ray writes to the driver's terminal from three places: its Python threads print what the
cluster reports (a raylet's death with the last lines of its log, "A worker died or was
killed", the campaigns' own output with ``log_to_driver``) to ``sys.stdout`` and
``sys.stderr``; its ``ray`` logger writes to ``sys.stderr``; its C++ core writes to file
descriptors 1 and 2. While a fleet runs, all of it goes to the log, and only sitegen's own
lines, written inside ``RayLog.to_terminal``, reach the terminal.
"""

from __future__ import annotations

import io
import os
import re
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from datetime import datetime
from pathlib import Path
from typing import ParamSpec, TextIO

from sitegen.core.errors import StorageError

P = ParamSpec("P")

_ANSI_COLOR = re.compile(r"\x1b\[[0-9;]*m")
"""Ray colors its ``(raylet)`` prefixes whether or not it writes to a terminal."""


class _RoutedStream(io.TextIOBase):
    """Stands in for ``sys.stdout`` or ``sys.stderr`` while a fleet runs: what a thread
    writes goes to the log unless that thread is inside ``RayLog.to_terminal``."""

    def __init__(self, terminal: TextIO, log: TextIO, routing: threading.local) -> None:
        self._terminal = terminal
        self._log = log
        self._routing = routing

    def _to_terminal(self) -> bool:
        return getattr(self._routing, "terminal", False)

    def write(self, text: str) -> int:
        if self._to_terminal():
            return self._terminal.write(text)
        self._log.write(_ANSI_COLOR.sub("", text))
        return len(text)

    def writable(self) -> bool:
        return True

    def flush(self) -> None:
        self._terminal.flush()
        self._log.flush()

    def isatty(self) -> bool:
        return self._to_terminal() and self._terminal.isatty()

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return self._terminal.encoding


class RayLog:
    """The open log of one fleet run; ``to_terminal`` lets sitegen's own lines through."""

    def __init__(self, path: Path, log: TextIO, routing: threading.local) -> None:
        self.path = path
        """The log file (appended to by every fleet run)."""
        self._log = log
        self._routing = routing

    @contextmanager
    def to_terminal(self) -> Iterator[None]:
        """What this thread writes to ``sys.stdout``/``sys.stderr`` meanwhile is shown."""
        self._routing.terminal = True
        try:
            yield
        finally:
            self._routing.terminal = False

    def on_terminal(self, callback: Callable[P, None]) -> Callable[P, None]:
        """``callback`` with its output shown (a progress printer)."""

        def shown(*args: P.args, **kwargs: P.kwargs) -> None:
            with self.to_terminal():
                callback(*args, **kwargs)

        return shown

    def note(self, text: str) -> None:
        """A line of sitegen's about Ray (an error's full text behind a one-line message)."""
        self._log.write(text.rstrip("\n") + "\n")


@contextmanager
def ray_output_to(path: Path, heading: str) -> Iterator[RayLog]:
    """Send Ray's output to ``path`` (appended, after a line with the time and
    ``heading``) until the block ends; fd 1 and 2 and ``sys.stdout``/``sys.stderr`` are
    restored after it."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        log = path.open("a", encoding="utf-8", errors="replace", buffering=1)
    except OSError as exc:
        raise StorageError.from_os_error(exc, "open", path) from exc
    with log, ExitStack() as restore:
        log.write(f"--- {datetime.now().astimezone().isoformat(timespec='seconds')} {heading}\n")
        routing = threading.local()
        for name, fd in (("stdout", 1), ("stderr", 2)):
            original: TextIO = getattr(sys, name)
            original.flush()
            saved = os.dup(fd)
            restore.callback(os.close, saved)
            terminal = original
            if _fileno(original) == fd:
                # Writing to the original stream would follow its descriptor into the log.
                terminal = restore.enter_context(
                    open(
                        saved,
                        "w",
                        encoding=original.encoding,
                        errors=original.errors,
                        buffering=1,
                        closefd=False,
                    )
                )
            os.dup2(log.fileno(), fd)
            restore.callback(os.dup2, saved, fd)
            setattr(sys, name, _RoutedStream(terminal, log, routing))
            restore.callback(setattr, sys, name, original)
        yield RayLog(path, log, routing)


def _fileno(stream: TextIO) -> int | None:
    try:
        return stream.fileno()
    except (AttributeError, OSError, ValueError):  # io.UnsupportedOperation is both
        return None
