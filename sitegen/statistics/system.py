"""The system each condition ran on, from the records' provenance, and peak memory per
trial and device. Pure functions over records; every usable record is read, and a field
whose value differs between a condition's records lists each distinct value."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal, cast

import pandas as pd

from sitegen.engine.locality import is_local
from sitegen.plan.plan_models import Plan
from sitegen.records.record_models import UNKNOWN_REMOTE_SHA256, Provenance
from sitegen.records.table import RecordTable

Value = str | int | float | None
"""A field's value as recorded (``None``: not recorded or not set)."""

SYSTEM_FIELDS = (
    "device_model",
    "device_count",
    "device_memory_mib",
    "driver",
    "gpu_runtime",
    "interconnect",
    "cpu",
    "cpu_count",
    "platform",
    "host",
    "ray_node",
    "accelerator_type",
    "engine",
    "engine_build",
    "engine_api",
    "model",
    "model_sha256",
    "model_shards",
    "model_size_bytes",
    "quantization",
    "context_capacity",
    "sampling_temperature",
    "sampling_top_p",
    "sampling_top_k",
    "sitegen_version",
)
"""The fixed fields of the system table, in display order; the engine flags
(``flags``), the recorded environment variables (``env``) and the chat-template
arguments (``template``) follow, one row per name."""

FLEET_FIELDS = frozenset({"ray_node", "accelerator_type"})
"""Fields only a fleet run records (``measure --fleet``): shown only for a condition with
some record from a fleet, so plain campaigns keep their table."""

KEYED_FIELDS = ("flags", "env", "template")
"""Fields with one row per name (``flags.n_ctx``, ``env.NCCL_P2P_DISABLE`` …)."""


@dataclass(frozen=True)
class SystemValue:
    """One distinct value of a field and how many of the condition's records show it."""

    value: Value
    records: int


@dataclass(frozen=True)
class SystemRow:
    """One field of one condition with its distinct values in order of first appearance."""

    field: str
    """A name of ``SYSTEM_FIELDS`` or ``KEYED_FIELDS``."""
    key: str | None
    """The flag, variable or template argument of a keyed field; ``None`` otherwise."""
    values: tuple[SystemValue, ...]

    @property
    def name(self) -> str:
        """``field`` or ``field.key``: the row's name in the download."""
        return self.field if self.key is None else f"{self.field}.{self.key}"


@dataclass(frozen=True)
class SystemCondition:
    """The system of one condition as its usable records show it."""

    condition_id: str
    records: int
    """Usable records read."""
    rows: tuple[SystemRow, ...]

    def differs(self, row: SystemRow) -> bool:
        """Whether the row's values differ between this condition's records (some value is
        not shown by every record), as opposed to several values in every record (the
        shards of a split model, the devices of a mixed host)."""
        return any(v.records != self.records for v in row.values)


def _provenance_values(p: Provenance) -> dict[str, tuple[Value, ...]]:
    """The system fields one record's provenance shows, each as the tuple of its values."""
    devices = p.host.devices
    model = p.model
    node = p.node
    values: dict[str, tuple[Value, ...]] = {
        "device_model": tuple(dict.fromkeys(d.name for d in devices)) or (None,),
        "device_count": (len(devices),),
        "device_memory_mib": tuple(dict.fromkeys(d.memory_total_mib for d in devices)) or (None,),
        "driver": (p.host.driver,),
        "gpu_runtime": (p.host.gpu_runtime,),
        "interconnect": (p.host.interconnect,),
        "cpu": (p.host.cpu,),
        "cpu_count": (p.host.cpu_count,),
        "platform": (p.host.platform,),
        "host": (p.host.hostname,),
        "ray_node": (f"{node.hostname} (Ray node {node.ray_node_id[:12]})" if node else None,),
        "accelerator_type": (node.accelerator_type if node else None,),
        "engine": (f"{p.engine.id} {p.engine.version}",),
        "engine_build": (p.engine.build,),
        "engine_api": (p.engine.api,),
        "model": (f"{model.name} ({model.file})",),
        "model_sha256": (model.sha256 or None,),
        "model_shards": tuple(f"{s.file} sha256 {s.sha256}" for s in model.shards) or (None,),
        "model_size_bytes": (model.size_bytes or None,),
        "quantization": (model.quantization,),
        "sitegen_version": (p.sitegen_version,),
    }
    for field, mapping in (("flags", p.flags), ("env", p.env), ("template", p.template_kwargs)):
        for key, value in mapping.items():
            values[f"{field}.{key}"] = (value,)
    return values


_NONE_KEY = (type(None).__name__, None)
"""``None`` keyed with its type, as values are counted below."""


