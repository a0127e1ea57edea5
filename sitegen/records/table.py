"""A campaign's records as columns: what a build holds of 400,000 records.

Each record is validated as its line is read (``campaign.parse_records``), then kept as
one row of ``RecordTable.rows`` (its scalar fields, flattened), rows of ``peak_memory``
and ``telemetry`` (one per device) and an index into the campaign's distinct
provenances and speculative settings, which most records share. The texts stay in
``records.jsonl``: ``Campaign.record`` reads one record back, whole, when a page needs it.
Columns cost a few hundred bytes a record where a record object costs several KB.
"""

from __future__ import annotations

import hashlib
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass

import numpy as np
import pandas as pd

from sitegen.plan.models import SpeculativeSpec
from sitegen.records.models import DeviceMemory, DeviceTelemetry, Provenance, TrialRecord

ROW_BLOCK = 4096
"""Records turned into one block of columns at a time: Python lists of every value of
400,000 records would cost more than the table itself."""

_STRINGS = (
    "campaign_id",
    "plan_sha256",
    "trial_id",
    "condition_id",
    "input_id",
    "role",
    "status",
    "failure_reason",
    "started_at",
    "finish",
    "round_run_id",
    "prompt_sha256",
)
_INTEGERS = (
    "attempt",
    "repetition",
    "order_index",
    "context_capacity",
    "max_output_tokens",
    "prompt_tolerance_tokens",
    "seed",
    "top_k",
)
_OPTIONAL_INTEGERS = (
    "target_prompt_tokens",
    "prompt_tokens",
    "generated_tokens",
    "draft_proposed",
    "draft_accepted",
    "chunks",
    "reasoning_tokens",
    "answer_tokens",
    "round_size",
    "round_generated_tokens",
    "engine_context_per_slot",
)
_FLOATS = (
    "temperature",
    "top_p",
    "ttft_s",
    "t_first_visible_s",
    "t_first_answer_s",
    "gen_tps",
    "native_tps",
    "t_natural_finish_s",
    "e2e_s",
    "generation_s",
    "prompt_processing_s",
    "round_wall_s",
    "round_aggregate_tps",
)
_METRICS = (
    "ttft_s",
    "t_first_visible_s",
    "t_first_answer_s",
    "gen_tps",
    "native_tps",
    "t_natural_finish_s",
    "e2e_s",
    "generated_tokens",
    "finish",
    "answer_reached",
    "draft_proposed",
    "draft_accepted",
    "chunks",
    "generation_s",
    "prompt_processing_s",
    "reasoning_tokens",
    "answer_tokens",
)
MEMORY_FIELDS = tuple(DeviceMemory.model_fields)
TELEMETRY_FIELDS = tuple(DeviceTelemetry.model_fields)
_TELEMETRY_FLOATS = tuple(
    name
    for name in TELEMETRY_FIELDS
    if name not in ("device", "source", "energy_source", "samples")
)


@dataclass(frozen=True)
class RecordTable:
    """A campaign's records in file order, as columns."""

    rows: pd.DataFrame
    """One row per record (index 0…n-1, file order): every scalar field of the record
    flattened (``metrics.gen_tps`` → ``gen_tps``, ``sampling.seed`` → ``seed``,
    ``round.size`` → ``round_size``), ``has_metrics``, ``provenance`` and ``speculative``
    (indices into the lists below), ``prompt_sha256`` (the prompt text's hash), and the
    record's ``line`` number and byte ``offset`` in ``records.jsonl``."""
    peak_memory: pd.DataFrame
    """One row per record × device reading: ``record`` (row of ``rows``) and the fields of
    ``DeviceMemory``."""
    telemetry: pd.DataFrame
    """One row per record × device: ``record`` and the fields of ``DeviceTelemetry``."""
    provenances: tuple[Provenance, ...]
    """The distinct provenances, in order of first appearance."""
    speculatives: tuple[SpeculativeSpec, ...]
    """The distinct speculative settings, in order of first appearance."""

    def __len__(self) -> int:
        return len(self.rows)

    @classmethod
    def of(cls, records: Iterable[TrialRecord]) -> RecordTable:
        """The table of records held in memory (no file behind them)."""
        builder = TableBuilder()
        for record in records:
            builder.add(record)
        return builder.finish()

    def provenance(self, index: int) -> Provenance:
        """The provenance of the record at ``index``."""
        return self.provenances[int(self.rows["provenance"].iat[index])]

    def with_provenances(self, change: Callable[[Provenance], Provenance]) -> RecordTable:
        """This table with each distinct provenance replaced by ``change(provenance)``."""
        return RecordTable(
            self.rows,
            self.peak_memory,
            self.telemetry,
            tuple(change(p) for p in self.provenances),
            self.speculatives,
        )


def prompt_sha256(prompt: str) -> str | None:
    """SHA-256 of the exact prompt text sent (what identifies an input across campaigns);
    ``None`` without a prompt text."""
    return hashlib.sha256(prompt.encode("utf-8")).hexdigest() if prompt else None


