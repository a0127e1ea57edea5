"""A campaign directory, written and read back in one place.

Layout: ``plan.json`` (canonical bytes; its SHA-256 is the plan hash), append-only
``records.jsonl``, ``annotations.yaml`` (declarations added after measuring),
``logs/engine.log``, ``manifest.json`` (the other files with their SHA-256) and ``.lock``
(held by the one ``measure`` writing the campaign; dot-files are never listed).

Records are appended and flushed one by one (fsync), and the manifest is re-signed after
every record, so it always covers what ``measure`` wrote:

1. the manifest announces the SHA-256 of the line about to be appended
   (``pending_record_sha256``),
2. the line is appended and synced,
3. the manifest is rewritten with the longer file and the announcement cleared.

Before appending, ``measure`` checks the campaign against its manifest and refuses any
mismatch, so it never signs what it did not write. A kill leaves at most: a torn last line
without newline (truncated: that trial is run again), one whole line after the signed
bytes (accepted only if it is the announced one) and log output after the signed bytes
(``logs/engine.log`` only grows; what native engine code printed before the kill is
kept). Signed bytes never change; ``verify_campaign`` checks a copy exactly.

Reading collects every problem as an ``Issue`` naming the file, the record and the field.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import BinaryIO

import yaml
from pydantic import ValidationError

from sitegen.errors import DataError, IntegrityError, Issue, StorageError, one_line, pydantic_issues
from sitegen.lock import exclusive_lock
from sitegen.models import StrictModel
from sitegen.plan.io import campaign_id, canonical_plan_json, plan_sha256
from sitegen.plan.models import Plan, SpeculativeSpec
from sitegen.records.annotations import ANNOTATIONS_FILE, Annotations
from sitegen.records.layout import CAMPAIGNS_DIR
from sitegen.records.models import (
    RECORD_SCHEMA_VERSION,
    ArtifactEntry,
    Manifest,
    Provenance,
    TrialRecord,
)

PLAN_FILE = "plan.json"
RECORDS_FILE = "records.jsonl"
MANIFEST_FILE = "manifest.json"
ENGINE_LOG = "logs/engine.log"
TELEMETRY_LOG = "logs/telemetry.jsonl"
"""Raw GPU telemetry samples, one JSON line per request or round (``sitegen.measure``)."""
LOG_FILES = (ENGINE_LOG, TELEMETRY_LOG)
"""Logs written while measuring: they only grow, and each signature covers them."""
LOCK_FILE = ".lock"
RULE = "manifest"
"""Rule id of the issues found checking a campaign against its manifest."""
GROWING_FILES = frozenset({RECORDS_FILE, *LOG_FILES})
"""Files that only grow while measuring: on resume their signed bytes must be unchanged,
and bytes after them are what a killed ``measure`` left."""


def write_atomic(path: Path, data: bytes) -> None:
    """Write via a temporary file and rename, so readers never see half a file."""
    temporary = path.with_name(f".{path.name}.tmp")
    with temporary.open("wb") as handle:
        handle.write(data)
        handle.flush()
        os.fsync(handle.fileno())
    temporary.replace(path)


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while block := handle.read(1 << 20):
            digest.update(block)
    return digest.hexdigest()


class _GrowingDigest:
    """SHA-256 and size of a file that only grows, extended with just the new bytes (so
    re-signing after every record does not re-hash the whole campaign)."""

    def __init__(self, relative: str, digest: hashlib._Hash | None = None, size: int = 0):
        self.relative = relative
        self.digest = digest or hashlib.sha256()
        self.size = size

    def add(self, data: bytes) -> None:
        self.digest.update(data)
        self.size += len(data)

    def catch_up(self, directory: Path) -> None:
        """Hash what was appended to the file since the last call."""
        path = directory / self.relative
        try:
            with path.open("rb") as handle:
                handle.seek(self.size)
                while block := handle.read(1 << 20):
                    self.add(block)
        except OSError as exc:
            raise StorageError.from_os_error(exc, "read", path) from exc

    def entry(self) -> ArtifactEntry:
        return ArtifactEntry(
            path=self.relative, sha256=self.digest.hexdigest(), size_bytes=self.size
        )


def _prefix_digest(path: Path, size: int) -> tuple[hashlib._Hash, int]:
    """The SHA-256 of the first ``size`` bytes of ``path``, and the file's whole size."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        left = size
        while left and (block := handle.read(min(left, 1 << 20))):
            digest.update(block)
            left -= len(block)
        return digest, os.fstat(handle.fileno()).st_size


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


