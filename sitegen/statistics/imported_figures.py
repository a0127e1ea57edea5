"""An imported campaign's records as a table, and a figure as the pages show it: the
median of a field's present values with their range and count (pure).

The report's per-condition rows and the run-level figures both summarize this table, so
both modules take it from here.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from sitegen.records.import_source import ImportedMeasurement
from sitegen.records.imported_campaign import ImportedCampaign

FIGURES = (
    "gen_tps",
    "tokens_per_s",
    "tool_tokens_per_s",
    "ttft_s",
    "e2e_s",
    "output_tokens",
    "prompt_tokens",
    "acceptance",
    "peak_memory_mib",
)
"""Figures summarized per condition and input, each a median with its range
(``acceptance``: each request's accepted ÷ proposed draft tokens, where it proposed any)."""
TRUNCATED = "length"
"""The finish reason of a request stopped by its output cap (OpenAI-compatible servers)."""


@dataclass(frozen=True)
class Figure:
    """One figure of one condition and input: a median with its range, or absent."""

    median: float | None
    low: float | None
    high: float | None
    n: int

    @property
    def present(self) -> bool:
        return self.median is not None


def figure_of(values: pd.Series) -> Figure:
    """The median, range and count of the present ``values``."""
    present = values.dropna().astype(float)
    if present.empty:
        return Figure(None, None, None, 0)
    return Figure(float(present.median()), float(present.min()), float(present.max()), len(present))


def imported_frame(campaign: ImportedCampaign) -> pd.DataFrame:
    """One row per record: ids, role and status, its figures and its source's load."""
    sources = {s.file: s for s in campaign.registration.sources}
    rows = []
    for record in campaign.records:
        m = record.measurement
        source = sources[record.origin.file]
        rows.append(
            {
                "trial_id": record.trial_id,
                "condition_id": record.condition_id,
                "input_id": record.input_id,
                "measure": m.measure,
                "role": record.role,
                "status": record.status,
                "file": record.origin.file,
                "group": m.group,
                "location": record.origin.location,
                "started_at": m.started_at,
                "started_monotonic_s": m.started_monotonic_s,
                "generation_s": record.generation_s,
                "gen_tps": record.gen_tps,
                "tokens_per_s": m.tokens_per_s,
                "tool_tokens_per_s": m.tool_tokens_per_s,
                "ttft_s": m.ttft_s,
                "e2e_s": m.e2e_s,
                "last_token_s": m.last_token_s,
                "chunk_gaps": len(m.inter_chunk_latencies_s)
                if m.inter_chunk_latencies_s is not None
                else None,
                "output_tokens": m.output_tokens,
                "prompt_tokens": m.prompt_tokens,
                "acceptance": m.accepted_tokens / m.draft_tokens
                if m.draft_tokens and m.accepted_tokens is not None
                else None,
                "peak_memory_mib": m.peak_memory_mib,
                "truncated": _truncated(m),
                "output_text": m.output_text is not None,
                "format": source.format,
                "backend": source.backend,
                "load_pattern": m.load_pattern,
                "concurrency": m.concurrency,
                "request_rate": m.request_rate,
            }
        )
    return pd.DataFrame(rows)


def _truncated(m: ImportedMeasurement) -> bool | None:
    """Whether the request stopped at its output cap, as its finish reason or its stated cap
    says; ``None`` where the source states neither."""
    if m.finish_reason is None and m.output_cap is None:
        return None
    if m.finish_reason is not None and m.finish_reason.strip().lower() == TRUNCATED:
        return True
    return (
        m.output_cap is not None
        and m.output_tokens is not None
        and (m.output_tokens >= m.output_cap)
    )
