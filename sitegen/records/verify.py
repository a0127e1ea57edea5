"""Checking a copy of a campaign against its ``manifest.json``: every file exactly as
signed (``sitegen verify``, C-SIGNED); ``measure`` checks the same before it appends, and
``sitegen keys sign`` before it signs a campaign measured without a key."""

from __future__ import annotations

import hashlib
import shlex
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
from pydantic import ValidationError

from sitegen.core.errors import ConfigError, DataError, Issue, StorageError, pydantic_issues
from sitegen.core.signing import SIGNATURE_SUFFIX, Signer, signature_issues
from sitegen.records.annotations import ANNOTATIONS_FILE
from sitegen.records.layout import (
    CAMPAIGNS_DIR,
    ENGINE_LOG,
    GROWING_FILES,
    IMPORT_FILE,
    MANIFEST_FILE,
    PLAN_FILE,
    RECORDS_FILE,
    FileDigest,
    prefix_digest,
    sha256_file,
    write_atomic,
)
from sitegen.records.record_models import (
    Manifest,
)

RULE = "manifest"
"""Rule id of the issues found checking a campaign against its manifest."""


@dataclass(frozen=True)
class VerifiedCampaign:
    """A campaign whose files all match its manifest."""

    directory: Path
    campaign_id: str
    plan_sha256: str
    files: int
    records: int


