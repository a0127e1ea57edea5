"""The trials table and the one definition of the trials that enter the statistics."""

from __future__ import annotations

from collections.abc import Iterable
from itertools import groupby
from typing import Literal

import numpy as np
import pandas as pd

from sitegen.records.models import TrialRecord

USABLE_ROLE = "measured"
USABLE_STATUS = "ok"


FRAME_CHUNK = 4096
"""Records turned into one block of the trials table at a time: boxed Python values of
every column for all records at once would cost more than the table itself."""


def trials_frame(records: Iterable[TrialRecord]) -> pd.DataFrame:
    """One row per record (every role and status), the columns published as ``trials.csv``."""
    records = list(records)
    blocks = [
        _trials_block(records[start : start + FRAME_CHUNK])
        for start in range(0, len(records), FRAME_CHUNK)
    ]
    if len(blocks) == 1:
        return blocks[0]
    return pd.concat(blocks, ignore_index=True)


def _trials_block(records: list[TrialRecord]) -> pd.DataFrame:
    columns: dict[str, list] = {}
    for r in records:
        m = r.metrics
        row = {
            "campaign_id": r.campaign_id,
            "trial_id": r.trial_id,
            "order_index": r.order_index,
            "condition_id": r.condition_id,
            "input_id": r.input_id,
            "role": r.role,
            "status": r.status,
            "failure_reason": r.failure_reason,
            "repetition": r.repetition,
            "seed": r.sampling.seed,
            "speculative_mode": r.speculative.mode,
            "draft_max": r.speculative.draft_max,
            "context_capacity": r.context_capacity,
            "engine_context_per_slot": r.engine_context_per_slot,
            "target_prompt_tokens": r.target_prompt_tokens,
            "prompt_tokens": r.prompt_tokens,
            "max_output_tokens": r.max_output_tokens,
            "generated_tokens": m.generated_tokens if m else None,
            "reasoning_tokens": m.reasoning_tokens if m else None,
            "answer_tokens": m.answer_tokens if m else None,
            "finish": m.finish if m else "error",
            "answer_reached": m.answer_reached if m else False,
            "prompt_processing_s": m.prompt_processing_s if m else None,
            "ttft_s": m.ttft_s if m else None,
            "t_first_visible_s": m.t_first_visible_s if m else None,
            "t_first_answer_s": m.t_first_answer_s if m else None,
            "t_natural_finish_s": m.t_natural_finish_s if m else None,
            "e2e_s": m.e2e_s if m else None,
            "gen_tps": m.gen_tps if m else None,
            "native_tps": m.native_tps if m else None,
            "draft_proposed": m.draft_proposed if m else None,
            "draft_accepted": m.draft_accepted if m else None,
            "peak_mem_mib": max((d.peak_mib for d in r.peak_memory), default=None),
            "concurrency": r.round.size if r.round else 1,
            "round_run_id": r.round.run_id if r.round else None,
            "aggregate_tps": _aggregate_tps(r),
            "energy_j": _total(t.energy_j for t in r.telemetry if t.source == "nvml"),
            "energy_per_token_j": _per_round_token(
                r, _total(t.energy_j for t in r.telemetry if t.source == "nvml")
            ),
            "cpu_time_s": _total(t.cpu_time_s for t in r.telemetry),
            "cpu_s_per_token": _per_round_token(r, _total(t.cpu_time_s for t in r.telemetry)),
            "engine": r.provenance.engine.id,
            "started_at": r.started_at,
        }
        # Column lists, not a list of row dicts: a row dict per record would double the
        # build's memory at 40,000 records.
        for name, value in row.items():
            columns.setdefault(name, []).append(value)
    frame = pd.DataFrame(columns)
    for column in (
        "generated_tokens",
        "reasoning_tokens",
        "answer_tokens",
        "prompt_tokens",
        "draft_proposed",
        "draft_accepted",
        "draft_max",
        "engine_context_per_slot",
    ):
        frame[column] = frame[column].astype("Int64")
    frame["acceptance"] = trial_acceptance(frame)
    return frame


def _total(values: Iterable[float | None]) -> float | None:
    """Sum over devices; ``None`` when no device has the value."""
    present = [v for v in values if v is not None]
    return sum(present) if present else None


def _aggregate_tps(record: TrialRecord) -> float | None:
    """Tokens per second of all requests in flight: the round's aggregate, or for a
    request run alone its own tokens over its whole time (first token included)."""
    if record.round is not None:
        return record.round.aggregate_tps
    m = record.metrics
    if m is None or m.generated_tokens is None or not m.e2e_s:
        return None
    return m.generated_tokens / m.e2e_s


def _per_round_token(record: TrialRecord, amount: float | None) -> float | None:
    """A device quantity spent during the request (energy, CPU time) per generated token.
    In a concurrent round the quantity covers every request of the round, so it is divided
    by the round's tokens. Derived: the device's whole use, not the request's alone."""
    if amount is None:
        return None
    if record.round is not None:
        tokens = record.round.generated_tokens
    else:
        tokens = record.metrics.generated_tokens if record.metrics else None
    return amount / tokens if tokens else None


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
    selected = trials[(trials["condition_id"] == condition_id) & (trials["input_id"] == input_id)]
    return selected["gen_tps"].astype(float).to_numpy()


def trial_acceptance(frame: pd.DataFrame) -> pd.Series:
    """Each trial's draft acceptance (accepted ÷ proposed) where it proposed drafts, else
    missing."""
    proposed = frame["draft_proposed"].astype("Float64")
    rate = frame["draft_accepted"].astype("Float64") / proposed.where(proposed > 0)
    return rate.astype(float)


def enters_statistics(record: TrialRecord) -> bool:
    """The one definition of a trial that enters the statistics: a measured trial whose
    request succeeded. Warm-ups and failed attempts are kept as records and counted on
    the pages (C-EXCLUDED), never summarized."""
    return record.role == USABLE_ROLE and record.status == USABLE_STATUS


def usable(frame: pd.DataFrame) -> pd.DataFrame:
    """The rows of a trials table that enter the statistics (``enters_statistics``)."""
    return frame[(frame["role"] == USABLE_ROLE) & (frame["status"] == USABLE_STATUS)]


def excluded_counts(frame: pd.DataFrame, planned: list[str]) -> dict[str, int]:
    """Warm-ups and failed attempts, counted for the page (C-EXCLUDED), beside the
    measured trials that enter the statistics, the ``planned`` measured trials and those of
    them without any record yet (a campaign still running, or stopped)."""
    recorded = set(frame["trial_id"]) if len(frame) else set()
    return {
        "warmup": int((frame["role"] == "warmup").sum()),
        "failed": int(((frame["role"] == "measured") & (frame["status"] == "failed")).sum()),
        "measured": int(len(usable(frame))),
        "planned": len(planned),
        "missing": sum(trial_id not in recorded for trial_id in planned),
    }


RunOrder = Literal["sequential", "interleaved", "mixed"]


def observed_run_order(records: Iterable[TrialRecord]) -> RunOrder:
    """The run order the records show (C-ORDER states what happened, not only what was
    planned): ``sequential`` when each condition's measured trials ran as one block,
    ``interleaved`` when conditions alternated (no condition ran more than twice in a
    row, as in off/on pairs whose leading condition swaps), ``mixed`` otherwise."""
    sequence = [
        r.condition_id for r in sorted(records, key=lambda r: r.order_index) if r.role == "measured"
    ]
    runs = [len(list(group)) for _, group in groupby(sequence)]
    if len(runs) <= len(set(sequence)):
        return "sequential"
    return "interleaved" if max(runs) <= 2 else "mixed"
