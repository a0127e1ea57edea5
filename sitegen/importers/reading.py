"""The contract every importer keeps: a source file's bytes in, its measurements and what it
states about the run out, nothing invented.

The stored form of what an importer yields (``ImportedMeasurement``, ``SourceInfo``) is
``records.import_source``; this module holds the reading: typed access to a parsed file
whose every refusal names the file, the record and the field.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Literal, overload

from pydantic import ValidationError

from sitegen.core.errors import DataError, Issue, one_line, pydantic_issues
from sitegen.importers.limits import in_unix_range, loads
from sitegen.records.import_source import ImportedMeasurement


@dataclass(frozen=True)
class SourceFile:
    """One file handed to an importer."""

    name: str
    """The file's name as the user gave it (a relative path at most: it is recorded, so
    never an absolute host path); errors and records name the file by it."""
    data: bytes
    """The file's bytes, exactly as read."""


def file_digest(file: SourceFile) -> tuple[str, int]:
    """SHA-256 and size of a file's bytes."""
    return hashlib.sha256(file.data).hexdigest(), len(file.data)


def malformed(file: SourceFile, record: str | None, field: str | None, message: str) -> DataError:
    """The one-line error for a malformed source: ``<file> <record> → <field>: <message>``."""
    location = " ".join(part for part in (file.name, record) if part)
    if field:
        location = f"{location} → {field}"
    return DataError([Issue(location, message)])


def decode_text(file: SourceFile) -> str:
    """The file as UTF-8 text (a BOM is dropped); empty or undecodable files are refused."""
    if not file.data.strip():
        raise malformed(file, None, None, "the file is empty")
    try:
        return file.data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise malformed(file, None, None, f"not UTF-8 text: {one_line(exc)}") from exc


def load_json(file: SourceFile) -> object:
    """The file parsed as one JSON document."""
    text = decode_text(file)
    try:
        return loads(text, file.name)
    except ValueError as exc:
        raise malformed(file, None, None, f"not valid JSON: {one_line(exc)}") from exc


def json_lines(file: SourceFile) -> Iterator[tuple[int, object]]:
    """``(line number, parsed value)`` for every non-blank line of a JSON Lines file."""
    for number, line in enumerate(decode_text(file).splitlines(), start=1):
        if not line.strip():
            continue
        try:
            yield number, loads(line, f"{file.name} line {number}")
        except ValueError as exc:
            raise malformed(
                file, f"line {number}", None, f"not valid JSON: {one_line(exc)}"
            ) from exc


def measurement(record: Reader, **fields: Any) -> ImportedMeasurement:
    """The measurement at ``record``'s location; a value the model refuses (a concurrency
    of 0 …) is a one-line error naming the file and the record."""
    try:
        return ImportedMeasurement(location=record.record or "", **fields)
    except ValidationError as exc:
        raise DataError(pydantic_issues(exc, f"{record.file.name} {record.record}")) from exc


def unix_to_iso(seconds: float, at: Reader | None = None, field: str | None = None) -> str:
    """Unix seconds as UTC ISO 8601 with microseconds; a time no record can hold (before
    1970, after 9999) is one line naming ``at``'s file and record and ``field``."""
    if not in_unix_range(seconds):
        problem = f"{seconds:g} s is not a Unix time between 1970 and 9999"
        if at is None:
            raise DataError([Issue("(a source file)", problem, "input")])
        raise at.error(field, problem)
    return datetime.fromtimestamp(seconds, UTC).isoformat(timespec="microseconds")


