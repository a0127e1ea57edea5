"""Downloadable data of a report: JSON (complete, with full texts), CSV and Parquet per
table, and ``SHA256SUMS``. Bytes are produced deterministically.

The CSV files are made safe to open in a spreadsheet (model output and engine error text
are untrusted): text cells that a spreadsheet would read as a formula are prefixed with
``'`` (OWASP CSV injection advice) and every text field is quoted, so line breaks and
quotes inside a field never split a row. The JSON and Parquet files keep the exact text.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
from dataclasses import dataclass

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from sitegen.statistics.report import Report


@dataclass(frozen=True)
class DownloadFile:
    """One file offered on the data page."""

    name: str
    kind: str
    """``json``, ``csv``, ``parquet`` or ``sums``."""
    table: str
    """``records``, ``trials``, ``speed_summary`` or ``checksums``."""
    data: bytes

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.data).hexdigest()

    @property
    def size_bytes(self) -> int:
        return len(self.data)


FORMULA_PREFIXES = ("=", "+", "-", "@", "\t", "\r")
"""First characters that make a spreadsheet read a cell as a formula (OWASP)."""

CSV_ESCAPE = "'"
"""Prefix that makes a spreadsheet show such a cell as text."""


def neutralise_cell(value: object) -> object:
    """``value`` with ``CSV_ESCAPE`` before it when it is text a spreadsheet would run as
    a formula; anything else unchanged."""
    if isinstance(value, str) and value.startswith(FORMULA_PREFIXES):
        return CSV_ESCAPE + value
    return value


def _is_text(column: pd.Series) -> bool:
    dtype = column.dtype
    if isinstance(dtype, pd.CategoricalDtype):
        return _is_text(pd.Series(dtype.categories))
    return pd.api.types.is_object_dtype(dtype) or isinstance(dtype, pd.StringDtype)


def spreadsheet_safe(frame: pd.DataFrame) -> pd.DataFrame:
    """A copy of ``frame`` whose text columns are neutralised (``neutralise_cell``);
    numeric and boolean columns are unchanged, so negative numbers stay numbers."""
    safe = frame.copy()
    for name in safe.columns:
        if _is_text(safe[name]):
            safe[name] = safe[name].map(neutralise_cell, na_action="ignore")
    return safe


def _csv(frame: pd.DataFrame) -> bytes:
    # QUOTE_NONNUMERIC quotes every text field (a lone CR inside one included: with
    # QUOTE_MINIMAL and lineterminator="\n" pandas leaves it bare and readers split the
    # row) while numbers stay unquoted numbers. utf-8-sig so that spreadsheet programs
    # read Japanese text correctly.
    text = spreadsheet_safe(frame).to_csv(
        index=False, lineterminator="\n", quoting=csv.QUOTE_NONNUMERIC
    )
    return text.encode("utf-8-sig")


def _parquet(frame: pd.DataFrame) -> bytes:
    buffer = io.BytesIO()
    table = pa.Table.from_pandas(frame, preserve_index=False)
    # No creation metadata: the same frame gives the same bytes.
    pq.write_table(table, buffer, compression="zstd", write_statistics=False, store_schema=False)
    return buffer.getvalue()


def make_downloads(report: Report) -> list[DownloadFile]:
    """Every download of one report, ending with the checksum file."""
    records = {
        "campaign_id": report.slug,
        "plan_sha256": report.campaign.plan_sha256,
        "plan": report.plan.model_dump(mode="json"),
        "records": [r.model_dump(mode="json") for r in report.campaign.records],
    }
    files = [
        DownloadFile(
            "records.json",
            "json",
            "records",
            json.dumps(records, ensure_ascii=False, indent=1, sort_keys=True).encode("utf-8"),
        )
    ]
    for table, frame in (("trials", report.trials), ("speed_summary", report.summary)):
        files.append(DownloadFile(f"{table}.csv", "csv", table, _csv(frame)))
        files.append(DownloadFile(f"{table}.parquet", "parquet", table, _parquet(frame)))
    sums = "".join(f"{f.sha256}  {f.name}\n" for f in files).encode("ascii")
    files.append(DownloadFile("SHA256SUMS", "sums", "checksums", sums))
    return files
