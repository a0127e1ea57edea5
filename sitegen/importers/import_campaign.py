"""``sitegen import``: source files and a declaration in, a signed imported campaign out.

Gather, then write: every file is read and parsed and every group mapped to its declared
condition before anything is created; the campaign directory is written beside its final
place and renamed into it in one step, so a refused or interrupted import leaves nothing.
"""

from __future__ import annotations

import hashlib
import re
import shutil
from collections import Counter
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path, PurePosixPath

from pydantic import ValidationError

from sitegen.core.errors import (
    ConfigError,
    DataError,
    Issue,
    StorageError,
    UsageError,
    pydantic_issues,
)
from sitegen.core.signing import SIGNATURE_SUFFIX, Signer
from sitegen.core.strict_model import StrictModel
from sitegen.importers.declaration import assign_conditions, load_declaration
from sitegen.importers.formats import FORMATS, import_source
from sitegen.importers.limits import inflate
from sitegen.importers.reading import SourceFile
from sitegen.records.import_declaration import ImportDeclaration, SourceGroup
from sitegen.records.import_source import ImportedSource
from sitegen.records.imported_campaign import (
    REQUESTS_INPUT,
    ImportedRecord,
    ImportOrigin,
    ImportRegistration,
    campaign_id,
    derived_rate,
)
from sitegen.records.layout import (
    CAMPAIGNS_DIR,
    IMPORT_FILE,
    MANIFEST_FILE,
    PLAN_FILE,
    PUBLISHED_FILE,
    RECORDS_FILE,
    SOURCES_DIR,
    write_atomic,
)
from sitegen.records.record_models import ArtifactEntry, Manifest, PublishedManifest
from sitegen.validation.plausibility import refuse_implausible

NAME_PATTERN = re.compile(r"^[a-z0-9][a-z0-9_.-]*$")


@dataclass(frozen=True)
class ImportResult:
    directory: Path
    records: int
    failed: int
    by_condition: dict[str, int]


def source_name(path: Path) -> str:
    """The name a file is recorded under: the path as given when it is relative and stays
    inside the working directory, else the file's own name (a host path is never
    recorded). A ``.gz`` file is recorded by the name of what it holds."""
    pure = PurePosixPath(path.as_posix())
    name = pure.as_posix() if not pure.is_absolute() and ".." not in pure.parts else pure.name
    return name.removesuffix(".gz")


def read_source(path: Path) -> SourceFile:
    """The file's bytes (a gzipped file decompressed), named as ``source_name`` says."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise UsageError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise UsageError(f"{path}: a directory; name the tool's output file") from None
    except OSError as exc:
        raise StorageError.from_os_error(exc, "read", path) from exc
    if path.name.endswith(".gz"):
        data = inflate(str(path), data)
    return SourceFile(source_name(path), data)


def parse_sources(
    format_name: str, read: dict[Path, SourceFile], declaration: ImportDeclaration
) -> list[ImportedSource]:
    """Every file (``read``: path → its bytes) parsed as ``format_name``. AIPerf: a
    ``.json`` file is the summary of the ``.jsonl`` export in the same folder."""
    paths = list(read)
    if format_name not in FORMATS:
        raise ConfigError(f"unknown import format '{format_name}' (known: {', '.join(FORMATS)})")
    summaries: dict[Path, Path] = {}
    exports = list(paths)
    if FORMATS[format_name].takes_summary:
        summaries = {p.parent: p for p in paths if p.suffix == ".json"}
        exports = [p for p in paths if p.suffix != ".json"]
        for folder, summary in summaries.items():
            if not any(p.parent == folder for p in exports):
                raise UsageError(f"{summary}: a summary without its profile_export.jsonl beside it")
    files = [read[path] for path in exports]
    mapping = declaration.csv
    return [
        import_source(
            format_name,
            file,
            mapping=mapping,
            summary=read[summaries[path.parent]] if path.parent in summaries else None,
        )
        for path, file in zip(exports, files, strict=True)
    ]


def input_of(measure: str | None) -> str:
    """Input id of a measurement: its source's input (a CSV input column, ``8K`` → ``8k``)
    or llama-bench's test as an id (``pp16+tg8`` → ``pp16-tg8``), else ``requests``."""
    if measure is None:
        return REQUESTS_INPUT
    return re.sub(r"[^a-z0-9_.]+", "-", measure.strip().lower()).strip("-") or REQUESTS_INPUT