def verify_campaign(
    directory: Path,
    already_read: Mapping[str, FileDigest] | None = None,
    public_key: Ed25519PublicKey | None = None,
) -> VerifiedCampaign:
    """Re-hash ``directory`` against its manifest; raises ``DataError`` naming every mismatch.
    ``already_read``: digests of files (by path in the campaign) taken while a build parsed
    them, checked instead of reading those files again. ``public_key``: the key the
    project declares; the manifest must then be signed by it and unchanged since."""
    already_read = already_read or {}
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

    # A copy is checked exactly, but for what a stopped measure leaves: its cure is to
    # resume the campaign, not to copy it again.
    tail = killed_tail(directory, manifest)
    growing = GROWING_FILES if tail else frozenset()
    issues = artifact_issues(directory, manifest, growing, already_read=already_read)
    listed = {entry.path for entry in manifest.artifacts}
    records: int | None
    if RECORDS_FILE in already_read:
        records = already_read[RECORDS_FILE].lines
    else:
        records = _count_records(directory / RECORDS_FILE)
    # An imported campaign registers its import.json where a measured one has its plan.
    registered = IMPORT_FILE if IMPORT_FILE in listed else PLAN_FILE
    plan_bytes = _read_if_present(directory / registered)
    if public_key is not None:
        issues += signature_issues(manifest_path, public_key)
    if tail is not None:
        issues.append(Issue(tail.location(directory), tail.cure(directory), RULE))
    elif records is not None and records != manifest.record_count:
        issues.append(
            Issue(
                str(directory / RECORDS_FILE),
                f"{records} records, the manifest counts {manifest.record_count}",
                RULE,
            )
        )
    plan_path = directory / registered
    if plan_bytes is not None:
        plan_hash = hashlib.sha256(plan_bytes).hexdigest()
        if plan_hash != manifest.plan_sha256:
            issues.append(
                Issue(
                    str(plan_path),
                    f"{Path(registered).stem} hash {plan_hash}, the manifest registers "
                    f"{manifest.plan_sha256}",
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


def sign_existing(directory: Path, signer: Signer) -> Path:
    """Sign a campaign's manifest once (one measured or imported before the project had a
    key): its files must match the manifest, and it must not be signed already. Returns
    the signature file; its ``signed_at`` is the date of signing the pages state."""
    manifest = directory / MANIFEST_FILE
    signature = manifest.with_name(manifest.name + SIGNATURE_SUFFIX)
    if signature.exists():
        raise ConfigError(f"{signature} exists: the campaign is signed already")
    verify_campaign(directory)  # raises DataError naming every file that does not match
    try:
        write_atomic(signature, signer.signature(manifest.read_bytes()))
    except OSError as exc:
        raise StorageError.from_os_error(exc, "write", signature) from exc
    return signature


@dataclass(frozen=True)
class KilledTail:
    """What a measure stopped while appending leaves after the signed records: the record
    it announced in the manifest (a whole line), part of a line without its newline, or
    both. Resuming the campaign signs the one and drops the other (``records.store``)."""

    line: int
    """Line number of the first byte after the signed records."""
    announced: bool
    torn: bool

    def location(self, directory: Path) -> str:
        return f"{directory / RECORDS_FILE}:{self.line}"

    def cure(self, directory: Path) -> str:
        """What the tail is, and the command that finishes the campaign."""
        if self.announced and self.torn:
            what = "the record a stopped measure appended but had not signed, then a torn line"
            action = "sign the record, drop the torn line"
        elif self.announced:
            what, action = "the record a stopped measure appended but had not signed", "sign it"
        else:
            what = "a torn last line, left by a measure stopped while writing it"
            action = "drop the torn tail"
        return f"{what}; run `{resume_command(directory)}` to {action} and finish the campaign"


def resume_command(directory: Path) -> str:
    """The ``sitegen measure`` that resumes the campaign in ``directory``: its own plan
    file is the registered plan."""
    command = f"sitegen measure --plan {shlex.quote(str(directory / PLAN_FILE))}"
    if directory.parent.name == CAMPAIGNS_DIR:
        command += f" --data {shlex.quote(str(directory.parent.parent))}"
    return command


def killed_tail(directory: Path, manifest: Manifest) -> KilledTail | None:
    """The unsigned end of ``records.jsonl`` when it is exactly what a measure stopped
    while appending leaves: the signed bytes unchanged, then at most the one record the
    manifest announces, then at most part of a line; ``None`` for anything else (no
    unsigned bytes, or bytes measure would refuse to sign)."""
    path = directory / RECORDS_FILE
    signed = next((e for e in manifest.artifacts if e.path == RECORDS_FILE), None)
    signed_size = signed.size_bytes if signed else 0
    try:
        if path.stat().st_size <= signed_size:
            return None
        prefix, _ = prefix_digest(path, signed_size)
        with path.open("rb") as handle:
            handle.seek(signed_size)
            unsigned = handle.read()
    except OSError:
        return None  # reported as a missing or unreadable file
    if prefix.hexdigest() != (signed.sha256 if signed else hashlib.sha256().hexdigest()):
        return None
    whole_end = unsigned.rfind(b"\n") + 1
    whole, torn = unsigned[:whole_end], unsigned[whole_end:]
    if whole and (
        whole.count(b"\n") > 1
        or hashlib.sha256(whole).hexdigest() != manifest.pending_record_sha256
    ):
        return None
    return KilledTail(manifest.record_count + 1, announced=bool(whole), torn=bool(torn))


def unsigned_engine_output(directory: Path) -> str:
    """What the engine logged after the campaign was last signed (decoded; at most the
    last MiB): empty after a measure that ended, what native code printed as it died
    after one that did not (``abort()`` ends the process before anything is signed)."""
    try:
        manifest = Manifest.model_validate_json((directory / MANIFEST_FILE).read_bytes())
        signed = next((e.size_bytes for e in manifest.artifacts if e.path == ENGINE_LOG), 0)
        with (directory / ENGINE_LOG).open("rb") as log:
            size = log.seek(0, 2)
            log.seek(max(signed, size - (1 << 20)))
            return log.read().decode("utf-8", errors="replace")
    except (OSError, ValidationError):
        return ""  # no campaign yet, or one measure will refuse with its reason


def artifact_issues(
    directory: Path,
    manifest: Manifest,
    growing: frozenset[str],
    already_read: Mapping[str, FileDigest] | None = None,
) -> list[Issue]:
    """Every listed file missing or changed and every file not listed. A file in
    ``growing`` may have grown: only its first ``size_bytes`` are checked. A file in
    ``already_read`` is checked by that digest."""
    already_read = already_read or {}
    issues: list[Issue] = []
    for entry in manifest.artifacts:
        path = directory / entry.path
        if not path.is_file():
            issues.append(Issue(str(path), "missing: listed in the manifest, not found", RULE))
            continue
        try:
            if entry.path in already_read and entry.path not in growing:
                actual, size = already_read[entry.path].sha256, already_read[entry.path].size_bytes
            elif entry.path in growing:
                prefix, size = prefix_digest(path, entry.size_bytes)
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
    for path in campaign_files(directory):
        relative = path.relative_to(directory).as_posix()
        # Annotations are written after measuring, so the manifest does not cover them.
        if relative not in listed and relative != ANNOTATIONS_FILE:
            issues.append(Issue(str(path), "extra: not listed in the manifest", RULE))
    return issues


def campaign_files(directory: Path) -> list[Path]:
    # Dot-files (the lock, temporary files), the manifest and its signature are never listed.
    return [
        path
        for path in sorted(directory.rglob("*"))
        if path.is_file()
        and path.name not in (MANIFEST_FILE, MANIFEST_FILE + SIGNATURE_SUFFIX)
        and not path.name.startswith(".")
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
