"""Downloadable data of a report: the records as measured and redacted
(``records.jsonl.gz``, with full texts, beside the plan and a manifest of both as
published, tied to the measured campaign's manifest, see ``PublishedManifest``), CSV and Parquet per table,
``SHA256SUMS``, and the answer browser's pages. Bytes are produced deterministically.

Files that grow with the records are streamed into a scratch directory, never held in
memory whole: a build's memory stays bounded at any number of records.

The CSV files are made safe to open in a spreadsheet (model output and engine error text
are untrusted): text cells that a spreadsheet would read as a formula, after Unicode
compatibility folding (``＝``) and leading blanks or line breaks, are prefixed with ``'``
(OWASP CSV injection advice) and every text field is quoted, so line breaks and
quotes inside a field never split a row. The JSON and Parquet files keep the exact text.
"""

from __future__ import annotations

import csv
import gzip
import hashlib
import tempfile
import unicodedata
from collections.abc import Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from sitegen.core.errors import StorageError
from sitegen.core.price_list import PRICES_DOWNLOAD, price_list_json
from sitegen.core.signing import Signer
from sitegen.pages.safe_json import script_json
from sitegen.plan.plan_file import canonical_plan_json
from sitegen.records.campaign import Campaign
from sitegen.records.layout import MANIFEST_FILE
from sitegen.records.record_models import Manifest, PublishedManifest
from sitegen.records.table import release_freed_memory
from sitegen.statistics.report import Report
from sitegen.statistics.system import memory_frame
from sitegen.statistics.telemetry import telemetry_frame

ANSWERS_PAGE_SIZE = 50
"""Answers per on-demand page of the data page's answer browser."""

SHARD_CHUNK_ROWS = 200 * ANSWERS_PAGE_SIZE
"""Records whose columns become Python values at a time while the answer pages are
written."""


@dataclass(frozen=True)
class DownloadFile:
    """One file offered on the data page: its bytes, or a file in the build's scratch
    directory."""

    name: str
    kind: str
    """``jsonl.gz``, ``json``, ``csv``, ``parquet`` or ``sums``."""
    table: str
    """``records``, ``plan``, ``manifest``, ``trials``, ``speed_summary``, ``memory``,
    ``system``, a quality table (``QUALITY_TABLES``) or ``checksums``."""
    sha256: str
    size_bytes: int
    data: bytes | None = None
    path: Path | None = None

    @classmethod
    def from_bytes(cls, name: str, kind: str, table: str, data: bytes) -> DownloadFile:
        return cls(name, kind, table, hashlib.sha256(data).hexdigest(), len(data), data=data)

    @classmethod
    def from_file(cls, name: str, kind: str, table: str, path: Path) -> DownloadFile:
        digest = hashlib.sha256()
        with path.open("rb") as handle:
            while block := handle.read(1 << 20):
                digest.update(block)
        return cls(name, kind, table, digest.hexdigest(), path.stat().st_size, path=path)

    @property
    def content(self) -> bytes | Path:
        """What the site writes: the bytes, or the scratch file to copy."""
        content = self.data if self.data is not None else self.path
        if content is None:
            raise ValueError(f"the download {self.name} has neither bytes nor a file")
        return content

    def read_bytes(self) -> bytes:
        content = self.content
        return content.read_bytes() if isinstance(content, Path) else content


FORMULA_PREFIXES = ("=", "+", "-", "@", "\t", "\r")
"""First characters that make a spreadsheet read a cell as a formula (OWASP)."""

CSV_ESCAPE = "'"
"""Prefix that makes a spreadsheet show such a cell as text."""


def neutralise_cell(value: object) -> object:
    """``value`` with ``CSV_ESCAPE`` before it when it is text a spreadsheet would run as
    a formula; anything else unchanged. Spreadsheets fold compatibility forms (``＝``,
    ``﹢``, ``＠``) and skip leading blanks, line breaks and invisible format characters
    before reading a formula, so the first character is taken after NFKC normalization
    and after those."""
    if not isinstance(value, str):
        return value
    if value.startswith(FORMULA_PREFIXES):
        return CSV_ESCAPE + value
    if value[:1].isascii() and value[:1].isalnum():
        return value  # a letter or digit first: nothing folds into a formula sign
    start = _first_visible(value[:_HEAD]) or _first_visible(value[_HEAD:])
    return CSV_ESCAPE + value if start and start in FORMULA_PREFIXES else value


_HEAD = 64
"""Characters folded to find a cell's first visible one (a cell may be a whole answer)."""


_ASCII_ALNUM_FIRST = "^[A-Za-z0-9]"
"""Text whose first character is an ASCII letter or digit."""


