"""Work done on the other CPU while the caller goes on: a forked child computes one value
and hands it back pickled, or the error it raised.

A build writes its downloads this way while it renders its pages (``pages.render``). The
child is a copy of the parent at the fork, so the work reads whatever the parent holds
without pickling it; only its result travels back.
"""

from __future__ import annotations

import multiprocessing
import pickle
import sys
import traceback
import warnings
from collections.abc import Callable
from contextlib import suppress
from multiprocessing.connection import Connection
from typing import Generic, TypeVar

from sitegen.core.errors import BuildError, one_line

T = TypeVar("T")

CAN_FORK = sys.platform == "linux"
"""Whether work is forked: on Linux. macOS forks, but its system libraries are not safe to
use in a forked child (Python starts processes there by spawning them); elsewhere, and
there, the work runs in place."""


class ForkedCall(Generic[T]):
    """``work()`` running in a forked child from the moment this is made; ``result()``
    waits for its value and raises its error. Used as a context manager, leaving the
    block stops a child whose result was never asked for. With ``fork`` false, or where
    the platform cannot fork, ``work`` runs in this process when its result is asked for.
    ``name``: the child as an error names it when it dies without a result."""

    def __init__(
        self, work: Callable[[], T], fork: bool = True, name: str = "the forked process"
    ) -> None:
        self._work = work
        self._name = name
        self._process: multiprocessing.process.BaseProcess | None = None
        if not (fork and CAN_FORK):
            return
        context = multiprocessing.get_context("fork")
        self._receive, send = context.Pipe(duplex=False)
        self._process = context.Process(
            target=_run_child, args=(work, send, self._receive), daemon=True
        )
        with warnings.catch_warnings():
            # Python 3.12+ warns about forking with threads running; the only ones here
            # are native pools (OpenBLAS, jemalloc's background thread) that prepare
            # themselves for a fork, and the child runs no code of theirs that waits.
            warnings.filterwarnings("ignore", "This process .* is multi-threaded")
            self._process.start()
        send.close()

    def result(self) -> T:
        if self._process is None:
            return self._work()
        try:
            kind, value = self._receive.recv()
        except EOFError:
            self._process.join()
            raise BuildError(
                f"{self._name} stopped before it finished (exit code "
                f"{self._process.exitcode}); run the command again"
            ) from None
        finally:
            self._receive.close()
        self._process.join()
        if kind == "error":
            raise value
        return value

    def close(self) -> None:
        """Stop the child if it still runs (its result was not asked for)."""
        if self._process is None:
            return
        self._receive.close()
        if self._process.is_alive():
            self._process.terminate()
        self._process.join()

    def __enter__(self) -> ForkedCall[T]:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


def _run_child(work: Callable[[], object], send: Connection, parents_end: Connection) -> None:
    # Only the parent reads: with it gone, sending fails instead of waiting forever for
    # room in the pipe.
    parents_end.close()
    try:
        outcome: tuple[str, object] = ("value", work())
    except BaseException as exc:  # every error goes back to the parent, which raises it
        exc.add_note("in the forked process:\n" + "".join(traceback.format_exception(exc)))
        outcome = ("error", _rebuildable(exc))
    try:
        send.send(outcome)
    except OSError:  # the parent is gone (killed): nobody to tell
        return
    except Exception as exc:  # a value that cannot be pickled
        with suppress(OSError):
            send.send(("error", BuildError(f"{type(exc).__name__}: {one_line(exc)}")))
    send.close()


def _rebuildable(exc: BaseException) -> BaseException:
    """``exc``, or a ``BuildError`` saying it where ``exc`` cannot be rebuilt from its
    pickle (an exception whose constructor takes other arguments than its message would
    otherwise fail in the parent, far from its cause)."""
    try:
        pickle.loads(pickle.dumps(exc))
    except Exception:
        return BuildError(f"{type(exc).__name__}: {one_line(exc)}")
    return exc