class TableBuilder:
    """Collects validated records, one at a time, into a ``RecordTable``."""

    def __init__(self) -> None:
        self._blocks: list[pd.DataFrame] = []
        self._memory: list[pd.DataFrame] = []
        self._telemetry: list[pd.DataFrame] = []
        self._columns: dict[str, list] = {}
        self._memory_columns: dict[str, list] = {}
        self._telemetry_columns: dict[str, list] = {}
        self._provenances: dict[str, int] = {}
        self._provenance_list: list[Provenance] = []
        self._speculatives: dict[SpeculativeSpec, int] = {}
        self._count = 0

    def add(self, record: TrialRecord, line: int = 0, offset: int = 0) -> None:
        """Keep one validated record (at ``line`` and byte ``offset`` of its file)."""
        row = self._columns
        index = self._count
        for name in ("campaign_id", "plan_sha256", "trial_id", "condition_id", "input_id"):
            row.setdefault(name, []).append(sys.intern(getattr(record, name)))
        for name in ("attempt", "role", "repetition", "order_index", "status"):
            row.setdefault(name, []).append(getattr(record, name))
        row.setdefault("failure_reason", []).append(record.failure_reason)
        row.setdefault("started_at", []).append(record.started_at)
        sampling = record.sampling
        for name in ("temperature", "top_p", "top_k", "seed"):
            row.setdefault(name, []).append(getattr(sampling, name))
        for name in (
            "context_capacity",
            "max_output_tokens",
            "target_prompt_tokens",
            "prompt_tolerance_tokens",
            "prompt_tokens",
            "engine_context_per_slot",
        ):
            row.setdefault(name, []).append(getattr(record, name))
        metrics = record.metrics
        row.setdefault("has_metrics", []).append(metrics is not None)
        for name in _METRICS:
            row.setdefault(name, []).append(None if metrics is None else getattr(metrics, name))
        round_info = record.round
        for name, field in (
            ("round_run_id", "run_id"),
            ("round_size", "size"),
            ("round_wall_s", "wall_s"),
            ("round_generated_tokens", "generated_tokens"),
            ("round_aggregate_tps", "aggregate_tps"),
        ):
            row.setdefault(name, []).append(
                None if round_info is None else getattr(round_info, field)
            )
        row.setdefault("provenance", []).append(self._provenance_index(record.provenance))
        row.setdefault("speculative", []).append(
            self._speculatives.setdefault(record.speculative, len(self._speculatives))
        )
        # Interned: the records of one input share their prompt, so its hash too.
        digest = prompt_sha256(record.prompt)
        row.setdefault("prompt_sha256", []).append(digest and sys.intern(digest))
        row.setdefault("line", []).append(line)
        row.setdefault("offset", []).append(offset)
        for memory in record.peak_memory:
            self._memory_columns.setdefault("record", []).append(index)
            for name in MEMORY_FIELDS:
                self._memory_columns.setdefault(name, []).append(getattr(memory, name))
        for device in record.telemetry:
            self._telemetry_columns.setdefault("record", []).append(index)
            for name in TELEMETRY_FIELDS:
                self._telemetry_columns.setdefault(name, []).append(getattr(device, name))
        self._count += 1
        if len(row["line"]) == ROW_BLOCK:
            self._flush()

    def _provenance_index(self, provenance: Provenance) -> int:
        # Equal provenances (most records of a campaign) share one entry.
        key = provenance.model_dump_json()
        if key not in self._provenances:
            self._provenances[key] = len(self._provenance_list)
            self._provenance_list.append(provenance)
        return self._provenances[key]

    def _flush(self) -> None:
        if self._columns:
            self._blocks.append(_row_block(self._columns))
            self._columns = {}
        if self._memory_columns:
            self._memory.append(_device_block(self._memory_columns, ("peak_mib",)))
            self._memory_columns = {}
        if self._telemetry_columns:
            self._telemetry.append(_device_block(self._telemetry_columns, _TELEMETRY_FLOATS))
            self._telemetry_columns = {}

    def finish(self) -> RecordTable:
        """The table of every record added."""
        self._flush()
        return RecordTable(
            _concat(self._blocks, _row_block({})),
            _concat(self._memory, _empty_device_block(MEMORY_FIELDS, ("peak_mib",))),
            _concat(
                self._telemetry,
                _empty_device_block(TELEMETRY_FIELDS, _TELEMETRY_FLOATS),
            ),
            tuple(self._provenance_list),
            tuple(self._speculatives),
        )


def _row_block(columns: dict[str, list]) -> pd.DataFrame:
    frame: dict[str, object] = {}
    for name in _STRINGS:
        frame[name] = np.array(columns.get(name, []), dtype=object)
    for name in _INTEGERS:
        frame[name] = np.array(columns.get(name, []), dtype=np.int64)
    for name in _OPTIONAL_INTEGERS:
        frame[name] = pd.array(columns.get(name, []), dtype="Int64")
    for name in _FLOATS:
        frame[name] = np.array(columns.get(name, []), dtype=float)
    frame["answer_reached"] = pd.array(columns.get("answer_reached", []), dtype="boolean")
    frame["has_metrics"] = np.array(columns.get("has_metrics", []), dtype=bool)
    for name in ("provenance", "speculative", "line", "offset"):
        frame[name] = np.array(columns.get(name, []), dtype=np.int64)
    return pd.DataFrame(frame)


def _device_block(columns: dict[str, list], floats: Iterable[str]) -> pd.DataFrame:
    frame = pd.DataFrame(columns)
    for name in floats:
        frame[name] = frame[name].astype(float)
    return frame


def _empty_device_block(fields: Iterable[str], floats: Iterable[str]) -> pd.DataFrame:
    return _device_block({"record": [], **{name: [] for name in fields}}, floats).astype(
        {"record": np.int64}
    )


def _concat(blocks: list[pd.DataFrame], empty: pd.DataFrame) -> pd.DataFrame:
    if not blocks:
        return empty
    if len(blocks) == 1:
        return blocks[0]
    return pd.concat(blocks, ignore_index=True)
