"""The trials table, and the trials of it that enter the statistics (by the one definition,
``records.inclusion.enters_statistics``)."""

from __future__ import annotations

from collections.abc import Iterable
from itertools import groupby
from typing import Literal

import numpy as np
import pandas as pd

from sitegen.records.inclusion import closed_loop, enters_statistics
from sitegen.records.table import RecordTable
from sitegen.statistics.latency import tpot

TRIALS_COLUMNS = (
    "campaign_id",
    "trial_id",
    "order_index",
    "condition_id",
    "input_id",
    "role",
    "status",
    "failure_reason",
    "repetition",
    "seed",
    "speculative_mode",
    "draft_max",
    "context_capacity",
    "engine_context_per_slot",
    "target_prompt_tokens",
    "prompt_tokens",
    "max_output_tokens",
    "generated_tokens",
    "reasoning_tokens",
    "answer_tokens",
    "finish",
    "answer_reached",
    "prompt_processing_s",
    "ttft_s",
    "t_first_visible_s",
    "t_first_answer_s",
    "t_natural_finish_s",
    "e2e_s",
    "tpot_s",
    "gen_tps",
    "native_tps",
    "draft_proposed",
    "draft_accepted",
    "peak_mem_mib",
    "concurrency",
    "round_run_id",
    "aggregate_tps",
    "energy_j",
    "energy_per_token_j",
    "cpu_time_s",
    "cpu_s_per_token",
    "engine",
    "started_at",
    "acceptance",
    "load_profile",
    "load_offered_rate",
    "load_request_index",
    "load_scheduled_s",
    "load_sent_s",
    "load_run_id",
    "load_run_requests",
    "load_run_wall_s",
    "load_run_completed",
    "load_run_generated_tokens",
)
"""The trials table's columns as published (``trials.csv``), in order."""


def trials_frame(table: RecordTable) -> pd.DataFrame:
    """One row per record (every role and status), the columns published as
    ``trials.csv``; the row index is the record's index in ``table``."""
    rows = table.rows
    derived = _derived_columns(table)
    # Made at once from its columns: each column set on a frame costs more than a small
    # campaign's figures.
    return pd.DataFrame(
        {name: derived[name] if name in derived else rows[name] for name in TRIALS_COLUMNS},
        index=rows.index,
    )


def _derived_columns(table: RecordTable) -> dict[str, pd.Series | np.ndarray]:
    """The columns of ``trials_frame`` that are not the records' own columns as they are;
    figures computed on floats (a missing value as NaN), not nullable pandas types, whose
    every operation costs more."""
    rows = table.rows
    speculative = rows["speculative"]
    engines = [p.engine.id for p in table.provenances]
    memory = table.peak_memory.groupby("record")["peak_mib"].max()
    in_round = rows["round_run_id"].notna().to_numpy()
    generated = floats(rows["generated_tokens"])
    e2e_s = floats(rows["e2e_s"])
    alone_tps = generated / np.where(e2e_s > 0, e2e_s, np.nan)
    tokens = np.where(in_round, floats(rows["round_generated_tokens"]), generated)
    tokens = np.where(tokens > 0, tokens, np.nan)
    energy, cpu_time = _totals(table.telemetry, rows.index)
    return {
        "speculative_mode": speculative.map(lambda i: table.speculatives[i].mode),
        "draft_max": speculative.map(lambda i: table.speculatives[i].draft_max).astype("Int64"),
        "finish": rows["finish"].where(rows["has_metrics"], "error"),
        "answer_reached": rows["answer_reached"].fillna(False).astype(bool),
        "peak_mem_mib": memory.reindex(rows.index).astype(float),
        "concurrency": rows["round_size"].fillna(1).astype("int64"),
        "aggregate_tps": np.where(in_round, floats(rows["round_aggregate_tps"]), alone_tps),
        "energy_j": energy,
        "energy_per_token_j": energy / tokens,
        "cpu_time_s": cpu_time,
        "cpu_s_per_token": cpu_time / tokens,
        "engine": rows["provenance"].map(lambda i: engines[i]),
        "acceptance": trial_acceptance(rows),
        "tpot_s": tpot(rows),
    }


