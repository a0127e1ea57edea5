"""Writing a campaign's ``manifest.json`` (and, with a signer, its signature) as
``measure`` appends: the files that only grow hashed by what was added since the last
manifest, and a manifest that would change nothing left as it is, signature and date
included."""

from __future__ import annotations

import hashlib
from pathlib import Path

from sitegen.core.errors import StorageError
from sitegen.core.signing import SIGNATURE_SUFFIX, Signer, signature_problem
from sitegen.records.layout import MANIFEST_FILE, write_atomic
from sitegen.records.record_models import ArtifactEntry, Manifest


class GrowingDigest:
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


class ManifestWriter:
    """Writes one campaign's manifest, signed by ``signer`` (``None``: not signed)."""

    def __init__(self, directory: Path, signer: Signer | None) -> None:
        self.path = directory / MANIFEST_FILE
        self.signer = signer

    def write(self, manifest: Manifest) -> None:
        data = (manifest.model_dump_json(indent=2) + "\n").encode()
        if self._already_signed(data):
            # A measure with nothing new to record keeps the signature and its date: the
            # pages state when the data was signed, and a version that adds another
            # campaign leaves this one's pages as they were.
            return
        try:
            write_atomic(self.path, data)
            if self.signer is not None:
                write_atomic(
                    self.path.with_name(self.path.name + SIGNATURE_SUFFIX),
                    self.signer.signature(data),
                )
        except OSError as exc:
            raise StorageError.from_os_error(exc, "write the manifest", self.path) from exc

    def _already_signed(self, data: bytes) -> bool:
        """Whether the manifest holds ``data`` already and, where this writer signs, a
        signature of it by the signer's key."""
        try:
            if self.path.read_bytes() != data:
                return False
            signature = self.path.with_name(self.path.name + SIGNATURE_SUFFIX)
            if self.signer is None:
                return True
            return (
                signature_problem(
                    data, signature.read_bytes(), self.signer.public_key, signature.name
                )
                is None
            )
        except OSError:
            return False
