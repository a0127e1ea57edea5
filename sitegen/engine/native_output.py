"""The line that says why native engine code failed, from what it printed.

llama.cpp reports a failed load in its log on file descriptor 2 (``sitegen measure``
points that at the campaign's ``logs/engine.log``) and raises only a generic error
("Failed to init server, please check the input params."). An engine that fails to load
quotes the first error line its native code printed since the attempt began: the cause
(``invalid magic characters: 'not ', expected 'GGUF'``), where the last ones are its
consequences (``exiting due to model loading error``).
"""

from __future__ import annotations

import os
import re
import stat
import time

_LOG_PREFIX = re.compile(r"^\d+(?:\.\d+){3} (?P<level>[A-Z]) +")
"""llama.cpp's log prefix: time since start and level (``0.00.005.938 E ``)."""
_ERROR_WORDS = re.compile(r"error|fail|abort|assert|terminate|exception|cannot|unable", re.I)
"""What marks an error in a line without a level (``GGML_ASSERT(…) failed``)."""
_CONSEQUENCES = re.compile(r"failed to load model|exiting due to model loading error")
"""Error lines llama.cpp writes after the cause of a failed load. Its log thread may write
them late, after the next attempt has begun, or before the cause: they are quoted only
when no other error line comes."""
READ_AT_MOST = 1 << 20
"""Bytes of native output read back (a load prints a few KB)."""
QUOTED_AT_MOST = 300
"""Characters of the quoted line."""
WAIT_FOR_ERROR_S = 1.0
"""How long a failure waits for llama.cpp's log thread to write its cause."""


def error_line(output: str, last_resort: bool = True) -> str | None:
    """The first line of ``output`` that reports an error (llama.cpp's level ``E``, or a
    line without a level that reads like one) other than a failed load's consequences
    (``_CONSEQUENCES``); else (``last_resort``) the first consequence, else the last
    non-empty line; without its log prefix and runs of spaces; ``None`` when there is
    none."""
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    errors = [line for line in lines if _reports_error(line)]
    causes = [line for line in errors if not _CONSEQUENCES.search(line)]
    if causes:
        return _quoted(causes[0])
    if not last_resort or not lines:
        return None
    return _quoted(errors[0] if errors else lines[-1])


def _reports_error(line: str) -> bool:
    prefix = _LOG_PREFIX.match(line)
    return prefix["level"] == "E" if prefix else bool(_ERROR_WORDS.search(line))


def _quoted(line: str) -> str:
    text = " ".join(_LOG_PREFIX.sub("", line).split())
    return text if len(text) <= QUOTED_AT_MOST else text[: QUOTED_AT_MOST - 1] + "…"


class NativeOutput:
    """What is written on file descriptor 2 from now on, read back when it goes to a
    regular file (a terminal or a pipe cannot be read back: nothing is quoted then, and
    the native lines are on the terminal already)."""

    def __init__(self) -> None:
        try:
            status = os.fstat(2)
        except OSError:
            status = None
        self._start = status.st_size if status and stat.S_ISREG(status.st_mode) else None

    def error_line(self) -> str | None:
        """The error line printed since this object was made (see ``error_line``). llama.cpp
        logs from a thread of its own, which may still be writing the cause when the
        failure reaches Python: the output is read again until an error line is there, for
        at most ``WAIT_FOR_ERROR_S``."""
        start = self._start
        if start is None:
            return None
        deadline = time.monotonic() + WAIT_FOR_ERROR_S
        while True:
            output = self._written(start)
            if output is None:
                return None
            found = error_line(output, last_resort=False)
            if found is not None or time.monotonic() >= deadline:
                return found or error_line(output)
            time.sleep(0.02)

    def _written(self, start: int) -> str | None:
        try:
            # Opened anew by its descriptor's name: the descriptor itself is write-only.
            with open("/dev/fd/2", "rb") as written:
                written.seek(start)
                return written.read(READ_AT_MOST).decode("utf-8", errors="replace")
        except OSError:
            return None