def floats(column: pd.Series) -> np.ndarray:
    """A column's values as floats, a missing value as NaN."""
    return column.to_numpy(dtype=float, na_value=np.nan)


def _totals(telemetry: pd.DataFrame, index: pd.Index) -> tuple[np.ndarray, np.ndarray]:
    """Per record (``index``), the sums over its devices of the NVML energy and of the CPU
    time; missing where no device has a value. A round's device quantities cover every
    request of the round, so per-token figures divide by the round's tokens: derived, the
    device's whole use, not the request's alone."""
    sums = (
        pd.DataFrame(
            {
                "record": telemetry["record"],
                "energy_j": telemetry["energy_j"].where(telemetry["source"] == "nvml"),
                "cpu_time_s": telemetry["cpu_time_s"],
            }
        )
        .groupby("record")[["energy_j", "cpu_time_s"]]
        .sum(min_count=1)
        .reindex(index)
    )
    return floats(sums["energy_j"]), floats(sums["cpu_time_s"])


def one_row_per_round(frame: pd.DataFrame, per: tuple[str, ...] = ()) -> pd.DataFrame:
    """The rows of a table with each concurrent round once (per value of the ``per``
    columns, e.g. each device); requests that ran alone stay. A round's aggregate figures
    are shared by its requests and count once."""
    if "round_run_id" not in frame:
        return frame
    alone = frame[frame["round_run_id"].isna()]
    rounds = frame.dropna(subset=["round_run_id"]).drop_duplicates(["round_run_id", *per])
    return pd.concat([alone, rounds]) if len(rounds) else alone


def generation_rates(trials: pd.DataFrame, condition_id: str, input_id: str) -> np.ndarray:
    """The generation rates of one condition on one input (what a ratio's interval
    resamples); empty without such trials."""
    if trials.empty:
        return np.array([])
    # The one column masked, not every column of the table.
    chosen = (trials["condition_id"] == condition_id) & (trials["input_id"] == input_id)
    return trials["gen_tps"][chosen].astype(float).to_numpy()


def trial_acceptance(frame: pd.DataFrame) -> pd.Series:
    """Each trial's draft acceptance (accepted ÷ proposed) where it proposed drafts, else
    missing."""
    proposed = floats(frame["draft_proposed"])
    rate = floats(frame["draft_accepted"]) / np.where(proposed > 0, proposed, np.nan)
    return pd.Series(rate, index=frame.index)


def usable(frame: pd.DataFrame) -> pd.DataFrame:
    """The rows of a trials table that enter the statistics (``enters_statistics``)."""
    return frame[enters_statistics(frame)]


def excluded_counts(frame: pd.DataFrame, planned: Iterable[str]) -> dict[str, int]:
    """Warm-ups and failed attempts, counted for the page (C-EXCLUDED), beside the
    measured trials that enter the statistics, the ``planned`` measured trials (ids, read
    once) and those of them without any record yet (a campaign still running, or
    stopped)."""
    recorded = set(frame["trial_id"]) if len(frame) else set()
    planned_count = missing = 0
    for trial_id in planned:
        planned_count += 1
        missing += trial_id not in recorded
    return {
        "warmup": int((frame["role"] == "warmup").sum()),
        "failed": int(((frame["role"] == "measured") & (frame["status"] == "failed")).sum()),
        "measured": int(enters_statistics(frame).sum()),
        "planned": planned_count,
        "missing": missing,
    }


RunOrder = Literal["sequential", "interleaved", "mixed"]


def observed_run_order(rows: pd.DataFrame) -> RunOrder:
    """The run order the records show (C-ORDER states what happened, not only what was
    planned): ``sequential`` when each condition's measured trials ran as one block,
    ``interleaved`` when conditions alternated (no condition ran more than twice in a
    row, as in off/on pairs whose leading condition swaps), ``mixed`` otherwise."""
    measured = rows.loc[
        (rows["role"] == "measured") & closed_loop(rows), ["condition_id", "order_index"]
    ]
    measured = measured.sort_values("order_index", kind="stable")
    sequence = list(measured["condition_id"])
    runs = [len(list(group)) for _, group in groupby(sequence)]
    if len(runs) <= len(set(sequence)):
        return "sequential"
    return "interleaved" if max(runs) <= 2 else "mixed"
