"""Writing a campaign: append-only storage for the one ``measure`` that holds its lock.

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
kept). Signed bytes never change; ``records.verify`` checks a copy exactly, and
``records.campaign`` reads a campaign back.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager, suppress
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import BinaryIO, Literal, Protocol

from pydantic import ValidationError

from sitegen.core.errors import IntegrityError, Issue, StorageError, pydantic_issues
from sitegen.core.lock import exclusive_lock
from sitegen.core.signing import SIGNATURE_SUFFIX, Signer, signature_issues, signature_problem
from sitegen.plan.plan_file import campaign_id, canonical_plan_json, plan_sha256
from sitegen.plan.plan_models import Plan
from sitegen.records.campaign import iter_records
from sitegen.records.layout import (
    ENGINE_LOG,
    GROWING_FILES,
    LOCK_FILE,
    LOG_FILES,
    MANIFEST_FILE,
    PLAN_FILE,
    RECORDS_FILE,
    TELEMETRY_LOG,
    prefix_digest,
    scratch_path,
    write_atomic,
)
from sitegen.records.record_models import (
    ArtifactEntry,
    Manifest,
    TrialRecord,
)
from sitegen.records.registrations import (
    Registration,
    append_registration,
    find_campaign,
    new_nonce,
    nonce_of,
    registry_lock,
)
from sitegen.records.verify import RULE, artifact_issues, campaign_files


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
        latest: dict[str, LatestAttempt],
        record_count: int,
        plan_entry: ArtifactEntry,
        records_digest: _GrowingDigest,
        log_digests: list[_GrowingDigest],
        registered_at: str | None,
        nonce: str | None = None,
    ) -> None:
        self.directory = directory
        self.plan = plan
        self.campaign_id = campaign_id(plan, nonce)
        self.nonce = nonce
        """The registration nonce (``None``: a campaign registered before nonces were)."""
        self.plan_sha256 = plan_sha256(plan)
        self.records_path = directory / RECORDS_FILE
        self.engine_log_path = directory / ENGINE_LOG
        self.telemetry_log_path = directory / TELEMETRY_LOG
        self._latest = latest
        """The latest attempt of each trial found on opening (not those appended since)."""
        self._plan_entry = plan_entry
        self._records_digest = records_digest
        self._log_digests = log_digests
        self._record_count = record_count
        self._registered_at = registered_at
        self._signer: Signer | None = None
        """Signs every manifest written (``None``: the manifest is not signed)."""

    @classmethod
    @contextmanager
    def open(
        cls, campaigns_dir: Path, plan: Plan, signer: Signer | None = None
    ) -> Iterator[CampaignStore]:
        """Create the campaign directory (a new registration, with a new nonce: see
        ``records.registrations``), or reopen the plan's campaign to resume, and hold its lock
        until the block ends. Raises ``LockedError`` if another process holds it and
        ``IntegrityError`` if the files do not match the manifest, or (with a ``signer``)
        if the manifest in place is not signed by the signer's key; a directory that holds
        no plan yet is removed when opening fails. ``signer``: signs every manifest."""
        with ExitStack() as held:
            # Found or created under the registry's lock, and locked before it is let go:
            # a second measure of the plan finds this directory, and its lock refuses it.
            with registry_lock(campaigns_dir.parent):
                directory = find_campaign(campaigns_dir, plan)
                if directory is None:
                    directory = campaigns_dir / campaign_id(plan, new_nonce())
                try:
                    directory.mkdir(parents=True, exist_ok=True)
                except OSError as exc:
                    raise StorageError.from_os_error(
                        exc, "create the campaign directory", directory
                    ) from exc
                held.enter_context(exclusive_lock(directory / LOCK_FILE, f"campaign {directory}"))
            try:
                store = cls._reopen(directory, plan, signer)
            except BaseException:
                # Stopped before the plan was written (a full disk, Ctrl+C): no empty
                # directory is left for a build to stumble on. One left by a kill is
                # taken over by the next measure of this plan, as a new campaign.
                _remove_unstarted(directory)
                raise
            yield store

    @classmethod
    def _reopen(cls, directory: Path, plan: Plan, signer: Signer | None) -> CampaignStore:
        records_path = directory / RECORDS_FILE
        manifest = _read_manifest(directory / MANIFEST_FILE)
        if manifest is not None and signer is not None:
            # A manifest re-hashed by hand must not be signed anew by resuming it.
            issues = signature_issues(directory / MANIFEST_FILE, signer.public_key)
            if issues:
                raise _refusal(issues)
        records = _RecordsFile.read(records_path, _signed_records_size(manifest))
        if records.issues:
            raise _refusal(records.issues)
        if manifest is None:
            store = cls._start(directory, plan, records.record_count)
        else:
            store = cls._resume(directory, plan, manifest, records)
        if records.torn_size:
            _truncate(records_path, records.whole_size)
        store._signer = signer
        store.sign()
        return store

    @classmethod
    def _start(cls, directory: Path, plan: Plan, record_count: int) -> CampaignStore:
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
        return cls(
            directory,
            plan,
            {},
            0,
            plan_entry,
            _GrowingDigest(RECORDS_FILE),
            [_GrowingDigest(relative) for relative in LOG_FILES],
            registered_at=registered_at,
            nonce=nonce_of(directory.name, plan),
        )

    @classmethod
    def _resume(
        cls,
        directory: Path,
        plan: Plan,
        manifest: Manifest,
        records: _RecordsFile,
    ) -> CampaignStore:
        """A campaign with a manifest: signed bytes unchanged, at most the announced
        record after them."""
        manifest_path = directory / MANIFEST_FILE
        issues: list[Issue] = []
        nonce = nonce_of(directory.name, plan)
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
        records_path = directory / RECORDS_FILE
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
                        f"{signed_lines} signed records, the manifest counts "
                        f"{manifest.record_count}",
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
        # The signed lines, and measure's own record if it was appended just before a kill:
        # sign it now.
        records_digest = _GrowingDigest(RECORDS_FILE, records.digest, records.whole_size)
        log_digests = []
        for relative in LOG_FILES:
            log_signed = signed.get(relative)
            log_digest = _GrowingDigest(relative)
            if log_signed is not None:
                log_path = directory / relative
                try:
                    prefix, _ = prefix_digest(log_path, log_signed.size_bytes)
                except OSError as exc:
                    raise StorageError.from_os_error(exc, "read", log_path) from exc
                log_digest = _GrowingDigest(relative, prefix, log_signed.size_bytes)
            log_digests.append(log_digest)
        for relative in (RECORDS_FILE, *LOG_FILES):
            _create_empty(directory / relative)
        return cls(
            directory,
            plan,
            records.latest,
            records.record_count,
            plan_entry,
            records_digest,
            log_digests,
            registered_at=manifest.registered_at,
            nonce=nonce,
        )

    def latest_attempts(self) -> dict[str, LatestAttempt]:
        """The latest recorded attempt of each trial (trial id → attempt)."""
        return dict(self._latest)

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
            registration_nonce=self.nonce,
            record_count=self._record_count,
            artifacts=sorted(artifacts, key=lambda entry: entry.path),
            pending_record_sha256=pending,
        )

    def _write_manifest(self, manifest: Manifest) -> None:
        path = self.directory / MANIFEST_FILE
        data = (manifest.model_dump_json(indent=2) + "\n").encode()
        if self._already_signed(path, data):
            # A measure with nothing new to record keeps the signature and its date: the
            # pages state when the data was signed, and a version that adds another
            # campaign leaves this one's pages as they were.
            return
        try:
            write_atomic(path, data)
            if self._signer is not None:
                write_atomic(
                    path.with_name(path.name + SIGNATURE_SUFFIX), self._signer.signature(data)
                )
        except OSError as exc:
            raise StorageError.from_os_error(exc, "write the manifest", path) from exc

    def _already_signed(self, path: Path, data: bytes) -> bool:
        """Whether ``path`` holds ``data`` already and, where this store signs, a signature
        of it by this store's key."""
        try:
            if path.read_bytes() != data:
                return False
            signature = path.with_name(path.name + SIGNATURE_SUFFIX)
            if self._signer is None:
                return True
            return (
                signature_problem(
                    data, signature.read_bytes(), self._signer.public_key, signature.name
                )
                is None
            )
        except OSError:
            return False


