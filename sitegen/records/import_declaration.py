"""The stored form of what the user declares about imported runs (``DECL.yaml``): the hardware, engine, model
and sampling that the source files do not record, which source group is which condition,
the speculative decoding each condition ran with, and how a CSV's columns map.

Nothing declared is filled in: an optional field left out, or any fact declared
``unknown``, stays ``None`` and pages say it was not declared. A source group no condition
names, or a condition naming a group that no file holds, is refused: the import never
guesses which run is which (a file holding one group maps without naming it).
"""

from __future__ import annotations

from typing import Annotated, Any, ClassVar, Literal, NamedTuple

from pydantic import Field, model_validator

from sitegen.core.author_fields import (
    AUTHOR_NAME,
    COLUMN_NAME,
    HASH,
    ID_REFERENCE,
    SOURCE_FILE,
    AuthorStr,
)
from sitegen.core.strict_model import StrictModel
from sitegen.core.text import Bilingual, NonBlank
from sitegen.plan.plan_models import MAX_SEED, SpeculativeSpec

UNKNOWN = "unknown"
"""What a publisher writes for a fact they do not know: it is stored as ``None`` and shown
as "not declared", never replaced by a value."""


class Declared(StrictModel):
    """A part of the declaration whose ``UNKNOWABLE`` fields may be declared ``unknown``."""

    UNKNOWABLE: ClassVar[frozenset[str]] = frozenset()

    @model_validator(mode="before")
    @classmethod
    def _unknown_is_none(cls, data: Any) -> Any:
        if isinstance(data, dict):
            return {
                key: None if key in cls.UNKNOWABLE and value == UNKNOWN else value
                for key, value in data.items()
            }
        return data


class DeviceDecl(Declared):
    """One kind of device the server ran on."""

    UNKNOWABLE = frozenset({"count", "memory_gib"})

    kind: Literal["gpu", "cpu", "accelerator"]
    """What the device is."""
    name: Annotated[NonBlank, AUTHOR_NAME]
    """Its name as marketed, e.g. ``NVIDIA H100 SXM5`` or ``AMD EPYC 9654`` (its memory is
    ``memory_gib``)."""
    count: int | None = Field(ge=1)
    """How many of them the server used (required; ``unknown`` → ``None``: not declared)."""
    memory_gib: float | None = Field(default=None, gt=0)
    """Memory of one device (GiB; for a CPU, the host's memory); ``None``: not declared."""


class HardwareDecl(Declared):
    """The machine that ran the server."""

    UNKNOWABLE = frozenset({"interconnect"})

    devices: list[DeviceDecl] = Field(min_length=1)
    """Every kind of device the server used (GPUs, CPU …)."""
    interconnect: Annotated[NonBlank, AUTHOR_NAME] | None = None
    """How the GPUs were connected, e.g. ``NVLink 4 (NV18)``; ``None``: not declared."""


class EngineDecl(Declared):
    """The inference engine that served the requests."""

    UNKNOWABLE = frozenset({"version", "build"})

    name: Annotated[NonBlank, AUTHOR_NAME]
    """Engine name, e.g. ``vLLM`` or ``llama.cpp``."""
    version: Annotated[NonBlank, AUTHOR_NAME] | None
    """Its version, e.g. ``0.11.0`` (the source files of HTTP benchmarks do not state it);
    required, ``unknown`` → ``None``: not declared."""
    build: Annotated[NonBlank, AUTHOR_NAME] | None = None
    """Build, commit or image, e.g. ``b6123`` or a container digest; ``None``: not declared."""


class ModelDecl(Declared):
    """The model that was served."""

    UNKNOWABLE = frozenset({"quantization", "file_sha256"})

    name: Annotated[NonBlank, AUTHOR_NAME]
    """Display name, e.g. ``Llama-3.1-8B-Instruct``."""
    quantization: Annotated[NonBlank, AUTHOR_NAME] | None
    """Quantization as published, e.g. ``FP8`` or ``GGUF Q4_K_M`` (``none`` for full
    precision must be said, not assumed); required, ``unknown`` → ``None``: not declared."""
    file_sha256: Annotated[str, HASH] | None = Field(default=None, pattern=r"^[0-9a-f]{64}$")
    """SHA-256 of the model file, where one file holds it; ``None``: not declared."""


class SamplingDecl(Declared):
    """Sampling settings of the requests; a setting left out (or ``unknown``) is not
    declared (pages say so), never taken as a default."""

    UNKNOWABLE = frozenset({"temperature", "top_p", "top_k", "seed"})

    temperature: float | None = Field(default=None, ge=0)
    """Sampling temperature (0 = greedy)."""
    top_p: float | None = Field(default=None, gt=0, le=1)
    """Nucleus threshold."""
    top_k: int | None = Field(default=None, ge=0)
    """Top-k cut-off (0 = off)."""
    seed: int | None = Field(default=None, ge=0, le=MAX_SEED)
    """Seed of the requests."""


class SourceGroup(NamedTuple):
    """A group of imported measurements: a file as given to the import and the group the
    source puts them in within that file (``None``: the whole file)."""

    file: str
    group: str | None


