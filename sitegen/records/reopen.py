"""Reopening a campaign directory for ``measure`` to append to (``records.store``): a new
campaign started (its plan written, its registration recorded), or one stopped or
finished before resumed once its files are checked against the manifest.

Resuming accepts only what ``measure`` itself can leave: the signed bytes unchanged, at
most the one record the manifest announced after them, and a torn last line without
newline (truncated: that trial is run again). Anything else is refused in one line, and
nothing is appended: ``measure`` never signs what it did not write.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterator
from contextlib import suppress
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import BinaryIO, Literal

from pydantic import ValidationError

from sitegen.core.comparison_spec import SetupField
from sitegen.core.errors import IntegrityError, Issue, StorageError, pydantic_issues
from sitegen.core.signing import Signer, signature_issues
from sitegen.plan.plan_file import canonical_plan_json, plan_sha256
from sitegen.plan.plan_models import Plan
from sitegen.records.campaign import iter_records
from sitegen.records.layout import (
    GROWING_FILES,
    LOCK_FILE,
    LOG_FILES,
    MANIFEST_FILE,
    PLAN_FILE,
    RECORDS_FILE,
    prefix_digest,
    scratch_path,
    write_atomic,
)
from sitegen.records.manifest_writer import GrowingDigest
from sitegen.records.record_models import ArtifactEntry, Manifest, TrialRecord
from sitegen.records.registrations import Registration, append_registration, nonce_of
from sitegen.records.series_factor import note_factor_value
from sitegen.records.verify import RULE, artifact_issues, campaign_files


@dataclass(frozen=True)
class LatestAttempt:
    """What resuming needs of a trial's latest recorded attempt."""

    attempt: int
    status: Literal["ok", "failed"]

    @classmethod
    def of(cls, record: TrialRecord) -> LatestAttempt:
        return cls(record.attempt, record.status)


@dataclass(frozen=True)
class Reopened:
    """A campaign as reopened: what its next manifest builds on."""

    latest: dict[str, LatestAttempt]
    """The latest attempt of each trial found on opening."""
    record_count: int
    plan_entry: ArtifactEntry
    records_digest: GrowingDigest
    log_digests: list[GrowingDigest]
    registered_at: str | None
    nonce: str | None
    """The registration nonce (``None``: a campaign registered before nonces were)."""
    factor_values: dict[str, list[str]]
    """For a plan with a series: each value of its factor in the campaign's records with
    the trial ids holding it (``records.series_factor``); empty otherwise."""


def reopen(directory: Path, plan: Plan, signer: Signer | None) -> Reopened:
    """Start the campaign in ``directory`` (it has no manifest yet) or resume it; raises
    ``IntegrityError`` if its files do not match the manifest, or (with a ``signer``) if
    the manifest in place is not signed by the signer's key. A torn last record is
    dropped."""
    records_path = directory / RECORDS_FILE
    manifest = _read_manifest(directory / MANIFEST_FILE)
    if manifest is not None and signer is not None:
        # A manifest re-hashed by hand must not be signed anew by resuming it.
        issues = signature_issues(directory / MANIFEST_FILE, signer.public_key)
        if issues:
            raise _refusal(issues)
    factor = plan.series.factor if plan.series is not None else None
    records = RecordsFile.read(records_path, _signed_records_size(manifest), factor)
    if records.issues:
        raise _refusal(records.issues)
    if manifest is None:
        reopened = _start(directory, plan, records.record_count)
    else:
        reopened = _resume(directory, plan, manifest, records)
    if records.torn_size:
        _truncate(records_path, records.whole_size)
    return reopened