def _first_visible(text: str) -> str:
    folded = unicodedata.normalize("NFKC", text)
    return next((c for c in folded if not (c.isspace() or unicodedata.category(c) == "Cf")), "")


def _is_text(dtype: np.dtype | pd.api.extensions.ExtensionDtype) -> bool:
    if isinstance(dtype, pd.CategoricalDtype):
        return _is_text(dtype.categories.dtype)
    return pd.api.types.is_object_dtype(dtype) or isinstance(dtype, pd.StringDtype)


def spreadsheet_safe(frame: pd.DataFrame) -> pd.DataFrame:
    """A copy of ``frame`` whose text columns are neutralised (``neutralise_cell``);
    numeric and boolean columns are unchanged, so negative numbers stay numbers."""
    safe = frame.copy(deep=False)  # copy on write: the columns neutralised are new
    for name, dtype in frame.dtypes.items():
        if _is_text(dtype):
            safe[name] = _neutralise_column(frame[name])
    return safe


def _neutralise_column(column: pd.Series) -> pd.Series:
    # Each distinct value once: columns repeat the same ids and conditions thousands of times.
    try:
        changed = {
            value: safe
            for value in _formula_candidates(column)
            if (safe := neutralise_cell(value)) is not value
        }
    except TypeError:  # unhashable cells (lists): one at a time
        return column.map(neutralise_cell, na_action="ignore")
    return (
        column.map(lambda value: changed.get(value, value), na_action="ignore")
        if changed
        else column
    )


def _formula_candidates(column: pd.Series) -> Iterable[object]:
    """The column's distinct values that ``neutralise_cell`` may change. Text in Arrow is
    sorted out there, a letter or digit first being never changed: no Python string for
    each distinct trial id, and no pandas call per step (a table's many small text columns
    would each pay it)."""
    if isinstance(column.dtype, pd.StringDtype) and column.dtype.storage == "pyarrow":
        text = pa.array(column)
        plain = pc.fill_null(pc.match_substring_regex(text, _ASCII_ALNUM_FIRST), True)
        return pc.unique(pc.filter(text, pc.invert(plain))).to_pylist()
    return column.dropna().unique()


def _write_csv(frame: pd.DataFrame, target: Path) -> None:
    # QUOTE_NONNUMERIC quotes every text field (a lone CR inside one included: with
    # QUOTE_MINIMAL and lineterminator="\n" pandas leaves it bare and readers split the
    # row) while numbers stay unquoted numbers. utf-8-sig so that spreadsheet programs
    # read Japanese text correctly. Written as it is made: a table of 400,000 trials is
    # never one string in memory.
    with target.open("w", encoding="utf-8-sig", newline="") as out:
        spreadsheet_safe(frame).to_csv(
            out, index=False, lineterminator="\n", quoting=csv.QUOTE_NONNUMERIC
        )


PARQUET_ROW_GROUP = 131_072
"""Rows converted and written at a time (a row group): the whole table is never a second
time in memory as Arrow columns."""


def _write_parquet(frame: pd.DataFrame, target: Path) -> None:
    if len(frame) <= PARQUET_ROW_GROUP:  # converted once
        whole = pa.Table.from_pandas(frame, preserve_index=False)
        schema, blocks = whole.schema, iter([whole])
    else:
        # The types of the whole table (a block of missing values alone would be untyped).
        schema = pa.Schema.from_pandas(frame, preserve_index=False)
        blocks = (
            pa.Table.from_pandas(
                frame.iloc[start : start + PARQUET_ROW_GROUP], schema=schema, preserve_index=False
            )
            for start in range(0, len(frame), PARQUET_ROW_GROUP)
        )
    # No creation metadata: the same frame gives the same bytes.
    with pq.ParquetWriter(
        target, schema, compression="zstd", write_statistics=False, store_schema=False
    ) as writer:
        for block in blocks:
            writer.write_table(block)


GZIP_CHUNK_BYTES = 1 << 20
"""Lines compressed at a time, on a second thread (zlib lets go of the GIL while it
compresses): the next chunk's lines are read and published meanwhile."""


def _gzip_lines(lines: Iterable[bytes], target: Path) -> str:
    """``lines`` gzip-compressed into ``target`` a chunk at a time, with no name or time in
    the header (same records, same archive). At most two chunks are in memory. Returns the
    SHA-256 of the lines as they were before compression."""
    digest = hashlib.sha256()
    with (
        target.open("wb") as out,
        # Level 6 (zlib's default): level 9, gzip's, costs much more time for little gain.
        gzip.GzipFile(filename="", mode="wb", fileobj=out, mtime=0, compresslevel=6) as packed,
        ThreadPoolExecutor(max_workers=1, thread_name_prefix="sitegen-gzip") as compressor,
    ):
        writing: Future[int] | None = None
        chunk: list[bytes] = []
        size = 0
        for line in lines:
            digest.update(line)
            chunk.append(line)
            size += len(line)
            if size >= GZIP_CHUNK_BYTES:
                if writing is not None:
                    writing.result()
                writing = compressor.submit(packed.write, b"".join(chunk))
                chunk, size = [], 0
        if writing is not None:
            writing.result()
        packed.write(b"".join(chunk))
    return digest.hexdigest()