class SourceRef(StrictModel):
    """One source group named by a condition."""

    file: Annotated[NonBlank, SOURCE_FILE]
    """The file's name exactly as given to the import, e.g. ``runs/off/profile_export.jsonl``."""
    group: Annotated[NonBlank, SOURCE_FILE] | None = None
    """The group within the file as the import names it (GuideLLM ``benchmarks[1]``,
    llama-bench ``n_threads=2``, a CSV group value); ``None`` for a file that is one group."""


class ImportedSpeculative(SpeculativeSpec):
    """Speculative decoding as the publisher declares it: as a plan's, except that the
    draft length of a speculative mode may be declared ``unknown`` (``None``, shown as not
    declared); left out, it is refused."""

    @model_validator(mode="before")
    @classmethod
    def _draft_length_declared(cls, data: Any) -> Any:
        if isinstance(data, dict) and data.get("mode", "off") != "off":
            if "draft_max" not in data:
                raise ValueError(
                    f"mode '{data['mode']}' needs draft_max (the maximum draft length, or unknown)"
                )
            if data["draft_max"] == UNKNOWN:
                return {**data, "draft_max": None}
        return data

    @model_validator(mode="after")
    def _draft_length_matches_mode(self) -> ImportedSpeculative:
        if self.mode == "off" and self.draft_max is not None:
            raise ValueError("draft_max must be unset when mode is 'off'")
        return self

    @property
    def label(self) -> str:
        """``ngram-simple (≤8)``, or the mode alone when its draft length is not declared."""
        if self.mode != "off" and self.draft_max is None:
            return self.mode
        return super().label


class ConditionDecl(StrictModel):
    """One condition: the source groups measured with it and its declared factor."""

    id: AuthorStr = Field(pattern=r"^[a-z0-9][a-z0-9_.-]*$", max_length=64)
    """Stable identifier used in trial ids and file names."""
    label: Bilingual
    """What the condition is, in both site languages."""
    sources: list[SourceRef] = Field(min_length=1)
    """The source groups measured with this condition."""
    speculative: ImportedSpeculative
    """The declared factor: speculative decoding as configured on the engine (``mode: off``
    must be written out; it is never assumed)."""
    model: ModelDecl | None = None
    """This condition's model where the conditions served different models (``None``: the
    declaration's ``model``). Conditions with different models are never compared by a
    ratio."""

    @model_validator(mode="before")
    @classmethod
    def _mode_declared(cls, data: object) -> object:
        spec = data.get("speculative") if isinstance(data, dict) else None
        if isinstance(spec, dict) and "mode" not in spec:
            raise ValueError("speculative.mode must be declared (off, draft, ngram-simple …)")
        return data


class CsvField(StrictModel):
    """How one measurement field is read from a CSV column."""

    column: Annotated[NonBlank, COLUMN_NAME]
    """The column's header, exactly as in the file."""
    unit: (
        Literal[
            "s",
            "ms",
            "us",
            "ns",
            "unix-s",
            "unix-ms",
            "unix-ns",
            "iso8601",
            "B",
            "KiB",
            "MiB",
            "GiB",
        ]
        | None
    ) = None
    """The column's unit: ``s``, ``ms``, ``us``, ``ns`` for durations; ``unix-s``,
    ``unix-ms``, ``unix-ns`` or ``iso8601`` (with its UTC offset) for ``started_at``; ``B``,
    ``KiB``, ``MiB`` or ``GiB`` for ``peak_memory_mib``; none for counts, rates and text."""
    definition: Bilingual | None = None
    """``tool_tokens_per_s`` only, and required there: how the tool defines its rate, in
    both languages, as its documentation says (e.g. output tokens over the request's
    whole latency); shown beside every figure of it."""


DURATION_UNITS = ("s", "ms", "us", "ns")
"""Units of a CSV duration column."""
START_UNITS = ("unix-s", "unix-ms", "unix-ns", "iso8601")
"""Units of a CSV ``started_at`` column."""
MEMORY_UNITS = ("B", "KiB", "MiB", "GiB")
"""Units of a CSV ``peak_memory_mib`` column."""
TIME_FIELDS = frozenset({"ttft_s", "last_token_s", "e2e_s"})
"""CSV measurement fields holding durations."""
NUMBER_FIELDS = frozenset(
    {
        "prompt_tokens",
        "output_tokens",
        "concurrency",
        "request_rate",
        "output_cap",
        "draft_tokens",
        "accepted_tokens",
        "tool_tokens_per_s",
    }
)
"""CSV measurement fields holding counts or rates."""
TEXT_FIELDS = frozenset({"output_text", "prompt_text", "group", "error", "input", "finish_reason"})
"""CSV measurement fields holding text."""
CsvTarget = Literal[
    "started_at",
    "ttft_s",
    "last_token_s",
    "e2e_s",
    "prompt_tokens",
    "output_tokens",
    "concurrency",
    "request_rate",
    "output_text",
    "prompt_text",
    "group",
    "error",
    "input",
    "finish_reason",
    "output_cap",
    "draft_tokens",
    "accepted_tokens",
    "peak_memory_mib",
    "tool_tokens_per_s",
]