def make_records(
    registration: ImportRegistration,
    import_sha256: str,
    sources: list[ImportedSource],
    conditions: dict[SourceGroup, str],
) -> list[ImportedRecord]:
    """One record per measurement, in source order; pure."""
    records = []
    repetitions: Counter[tuple[str, str]] = Counter()
    speculative = {c.id: c.speculative for c in registration.declaration.conditions}
    identity = campaign_id(registration.name, import_sha256)
    for source in sources:
        info = source.source
        for measurement in source.measurements:
            condition = conditions[SourceGroup(info.file, measurement.group)]
            input_id = input_of(measurement.input or measurement.measure)
            repetition = repetitions[condition, input_id]
            repetitions[condition, input_id] += 1
            generation_s, gen_tps = derived_rate(measurement)
            records.append(
                ImportedRecord(
                    campaign_id=identity,
                    import_sha256=import_sha256,
                    trial_id=f"{condition}/{input_id}/r{repetition}",
                    condition_id=condition,
                    input_id=input_id,
                    repetition=repetition,
                    role="warmup" if measurement.warmup else "measured",
                    status=measurement.status,
                    speculative=speculative[condition],
                    origin=ImportOrigin(
                        format=info.format,
                        tool=info.tool,
                        tool_version=info.tool_version,
                        file=info.file,
                        sha256=info.sha256,
                        location=measurement.location,
                    ),
                    measurement=measurement,
                    generation_s=generation_s,
                    gen_tps=gen_tps,
                )
            )
    return records


def canonical_bytes(model: StrictModel) -> bytes:
    """A model as one line of JSON in field order (``schema_version`` first), UTF-8."""
    return model.model_dump_json().encode()


def new_campaign_directory(data_dir: Path, name: str) -> Path:
    """Where the campaign ``name`` is written; refused when the name is not a campaign
    name or the campaign exists."""
    if not NAME_PATTERN.fullmatch(name) or len(name) > 64:
        raise UsageError(
            f"--campaign {name!r}: lowercase letters, digits, '.', '_' and '-' (at most 64), "
            "starting with a letter or digit"
        )
    directory = data_dir / CAMPAIGNS_DIR / name
    if directory.exists():
        raise UsageError(
            f"{directory} exists: a campaign is never changed; import under another --campaign"
        )
    return directory


def import_campaign(
    format_name: str,
    paths: list[Path],
    declaration_path: Path | None,
    name: str,
    data_dir: Path,
    sitegen_version: str,
    signer: Signer | None = None,
) -> ImportResult:
    """Read, map and write one imported campaign under ``data_dir/campaigns/<name>``
    (``signer``: signs its manifest)."""
    directory = new_campaign_directory(data_dir, name)
    if format_name == OWN_DOWNLOADS:
        if declaration_path is not None:
            raise UsageError("--declare: a published version's plan.json is its declaration")
        return import_own_downloads(paths, directory, signer)
    if declaration_path is None:
        raise UsageError(f"the {format_name} format needs --declare DECL.yaml")
    if not declaration_path.is_file():
        raise UsageError(f"--declare {declaration_path}: no such file")
    declaration = load_declaration(declaration_path)
    refuse_figures(declaration, declaration_path, name)
    named = Counter(source_name(path) for path in paths)
    if repeated := [name for name, n in named.items() if n > 1]:
        raise UsageError(
            f"two files would be recorded as {repeated[0]!r}: give them by paths that differ "
            "(relative to this directory)"
        )
    read = {path: read_source(path) for path in paths}  # each file read once
    sources = parse_sources(format_name, read, declaration)
    assigned = assign_conditions(declaration, sources, str(declaration_path))
    registration = ImportRegistration(
        name=name,
        format=format_name,
        imported_at=datetime.now(UTC).isoformat(timespec="milliseconds"),
        sitegen_version=sitegen_version,
        declaration=declaration,
        sources=[source.source for source in sources],
    )
    refuse_implausible(
        [(source.source, source.measurements) for source in sources],
        declaration,
        datetime.fromisoformat(registration.imported_at),
    )
    registration_bytes = canonical_bytes(registration) + b"\n"
    import_sha256 = hashlib.sha256(registration_bytes).hexdigest()
    conditions = {group: condition.id for group, condition in assigned.items()}
    records = make_records(registration, import_sha256, sources, conditions)
    files = {IMPORT_FILE: registration_bytes}
    files[RECORDS_FILE] = b"".join(canonical_bytes(record) + b"\n" for record in records)
    for source in read.values():  # AIPerf's summaries included
        files[f"{SOURCES_DIR}/{source.name}"] = source.data
    manifest = Manifest(
        campaign_id=campaign_id(name, import_sha256),
        plan_sha256=import_sha256,
        registered_at=registration.imported_at,
        record_count=len(records),
        artifacts=sorted(
            (
                ArtifactEntry(
                    path=path, sha256=hashlib.sha256(data).hexdigest(), size_bytes=len(data)
                )
                for path, data in files.items()
            ),
            key=lambda entry: entry.path,
        ),
    )
    files[MANIFEST_FILE] = manifest.model_dump_json(indent=1).encode() + b"\n"
    if signer is not None:
        files[MANIFEST_FILE + SIGNATURE_SUFFIX] = signer.signature(files[MANIFEST_FILE])
    _write_directory(directory, files)
    return ImportResult(
        directory,
        len(records),
        sum(record.status == "failed" for record in records),
        dict(Counter(record.condition_id for record in records)),
    )