class CampaignStore:
    """Append-only storage of one campaign, written by one ``measure`` at a time."""

    def __init__(
        self,
        directory: Path,
        plan: Plan,
        records: list[TrialRecord],
        plan_entry: ArtifactEntry,
        records_digest: _GrowingDigest,
        log_digests: list[_GrowingDigest],
        registered_at: str | None,
    ) -> None:
        self.directory = directory
        self.plan = plan
        self.campaign_id = campaign_id(plan)
        self.plan_sha256 = plan_sha256(plan)
        self.records_path = directory / RECORDS_FILE
        self.engine_log_path = directory / ENGINE_LOG
        self.telemetry_log_path = directory / TELEMETRY_LOG
        self.records = records
        """The records found on opening, in file order (not those appended since)."""
        self._plan_entry = plan_entry
        self._records_digest = records_digest
        self._log_digests = log_digests
        self._record_count = len(records)
        self._registered_at = registered_at

    @classmethod
    @contextmanager
    def open(cls, campaigns_dir: Path, plan: Plan) -> Iterator[CampaignStore]:
        """Create the campaign directory, or reopen it to resume, and hold its lock until
        the block ends. Raises ``LockedError`` if another process holds it and
        ``IntegrityError`` if the files do not match the manifest."""
        directory = campaigns_dir / campaign_id(plan)
        try:
            directory.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StorageError.from_os_error(
                exc, "create the campaign directory", directory
            ) from exc
        with exclusive_lock(directory / LOCK_FILE, f"campaign {directory}"):
            yield cls._reopen(directory, plan)

    @classmethod
    def _reopen(cls, directory: Path, plan: Plan) -> CampaignStore:
        records_path = directory / RECORDS_FILE
        manifest = _read_manifest(directory / MANIFEST_FILE)
        try:
            data = records_path.read_bytes() if records_path.exists() else b""
        except OSError as exc:
            raise StorageError.from_os_error(exc, "read", records_path) from exc
        whole = data.rfind(b"\n") + 1  # a kill can tear the last line only
        records, _, issues = parse_records(data[:whole], records_path)
        if issues:
            raise _refusal(issues)
        if manifest is None:
            store = cls._start(directory, plan, records)
        else:
            store = cls._resume(directory, plan, manifest, data[:whole], records)
        if whole < len(data):
            _truncate(records_path, whole)
        store.sign()
        return store

    @classmethod
    def _start(cls, directory: Path, plan: Plan, records: list[TrialRecord]) -> CampaignStore:
        """A new campaign, or one killed before its first manifest: nothing to sign yet."""
        if records:
            raise IntegrityError(
                f"{directory / MANIFEST_FILE}: missing, but {RECORDS_FILE} holds "
                f"{len(records)} record(s); measure does not sign records it cannot check "
                "(restore the manifest, or measure into a new data directory)"
            )
        for path in _campaign_files(directory):
            relative = path.relative_to(directory).as_posix()
            # What a kill before the first manifest can leave: a plan, a torn line, an empty log.
            left_by_a_kill = relative in (PLAN_FILE, RECORDS_FILE) or (
                relative in LOG_FILES and not path.stat().st_size
            )
            if not left_by_a_kill:
                raise IntegrityError(
                    f"{path}: no {MANIFEST_FILE} lists it; measure does not sign files "
                    "it did not write"
                )
        plan_path = directory / PLAN_FILE
        # Canonical bytes: the file's own SHA-256 equals the plan hash.
        plan_bytes = canonical_plan_json(plan).encode("utf-8")
        try:
            write_atomic(plan_path, plan_bytes)
        except OSError as exc:
            raise StorageError.from_os_error(exc, "write", plan_path) from exc
        plan_entry = ArtifactEntry(
            path=PLAN_FILE,
            sha256=hashlib.sha256(plan_bytes).hexdigest(),
            size_bytes=len(plan_bytes),
        )
        for relative in (RECORDS_FILE, *LOG_FILES):
            _create_empty(directory / relative)
        return cls(
            directory,
            plan,
            [],
            plan_entry,
            _GrowingDigest(RECORDS_FILE),
            [_GrowingDigest(relative) for relative in LOG_FILES],
            registered_at=datetime.now(UTC).isoformat(timespec="milliseconds"),
        )

    @classmethod
    def _resume(
        cls,
        directory: Path,
        plan: Plan,
        manifest: Manifest,
        whole_lines: bytes,
        records: list[TrialRecord],
    ) -> CampaignStore:
        """A campaign with a manifest: signed bytes unchanged, at most the announced
        record after them."""
        manifest_path = directory / MANIFEST_FILE
        issues: list[Issue] = []
        if manifest.plan_sha256 != plan_sha256(plan) or manifest.campaign_id != campaign_id(plan):
            issues.append(
                Issue(
                    str(manifest_path),
                    f"registers campaign {manifest.campaign_id} (plan sha256 "
                    f"{manifest.plan_sha256}), not this plan's {campaign_id(plan)}",
                    RULE,
                )
            )
        issues += _artifact_issues(directory, manifest, GROWING_FILES)
        signed = {entry.path: entry for entry in manifest.artifacts}
        plan_entry = signed.get(PLAN_FILE)
        if plan_entry is None or plan_entry.sha256 != plan_sha256(plan):
            listed = plan_entry.sha256 if plan_entry else "nothing"
            issues.append(
                Issue(
                    str(directory / PLAN_FILE),
                    f"the manifest lists {listed}, this plan's sha256 is {plan_sha256(plan)}",
                    RULE,
                )
            )
        if issues:
            raise _refusal(issues)
        records_path = directory / RECORDS_FILE
        records_signed = signed.get(RECORDS_FILE)
        signed_size = records_signed.size_bytes if records_signed else 0
        signed_lines = whole_lines[:signed_size].count(b"\n")
        if signed_size > len(whole_lines):
            raise _refusal(
                [Issue(str(records_path), "the signed records end in the middle of a line", RULE)]
            )
        if signed_lines != manifest.record_count:
            raise _refusal(
                [
                    Issue(
                        str(records_path),
                        f"{signed_lines} signed records, the manifest counts "
                        f"{manifest.record_count}",
                        RULE,
                    )
                ]
            )
        records_digest = _GrowingDigest(RECORDS_FILE)
        records_digest.add(whole_lines[:signed_size])
        unsigned = whole_lines[signed_size:]
        if unsigned:
            announced = manifest.pending_record_sha256
            if unsigned.count(b"\n") > 1 or hashlib.sha256(unsigned).hexdigest() != announced:
                raise _refusal(
                    [
                        Issue(
                            f"{records_path}:{signed_lines + 1}",
                            "appended after the manifest last signed the file and not the "
                            "record measure announced; measure does not sign records it "
                            "did not write",
                            RULE,
                        )
                    ]
                )
            # Measure's own record, appended just before a kill: sign it now.
            records_digest.add(unsigned)
        log_digests = []
        for relative in LOG_FILES:
            log_signed = signed.get(relative)
            log_digest = _GrowingDigest(relative)
            if log_signed is not None:
                log_path = directory / relative
                try:
                    prefix, _ = _prefix_digest(log_path, log_signed.size_bytes)
                except OSError as exc:
                    raise StorageError.from_os_error(exc, "read", log_path) from exc
                log_digest = _GrowingDigest(relative, prefix, log_signed.size_bytes)
            log_digests.append(log_digest)
        for relative in (RECORDS_FILE, *LOG_FILES):
            _create_empty(directory / relative)
        return cls(
            directory,
            plan,
            records,
            plan_entry,
            records_digest,
            log_digests,
            registered_at=manifest.registered_at,
        )

    def latest_attempts(self) -> dict[str, TrialRecord]:
        """The latest recorded attempt of each trial (trial id → record)."""
        latest: dict[str, TrialRecord] = {}
        for record in self.records:
            known = latest.get(record.trial_id)
            if known is None or record.attempt > known.attempt:
                latest[record.trial_id] = record
        return latest

    def append(self, record: TrialRecord) -> None:
        """Announce the record in the manifest, append it (fsync), then sign it."""
        line = (record.model_dump_json() + "\n").encode("utf-8")
        self._write_manifest(self._manifest(pending=hashlib.sha256(line).hexdigest()))
        try:
            fd = os.open(self.records_path, os.O_WRONLY | os.O_APPEND)
        except OSError as exc:
            raise StorageError.from_os_error(exc, "append a record to", self.records_path) from exc
        try:
            _write_all(fd, line)
            os.fsync(fd)
        except OSError as exc:
            # Drop the part that was written (disk full): the file stays whole records.
            # Should even that fail, the next run repairs the torn line.
            with suppress(OSError):
                os.ftruncate(fd, self._records_digest.size)
            raise StorageError.from_os_error(exc, "append a record to", self.records_path) from exc
        finally:
            os.close(fd)
        self._records_digest.add(line)
        self._record_count += 1
        self.sign()

    def sign(self) -> None:
        """Sign the campaign as it is now: the records appended by this store and what the
        engine logged since the last signature."""
        for log_digest in self._log_digests:
            log_digest.catch_up(self.directory)
        self._write_manifest(self._manifest())

    def _manifest(self, pending: str | None = None) -> Manifest:
        artifacts = [
            *(log.entry() for log in self._log_digests),
            self._plan_entry,
            self._records_digest.entry(),
        ]
        return Manifest(
            campaign_id=self.campaign_id,
            plan_sha256=self.plan_sha256,
            registered_at=self._registered_at,
            record_count=self._record_count,
            artifacts=sorted(artifacts, key=lambda entry: entry.path),
            pending_record_sha256=pending,
        )

    def _write_manifest(self, manifest: Manifest) -> None:
        path = self.directory / MANIFEST_FILE
        try:
            write_atomic(path, (manifest.model_dump_json(indent=2) + "\n").encode())
        except OSError as exc:
            raise StorageError.from_os_error(exc, "write the manifest", path) from exc


