"""Device telemetry tables: per record × device as published, and per condition × device
as the speed page shows it beside the generation rate. Pure."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pandas as pd

from sitegen.records.record_models import DeviceTelemetry
from sitegen.records.table import RecordTable
from sitegen.statistics.row_groups import highest, median, row_groups
from sitegen.statistics.trials import enters_statistics, one_row_per_round

TELEMETRY_FIELDS = tuple(
    name for name in DeviceTelemetry.model_fields if name not in ("device", "source")
)

SUMMED = (
    "samples",
    "sample_interval_s",
    "sm_util_mean_pct",
    "mem_bw_util_mean_pct",
    "power_mean_w",
    "sm_clock_median_mhz",
    "temperature_max_c",
    "memory_used_max_mib",
    "energy_j",
    "cpu_time_s",
)
"""The telemetry fields ``telemetry_summary`` aggregates."""


def telemetry_frame(table: RecordTable) -> pd.DataFrame:
    """One row per record × device (every role and status; published as
    ``telemetry.csv``), with the round id so a round's shared summary is counted once."""
    devices = table.telemetry
    shown = ("campaign_id", "trial_id", "attempt", "condition_id", "input_id", "role", "status")
    of_record = table.per_device(devices, (*shown, "round_run_id"))
    columns: dict[str, pd.Series | np.ndarray] = {name: of_record[name] for name in shown}
    # The rows carry no load column: ``enters_statistics`` reads role and status here.
    columns["usable"] = enters_statistics(of_record).to_numpy()
    columns["round_run_id"] = of_record["round_run_id"]
    for name in ("device", "source", *TELEMETRY_FIELDS):
        columns[name] = devices[name].to_numpy()
    # Made at once from its columns: each column set on a frame costs more than a small
    # campaign's devices.
    return pd.DataFrame(columns)


def telemetry_summary(frame: pd.DataFrame, input_ids: set[str]) -> pd.DataFrame:
    """Per condition × device over the usable trials of ``input_ids`` (each concurrent
    round once): medians of the per-request means, the highest temperature and memory."""
    if not len(frame):
        return pd.DataFrame()
    # Only the columns read: the round selection below copies every column it keeps.
    columns = ["condition_id", "device", "source", "trial_id", "round_run_id", *SUMMED]
    selected = frame.loc[frame["usable"] & frame["input_id"].isin(input_ids), columns]
    if selected.empty:
        return pd.DataFrame()
    selected = one_row_per_round(selected, per=("device",))
    keys = ("condition_id", "device", "source")
    # Grouped once by position, each column read as one numpy array: a groupby's
    # aggregation costs far more than a campaign's few rows per device.
    groups = row_groups(selected, keys)
    summary: dict[str, list] = {
        key: [group_key[position] for group_key, _ in groups] for position, key in enumerate(keys)
    }
    summary["n"] = [len(at) for _, at in groups]
    samples = selected["samples"].to_numpy()
    summary["samples"] = [samples[at].sum() for _, at in groups]
    for name, column, aggregate in SUMMARIES:
        values = selected[column].to_numpy(dtype=float, na_value=np.nan)
        summary[name] = [aggregate(values[at]) for _, at in groups]
    return pd.DataFrame(summary)


SUMMARIES: tuple[tuple[str, str, Callable[[np.ndarray], float]], ...] = (
    ("sample_interval_s", "sample_interval_s", highest),
    ("sm_util_pct", "sm_util_mean_pct", median),
    ("mem_bw_util_pct", "mem_bw_util_mean_pct", median),
    ("power_w", "power_mean_w", median),
    ("sm_clock_mhz", "sm_clock_median_mhz", median),
    ("temperature_max_c", "temperature_max_c", highest),
    ("memory_used_max_mib", "memory_used_max_mib", highest),
    ("energy_j", "energy_j", median),
    ("cpu_time_s", "cpu_time_s", median),
)
"""Each column of ``telemetry_summary`` after the samples: its name, the telemetry field
it summarizes and how."""
