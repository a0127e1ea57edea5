"""An imported campaign: measurements another tool made, published with what the user
declares about them (``sitegen import``).

Its directory sits beside measured campaigns (``data/campaigns/<name>/``) and holds
``import.json`` (the registration: the declaration and every source file's description,
in place of a plan), ``sources/`` (each imported file, byte for byte), ``records.jsonl``
(one ``ImportedRecord`` per measurement) and ``manifest.json`` signing them all, so
``sitegen verify`` checks it like a measured campaign.

Nothing is invented: a field the source does not have is ``None`` in the record, and pages
say "not recorded (imported from <tool> <version>)".
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Annotated, ClassVar, Final, Literal

from pydantic import Field, ValidationError

from sitegen.core.author_fields import TIMESTAMP, WRITTEN_BY_SITEGEN, AuthorStr
from sitegen.core.errors import DataError, Issue, StorageError, pydantic_issues
from sitegen.core.strict_model import StrictModel
from sitegen.plan.plan_models import DispersionSpec
from sitegen.records.annotations import ANNOTATIONS_FILE, Annotations, read_annotations
from sitegen.records.import_declaration import ImportDeclaration, ImportedSpeculative
from sitegen.records.import_source import ImportedMeasurement, SourceInfo
from sitegen.records.layout import IMPORT_FILE, RECORDS_FILE, FileDigest
from sitegen.records.verify import verify_campaign

IMPORT_SCHEMA_VERSION: Final = 1
IMPORTED_RECORD_SCHEMA_VERSION: Final = 1
REQUESTS_INPUT = "requests"
"""Input id of every measurement of an HTTP benchmark: the tools send their own prompt
sets, which the declaration does not split into inputs (llama-bench's tests are inputs of
their own: ``pp16``, ``tg8``)."""


class ImportRegistration(StrictModel):
    """What an imported campaign is: the declaration and the files it was imported from
    (``import.json``; its SHA-256 is the campaign's registration hash)."""

    schema_version: Literal[1] = IMPORT_SCHEMA_VERSION
    """Version of the registration format."""
    name: AuthorStr = Field(pattern=r"^[a-z0-9][a-z0-9_.-]*$", max_length=64)
    """Campaign name (``--campaign``): its directory and its report address."""
    format: Annotated[str, WRITTEN_BY_SITEGEN]
    """The importer the files were read with (``guidellm``, ``vllm``, ``aiperf``,
    ``llama-bench``, ``csv``)."""
    imported_at: Annotated[str, TIMESTAMP]
    """When ``sitegen import`` ran (UTC, ISO 8601)."""
    sitegen_version: Annotated[str, WRITTEN_BY_SITEGEN]
    """Version of the sitegen that imported the files."""
    declaration: ImportDeclaration
    """What the publisher declared (``DECL.yaml``), exactly as validated."""
    sources: list[SourceInfo] = Field(min_length=1)
    """Every imported file: its tool and version where the file states them, its name,
    SHA-256 and size, and what else it states about the run."""
    dispersion: DispersionSpec = DispersionSpec()
    """The bootstrap of the ratio intervals (written out, so the registration fixes it)."""

    @property
    def title(self) -> dict[str, str]:
        """The declared title, or the campaign name in both languages."""
        declared = self.declaration.title
        return dict(declared) if declared is not None else {"ja": self.name, "en": self.name}


class ImportOrigin(StrictModel):
    """Where one imported record comes from."""

    format: str
    """Importer format name."""
    tool: str
    """The tool that wrote the file, e.g. ``GuideLLM``."""
    tool_version: str | None
    """The tool's version as the file states it (``None``: the file does not say)."""
    file: str
    """The source file's name as given to the import (``sources/<file>`` holds it)."""
    sha256: str
    """SHA-256 of the source file's bytes."""
    location: str
    """Where in the file the measurement is: ``line 12``, ``benchmarks[0].requests
    .successful[3]``, ``tests[1].samples_ts[2]``."""


class ImportedRecord(StrictModel):
    """One imported measurement (a request, or one llama-bench repetition), as the source
    holds it, with the condition the publisher declared for its group. Written once by
    ``sitegen import`` and never changed."""

    MEASURED_DATA: ClassVar[str] = "what the source file holds, written by sitegen import"

    schema_version: Literal[1] = IMPORTED_RECORD_SCHEMA_VERSION
    """Version of the imported record format."""
    campaign_id: str
    """``<name>-<12 hex of import.json's SHA-256>``."""
    import_sha256: str
    """SHA-256 of ``import.json`` (the registration)."""
    trial_id: str
    """Stable id: ``<condition>/<input>/r<repetition>``."""
    condition_id: str
    """The declared condition of the measurement's source group."""
    input_id: str
    """The source's input where it names one (a CSV input column: ``8k``, ``32k``);
    ``requests`` for an HTTP benchmark's requests; llama-bench's test (``pp16``, ``tg8``,
    ``pp16+tg8``) for its repetitions."""
    repetition: int = Field(ge=0)
    """Index of the measurement within its condition and input, in source order."""
    role: Literal["warmup", "measured"]
    """``warmup`` only where the source marks it so (AIPerf's warm-up phase); kept and
    excluded from statistics."""
    status: Literal["ok", "failed"]
    """``failed`` where the source marks the request failed; kept, excluded from statistics."""
    speculative: ImportedSpeculative
    """Speculative decoding of the condition, as declared (never read from the source)."""
    origin: ImportOrigin
    """The source file and the place in it."""
    measurement: ImportedMeasurement
    """The measurement exactly as read: a field the source lacks is ``None``."""
    generation_s: float | None = Field(default=None, ge=0)
    """First → last streamed token, computed by sitegen from the source's times: GuideLLM
    ``last_token − first_token``, vLLM and AIPerf the sum of the inter-chunk gaps;
    ``None`` where the source has neither."""
    gen_tps: float | None = Field(default=None, ge=0)
    """(output_tokens − 1) ÷ ``generation_s``, sitegen's generation rate (first token
    excluded), computed from the source's counts and times; ``None`` with fewer than two
    output tokens, a span of zero or a field the source lacks."""


def derived_rate(measurement: ImportedMeasurement) -> tuple[float | None, float | None]:
    """``(generation_s, gen_tps)`` of a measurement, from the source's own fields only."""
    span = None
    if measurement.inter_chunk_latencies_s:
        span = sum(measurement.inter_chunk_latencies_s)
    elif measurement.last_token_s is not None and measurement.ttft_s is not None:
        span = max(measurement.last_token_s - measurement.ttft_s, 0.0)
    tokens = measurement.output_tokens
    if span is None or not span or tokens is None or tokens < 2 or measurement.status != "ok":
        return span, None
    return span, (tokens - 1) / span


@dataclass(frozen=True)
class ImportedCampaign:
    """An imported campaign as a build reads it, verified against its manifest: the same
    interface as a measured ``Campaign`` (``campaign_id``, ``report_name``, ``annotations``,
    ``imported``, ``latest_time``), so one build reads, validates, redacts and summarizes
    both."""

    imported: ClassVar[Literal[True]] = True
    """Measured by another tool (C-IMPORTED reads it: every figure names the source)."""

    directory: Path
    registration: ImportRegistration
    import_sha256: str
    records: list[ImportedRecord]
    annotations: Annotations
    records_file: FileDigest

    @property
    def campaign_id(self) -> str:
        return campaign_id(self.registration.name, self.import_sha256)

    @property
    def report_name(self) -> str:
        """Its report's address: ``reports/<name>/``."""
        return self.registration.name

    @property
    def slug(self) -> str:
        return self.registration.name

    @property
    def latest_time(self) -> datetime:
        """When it was imported (its sources' own times may be absent)."""
        return datetime.fromisoformat(self.registration.imported_at)

    def __len__(self) -> int:
        return len(self.records)


def campaign_id(name: str, import_sha256: str) -> str:
    return f"{name}-{import_sha256[:12]}"


def read_registration(directory: Path) -> tuple[ImportRegistration, str]:
    """``import.json`` of ``directory`` and its SHA-256."""
    path = directory / IMPORT_FILE
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise StorageError.from_os_error(exc, "read", path) from exc
    try:
        return ImportRegistration.model_validate_json(data), hashlib.sha256(data).hexdigest()
    except ValidationError as exc:
        raise DataError(pydantic_issues(exc, str(path))) from exc


def read_imported_records(
    directory: Path, import_sha256: str
) -> tuple[list[ImportedRecord], FileDigest]:
    """Every record of ``records.jsonl``, each problem naming the line and the field."""
    path = directory / RECORDS_FILE
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise StorageError.from_os_error(exc, "read", path) from exc
    records, issues = [], []
    for number, line in enumerate(data.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            record = ImportedRecord.model_validate_json(line)
        except ValidationError as exc:
            issues.extend(pydantic_issues(exc, f"{path}:{number}"))
            continue
        if record.import_sha256 != import_sha256:
            issues.append(
                Issue(
                    f"{path}:{number} → import_sha256",
                    f"{record.import_sha256[:12]}…, not this campaign's import.json "
                    f"({import_sha256[:12]}…)",
                    "data",
                )
            )
        records.append(record)
    if issues:
        raise DataError(issues)
    digest = FileDigest(hashlib.sha256(data).hexdigest(), len(data), len(records))
    return records, digest


def read_imported_campaign(directory: Path, issues: list[Issue]) -> ImportedCampaign | None:
    """The imported campaign in ``directory``, verified against its manifest (C-SIGNED);
    every problem is appended to ``issues`` (``None`` when it cannot be read whole)."""
    annotations = read_annotations(directory / ANNOTATIONS_FILE, issues)
    try:
        registration, import_sha256 = read_registration(directory)
        records, digest = read_imported_records(directory, import_sha256)
        verify_campaign(directory, already_read={RECORDS_FILE: digest})
    except DataError as exc:
        issues.extend(
            Issue(i.location, i.message, "C-SIGNED" if i.rule == "manifest" else i.rule)
            for i in exc.issues
        )
        return None
    return ImportedCampaign(directory, registration, import_sha256, records, annotations, digest)