def _read_manifest(path: Path) -> Manifest | None:
    """The manifest, ``None`` when there is none; refuses one that cannot be read."""
    try:
        return Manifest.model_validate_json(path.read_bytes())
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise StorageError.from_os_error(exc, "read", path) from exc
    except ValidationError as exc:
        raise _refusal(pydantic_issues(exc, str(path))) from exc


def _create_empty(path: Path) -> None:
    """Create ``path`` if it is missing; an existing file is left as it is."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.open("ab").close()
    except OSError as exc:
        raise StorageError.from_os_error(exc, "create", path) from exc


def _truncate(path: Path, size: int) -> None:
    try:
        os.truncate(path, size)
    except OSError as exc:
        raise StorageError.from_os_error(exc, "repair the torn last line of", path) from exc


def _refusal(issues: list[Issue]) -> IntegrityError:
    """One line: the first problem, how many more, and that nothing is appended."""
    first = issues[0]
    more = f" (and {len(issues) - 1} more problem(s))" if len(issues) > 1 else ""
    return IntegrityError(
        f"{first.location}: {first.message}{more}; measure refuses to append to this campaign"
    )


# --- reading ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Campaign:
    """A campaign read back from disk: its plan and its records in file order.

    ``records`` are lean: the prompt, answer and thinking texts are left out so a build
    holds 40,000 records in bounded memory. ``full_record`` and ``iter_full_records`` read
    them back from ``records.jsonl`` when a page or a download needs the texts.
    """

    directory: Path
    plan: Plan
    plan_sha256: str
    records: list[TrialRecord]
    annotations: Annotations
    """Caveat metadata (defaults when the campaign has no annotations file)."""
    record_lines: tuple[int, ...] = ()
    """Line number in ``records.jsonl`` of each record (parallel to ``records``)."""
    record_offsets: tuple[int, ...] = ()
    """Byte offset in ``records.jsonl`` of each record (parallel to ``records``)."""
    manifest_registered_at: datetime | None = None
    """The registration the manifest records (``None``: a campaign written before it was
    recorded, or no readable manifest, which C-SIGNED reports)."""
    prompt_sha256: Mapping[tuple[str, str, int], str] = field(default_factory=dict)
    """SHA-256 of each record's prompt text by (campaign id, trial id, attempt): the lean
    records leave the text out, and comparisons match inputs by it."""

    @property
    def registered_at(self) -> datetime | None:
        """When the plan was registered: the manifest's ``registered_at``, or for a campaign
        written before it was recorded the first record's start (the plan file precedes
        it; see ``registration_recorded``)."""
        if self.manifest_registered_at is not None:
            return self.manifest_registered_at
        starts = []
        for record in self.records:
            with suppress(ValueError):  # C-PLANNED names a start that is not a timestamp
                starts.append(utc_time(record.started_at))
        return min(starts) if starts else None

    @property
    def registration_recorded(self) -> bool:
        """Whether the manifest recorded the registration (else it is the first record's
        start, which pages state)."""
        return self.manifest_registered_at is not None

    @property
    def campaign_id(self) -> str:
        return self.directory.name

    @property
    def records_path(self) -> Path:
        return self.directory / RECORDS_FILE

    @property
    def annotations_path(self) -> Path:
        return self.directory / ANNOTATIONS_FILE

    def record_location(self, index: int) -> str:
        """``<records.jsonl>:<line> (trial <id>)`` of the record at ``index``."""
        line = self.record_lines[index] if index < len(self.record_lines) else "?"
        return f"{self.records_path}:{line} (trial {self.records[index].trial_id})"

    def full_record(self, index: int) -> TrialRecord:
        """The record at ``index`` with its texts, read back from ``records.jsonl``."""
        with self.records_path.open("rb") as handle:
            handle.seek(self.record_offsets[index])
            return TrialRecord.model_validate_json(handle.readline())

    def iter_full_records(self, indices: Iterable[int] | None = None) -> Iterator[TrialRecord]:
        """The records (all, or those at ``indices`` in that order) with their texts, one at a
        time."""
        order = range(len(self.records)) if indices is None else indices
        with self.records_path.open("rb") as handle:
            for index in order:
                handle.seek(self.record_offsets[index])
                yield TrialRecord.model_validate_json(handle.readline())


def campaign_directories(data_dir: Path) -> list[Path]:
    """The campaign directories under ``data_dir/campaigns``, sorted by name."""
    campaigns_dir = data_dir / CAMPAIGNS_DIR
    if not campaigns_dir.is_dir():
        return []
    return sorted(p for p in campaigns_dir.iterdir() if p.is_dir())


def read_campaigns(data_dir: Path) -> tuple[list[Campaign], list[Issue]]:
    """Every campaign under ``data_dir/campaigns`` with every problem found reading them."""
    directories = campaign_directories(data_dir)
    if not directories:
        where = data_dir / CAMPAIGNS_DIR
        return [], [Issue(str(where), "no campaign found; run 'sitegen measure' first", "data")]
    issues: list[Issue] = []
    campaigns = []
    for directory in directories:
        if directory.is_symlink():
            # A campaign is published from data/ itself: a link could point anywhere.
            issues.append(
                Issue(
                    str(directory),
                    f"a symbolic link (to {os.readlink(directory)}); copy the campaign into "
                    f"{data_dir / CAMPAIGNS_DIR} and check it with 'sitegen verify'",
                    "data",
                )
            )
        elif not _published(directory / ANNOTATIONS_FILE):
            continue  # left out by its annotations: its records are not even read
        elif (campaign := read_campaign(directory, issues)) is not None:
            campaigns.append(campaign)
    return campaigns, issues


def _published(annotations_path: Path) -> bool:
    """Whether a campaign's annotations leave it published (a missing or unreadable file
    does: reading the campaign reports what is wrong with it)."""
    issues: list[Issue] = []
    annotations = _read_annotations(annotations_path, issues)
    return annotations.publish or bool(issues)


def read_campaign(directory: Path, issues: list[Issue]) -> Campaign | None:
    """Read one campaign, appending every problem to ``issues``."""
    plan_path = directory / PLAN_FILE
    try:
        plan_bytes = plan_path.read_bytes()
        plan = Plan.model_validate_json(plan_bytes)
    except FileNotFoundError:
        issues.append(Issue(str(plan_path), "missing plan file", "data"))
        return None
    except ValidationError as exc:
        issues.extend(pydantic_issues(exc, str(plan_path)))
        return None
    # The registered plan is the file's bytes: its hash stays valid when the plan model
    # later gains optional fields.
    expected_hash = hashlib.sha256(plan_bytes).hexdigest()
    if not directory.name.endswith(f"-{expected_hash[:12]}"):
        issues.append(
            Issue(
                str(directory),
                f"directory name does not end with the plan hash '{expected_hash[:12]}'; "
                "the plan was changed after the campaign started",
                "data",
            )
        )
    lean = _LeanRecords()
    records, lines, offsets = _read_records(directory / RECORDS_FILE, issues, lean)
    annotations = _read_annotations(directory / ANNOTATIONS_FILE, issues)
    return Campaign(
        directory,
        plan,
        expected_hash,
        records,
        annotations,
        tuple(lines),
        tuple(offsets),
        _manifest_registration(directory / MANIFEST_FILE, issues),
        lean.prompt_sha256,
    )


def _manifest_registration(path: Path, issues: list[Issue]) -> datetime | None:
    """The manifest's ``registered_at``; ``None`` without one (a missing or unreadable
    manifest is C-SIGNED's to report)."""
    try:
        manifest = Manifest.model_validate_json(path.read_bytes())
    except (OSError, ValidationError):
        return None
    if manifest.registered_at is None:
        return None
    try:
        return utc_time(manifest.registered_at)
    except ValueError:
        issues.append(
            Issue(
                f"{path} → registered_at",
                f"'{manifest.registered_at}' is not an ISO 8601 timestamp",
                "data",
            )
        )
        return None


