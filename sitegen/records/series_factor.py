"""The value of a series' factor in a record (``Plan.series``): what ``measure`` compares
with a freshly loaded engine before resuming a campaign of a series, what validation
holds equal within one campaign (C-SERIES), and what tells a series' campaigns apart.

Values are compared as recorded, character for character: a series by ``engine_build``
tells ``xllamacpp 2026.10.11549 b0-unknown`` from ``xllamacpp 2026.10.11550 b0-unknown``
by the package version alone, as llama.cpp's wheels report no build number.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable

from sitegen.core.comparison_spec import SetupField
from sitegen.records.record_models import ENGINE_NOT_LOADED_API, Provenance, TrialRecord

NOT_REPORTED = "(not reported)"
"""The value of a field the engine or host did not report (no GPU driver on a CPU run)."""


def _reported(value: str | None) -> str:
    return NOT_REPORTED if value is None else value


_READERS: dict[str, tuple[str, Callable[[Provenance], str]]] = {
    "engine_build": (
        "provenance.engine.version, provenance.engine.build",
        lambda p: f"{p.engine.version} {p.engine.build}",
    ),
    "model_file": ("provenance.model.sha256", lambda p: p.model.sha256),
    "devices": (
        "provenance.host.devices",
        lambda p: " / ".join(sorted({d.name for d in p.host.devices})) or NOT_REPORTED,
    ),
    "device_count": ("provenance.host.devices", lambda p: str(len(p.host.devices))),
    "driver": ("provenance.host.driver", lambda p: _reported(p.host.driver)),
    "gpu_runtime": ("provenance.host.gpu_runtime", lambda p: _reported(p.host.gpu_runtime)),
    "interconnect": ("provenance.host.interconnect", lambda p: _reported(p.host.interconnect)),
    "environment": (
        "provenance.env",
        lambda p: json.dumps(p.env, sort_keys=True, ensure_ascii=False),
    ),
    "platform": ("provenance.host.platform", lambda p: p.host.platform),
    "cpu": ("provenance.host.cpu", lambda p: _reported(p.host.cpu)),
}
"""Each factor a series may vary (``plan.series_spec.SERIES_FACTORS``): the record fields
it is read from, and how, from the provenance the engine and the host reported."""


def factor_fields(factor: SetupField) -> str:
    """The record fields ``factor`` is read from, for messages (``""``: none, the plan
    fixes it)."""
    return _READERS[factor][0] if factor in _READERS else ""


def factor_value(provenance: Provenance, factor: SetupField) -> str | None:
    """The value of ``factor`` in ``provenance`` as recorded; ``None`` when there is none
    to compare: the engine never loaded (the provenance stands in for an engine that
    described nothing), or the plan fixes the field, so no series varies it."""
    if factor not in _READERS or provenance.engine.api == ENGINE_NOT_LOADED_API:
        return None
    return _READERS[factor][1](provenance)


def record_factor_value(record: TrialRecord, factor: SetupField) -> str | None:
    """The value of ``factor`` in ``record`` (``factor_value`` of its provenance)."""
    return factor_value(record.provenance, factor)


def factor_values(records: Iterable[TrialRecord], factor: SetupField) -> dict[str, list[str]]:
    """Each value of ``factor`` among ``records`` with the trial ids of the records that hold
    it, in record order (records without a value left out): one key for a campaign whose
    factor never changed."""
    found: dict[str, list[str]] = {}
    for record in records:
        note_factor_value(found, record, factor)
    return found


def note_factor_value(found: dict[str, list[str]], record: TrialRecord, factor: SetupField) -> None:
    """Add ``record``'s trial id under its value of ``factor`` (nothing without a value):
    ``factor_values`` one record at a time, for a reader that keeps no record."""
    value = record_factor_value(record, factor)
    if value is not None:
        found.setdefault(value, []).append(record.trial_id)