def published_manifest(campaign: Campaign, plan: bytes, records_sha256: str) -> bytes:
    """The ``manifest.json`` download: the published ``plan`` and records (their SHA-256)
    tied to the measured campaign's manifest, or to the manifest of the report a campaign
    was re-imported from (which the measured one stays)."""
    origin = campaign.published_as
    if origin is None:
        measured = (campaign.directory / MANIFEST_FILE).read_bytes()
        registered_at = Manifest.model_validate_json(measured).registered_at
        measured_sha256 = hashlib.sha256(measured).hexdigest()
    else:
        registered_at, measured_sha256 = origin.registered_at, origin.measured_manifest_sha256
    manifest = PublishedManifest(
        campaign_id=campaign.campaign_id,
        registered_at=registered_at,
        record_count=len(campaign),
        registered_plan_sha256=campaign.plan_sha256,
        plan_sha256=hashlib.sha256(plan).hexdigest(),
        records_sha256=records_sha256,
        measured_manifest_sha256=measured_sha256,
    )
    return (manifest.model_dump_json(indent=1) + "\n").encode()


QUALITY_TABLES = (
    "quality_outcomes",
    "quality_pairs",
    "quality_pairs_by_domain",
    "quality_problems",
    "quality_answers",
    "document_outcomes",
    "document_pairs",
    "document_items",
)
"""The quality tables offered beside the trials, in this order (the data page describes
each as ``download.<table>``)."""


def quality_tables(report: Report) -> list[tuple[str, pd.DataFrame]]:
    """Each quality table of the report with its name: the outcome counts, the pair tables
    (overall, per domain), the per-problem table, every scored answer and, when the plan
    has document tasks, their outcomes and pair tables (overall, per item). Empty without a
    quality evaluation; a table without columns (no scored pair yet) is left out."""
    quality = report.quality
    if quality is None:
        return []
    frames = {
        "quality_outcomes": quality.outcomes,
        "quality_pairs": quality.pairs,
        "quality_pairs_by_domain": quality.pairs_by_domain,
        "quality_problems": quality.problems,
        "quality_answers": quality.tables.answers,
    }
    if report.plan.quality is not None and report.plan.quality.documents:
        frames |= {
            "document_outcomes": quality.document_outcomes,
            "document_pairs": quality.document_pairs,
            "document_items": quality.document_pairs_by_item,
        }
    return [
        (name, frames[name])
        for name in QUALITY_TABLES
        if name in frames and len(frames[name].columns)
    ]


def _tables(report: Report) -> Iterator[tuple[str, pd.DataFrame]]:
    """The tables offered as CSV and Parquet, in order, each made when it is asked for: the
    per-device tables (``memory``, ``telemetry``: a row per record and device), large for a
    large campaign, are never in memory together."""
    yield "trials", report.trials
    yield "speed_summary", report.summary
    yield "latency_percentiles", report.latency
    if len(report.load):
        yield "load", report.load
    yield "memory", memory_frame(report.campaign.table)
    yield "telemetry", telemetry_frame(report.campaign.table)
    yield "system", report.system_table
    yield from quality_tables(report)


def make_downloads(
    report: Report, scratch: Path, signer: Signer | None = None
) -> list[DownloadFile]:
    """Every download of one report, ending with the checksum file (and its signature,
    with a ``signer``); large files are written into ``scratch``."""
    campaign = report.campaign
    scratch.mkdir(parents=True, exist_ok=True)
    # From the records and plan as published (redacted), not the files in data/.
    records_sha256 = _gzip_lines(campaign.iter_published_lines(), scratch / "records.jsonl.gz")
    plan = canonical_plan_json(campaign.plan).encode("utf-8")
    files = [
        DownloadFile.from_file(
            "records.jsonl.gz", "jsonl.gz", "records", scratch / "records.jsonl.gz"
        ),
        DownloadFile.from_bytes("plan.json", "json", "plan", plan),
        DownloadFile.from_bytes(
            "manifest.json", "json", "manifest", published_manifest(campaign, plan, records_sha256)
        ),
    ]
    prices = report.token_costs.prices
    if prices is not None:
        files.append(
            DownloadFile.from_bytes(PRICES_DOWNLOAD, "json", "prices", price_list_json(prices))
        )
    for table, frame in _tables(report):
        # Into scratch files: a large campaign's tables would otherwise stay in memory as
        # bytes until the site is written.
        for kind, write in (("csv", _write_csv), ("parquet", _write_parquet)):
            path = scratch / f"{table}.{kind}"
            write(frame, path)
            release_freed_memory()
            files.append(DownloadFile.from_file(path.name, kind, table, path))
        del frame  # let go before the next table is made
    return files + checksums(files, signer, campaign.latest_start)