def utc_time(text: str) -> datetime:
    """An ISO 8601 timestamp as an aware datetime (one without a zone is UTC)."""
    moment = datetime.fromisoformat(text)
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def _read_annotations(path: Path, issues: list[Issue]) -> Annotations:
    if not path.exists():
        return Annotations()
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        return Annotations.model_validate(raw)
    except yaml.YAMLError as exc:
        issues.append(Issue(str(path), f"not valid YAML: {one_line(exc)}", "data"))
    except ValidationError as exc:
        issues.extend(pydantic_issues(exc, str(path)))
    return Annotations()


def _read_records(
    path: Path, issues: list[Issue], lean: _LeanRecords
) -> tuple[list[TrialRecord], list[int], list[int]]:
    """Every valid record of ``records.jsonl``, lean (see ``Campaign``), with its line number
    and byte offset; every problem becomes an issue. The file is read line by line."""
    try:
        handle = path.open("rb")
    except FileNotFoundError:
        issues.append(Issue(str(path), "missing records file", "data"))
        return [], [], []
    except OSError as exc:
        issues.append(Issue(str(path), f"cannot read: {exc.strerror or exc}", "data"))
        return [], [], []
    offsets: list[int] = []
    with handle:
        # Binary lines split on b"\n" only: answer texts may hold U+2028 or U+0085.
        lines = _numbered_lines(handle, offsets)
        records, numbers, problems = parse_records_from(lines, path, lean.prepare, lean.keep)
    issues.extend(problems)
    by_line = dict(zip(range(1, len(offsets) + 1), offsets, strict=True))
    return records, numbers, [by_line[n] for n in numbers]