def _write_directory(directory: Path, files: dict[str, bytes]) -> None:
    """Write every file into a hidden folder beside ``directory``, then rename it into
    place: the campaign appears whole or not at all."""
    staging = directory.with_name(f".{directory.name}.importing")
    try:
        shutil.rmtree(staging, ignore_errors=True)
        for relative, data in files.items():
            path = staging / relative
            path.parent.mkdir(parents=True, exist_ok=True)
            write_atomic(path, data)
        staging.rename(directory)
    except OSError as exc:
        shutil.rmtree(staging, ignore_errors=True)
        raise StorageError.from_os_error(exc, "write", directory) from exc


OWN_DOWNLOADS = "sitegen"
"""The format name of sitegen's own downloads (a published version's ``records.jsonl.gz``,
``plan.json`` and ``manifest.json``)."""
OWN_FILES = ("records.jsonl.gz", "plan.json", "manifest.json")


def refuse_figures(declaration: ImportDeclaration, path: Path, name: str) -> None:
    """C-FIGURE before anything is written: the declaration's title, condition ids and
    labels and the names of its device, engine, model and quantization, and the campaign's
    name, state no figure (each problem one line naming the file and the field)."""
    # The rule catalog and the detector, loaded by the one command that needs them here.
    from sitegen.validation.figure_checks import author_figure_issues
    from sitegen.validation.figures import describe, find_figures
    from sitegen.validation.rules import violation

    issues = author_figure_issues(declaration, str(path))
    if found := find_figures(name):
        issues.append(
            violation("C-FIGURE", f"--campaign {name}", f"figure(s) {describe(found)} in a name")
        )
    if issues:
        raise DataError(issues)


def import_own_downloads(
    paths: list[Path], directory: Path, signer: Signer | None = None
) -> ImportResult:
    """A published campaign again from its downloads: the records and the plan byte for
    byte (``records.jsonl.gz`` decompressed), signed by a new manifest that keeps the
    campaign's id, plan hash and registration time, so a build computes every figure as
    the published version did. The records are sitegen's own measurements: they are
    validated as such, not as imported data."""
    by_name = {path.name: path for path in paths}
    missing = [name for name in OWN_FILES if name not in by_name]
    if missing or len(by_name) != len(paths) or set(by_name) - set(OWN_FILES):
        raise UsageError(
            "the sitegen format takes a published report's downloads records.jsonl.gz, "
            f"plan.json and manifest.json (missing: {', '.join(missing) or 'none'})"
        )
    records = read_source(by_name["records.jsonl.gz"]).data
    plan = read_source(by_name["plan.json"]).data
    manifest_path = by_name["manifest.json"]
    published = read_published_manifest(read_source(manifest_path).data, str(manifest_path))
    files = {PLAN_FILE: plan, RECORDS_FILE: records}
    stated_records = published.records_sha256 if isinstance(published, PublishedManifest) else None
    problems = [
        Issue(str(by_name[name]), f"sha256 {digest}, {manifest_path.name} states {stated}")
        for name, data, stated in (
            ("plan.json", plan, published.plan_sha256),
            ("records.jsonl.gz", records, stated_records),
        )
        if stated is not None and (digest := hashlib.sha256(data).hexdigest()) != stated
    ]
    if problems:
        raise DataError(problems)
    if isinstance(published, PublishedManifest):
        files[PUBLISHED_FILE] = canonical_bytes(published) + b"\n"
    count = sum(1 for line in records.splitlines() if line.strip())
    manifest = Manifest(
        campaign_id=published.campaign_id,
        plan_sha256=hashlib.sha256(plan).hexdigest(),
        registered_at=published.registered_at,
        record_count=count,
        artifacts=_artifacts(files),
    )
    files[MANIFEST_FILE] = manifest.model_dump_json(indent=1).encode() + b"\n"
    if signer is not None:
        files[MANIFEST_FILE + SIGNATURE_SUFFIX] = signer.signature(files[MANIFEST_FILE])
    _write_directory(directory, files)
    return ImportResult(directory, count, 0, {})


def read_published_manifest(data: bytes, where: str) -> PublishedManifest | Manifest:
    """A report's ``manifest.json``: a ``PublishedManifest``, or in a report published
    before it existed the measured campaign's ``Manifest``, whose plan hash is then the
    published plan's (such reports were audited only when nothing was redacted)."""
    try:
        return PublishedManifest.model_validate_json(data)
    except ValidationError as exc:
        if b'"artifacts"' not in data:
            raise DataError(pydantic_issues(exc, where)) from exc
    try:
        return Manifest.model_validate_json(data)
    except ValidationError as exc:
        raise DataError(pydantic_issues(exc, where)) from exc


def _artifacts(files: dict[str, bytes]) -> list[ArtifactEntry]:
    return sorted(
        (
            ArtifactEntry(path=path, sha256=hashlib.sha256(data).hexdigest(), size_bytes=len(data))
            for path, data in files.items()
        ),
        key=lambda entry: entry.path,
    )