def table_downloads(tables: Iterable[tuple[str, pd.DataFrame]]) -> list[DownloadFile]:
    """CSV and Parquet of each ``(table, frame)``, in order, as bytes (written as
    ``make_downloads`` writes them): for small tables, an imported campaign's."""
    files = []
    with tempfile.TemporaryDirectory(prefix="sitegen-tables-") as scratch:
        for table, frame in tables:
            for kind, write in (("csv", _write_csv), ("parquet", _write_parquet)):
                path = Path(scratch) / f"{table}.{kind}"
                write(frame, path)
                files.append(DownloadFile.from_bytes(path.name, kind, table, path.read_bytes()))
    return files


def checksums(
    files: Iterable[DownloadFile], signer: Signer | None = None, data_time: datetime | None = None
) -> list[DownloadFile]:
    """``SHA256SUMS`` of ``files`` (``sha256sum -c`` reads it) and, with a ``signer``, its
    signature ``SHA256SUMS.sig``, dated by the report's data (``data_time``), not the clock:
    the same data makes the same bytes, and a version that changes nothing of this report
    re-stores none of it."""
    sums = "".join(f"{f.sha256}  {f.name}\n" for f in files).encode("ascii")
    signed = [DownloadFile.from_bytes("SHA256SUMS", "sums", "checksums", sums)]
    if signer is not None:
        signature = signer.signature(sums, signed_at=data_time or datetime.fromtimestamp(0, UTC))
        signed.append(DownloadFile.from_bytes("SHA256SUMS.sig", "sig", "signature", signature))
    return signed


def write_answer_shards(report: Report, scratch: Path) -> list[Path]:
    """The answer browser's pages: every record's texts in run order, ``ANSWERS_PAGE_SIZE``
    per JSON file, written into ``scratch`` one page at a time (codes, not words: the page
    translates them, so both languages share the files)."""
    campaign = report.campaign
    columns = (
        "order_index",
        "trial_id",
        "attempt",
        "role",
        "status",
        "finish",
        "generated_tokens",
        "failure_reason",
    )
    # The columns first, then the order: sorting the whole table would copy every column.
    rows = campaign.rows[list(columns)].sort_values("order_index", kind="stable")
    scratch.mkdir(parents=True, exist_ok=True)
    shards: list[Path] = []
    for chunk_start in range(0, len(rows), SHARD_CHUNK_ROWS):
        # Python values (None for missing) a chunk at a time, not for every record at once.
        chunk = rows.iloc[chunk_start : chunk_start + SHARD_CHUNK_ROWS]
        chunk = chunk.astype(object).where(chunk.notna(), None)
        for start in range(0, len(chunk), ANSWERS_PAGE_SIZE):
            block = chunk.iloc[start : start + ANSWERS_PAGE_SIZE]
            page = [
                {
                    **dict(zip(columns, values, strict=True)),
                    "text": texts["text"],
                    "reasoning_text": texts["reasoning_text"],
                }
                for values, texts in zip(
                    block.itertuples(index=False, name=None),
                    campaign.iter_texts(block.index),
                    strict=True,
                )
            ]
            path = scratch / f"{len(shards)}.json"
            path.write_bytes(script_json(page).encode("utf-8"))
            shards.append(path)
    return shards


@dataclass(frozen=True)
class ReportFiles:
    """What a report publishes beside its pages, written into the build's scratch folder."""

    downloads: list[DownloadFile]
    """``make_downloads``'s files."""
    answer_shards: list[Path]
    """``write_answer_shards``'s pages, in order."""


def write_report_files(report: Report, scratch: Path, signer: Signer | None = None) -> ReportFiles:
    """A report's downloads (``scratch/downloads``) and answer pages (``scratch/answers``);
    a full or read-only temporary folder is one ``StorageError`` naming it."""
    try:
        return ReportFiles(
            make_downloads(report, scratch / "downloads", signer),
            write_answer_shards(report, scratch / "answers"),
        )
    except OSError as exc:
        raise StorageError.from_os_error(exc, "write the downloads into", scratch) from exc