def _numbered_lines(handle: BinaryIO, offsets: list[int]) -> Iterator[bytes]:
    offset = 0
    for line in handle:
        offsets.append(offset)
        offset += len(line)
        yield line


class _LeanRecords:
    """Prepares record lines to be kept without their texts, sharing one object for equal
    provenance and speculative values (most records of a campaign have the
    same): a few KB per record instead of every text."""

    _SHARED = {"provenance": Provenance, "speculative": SpeculativeSpec}
    _TEXTS = ("prompt", "text", "reasoning_text")
    _REPEATED = ("campaign_id", "plan_sha256", "condition_id", "input_id")
    """Strings most records share: one interned copy instead of one per record."""

    def __init__(self) -> None:
        self._shared: dict[tuple[str, str], StrictModel] = {}
        self._fields_sets: dict[frozenset[str], set[str]] = {}
        self.prompt_sha256: dict[tuple[str, str, int], str] = {}
        """What is kept of the prompts (``Campaign.prompt_sha256``)."""

    def prepare(self, raw: dict) -> dict:
        """``raw`` ready to validate as a lean record; a field that does not validate on its
        own is left as it is, for the record's validation to report where it is."""
        lean = dict(raw)
        prompt = raw.get("prompt")
        if isinstance(prompt, str):
            key = (str(raw.get("campaign_id")), str(raw.get("trial_id")), raw.get("attempt", 1))
            self.prompt_sha256[key] = hashlib.sha256(prompt.encode("utf-8")).hexdigest()
        for name in self._TEXTS:
            if isinstance(lean.get(name), str):
                lean[name] = ""
        for name in self._REPEATED:
            if isinstance(lean.get(name), str):
                lean[name] = sys.intern(lean[name])
        for name, model in self._SHARED.items():
            value = lean.get(name)
            if not isinstance(value, dict):
                continue
            key = (name, json.dumps(value, sort_keys=True))
            if key not in self._shared:
                try:
                    self._shared[key] = model.model_validate(value)
                except ValidationError:
                    continue
            lean[name] = self._shared[key]
        return lean

    def keep(self, record: TrialRecord) -> TrialRecord:
        """``record`` with its per-instance sets of set fields replaced by shared ones:
        pydantic keeps one set per model instance (2 KB for a record), and these never
        change."""
        for model in (
            record,
            record.metrics,
            record.sampling,
            record.round,
            *record.peak_memory,
            *record.telemetry,
        ):
            if model is not None:
                fields = frozenset(model.__pydantic_fields_set__)
                # A set, as pydantic expects; copies (model_copy) copy it before changing it.
                shared = self._fields_sets.setdefault(fields, set(fields))
                object.__setattr__(model, "__pydantic_fields_set__", shared)
        return record


