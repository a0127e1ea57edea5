"""What two sets of records show about how they ran, field by field (C-CONFDIFF). Pure.

"The declared factor alone" needs positive evidence: every field other than the factor
recorded on both sides and equal. A value that was not recorded (``None``, empty, a
``unknown`` label, the unhashed-model marker, a field absent from older records) equals
nothing: a comparison with one is not factor-only, and such fields are named apart from
the fields that differ. The comparison within a plan and the one across campaigns both
decide with ``compare_records``, so they cannot disagree.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import get_args

import pandas as pd

from sitegen.core.comparison_spec import SetupField
from sitegen.core.formatting import count
from sitegen.plan.engine_registry import ENGINES, location_options
from sitegen.records.campaign import Campaign
from sitegen.records.record_models import UNKNOWN_REMOTE_SHA256, TrialRecord
from sitegen.records.table import prompt_sha256

SETUP_FIELDS: tuple[str, ...] = get_args(SetupField)
"""Every field compared, in display order."""

NO_GPU = "no GPU"
"""Driver, GPU runtime and interconnect of a run on CPUs only: known not to apply."""
SPECULATIVE_FLAG_PREFIXES = ("spec_", "server_spec", "num_draft_tokens", "draft_")
"""Engine flags that the speculative settings set: part of the factor ``speculative``."""
_UNKNOWN_WORD = re.compile(r"\bunknown\b", re.IGNORECASE)


def is_unrecorded(value: str | None) -> bool:
    """Whether a recorded text says nothing: ``None``, blank, a label holding the word
    ``unknown`` (llama.cpp's ``b0-unknown``, the ``openai`` engine's build) or the marker of
    a model file that could not be hashed."""
    return (
        value is None
        or not value.strip()
        or value == UNKNOWN_REMOTE_SHA256
        or _UNKNOWN_WORD.search(value) is not None
    )


@dataclass(frozen=True)
class FieldValue:
    """One field of one record."""

    key: str | None
    """What is compared; ``None``: not recorded."""
    shown: str
    """What a page shows (a model file by name and hash prefix, an input by hash prefix)."""


def _value(key: str | None, shown: str | None = None) -> FieldValue:
    if is_unrecorded(key):
        return FieldValue(None, shown if shown is not None else (key or ""))
    return FieldValue(key, shown if shown is not None else str(key))


def _json(value: dict) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


SETUP_COLUMNS = (
    "provenance",
    "temperature",
    "top_p",
    "top_k",
    "prompt_sha256",
    "context_capacity",
    "max_output_tokens",
    "round_size",
    "speculative",
)
"""The columns of a records table that hold everything ``record_setup`` reads: records
equal in them show the same setup."""


def setup_records(
    campaign: Campaign, rows: pd.DataFrame, by: tuple[str, ...] = ()
) -> list[TrialRecord]:
    """One record of each distinct setup among ``rows`` (rows of ``campaign.rows``; per
    value of the ``by`` columns), read back whole: what ``describe_setup`` needs of
    thousands of records that mostly share one setup."""
    if rows.empty:
        return []
    first = rows.groupby([*by, *SETUP_COLUMNS], sort=False, dropna=False).head(1).index
    return list(campaign.iter_full_records(first))


def record_setup(record: TrialRecord, factor: str | None = None) -> dict[str, FieldValue]:
    """Every ``SETUP_FIELDS`` value of one record. Flags exclude the options that only
    locate a server and, when the factor is ``speculative``, the flags it sets; flags are
    unrecorded when the engine recorded none, or one of them holds ``unknown``."""
    provenance, host = record.provenance, record.provenance.host
    engine, model = provenance.engine, provenance.model
    gpus = [d for d in host.devices if d.id.startswith("cuda")]

    def gpu_field(value: str | None) -> FieldValue:
        # Without a GPU these do not apply (a known fact); without devices nothing is known.
        if host.devices and not gpus:
            return FieldValue(NO_GPU, NO_GPU)
        return _value(value)

    location = location_options(engine.id) if engine.id in ENGINES else frozenset()
    flags = {
        key: value
        for key, value in provenance.flags.items()
        if key not in location
        and not (factor == "speculative" and key.startswith(SPECULATIVE_FLAG_PREFIXES))
    }
    flags_known = bool(provenance.flags) and not any(is_unrecorded(v) for v in flags.values())
    version_build = f"{engine.version} {engine.build}"
    # The engine's self-description is whatever of its version and build it reported (a
    # pip package's version names its build; a server may state only one of them).
    described = " ".join(part for part in (engine.version, engine.build) if not is_unrecorded(part))
    names = " / ".join(sorted({d.name for d in host.devices}))
    env_known = bool(provenance.env)
    return {
        "engine": _value(engine.id),
        "engine_build": FieldValue(described or None, version_build),
        "interface": _value(engine.api),
        "model_file": FieldValue(
            None if is_unrecorded(model.sha256) else model.sha256,
            f"{model.file} ({model.sha256[:12] or '-'})",
        ),
        "quantization": _value(model.quantization),
        "devices": _value(names),
        "device_count": _value(str(len(host.devices)) if host.devices else None),
        "driver": gpu_field(host.driver),
        "gpu_runtime": gpu_field(host.gpu_runtime),
        "interconnect": gpu_field(host.interconnect),
        "environment": FieldValue(
            _json(provenance.env) if env_known else None, _json(provenance.env)
        ),
        "platform": _value(host.platform),
        "cpu": _value(host.cpu),
        "sampling": _value(
            f"t={record.sampling.temperature} top_p={record.sampling.top_p} "
            f"top_k={record.sampling.top_k}"
        ),
        "template_kwargs": FieldValue(
            _json(provenance.template_kwargs), _json(provenance.template_kwargs)
        ),
        "input_text": _prompt_value(prompt_sha256(record.prompt)),
        # Counts of tokens as a page prints counts (40,960), compared as recorded.
        "context_capacity": _value(str(record.context_capacity), count(record.context_capacity)),
        "output_cap": _value(str(record.max_output_tokens), count(record.max_output_tokens)),
        "concurrency": _value(str(record.round.size if record.round else 1)),
        "speculative": _value(record.speculative.label),
        "flags": FieldValue(_json(flags) if flags_known else None, _json(flags)),
    }


def _prompt_value(digest: str | None) -> FieldValue:
    if digest is None:
        return FieldValue(None, "")
    return FieldValue(digest, f"sha256 {digest[:12]}")


@dataclass(frozen=True)
class Setup:
    """What a set of records shows, per field."""

    keys: dict[str, frozenset[str]]
    """Field → the distinct recorded values."""
    shown: dict[str, str]
    """Field → its distinct shown values, joined with `` | `` (``-`` without records)."""
    unrecorded: frozenset[str]
    """Fields that some record (or, without records, every record) did not record."""


def describe_setup(records: Iterable[TrialRecord], factor: str | None = None) -> Setup:
    """The setup that ``records`` show together (see ``record_setup``)."""
    keys: dict[str, set[str]] = {name: set() for name in SETUP_FIELDS}
    shown: dict[str, set[str]] = {name: set() for name in SETUP_FIELDS}
    unrecorded: set[str] = set()
    seen = False
    for record in records:
        seen = True
        for name, value in record_setup(record, factor).items():
            shown[name].add(value.shown)
            if value.key is None:
                unrecorded.add(name)
            else:
                keys[name].add(value.key)
    return Setup(
        keys={name: frozenset(values) for name, values in keys.items()},
        shown={name: " | ".join(sorted(values)) or "-" for name, values in shown.items()},
        unrecorded=frozenset(unrecorded if seen else SETUP_FIELDS),
    )


@dataclass(frozen=True)
class SetupComparison:
    """Two setups field by field, the declared factor aside."""

    differing: tuple[str, ...]
    """Fields other than the factor recorded on both sides whose values differ."""
    unrecorded: tuple[str, ...]
    """Fields other than the factor not recorded on both sides (never equal)."""
    factor_differs: bool
    """The factor is recorded on both sides and differs."""

    @property
    def factor_alone(self) -> bool:
        """Every field but the factor recorded on both sides and equal."""
        return not self.differing and not self.unrecorded


def compare_setups(left: Setup, right: Setup, factor: str | None) -> SetupComparison:
    differing, unrecorded = [], []
    factor_differs = False
    for name in SETUP_FIELDS:
        missing = name in left.unrecorded or name in right.unrecorded
        differs = not missing and left.keys[name] != right.keys[name]
        if name == factor:
            factor_differs = differs
        elif missing:
            unrecorded.append(name)
        elif differs:
            differing.append(name)
    return SetupComparison(tuple(differing), tuple(unrecorded), factor_differs)


def compare_records(
    left: Iterable[TrialRecord],
    right: Iterable[TrialRecord],
    factor: str | None,
) -> SetupComparison:
    """Whether two sets of records differ in ``factor`` alone, on positive evidence: the
    one decision behind every "factor alone" on a page (within a plan and across
    campaigns)."""
    return compare_setups(describe_setup(left, factor), describe_setup(right, factor), factor)
