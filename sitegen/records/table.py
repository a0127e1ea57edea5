"""A campaign's records as columns: what a build holds of 400,000 records.

Each record is validated as its line is read (``campaign.iter_valid_records``); the valid
lines are then parsed a block at a time by Arrow's JSON reader into columns, their texts
skipped, and become pandas columns: no Python object is kept per record.
``RecordTable.rows`` has one row per record (its scalar fields, flattened),
``peak_memory`` and ``telemetry`` one row per device, and ``provenance`` and
``speculative`` index the campaign's distinct values, which most records share. The
texts stay in ``records.jsonl``: ``Campaign.iter_full_records`` reads records back whole.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import hashlib
import io
import json
import sys
import types
from array import array
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import cached_property
from typing import Literal, Union, cast, get_args, get_origin

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.json as pa_json
from pydantic import BaseModel

from sitegen.plan.plan_models import SpeculativeSpec
from sitegen.records.inclusion import enters_statistics
from sitegen.records.record_models import DeviceMemory, DeviceTelemetry, Provenance, TrialRecord

ROW_BLOCK = 4096
"""Valid lines parsed into columns at a time."""

TRIM_BYTES = 1 << 20
"""An Arrow column at least this large, once converted, gives its memory back to the
system at once (a block's many small buffers are not reused for the large columns made
from them)."""

_KEPT_APART = ("schema_version", "prompt", "text", "reasoning_text", "provenance", "speculative")
"""Fields not taken into the columns: the version (one), the texts (read back when
needed), provenance and speculative settings (indices into their distinct values)."""

_REQUIRED_INTEGERS = (
    "attempt",
    "repetition",
    "order_index",
    "context_capacity",
    "max_output_tokens",
    "prompt_tolerance_tokens",
    "seed",
    "top_k",
)
"""Integer columns every record has: plain ``int64`` (the others may be missing)."""

_FLATTENED = {"sampling": "", "metrics": "", "round": "round_", "load": "load_"}
"""Prefix of the columns of each nested model (``round.size`` → ``round_size``)."""


def _arrow_type(annotation: object) -> pa.DataType:
    """The Arrow type of a record field's annotation (optional: the type it allows)."""
    origin = get_origin(annotation)
    if origin in (Union, types.UnionType):
        (inner,) = (arg for arg in get_args(annotation) if arg is not type(None))
        return _arrow_type(inner)
    if origin is Literal:
        return pa.string()
    if origin is list:
        return pa.list_(_arrow_type(get_args(annotation)[0]))
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return pa.struct(
            [(name, _arrow_type(f.annotation)) for name, f in annotation.model_fields.items()]
        )
    scalars: dict[object, pa.DataType] = {
        float: pa.float64(),
        int: pa.int64(),
        bool: pa.bool_(),
        str: pa.string(),
    }
    return scalars[annotation]


_SCHEMA = pa.schema(
    [
        (name, _arrow_type(field.annotation))
        for name, field in TrialRecord.model_fields.items()
        if name not in _KEPT_APART
    ]
)
_PARSE = pa_json.ParseOptions(explicit_schema=_SCHEMA, unexpected_field_behavior="ignore")
# Arrow's memory (these columns, and pandas' text columns) from the C library's
# allocator: blocks freed by one stage of a build are reused by the next and given back
# by ``release_freed_memory``, where Arrow's default pool would keep them.
pa.set_memory_pool(pa.system_memory_pool())