def parse_records(data: bytes, path: Path) -> tuple[list[TrialRecord], list[int], list[Issue]]:
    """The valid records of ``records.jsonl`` bytes with their line numbers, and an issue
    for each invalid line, each repeated attempt of a trial and each attempt after an ok
    one (a trial with an ok attempt is never run again)."""
    # Split on newline bytes only: answer texts may hold U+2028 or U+0085, which JSON
    # writes raw.
    return parse_records_from(iter(data.split(b"\n")), path)


def parse_records_from(
    lines: Iterator[bytes],
    path: Path,
    prepare: Callable[[dict], dict] = lambda raw: raw,
    keep: Callable[[TrialRecord], TrialRecord] = lambda record: record,
) -> tuple[list[TrialRecord], list[int], list[Issue]]:
    """``parse_records`` over lines as they are read; ``prepare`` turns each line's JSON
    object into what is validated, ``keep`` each valid record into what is kept (e.g. a
    lean record)."""
    records: list[TrialRecord] = []
    numbers: list[int] = []
    issues: list[Issue] = []
    seen: dict[tuple[str, int], int] = {}
    ok_line: dict[str, int] = {}
    for number, raw_line in enumerate(lines, start=1):
        if not raw_line.strip():
            continue
        where = f"{path}:{number}"
        try:
            raw = json.loads(raw_line.decode("utf-8"))
        except UnicodeDecodeError as exc:
            issues.append(Issue(where, f"not valid UTF-8 ({exc.reason} at byte {exc.start + 1})"))
            continue
        except json.JSONDecodeError as exc:
            issues.append(Issue(where, f"not valid JSON ({exc.msg} at column {exc.colno})"))
            continue
        if not isinstance(raw, dict):
            issues.append(Issue(where, "a record must be a JSON object"))
            continue
        trial = raw.get("trial_id", "?")
        where = f"{path}:{number} (trial {trial})"
        version = raw.get("schema_version")
        if version != RECORD_SCHEMA_VERSION:
            issues.append(
                Issue(
                    f"{where} → schema_version",
                    f"unknown record schema_version {version!r}; "
                    f"this sitegen reads version {RECORD_SCHEMA_VERSION}",
                )
            )
            continue
        try:
            record = TrialRecord.model_validate(prepare(raw))
        except ValidationError as exc:
            issues.extend(pydantic_issues(exc, where))
            continue
        key = (record.trial_id, record.attempt)
        if key in seen:
            issues.append(
                Issue(
                    f"{where} → attempt",
                    f"duplicate of line {seen[key]}; each attempt of a trial is recorded once",
                    "data",
                )
            )
        elif record.trial_id in ok_line:
            issues.append(
                Issue(
                    f"{where} → attempt",
                    f"the trial already succeeded on line {ok_line[record.trial_id]}; "
                    "a trial with an ok attempt is never run again",
                    "data",
                )
            )
        seen.setdefault(key, number)
        if record.status == "ok":
            ok_line.setdefault(record.trial_id, number)
        records.append(keep(record))
        numbers.append(number)
    return records, numbers, issues


