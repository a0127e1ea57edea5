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
kept). Signed bytes never change. ``records.reopen`` starts or resumes the campaign (and
refuses anything else), ``records.manifest_writer`` writes and signs each manifest,
``records.verify`` checks a copy exactly, and ``records.campaign`` reads a campaign back.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager, suppress
from pathlib import Path
from typing import Protocol

from sitegen.core.errors import StorageError
from sitegen.core.lock import exclusive_lock
from sitegen.core.signing import Signer
from sitegen.plan.plan_file import campaign_id, plan_sha256
from sitegen.plan.plan_models import Plan
from sitegen.records.layout import ENGINE_LOG, LOCK_FILE, RECORDS_FILE, TELEMETRY_LOG
from sitegen.records.manifest_writer import ManifestWriter
from sitegen.records.record_models import Manifest, TrialRecord
from sitegen.records.registrations import find_campaign, new_nonce, registry_lock
from sitegen.records.reopen import LatestAttempt, Reopened, remove_unstarted, reopen


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


class CampaignStore:
    """Append-only storage of one campaign, written by one ``measure`` at a time."""

    def __init__(
        self, directory: Path, plan: Plan, reopened: Reopened, signer: Signer | None
    ) -> None:
        self.directory = directory
        self.plan = plan
        self.campaign_id = campaign_id(plan, reopened.nonce)
        self.nonce = reopened.nonce
        """The registration nonce (``None``: a campaign registered before nonces were)."""
        self.plan_sha256 = plan_sha256(plan)
        self.records_path = directory / RECORDS_FILE
        self.engine_log_path = directory / ENGINE_LOG
        self.telemetry_log_path = directory / TELEMETRY_LOG
        self._latest = reopened.latest
        self.factor_values = reopened.factor_values
        """The values of the plan's series factor found on opening, each with its trial ids
        (empty without a series): what a newly loaded engine must report again."""
        """The latest attempt of each trial found on opening (not those appended since)."""
        self._plan_entry = reopened.plan_entry
        self._records_digest = reopened.records_digest
        self._log_digests = reopened.log_digests
        self._record_count = reopened.record_count
        self._registered_at = reopened.registered_at
        self._manifest_writer = ManifestWriter(directory, signer)
        """Signs every manifest written with ``signer`` (``None``: the manifest is not
        signed)."""

    @classmethod
    @contextmanager
    def open(
        cls,
        campaigns_dir: Path,
        plan: Plan,
        signer: Signer | None = None,
        new_campaign: bool = False,
    ) -> Iterator[CampaignStore]:
        """Create the campaign directory (a new registration, with a new nonce: see
        ``records.registrations``), or reopen the plan's campaign to resume, and hold its lock
        until the block ends. Raises ``LockedError`` if another process holds it and
        ``IntegrityError`` if the files do not match the manifest, or (with a ``signer``)
        if the manifest in place is not signed by the signer's key; a directory that holds
        no plan yet is removed when opening fails. ``signer``: signs every manifest.
        ``new_campaign``: register the next campaign of the plan's series instead of
        resuming the latest (``find_campaign``)."""
        with ExitStack() as held:
            # Found or created under the registry's lock, and locked before it is let go:
            # a second measure of the plan finds this directory, and its lock refuses it.
            with registry_lock(campaigns_dir.parent):
                directory = find_campaign(campaigns_dir, plan, new_campaign)
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
                store = cls(directory, plan, reopen(directory, plan, signer), signer)
                store.sign()
            except BaseException:
                # Stopped before the plan was written (a full disk, Ctrl+C): no empty
                # directory is left for a build to stumble on. One left by a kill is
                # taken over by the next measure of this plan, as a new campaign.
                remove_unstarted(directory)
                raise
            yield store

    def latest_attempts(self) -> dict[str, LatestAttempt]:
        """The latest recorded attempt of each trial (trial id → attempt)."""
        return dict(self._latest)

    def append(self, record: TrialRecord) -> None:
        """Announce the record in the manifest, append it (fsync), then sign it."""
        line = (record.model_dump_json() + "\n").encode("utf-8")
        self._manifest_writer.write(self._manifest(pending=hashlib.sha256(line).hexdigest()))
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
        self._manifest_writer.write(self._manifest())

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