@dataclass(frozen=True)
class RecordTable:
    """A campaign's records in file order, as columns."""

    rows: pd.DataFrame
    """One row per record (index 0…n-1, file order): every scalar field of the record
    flattened (``metrics.gen_tps`` → ``gen_tps``, ``sampling.seed`` → ``seed``,
    ``round.size`` → ``round_size``, ``load.sent_s`` → ``load_sent_s``), ``has_metrics``, ``provenance`` and ``speculative``
    (indices into the lists below), ``prompt_sha256`` (the prompt text's hash), the
    record's ``line`` number and byte ``offset`` in ``records.jsonl``, and ``canonical``:
    whether the line is exactly the record as sitegen writes it."""
    peak_memory: pd.DataFrame
    """One row per record × device reading: ``record`` (row of ``rows``) and the fields of
    ``DeviceMemory``."""
    telemetry: pd.DataFrame
    """One row per record × device: ``record`` and the fields of ``DeviceTelemetry``."""
    chunk_gaps: pd.DataFrame
    """One row per gap between successive stream chunks of a record (``metrics
    .chunk_times_s``): ``record`` and ``gap_s``; none for records without chunk times."""
    provenances: tuple[Provenance, ...]
    """The distinct provenances, in order of first appearance."""
    speculatives: tuple[SpeculativeSpec, ...]
    """The distinct speculative settings, in order of first appearance."""

    def __len__(self) -> int:
        return len(self.rows)

    @cached_property
    def usable(self) -> np.ndarray:
        """Per row, whether the record enters the statistics (``enters_statistics``):
        found once per table, as a report's many statistics select by it."""
        return enters_statistics(self.rows).to_numpy()

    @classmethod
    def of(cls, records: Iterable[TrialRecord]) -> RecordTable:
        """The table of records held in memory (no file behind them)."""
        builder = TableBuilder()
        for record in records:
            builder.add(record, record.model_dump_json().encode("utf-8"))
        return builder.finish()

    def per_device(self, devices: pd.DataFrame, names: Iterable[str]) -> pd.DataFrame:
        """The record columns ``names`` repeated for each row of ``devices`` (a table with a
        ``record`` column, such as ``peak_memory`` or ``telemetry``)."""
        at = devices["record"].to_numpy()
        # Taken as they are: text columns stay Arrow strings (``to_numpy`` would make one
        # Python string per row, too much memory for a large campaign).
        return pd.DataFrame(
            {name: self.rows[name].take(at).reset_index(drop=True) for name in names}
        )

    def provenance(self, index: int) -> Provenance:
        """The provenance of the record at ``index``."""
        return self.provenances[int(cast(int, self.rows["provenance"].iat[index]))]

    def with_provenances(self, change: Callable[[Provenance], Provenance]) -> RecordTable:
        """This table with each distinct provenance replaced by ``change(provenance)``."""
        return RecordTable(
            self.rows,
            self.peak_memory,
            self.telemetry,
            self.chunk_gaps,
            tuple(change(p) for p in self.provenances),
            self.speculatives,
        )


def _trim_function():
    """glibc's ``malloc_trim``, where the C library is glibc (else ``None``)."""
    try:
        return ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6").malloc_trim
    except (OSError, AttributeError):
        return None


_MALLOC_TRIM = _trim_function()


def release_freed_memory() -> None:
    """Give the memory freed so far back to the system. Reading a block of records frees
    thousands of small objects between the columns kept; without this, glibc keeps those
    pages and the build's resident memory grows with every block read."""
    if _MALLOC_TRIM is not None:
        _MALLOC_TRIM(0)


INT64 = (-(2**63), 2**63 - 1)
"""The integers a column holds (JSON and the record model allow any)."""
_DIGITS_AS_NUL = bytes(0 if chr(byte).isdigit() and byte < 128 else byte for byte in range(256))
"""``bytes.translate`` table: each ASCII digit becomes a NUL byte (a JSON line has none of
its own), so a run of digits is a run of NULs."""
_LONG_NUMBER = bytes(19)
"""A run of digits that may be an integer out of ``INT64``'s range, translated: found by a
substring search, far quicker than a regular expression over a record's texts."""


