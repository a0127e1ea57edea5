"""Where native engine code's output goes while a campaign runs: the campaign's log."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from sitegen.core.errors import StorageError


@contextmanager
def native_output_to(log_path: Path) -> Iterator[None]:
    """Send what native engine code prints on file descriptor 2 to the campaign's log
    (an artifact listed in the manifest); Python's ``sys.stderr`` keeps the terminal."""
    try:
        log = log_path.open("ab")
    except OSError as exc:
        raise StorageError.from_os_error(exc, "open the engine log", log_path) from exc
    sys.stderr.flush()
    saved_fd = os.dup(2)
    python_stderr = sys.stderr
    with log:
        os.dup2(log.fileno(), 2)
        sys.stderr = os.fdopen(
            os.dup(saved_fd), "w", buffering=1, encoding="utf-8", errors="replace"
        )
        try:
            yield
        finally:
            sys.stderr.close()
            sys.stderr = python_stderr
            os.dup2(saved_fd, 2)
            os.close(saved_fd)