class CsvMapping(StrictModel):
    """Which CSV column holds which measurement field, with its unit. Columns not named
    are not imported; a field with no column stays absent."""

    columns: dict[CsvTarget, CsvField] = Field(min_length=1)
    """Measurement field → its column, e.g. ``ttft_s: {column: first_token_latency,
    unit: ms}``. ``error``: a non-empty cell marks the row failed (without an ``error``
    column every row is ok); ``group``: the row's group, mapped to a condition; ``input``:
    the row's input (``8k``, ``32k``): figures and ratios are per input, never pooled."""

    @model_validator(mode="after")
    def _units_match_fields(self) -> CsvMapping:
        for name, field in self.columns.items():
            if name in TIME_FIELDS and field.unit not in DURATION_UNITS:
                raise ValueError(f"columns.{name}.unit must be s, ms, us or ns (a duration)")
            if name == "started_at" and field.unit not in START_UNITS:
                raise ValueError(
                    "columns.started_at.unit must be unix-s, unix-ms, unix-ns or iso8601"
                )
            if name == "peak_memory_mib" and field.unit not in MEMORY_UNITS:
                raise ValueError("columns.peak_memory_mib.unit must be B, KiB, MiB or GiB")
            if (name in NUMBER_FIELDS or name in TEXT_FIELDS) and field.unit is not None:
                raise ValueError(f"columns.{name} takes no unit")
            if (name == "tool_tokens_per_s") != (field.definition is not None):
                raise ValueError(
                    "columns.tool_tokens_per_s needs its definition: {ja: …, en: …}, how the "
                    "tool defines its rate"
                    if name == "tool_tokens_per_s"
                    else f"columns.{name} takes no definition (only tool_tokens_per_s does)"
                )
        headers = [field.column for field in self.columns.values()]
        repeated = sorted({h for h in headers if headers.count(h) > 1})
        if repeated:
            raise ValueError(f"column {repeated[0]!r} is mapped to more than one field")
        return self


class ImportDeclaration(Declared):
    """Everything about imported runs that their files do not say."""

    UNKNOWABLE = frozenset({"context_capacity"})

    title: Bilingual | None = None
    """Report title in both languages (``None``: not declared)."""
    hardware: HardwareDecl
    """The devices and interconnect of the machine that ran the server."""
    engine: EngineDecl
    """The engine and its build."""
    model: ModelDecl | None = None
    """The model and its quantization; may be left out only where every condition declares
    its own ``model``."""
    context_capacity: int | None = Field(default=None, ge=1)
    """Context allocated per request slot (tokens), e.g. vLLM ``max_model_len``; ``None``:
    not declared."""
    sampling: SamplingDecl = SamplingDecl()
    """Sampling settings; each one left out is not declared."""
    conditions: list[ConditionDecl] = Field(min_length=1)
    """Every condition and the source groups measured with it."""
    baseline: Annotated[str, ID_REFERENCE]
    """The id of the condition the others are compared with."""
    csv: CsvMapping | None = None
    """The column mapping of CSV sources (required to import the ``csv`` format)."""

    @model_validator(mode="after")
    def _conditions_consistent(self) -> ImportDeclaration:
        ids = [condition.id for condition in self.conditions]
        repeated = sorted({i for i in ids if ids.count(i) > 1})
        if repeated:
            raise ValueError(f"condition id {repeated[0]!r} is declared more than once")
        if self.baseline not in ids:
            raise ValueError(f"baseline {self.baseline!r} is not a condition ({', '.join(ids)})")
        unnamed = [c.id for c in self.conditions if c.model is None]
        if self.model is None and unnamed:
            raise ValueError(
                f"model: declare the model, or each condition's model (none for "
                f"{', '.join(map(repr, unnamed))})"
            )
        seen: dict[SourceGroup, str] = {}
        for condition in self.conditions:
            for ref in condition.sources:
                key = SourceGroup(ref.file, ref.group)
                if key in seen:
                    raise ValueError(
                        f"{describe_group(key)} is named by conditions {seen[key]!r} and "
                        f"{condition.id!r}: a group belongs to one condition"
                    )
                seen[key] = condition.id
        return self

    def model_of(self, condition_id: str) -> ModelDecl:
        """The model of a condition: its own, else the declaration's."""
        condition = next(c for c in self.conditions if c.id == condition_id)
        model = condition.model or self.model
        assert model is not None  # validated: every condition has a model
        return model


def describe_group(key: SourceGroup) -> str:
    """``file '…' group '…'``: a source group as errors name it."""
    return f"file {_shown(key.file)}" + (
        f" group {_shown(key.group)}" if key.group is not None else ""
    )


def _shown(text: str, limit: int = 200) -> str:
    """``text`` quoted, cut to ``limit`` characters: a group is named by a source's values,
    which a broken file may make megabytes long."""
    return repr(text) if len(text) <= limit else f"{text[:limit]!r}… ({len(text)} characters)"