def out_of_range(line: bytes) -> str | None:
    """``<field>: <value>`` of the first integer of a record's line that no column can
    hold, else ``None`` (quick for the usual line, which has no 19-digit number)."""
    if _LONG_NUMBER not in line.translate(_DIGITS_AS_NUL):
        return None
    low, high = INT64

    def first(value: object, path: str) -> str | None:
        if isinstance(value, int) and not isinstance(value, bool):
            return f"{path}: {value}" if not low <= value <= high else None
        items = (
            value.items()
            if isinstance(value, dict)
            else enumerate(value)
            if isinstance(value, list)
            else ()
        )
        for key, item in items:
            if (found := first(item, f"{path}.{key}".lstrip("."))) is not None:
                return found
        return None

    return first(json.loads(line), "")


def prompt_sha256(prompt: str) -> str | None:
    """SHA-256 of the exact prompt text sent (what identifies an input across campaigns);
    ``None`` without a prompt text."""
    return hashlib.sha256(prompt.encode("utf-8")).hexdigest() if prompt else None


class TableBuilder:
    """Collects validated records, with their lines, into a ``RecordTable``."""

    def __init__(self) -> None:
        self._blocks: list[pa.Table] = []
        self._lines: list[bytes] = []
        self._line_numbers = array("q")
        self._offsets = array("q")
        self._provenance_of = array("q")
        self._speculative_of = array("q")
        self._prompts: list[str | None] = []
        self._canonical = array("b")
        self._provenances: dict[str, int] = {}
        self._provenance_list: list[Provenance] = []
        self._speculatives: dict[SpeculativeSpec, int] = {}

    def add(self, record: TrialRecord, line: bytes, number: int = 0, offset: int = 0) -> None:
        """Keep one validated record: ``line`` is its JSON (line ``number`` of the file, at
        byte ``offset``)."""
        self._lines.append(line if line.endswith(b"\n") else line + b"\n")
        # As the store writes it: a download may then publish the line itself.
        self._canonical.append(record.model_dump_json().encode("utf-8") == line.rstrip(b"\n"))
        self._line_numbers.append(number)
        self._offsets.append(offset)
        self._provenance_of.append(self._provenance_index(record.provenance))
        self._speculative_of.append(
            self._speculatives.setdefault(record.speculative, len(self._speculatives))
        )
        # Interned: the records of one input share their prompt, so its hash too.
        digest = prompt_sha256(record.prompt)
        self._prompts.append(digest and sys.intern(digest))
        if len(self._lines) == ROW_BLOCK:
            self._flush()

    def _provenance_index(self, provenance: Provenance) -> int:
        # Equal provenances (most records of a campaign) share one entry.
        key = provenance.model_dump_json()
        if key not in self._provenances:
            self._provenances[key] = len(self._provenance_list)
            self._provenance_list.append(provenance)
        return self._provenances[key]

    def _flush(self) -> None:
        if self._lines:
            block = b"".join(self._lines)
            self._lines = []
            read = pa_json.ReadOptions(block_size=max(len(block), 1 << 20), use_threads=False)
            self._blocks.append(
                pa_json.read_json(io.BytesIO(block), read_options=read, parse_options=_PARSE)
            )
            del block
            release_freed_memory()

    def finish(self) -> RecordTable:
        """The table of every record added."""
        self._flush()
        table = pa.concat_tables(self._blocks) if self._blocks else _SCHEMA.empty_table()
        self._blocks = []
        memory = _per_device(table.column("peak_memory"), DeviceMemory)
        telemetry = _per_device(table.column("telemetry"), DeviceTelemetry)
        has_metrics = table.column("metrics").is_valid().to_numpy(zero_copy_only=False)
        scalars = [table.drop_columns(["peak_memory", "telemetry"]).flatten()]
        del table
        chunk_gaps = _gaps(scalars[0].column(_CHUNK_TIMES))
        scalars[0] = scalars[0].drop_columns([_CHUNK_TIMES])
        # One frame of every column at once: a column set on a frame costs as much as
        # converting it.
        rows = pd.DataFrame(
            {
                **_pandas_columns(scalars),
                "has_metrics": has_metrics,
                "provenance": np.array(self._provenance_of, dtype=np.int64),
                "speculative": np.array(self._speculative_of, dtype=np.int64),
                "line": np.array(self._line_numbers, dtype=np.int64),
                "offset": np.array(self._offsets, dtype=np.int64),
                "prompt_sha256": np.array(self._prompts, dtype=object),
                "canonical": np.array(self._canonical, dtype=bool),
            },
            copy=False,
        )
        release_freed_memory()
        return RecordTable(
            rows,
            memory,
            telemetry,
            chunk_gaps,
            tuple(self._provenance_list),
            tuple(self._speculatives),
        )