# --- verifying against the manifest ------------------------------------------------------


@dataclass(frozen=True)
class VerifiedCampaign:
    """A campaign whose files all match its manifest."""

    directory: Path
    campaign_id: str
    plan_sha256: str
    files: int
    records: int


def verify_campaign(directory: Path) -> VerifiedCampaign:
    """Re-hash ``directory`` against its manifest; raises ``DataError`` naming every mismatch."""
    if not directory.is_dir():
        raise DataError([Issue(str(directory), "not a campaign directory", RULE)])
    manifest_path = directory / MANIFEST_FILE
    try:
        manifest = Manifest.model_validate_json(manifest_path.read_bytes())
    except FileNotFoundError:
        raise DataError(
            [Issue(str(manifest_path), "missing manifest; 'sitegen measure' writes it", RULE)]
        ) from None
    except OSError as exc:
        raise StorageError.from_os_error(exc, "read", manifest_path) from exc
    except ValidationError as exc:
        raise DataError(pydantic_issues(exc, str(manifest_path))) from exc

    # A copy is checked exactly: bytes a killed measure left after the signed ones count
    # as changes here (resuming signs them).
    issues = _artifact_issues(directory, manifest, growing=frozenset())
    listed = {entry.path for entry in manifest.artifacts}
    records = _count_records(directory / RECORDS_FILE)
    plan_bytes = _read_if_present(directory / PLAN_FILE)
    if records is not None and records != manifest.record_count:
        # More lines than signed: a measure stopped between an append and its signature.
        resume = (
            "; on the host that measured it, run 'sitegen measure' with the same plan: it "
            "signs or drops the unsigned tail and measures what is missing"
            if records > manifest.record_count
            else ""
        )
        issues.append(
            Issue(
                str(directory / RECORDS_FILE),
                f"{records} records, the manifest counts {manifest.record_count}{resume}",
                RULE,
            )
        )
    plan_path = directory / PLAN_FILE
    if plan_bytes is not None:
        plan_hash = hashlib.sha256(plan_bytes).hexdigest()
        if plan_hash != manifest.plan_sha256:
            issues.append(
                Issue(
                    str(plan_path),
                    f"plan hash {plan_hash}, the manifest registers {manifest.plan_sha256}",
                    RULE,
                )
            )
    elif PLAN_FILE not in listed:
        issues.append(Issue(str(plan_path), "missing plan file", RULE))
    if issues:
        raise DataError(issues)
    return VerifiedCampaign(
        directory, manifest.campaign_id, manifest.plan_sha256, len(listed), manifest.record_count
    )


