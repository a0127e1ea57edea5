"""Downloadable data of a report: JSON (complete, with full texts), CSV and Parquet per
table, and ``SHA256SUMS``. Bytes are produced deterministically."""

from __future__ import annotations

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


def _csv(frame: pd.DataFrame) -> bytes:
    # utf-8-sig so that spreadsheet programs read Japanese text correctly.
    return frame.to_csv(index=False, lineterminator="\n").encode("utf-8-sig")


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