def system_table(table: RecordTable, plan: Plan) -> list[SystemCondition]:
    """Per condition of the plan with usable records (plan order): every system field with
    each distinct value its usable records show and how many records show it. A keyed
    field missing from some records counts as ``None`` there (flag not set)."""
    # Values are keyed with their type: True, 1 and 1.0 are equal dict keys otherwise.
    per_condition: dict[str, dict[str, dict[tuple[str, Value], int]]] = {}
    counts: dict[str, int] = {}
    # Records of a campaign share provenances and mostly the same sampling: count the
    # records of each (condition, provenance, sampling, capacity) once, then read each
    # such group's values once (first appearance order, as the table shows them).
    keys = ["condition_id", "provenance", "temperature", "top_p", "top_k", "context_capacity"]
    # Only these columns of the usable rows: a copy of every column would be most of the
    # campaign's table again.
    rows = table.rows.loc[table.usable, keys]
    groups = rows.groupby(keys, sort=False).size()
    shown_by_provenance = {i: _provenance_values(p) for i, p in enumerate(table.provenances)}
    for key, n in groups.items():
        # Grouped by the six columns of ``keys``: a key holds one value of each.
        condition_id, provenance, temperature, top_p, top_k, capacity = cast(
            tuple[str, int, float, float, int, int], key
        )
        fields = per_condition.setdefault(condition_id, {})
        counts[condition_id] = counts.get(condition_id, 0) + int(n)
        sampling = {
            "sampling_temperature": (float(temperature),),
            "sampling_top_p": (float(top_p),),
            "sampling_top_k": (int(top_k),),
            "context_capacity": (int(capacity),),
        }
        for name, values in (shown_by_provenance[provenance] | sampling).items():
            seen = fields.setdefault(name, {})
            for key in dict.fromkeys((type(v).__name__, v) for v in values):
                seen[key] = seen.get(key, 0) + int(n)
    result = []
    for condition in plan.conditions:
        shown = per_condition.get(condition.id)
        if shown is None:
            continue
        total = counts[condition.id]
        rows_shown = [
            SystemRow(name, None, tuple(SystemValue(v, n) for (_, v), n in shown[name].items()))
            for name in SYSTEM_FIELDS
            if name not in FLEET_FIELDS or set(shown[name]) != {_NONE_KEY}
        ]
        for keyed in KEYED_FIELDS:
            names = sorted(name for name in shown if name.startswith(f"{keyed}."))
            for name in names:
                seen = dict(shown[name])
                missing = total - sum(seen.values())
                if missing:
                    seen[_NONE_KEY] = seen.get(_NONE_KEY, 0) + missing
                listed = tuple(SystemValue(v, n) for (_, v), n in seen.items())
                rows_shown.append(SystemRow(keyed, name.split(".", 1)[1], listed))
        result.append(SystemCondition(condition.id, total, tuple(rows_shown)))
    return result


def system_frame(conditions: Iterable[SystemCondition]) -> pd.DataFrame:
    """The system table as published (``system.csv``): one row per condition × field ×
    distinct value, with the number of the condition's usable records that show it."""
    columns: dict[str, list] = {
        "condition_id": [],
        "field": [],
        "value": [],
        "records": [],
        "condition_records": [],
    }
    for condition in conditions:
        for row in condition.rows:
            for value in row.values:
                columns["condition_id"].append(condition.condition_id)
                columns["field"].append(row.name)
                columns["value"].append(None if value.value is None else str(value.value))
                columns["records"].append(value.records)
                columns["condition_records"].append(condition.records)
    return pd.DataFrame(columns)


def memory_frame(table: RecordTable) -> pd.DataFrame:
    """Peak memory as published (``memory.csv``): one row per record × device (every role
    and status, like the trials table; a record without a memory reading has no row), with
    the device's name and total memory from the record's provenance."""
    readings = table.peak_memory
    frame = table.per_device(
        readings,
        (
            "campaign_id",
            "trial_id",
            "attempt",
            "order_index",
            "condition_id",
            "input_id",
            "role",
            "status",
        ),
    )
    frame["device"] = readings["device"].to_numpy()
    devices = {(i, d.id): d for i, p in enumerate(table.provenances) for d in p.host.devices}
    provenance = table.per_device(readings, ("provenance",))["provenance"]
    found = [devices.get(key) for key in zip(provenance, frame["device"], strict=True)]
    frame["device_name"] = [d.name if d else None for d in found]
    frame["device_memory_total_mib"] = [d.memory_total_mib if d else None for d in found]
    for name in ("source", "peak_mib", "sample_interval_s"):
        frame[name] = readings[name].to_numpy()
    for name in ("device_memory_total_mib", "peak_mib", "sample_interval_s"):
        frame[name] = frame[name].astype("float64")
    for name in ("attempt", "order_index"):
        frame[name] = frame[name].astype("int64")
    return frame


def hardware(table: RecordTable) -> str:
    """Every device set the usable records ran on, e.g. ``1× AMD EPYC``; sets that
    differ between records are all listed (``; ``), never the first alone."""
    seen: list[str] = []
    for index in table.rows.loc[table.usable, "provenance"].unique():
        devices = table.provenances[index].host.devices
        if devices:
            names = sorted({d.name for d in devices})
            shown = f"{len(devices)}× " + " / ".join(names)
            if shown not in seen:
                seen.append(shown)
    return "; ".join(seen) or "-"


def unhashed_model(table: RecordTable) -> bool:
    """Whether a usable record's model could not be hashed (a remote server's file)."""
    return any(
        table.provenances[index].model.sha256 == UNKNOWN_REMOTE_SHA256
        for index in table.rows.loc[table.usable, "provenance"].unique()
    )


MemoryGap = Literal["remote-server", "no-probe"]


def memory_gaps(
    plan: Plan, measured: Iterable[str], conditions: Iterable[str]
) -> dict[str, MemoryGap]:
    """Why each of ``conditions`` has no memory figure, those in ``measured`` aside: its
    server runs on another host (its memory is not visible from the measuring host), or
    no probe found the engine's memory here (no GPU through NVML and no server process
    that this user may read)."""
    by_id = {c.id: c for c in plan.conditions}
    gaps: dict[str, MemoryGap] = {}
    for condition_id in conditions:
        if condition_id in measured or condition_id not in by_id:
            continue
        base_url = by_id[condition_id].engine_options.get("base_url")
        remote = isinstance(base_url, str) and not is_local(base_url)
        gaps[condition_id] = "remote-server" if remote else "no-probe"
    return gaps