class Reader:
    """Typed access to one record of a parsed source; each refusal names the file, the
    record and the field (``info.timings.request_start``) in one line."""

    def __init__(
        self, file: SourceFile, record: str | None, value: object, prefix: str = ""
    ) -> None:
        self.file = file
        self.record = record
        self.value: Any = value  # parsed JSON, checked by the accessors below
        self.prefix = prefix

    def error(self, field: str | None, message: str) -> DataError:
        name = f"{self.prefix}{field}" if field else self.prefix.rstrip(".") or None
        return malformed(self.file, self.record, name, message)

    def _get(self, key: str, required: bool) -> object:
        if self.value is None:
            if required:
                raise self.error(key, "missing")
            return None
        if not isinstance(self.value, dict):
            raise self.error(None, f"expected a JSON object, got {_kind(self.value)}")
        value = self.value.get(key)
        if value is None and required:
            raise self.error(key, "missing" if key not in self.value else "is null")
        return value

    def child(self, key: str, *, required: bool = True) -> Reader:
        """The object under ``key`` as a reader of its own (``None`` inside when absent and
        not required)."""
        value = self._get(key, required)
        if value is not None and not isinstance(value, dict):
            raise self.error(key, f"expected a JSON object, got {_kind(value)}")
        return Reader(self.file, self.record, value, f"{self.prefix}{key}.")

    def raw(self, key: str) -> Any:
        """The value under ``key`` unchecked (``None`` when absent)."""
        return self._get(key, required=False)

    def items(self, key: str) -> list:
        """The list under ``key`` (required)."""
        value = self._get(key, required=True)
        if not isinstance(value, list):
            raise self.error(key, f"expected a list, got {_kind(value)}")
        return value

    @overload
    def text(self, key: str, *, required: Literal[True]) -> str: ...
    @overload
    def text(self, key: str, *, required: bool = False) -> str | None: ...
    def text(self, key: str, *, required: bool = False) -> str | None:
        value = self._get(key, required)
        if value is not None and not isinstance(value, str):
            raise self.error(key, f"expected text, got {_kind(value)}")
        return value

    @overload
    def number(self, key: str, *, required: Literal[True]) -> float: ...
    @overload
    def number(self, key: str, *, required: bool = False) -> float | None: ...
    def number(self, key: str, *, required: bool = False) -> float | None:
        """A finite number ≥ 0 (times, rates and sizes are never negative)."""
        value = self._get(key, required)
        return None if value is None else check_number(self, key, value)

    @overload
    def count(self, key: str, *, required: Literal[True], minimum: int = 0) -> int: ...
    @overload
    def count(self, key: str, *, required: bool = False, minimum: int = 0) -> int | None: ...
    def count(self, key: str, *, required: bool = False, minimum: int = 0) -> int | None:
        value = self._get(key, required)
        return None if value is None else check_count(self, key, value, minimum)


MAX_COUNT = 2**63 - 1
"""The largest whole number a source may hold (a 64-bit count): beyond it no tool wrote it,
and arithmetic on it would overflow."""


def check_number(reader: Reader, field: str, value: object) -> float:
    """``value`` as a finite float ≥ 0 (booleans refused)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise reader.error(field, f"expected a number, got {_kind(value)}")
    if isinstance(value, int) and abs(value) > MAX_COUNT:
        raise reader.error(field, f"{value:.3g} is larger than any value a tool writes")
    if not math.isfinite(value):
        raise reader.error(field, f"expected a finite number, got {value}")
    if value < 0:
        raise reader.error(field, f"negative ({value}): a time, rate or size is never negative")
    return float(value)


def check_count(reader: Reader, field: str, value: object, minimum: int = 0) -> int:
    """``value`` as an integer ≥ ``minimum`` (a float with no fraction is accepted)."""
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int):
        raise reader.error(field, f"expected a whole number, got {_kind(value)}")
    if value < minimum:
        raise reader.error(field, f"expected a count ≥ {minimum}, got {value}")
    if value > MAX_COUNT:
        try:
            shown = f"{value:.3g}"
        except OverflowError:  # past a float's range
            shown = f"a {len(str(value))}-digit number"
        raise reader.error(field, f"{shown} is larger than any count a tool writes")
    return value


def _kind(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return f"a boolean ({str(value).lower()})"
    if isinstance(value, int | float):
        return f"a number ({value})"
    if isinstance(value, str):
        return f"text ({value[:40]!r})"
    if isinstance(value, list):
        return "a list"
    return "an object"