@dataclass(frozen=True)
class LatestAttempt:
    """What resuming needs of a trial's latest recorded attempt."""

    attempt: int
    status: Literal["ok", "failed"]

    @classmethod
    def of(cls, record: TrialRecord) -> LatestAttempt:
        return cls(record.attempt, record.status)


class TrialSink(Protocol):
    """What the campaign runner uses of a store: a ``CampaignStore``, or the fleet's
    stand-in for it on a node (``sitegen.fleet.fleet_runner._NodeSink``)."""

    campaign_id: str
    plan_sha256: str
    directory: Path
    engine_log_path: Path
    telemetry_log_path: Path

    def latest_attempts(self) -> dict[str, LatestAttempt]: ...

    def append(self, record: TrialRecord) -> None: ...


class _RecordsFile:
    """``records.jsonl`` as reopening reads it: line by line, keeping no record, only the
    latest attempt of each trial, the problems, and what resuming checks and signs."""

    def __init__(self, signed_size: int) -> None:
        self.signed_size = signed_size
        """Bytes of the file the manifest signed (0 without a manifest)."""
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
    def read(cls, path: Path, signed_size: int) -> _RecordsFile:
        """The file read once, one line in memory at a time; a missing file reads empty."""
        records = cls(signed_size)
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


def _remove_unstarted(directory: Path) -> None:
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


# --- reading ---------------------------------------------------------------------------
