"""A plain CSV table (comma-separated, a header row first) read through the declaration's
column mapping (``csv.columns``): each row is one measurement, each mapped column one field
in its declared unit, an empty cell an absent value. Unmapped columns are ignored.

Nothing is derived: a tool's rate column stays the tool's figure (``tool_tokens_per_s``),
never turned into times, and a missing time stays missing.
"""

from __future__ import annotations

import csv
import math
from collections import Counter
from datetime import UTC, datetime

from sitegen.core.errors import one_line
from sitegen.importers.reading import (
    Reader,
    SourceFile,
    decode_text,
    file_digest,
    malformed,
    measurement,
    unix_to_iso,
)
from sitegen.records.import_declaration import NUMBER_FIELDS, TIME_FIELDS, CsvMapping, CsvTarget
from sitegen.records.import_source import ImportedMeasurement, ImportedSource, SourceInfo

PER_SECOND = {"s": 1.0, "ms": 1e3, "us": 1e6, "ns": 1e9}
"""Duration units: how many make a second."""
UNIX_PER_SECOND = {"unix-s": 1.0, "unix-ms": 1e3, "unix-ns": 1e9}
"""Unix-time units of ``started_at``: how many make a second."""
COUNT_FIELDS = frozenset(
    {
        "prompt_tokens",
        "output_tokens",
        "concurrency",
        "output_cap",
        "draft_tokens",
        "accepted_tokens",
    }
)
"""Fields holding whole numbers."""
MIB_PER_UNIT = {"B": 1 / 2**20, "KiB": 1 / 2**10, "MiB": 1.0, "GiB": 2.0**10}
"""Memory units of ``peak_memory_mib``: how many MiB one makes."""


def parse(file: SourceFile, mapping: CsvMapping) -> ImportedSource:
    rows = csv.reader(decode_text(file).splitlines(keepends=True), strict=True)
    try:
        header = next(rows)
    except (StopIteration, csv.Error) as exc:
        raise malformed(file, "line 1", None, f"no header row: {one_line(exc)}") from exc
    counts = Counter(header)  # not header.count per column: quadratic in a wide header
    repeated = sorted(name for name, count in counts.items() if count > 1)
    if repeated:
        raise malformed(file, "line 1", repeated[0], "this column header appears twice")
    index = {}
    for target, field in mapping.columns.items():
        if field.column not in header:
            raise malformed(file, "line 1", field.column, f"no such column (declared for {target})")
        index[target] = header.index(field.column)
    measurements = []
    line = rows.line_num + 1
    try:
        for row in rows:
            if any(cell.strip() for cell in row):
                measurements.append(_row(file, mapping, index, row, line, len(header)))
            line = rows.line_num + 1
    except csv.Error as exc:
        raise malformed(file, f"line {rows.line_num}", None, f"not CSV: {one_line(exc)}") from exc
    sha256, size = file_digest(file)
    return ImportedSource(
        source=SourceInfo(
            format="csv",
            tool="CSV",
            tool_version=None,
            file=file.name,
            sha256=sha256,
            size_bytes=size,
        ),
        measurements=measurements,
    )


def _row(
    file: SourceFile,
    mapping: CsvMapping,
    index: dict[CsvTarget, int],
    row: list[str],
    line: int,
    width: int,
) -> ImportedMeasurement:
    at = Reader(file, f"line {line}", None)
    if len(row) != width:
        raise at.error(None, f"{len(row)} cells, but the header has {width} columns")
    fields: dict[str, object] = {}
    for target, position in index.items():
        cell = row[position]
        column = mapping.columns[target]
        if not cell.strip():
            if target in ("group", "input"):
                raise at.error(column.column, f"empty: every row needs its {target}")
            continue
        # CsvMapping requires a unit of time, start and memory columns
        if target in TIME_FIELDS and column.unit is not None:
            fields[target] = _number(at, column.column, cell) / PER_SECOND[column.unit]
        elif target == "started_at" and column.unit is not None:
            fields[target] = _started_at(at, column.column, cell, column.unit)
        elif target in COUNT_FIELDS:
            fields[target] = _count(at, column.column, cell)
        elif target in NUMBER_FIELDS:
            fields[target] = _number(at, column.column, cell)
        elif target == "peak_memory_mib" and column.unit is not None:
            fields[target] = _number(at, column.column, cell) * MIB_PER_UNIT[column.unit]
        else:
            fields[target] = cell
    return measurement(at, status="failed" if fields.get("error") else "ok", **fields)


def _number(at: Reader, column: str, cell: str) -> float:
    try:
        value = float(cell)
    except ValueError:
        raise at.error(column, f"expected a number, got {cell!r}") from None
    if not math.isfinite(value) or value < 0:
        raise at.error(column, f"expected a finite number ≥ 0, got {cell!r}")
    return value


def _count(at: Reader, column: str, cell: str) -> int:
    value = _number(at, column, cell)
    if not value.is_integer():
        raise at.error(column, f"expected a whole number, got {cell!r}")
    return int(value)


def _started_at(at: Reader, column: str, cell: str, unit: str) -> str:
    if unit in UNIX_PER_SECOND:
        return unix_to_iso(_number(at, column, cell) / UNIX_PER_SECOND[unit], at, column)
    try:
        moment = datetime.fromisoformat(cell.strip())
    except ValueError:
        raise at.error(column, f"expected an ISO 8601 time, got {cell!r}") from None
    if moment.tzinfo is None:
        raise at.error(column, f"{cell!r} has no UTC offset: the time is ambiguous")
    return moment.astimezone(UTC).isoformat(timespec="microseconds")