def _artifact_issues(directory: Path, manifest: Manifest, growing: frozenset[str]) -> list[Issue]:
    """Every listed file missing or changed and every file not listed. A file in
    ``growing`` may have grown: only its first ``size_bytes`` are checked."""
    issues: list[Issue] = []
    for entry in manifest.artifacts:
        path = directory / entry.path
        if not path.is_file():
            issues.append(Issue(str(path), "missing: listed in the manifest, not found", RULE))
            continue
        try:
            if entry.path in growing:
                prefix, size = _prefix_digest(path, entry.size_bytes)
                actual = prefix.hexdigest()
            else:
                actual, size = sha256_file(path), path.stat().st_size
        except OSError as exc:
            issues.append(Issue(str(path), f"cannot read: {exc.strerror or exc}", RULE))
            continue
        if entry.path in growing and size < entry.size_bytes:
            issues.append(
                Issue(
                    str(path),
                    f"changed: {size} bytes, shorter than the {entry.size_bytes} bytes the "
                    "manifest signs",
                    RULE,
                )
            )
        elif entry.path in growing and actual != entry.sha256:
            issues.append(
                Issue(
                    str(path),
                    f"changed: sha256 of its first {entry.size_bytes} bytes is {actual}, "
                    f"the manifest lists {entry.sha256}",
                    RULE,
                )
            )
        elif actual != entry.sha256:
            issues.append(
                Issue(
                    str(path),
                    f"changed: sha256 {actual} ({size} bytes), the manifest "
                    f"lists {entry.sha256} ({entry.size_bytes} bytes)",
                    RULE,
                )
            )
    listed = {entry.path for entry in manifest.artifacts}
    for path in _campaign_files(directory):
        relative = path.relative_to(directory).as_posix()
        # Annotations are written after measuring, so the manifest does not cover them.
        if relative not in listed and relative != ANNOTATIONS_FILE:
            issues.append(Issue(str(path), "extra: not listed in the manifest", RULE))
    return issues


def _campaign_files(directory: Path) -> list[Path]:
    # Dot-files (the lock, temporary files) and the manifest itself are never listed.
    return [
        path
        for path in sorted(directory.rglob("*"))
        if path.is_file() and path.name != MANIFEST_FILE and not path.name.startswith(".")
    ]


def _count_records(path: Path) -> int | None:
    try:
        with path.open("rb") as handle:
            return sum(1 for line in handle if line.strip())
    except FileNotFoundError:
        return None  # reported as a missing file
    except OSError as exc:
        raise StorageError.from_os_error(exc, "read", path) from exc


def _read_if_present(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return None  # reported as a missing file
    except OSError as exc:
        raise StorageError.from_os_error(exc, "read", path) from exc