_TEXT = pd.StringDtype("pyarrow", na_value=np.nan)
"""pandas' text type: Arrow strings, missing values as NaN."""


def _pandas_columns(holder: list[pa.Table]) -> dict[str, object]:
    """The Arrow columns of the one table in ``holder`` as pandas arrays, named as
    ``RecordTable.rows`` has them: text as pandas' Arrow strings (a column without any
    text: ``None`` in each row), integers that may be missing as ``Int64``, flags that may
    be missing as ``boolean``. The table is taken out of ``holder`` (its only reference), so
    each Arrow column is let go once converted: the table and the frame are never both
    whole in memory."""
    table = holder.pop()
    pending = list(zip(table.column_names, table.columns, strict=True))[::-1]
    del table
    columns: dict[str, object] = {}
    while pending:
        name, column = pending.pop()
        parent, _, field = name.partition(".")
        name = _FLATTENED[parent] + field if field else name
        kind = column.type
        # The arrays are made directly: pandas' conversions from Arrow cost several times
        # as much for the few rows of a small campaign.
        if pa.types.is_string(kind) and column.null_count < len(column):
            # Arrow strings as they are (pandas' text type): no Python string per row.
            columns[name] = pd.array(column.combine_chunks(), dtype=_TEXT)
        elif pa.types.is_string(kind):
            # No text at all: None in each row, as pandas keeps a column of only None.
            columns[name] = np.full(len(column), None, dtype=object)
        elif pa.types.is_integer(kind) and name not in _REQUIRED_INTEGERS:
            columns[name] = pd.arrays.IntegerArray(
                pc.fill_null(column, 0).to_numpy(), column.is_null().to_numpy()
            )
        elif pa.types.is_boolean(kind):
            columns[name] = column.to_pandas(types_mapper={kind: pd.BooleanDtype()}.get).array
        else:
            columns[name] = column.to_numpy()
        large = column.nbytes > TRIM_BYTES
        del column
        if large:
            release_freed_memory()
    return columns


_CHUNK_TIMES = "metrics.chunk_times_s"
"""The list column of chunk arrival times, kept as gaps (``RecordTable.chunk_gaps``)."""


def _gaps(column: pa.ChunkedArray) -> pd.DataFrame:
    """One row per gap between successive chunk times of a record: ``record`` and
    ``gap_s`` (a record's first chunk has no gap before it)."""
    lists = column.combine_chunks()
    times = pc.list_flatten(lists).to_numpy(zero_copy_only=False).astype(float)
    record = pc.list_parent_indices(lists).to_numpy().astype(np.int64)
    same = record[1:] == record[:-1]
    return pd.DataFrame({"record": record[1:][same], "gap_s": np.diff(times)[same]})


def _per_device(column: pa.ChunkedArray, model: type[BaseModel]) -> pd.DataFrame:
    """One row per element of a list column (a device's reading), with ``record``: the row
    of the record it belongs to."""
    array_ = column.combine_chunks()
    devices = pc.list_flatten(array_).flatten()
    record = pc.list_parent_indices(array_).to_numpy().astype(np.int64)
    table = pa.Table.from_arrays(devices, names=list(model.model_fields))
    return pd.DataFrame({"record": record, **_pandas_columns([table])}, copy=False)
