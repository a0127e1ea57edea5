"""Bounded input: what an imported file may cost to read, each excess refused in one line.

A source file is another tool's output and may be crafted: a small ``.gz`` that inflates to
gigabytes, JSON nested until the parser runs out of stack, a timestamp past the year 9999.
Each is refused as a ``DataError`` naming the file (and the record and field where there is
one), never a traceback or an exhausted machine.
"""

from __future__ import annotations

import gzip
import io
import json
import zlib
from collections.abc import Iterable
from datetime import UTC, datetime

from sitegen.core.errors import DataError, Issue, one_line

MAX_INFLATED_BYTES = 1 << 30
"""The most a ``.gz`` source may inflate to (1 GiB): decompression stops one byte past it
and the file is refused. Real exports stay far below it."""

MAX_JSON_DEPTH = 64
"""The deepest nesting of objects and lists a JSON source (or the JSON text a source holds,
such as GuideLLM's ``request_args``) may have; the formats read here nest at most about a
dozen levels (a request body with tool schemas)."""

LATEST_UNIX_S = datetime(9999, 12, 31, 23, 59, 59, tzinfo=UTC).timestamp()
"""The latest Unix time a record can hold (the end of the year 9999)."""


def inflate(name: str, data: bytes, limit: int | None = None) -> bytes:
    """``data`` gunzipped as a stream, at most ``limit`` bytes (``MAX_INFLATED_BYTES``);
    more, or not gzip, is one line naming ``name``."""
    limit = MAX_INFLATED_BYTES if limit is None else limit
    try:
        with gzip.GzipFile(fileobj=io.BytesIO(data)) as stream:
            inflated = stream.read(limit + 1)
    except (OSError, EOFError, zlib.error) as exc:
        raise DataError([Issue(name, f"not a gzip file: {one_line(exc)}")]) from exc
    if len(inflated) > limit:
        raise DataError(
            [
                Issue(
                    name,
                    f"inflates to more than {_size(limit)} (sitegen's limit for a .gz source): "
                    "import the uncompressed file, or split the run",
                    "input",
                )
            ]
        )
    return inflated


def _size(count: int) -> str:
    for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if count >= size and count % size == 0:
            return f"{count // size} {unit}"
    return f"{count} bytes"


def loads(text: str, where: str) -> object:
    """``text`` parsed as JSON, nested at most ``MAX_JSON_DEPTH`` deep; ``ValueError`` for
    invalid JSON (the caller names the problem), ``DataError`` naming ``where`` for JSON
    nested deeper."""
    try:
        value = json.loads(text)
    except RecursionError:
        raise too_deep(where) from None
    if depth(value) > MAX_JSON_DEPTH:
        raise too_deep(where)
    return value


def too_deep(where: str) -> DataError:
    return DataError(
        [
            Issue(
                where,
                f"JSON nested more than {MAX_JSON_DEPTH} levels deep (sitegen's limit; the "
                "tool writes a few): not the tool's output",
                "input",
            )
        ]
    )


def depth(value: object) -> int:
    """How deeply ``value``'s lists and objects nest (a scalar: 0), without recursion;
    stops counting past ``MAX_JSON_DEPTH``."""
    deepest = 0
    stack = [(value, 1)]
    while stack:
        node, level = stack.pop()
        children: Iterable[object]
        if isinstance(node, dict):
            children = node.values()
        elif isinstance(node, list):
            children = node
        else:
            continue
        deepest = max(deepest, level)
        if deepest > MAX_JSON_DEPTH:
            return deepest
        stack.extend((child, level + 1) for child in children if isinstance(child, dict | list))
    return deepest


def in_unix_range(seconds: float) -> bool:
    """Whether ``seconds`` is a Unix time a record can hold (1970 to the end of 9999)."""
    return 0 <= seconds <= LATEST_UNIX_S