def _start(directory: Path, plan: Plan, record_count: int) -> Reopened:
    """A new campaign, or one killed before its first manifest: nothing to sign yet."""
    if record_count:
        raise IntegrityError(
            f"{directory / MANIFEST_FILE}: missing, but {RECORDS_FILE} holds "
            f"{record_count} record(s); measure does not sign records it cannot check "
            "(restore the manifest, or measure into a new data directory)"
        )
    for path in campaign_files(directory):
        relative = path.relative_to(directory).as_posix()
        # What a kill before the first manifest can leave: a plan, a torn line, an empty log.
        left_by_a_kill = relative in (PLAN_FILE, RECORDS_FILE) or (
            relative in LOG_FILES and not path.stat().st_size
        )
        if not left_by_a_kill:
            raise IntegrityError(
                f"{path}: no {MANIFEST_FILE} lists it; measure does not sign files it did not write"
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
    registered_at = datetime.now(UTC).isoformat(timespec="milliseconds")
    append_registration(
        directory.parent.parent,
        Registration(
            campaign_id=directory.name,
            plan_name=plan.name,
            plan_sha256=plan_sha256(plan),
            registered_at=registered_at,
        ),
    )
    return Reopened(
        latest={},
        record_count=0,
        plan_entry=plan_entry,
        records_digest=GrowingDigest(RECORDS_FILE),
        log_digests=[GrowingDigest(relative) for relative in LOG_FILES],
        registered_at=registered_at,
        nonce=nonce_of(directory.name, plan),
        factor_values={},
    )


def _resume(directory: Path, plan: Plan, manifest: Manifest, records: RecordsFile) -> Reopened:
    """A campaign with a manifest: signed bytes unchanged, at most the announced record
    after them."""
    nonce = nonce_of(directory.name, plan)
    plan_entry = _registered_plan(directory, plan, manifest, nonce)
    _check_unsigned_records(directory / RECORDS_FILE, manifest, records)
    # The signed lines, and measure's own record if it was appended just before a kill:
    # sign it now.
    records_digest = GrowingDigest(RECORDS_FILE, records.digest, records.whole_size)
    log_digests = _signed_logs(directory, manifest)
    for relative in (RECORDS_FILE, *LOG_FILES):
        _create_empty(directory / relative)
    return Reopened(
        latest=records.latest,
        record_count=records.record_count,
        plan_entry=plan_entry,
        records_digest=records_digest,
        log_digests=log_digests,
        registered_at=manifest.registered_at,
        nonce=nonce,
        factor_values=records.factor_values,
    )


def _registered_plan(
    directory: Path, plan: Plan, manifest: Manifest, nonce: str | None
) -> ArtifactEntry:
    """The manifest's entry of ``plan.json``, once the manifest is found to register this
    plan's campaign and every file but the growing ones to match it; refuses otherwise,
    naming every problem."""
    manifest_path = directory / MANIFEST_FILE
    issues: list[Issue] = []
    if (
        manifest.plan_sha256 != plan_sha256(plan)
        or manifest.campaign_id != directory.name
        or manifest.registration_nonce != nonce
    ):
        issues.append(
            Issue(
                str(manifest_path),
                f"registers campaign {manifest.campaign_id} (plan sha256 "
                f"{manifest.plan_sha256}, nonce {manifest.registration_nonce or 'none'}), "
                f"not this plan's {directory.name}",
                RULE,
            )
        )
    issues += artifact_issues(directory, manifest, GROWING_FILES)
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
    if issues or plan_entry is None:  # no plan entry is among the issues
        raise _refusal(issues)
    return plan_entry


def _check_unsigned_records(records_path: Path, manifest: Manifest, records: RecordsFile) -> None:
    """Refuse records that are not the signed ones followed by, at most, the record the
    manifest announced."""
    signed_lines = records.signed_lines
    if records.signed_size > records.whole_size:
        raise _refusal(
            [Issue(str(records_path), "the signed records end in the middle of a line", RULE)]
        )
    if signed_lines != manifest.record_count:
        raise _refusal(
            [
                Issue(
                    str(records_path),
                    f"{signed_lines} signed records, the manifest counts {manifest.record_count}",
                    RULE,
                )
            ]
        )
    if records.unsigned_size:
        announced = manifest.pending_record_sha256
        unsigned_sha256 = records.unsigned_digest.hexdigest()
        if records.unsigned_lines > 1 or unsigned_sha256 != announced:
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


def _signed_logs(directory: Path, manifest: Manifest) -> list[GrowingDigest]:
    """The digest of each log's signed bytes (what the engine logged after them is signed
    with the next record)."""
    signed = {entry.path: entry for entry in manifest.artifacts}
    log_digests = []
    for relative in LOG_FILES:
        log_signed = signed.get(relative)
        log_digest = GrowingDigest(relative)
        if log_signed is not None:
            log_path = directory / relative
            try:
                prefix, _ = prefix_digest(log_path, log_signed.size_bytes)
            except OSError as exc:
                raise StorageError.from_os_error(exc, "read", log_path) from exc
            log_digest = GrowingDigest(relative, prefix, log_signed.size_bytes)
        log_digests.append(log_digest)
    return log_digests


class RecordsFile:
    """``records.jsonl`` as reopening reads it: line by line, keeping no record, only the
    latest attempt of each trial, the problems, and what resuming checks and signs."""

    def __init__(self, signed_size: int, factor: SetupField | None) -> None:
        self.signed_size = signed_size
        """Bytes of the file the manifest signed (0 without a manifest)."""
        self.factor = factor
        """The factor of the plan's series (``None``: the plan declares none)."""
        self.factor_values: dict[str, list[str]] = {}
        """Each value of ``factor`` in the records with the trial ids holding it."""
        self.latest: dict[str, LatestAttempt] = {}
        self.record_count = 0
        self.issues: list[Issue] = []
        self.whole_size = 0
        """Bytes up to the last newline: a kill can tear the last line only."""
        self.torn_size = 0
        """Bytes after the last newline: the torn last line, dropped."""
        self.digest = hashlib.sha256()
        """SHA-256 of the whole lines."""
        self.signed_lines = 0
        """Newlines within the signed bytes."""
        self.unsigned_size = 0
        self.unsigned_lines = 0
        self.unsigned_digest = hashlib.sha256()
        """SHA-256 of the whole lines' bytes after the signed ones."""

    @classmethod
    def read(cls, path: Path, signed_size: int, factor: SetupField | None = None) -> RecordsFile:
        """The file read once, one line in memory at a time; a missing file reads empty.
        ``factor``: the factor of the plan's series, whose values are gathered."""
        records = cls(signed_size, factor)
        try:
            with path.open("rb") as handle:
                lines = records._whole_lines(handle)
                for _, record, _ in iter_records(lines, path, records.issues):
                    records._add(record)
        except FileNotFoundError:
            pass
        except OSError as exc:
            raise StorageError.from_os_error(exc, "read", path) from exc
        return records

    def _whole_lines(self, handle: BinaryIO) -> Iterator[bytes]:
        """The lines ending in a newline, without it, each counted and hashed as it
        passes."""
        # Binary lines split on b"\n" only: answer texts may hold U+2028 or U+0085.
        for line in handle:
            if not line.endswith(b"\n"):
                self.torn_size = len(line)  # only the last line can lack its newline
                return
            start, self.whole_size = self.whole_size, self.whole_size + len(line)
            self.digest.update(line)
            if self.whole_size <= self.signed_size:
                self.signed_lines += 1
            else:
                unsigned = line[max(self.signed_size - start, 0) :]
                self.unsigned_size += len(unsigned)
                self.unsigned_lines += 1
                self.unsigned_digest.update(unsigned)
            yield line[:-1]

    def _add(self, record: TrialRecord) -> None:
        self.record_count += 1
        known = self.latest.get(record.trial_id)
        if known is None or record.attempt > known.attempt:
            self.latest[record.trial_id] = LatestAttempt.of(record)
        if self.factor is not None:
            note_factor_value(self.factor_values, record, self.factor)


def _signed_records_size(manifest: Manifest | None) -> int:
    """The bytes of ``records.jsonl`` the manifest signed (0 without one)."""
    for entry in manifest.artifacts if manifest else []:
        if entry.path == RECORDS_FILE:
            return entry.size_bytes
    return 0


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


def remove_unstarted(directory: Path) -> None:
    """Remove ``directory`` when no campaign was started in it: it holds nothing but the
    lock and the plan's scratch file (another measure's lock file, created after this
    look, keeps it)."""
    leftovers = {LOCK_FILE, scratch_path(directory / PLAN_FILE).name}
    with suppress(OSError):
        names = {entry.name for entry in directory.iterdir()}
        if names <= leftovers:
            for name in names:
                (directory / name).unlink()
            directory.rmdir()


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
