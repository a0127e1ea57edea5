"""Ed25519 signatures: a campaign's manifest signed by its measurer's key, a published
report's ``SHA256SUMS`` signed by its publisher's, checked against the key the project
declares.

The private key stays outside the project: its path is in the user's config
(``~/.config/sitegen/config.json``, ``signing_key``; ``SITEGEN_SIGNING_KEY`` overrides it).
The project declares its public key in ``keys/signing.pub`` (one line: ``ed25519
<base64>``). When it does, ``verify``, ``check`` and ``build`` refuse a campaign that is
unsigned, signed by another key, or changed after it was signed.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from pydantic import ValidationError

from sitegen.errors import ConfigError, Issue, StorageError
from sitegen.models import StrictModel

PUBLIC_KEY_FILE = "keys/signing.pub"
"""Where a project declares its public key."""
SIGNATURE_SUFFIX = ".sig"
"""A signed file's detached signature: ``manifest.json.sig``, ``SHA256SUMS.sig``."""
KEY_ENV = "SITEGEN_SIGNING_KEY"
RULE = "C-SIGNED"


def user_config_path() -> Path:
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "sitegen" / "config.json"


class Signature(StrictModel):
    """A detached signature (``<file>.sig``)."""

    key: str
    """Fingerprint of the public key that verifies it (``sha256:<hex>``)."""
    signature: str
    """Ed25519 signature of the file's bytes, base64."""
    signed_at: str
    """When it was signed (UTC, ISO 8601). A build dates its signature of a report's
    ``SHA256SUMS`` by the report's latest record instead, so that the same data makes the
    same bytes."""


def fingerprint(public_key: Ed25519PublicKey) -> str:
    raw = public_key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return "sha256:" + hashlib.sha256(raw).hexdigest()


def public_key_line(public_key: Ed25519PublicKey) -> str:
    raw = public_key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return f"ed25519 {base64.b64encode(raw).decode()}\n"


def read_public_key(path: Path) -> Ed25519PublicKey:
    try:
        return parse_public_key(path.read_text(encoding="utf-8"), str(path))
    except OSError as exc:
        raise StorageError.from_os_error(exc, "read", path) from exc


def parse_public_key(line: str, where: str) -> Ed25519PublicKey:
    """A public key line (``ed25519 <base64>``); ``where`` names it in the error."""
    try:
        kind, _, encoded = line.strip().partition(" ")
        if kind != "ed25519":
            raise ValueError("not an ed25519 key line")
        return Ed25519PublicKey.from_public_bytes(base64.b64decode(encoded, validate=True))
    except ValueError as exc:
        raise ConfigError(f"{where}: not a public key line 'ed25519 <base64>' ({exc})") from exc


def project_key(project_dir: Path) -> Ed25519PublicKey | None:
    """The public key the project declares (``None``: it declares none)."""
    path = project_dir / PUBLIC_KEY_FILE
    return read_public_key(path) if path.is_file() else None


@dataclass(frozen=True)
class Signer:
    """A private key, able to sign files."""

    private_key: Ed25519PrivateKey
    path: Path

    @property
    def public_key(self) -> Ed25519PublicKey:
        return self.private_key.public_key()

    @property
    def fingerprint(self) -> str:
        return fingerprint(self.public_key)

    def signature(self, data: bytes, signed_at: datetime | None = None) -> bytes:
        """The detached signature file's bytes for ``data``, dated ``signed_at`` (default:
        now). Ed25519 signatures are deterministic: the same data and date make the same
        bytes."""
        signed = Signature(
            key=self.fingerprint,
            signature=base64.b64encode(self.private_key.sign(data)).decode(),
            signed_at=(signed_at or datetime.now(UTC))
            .astimezone(UTC)
            .isoformat(timespec="seconds"),
        )
        return (signed.model_dump_json(indent=1) + "\n").encode()


def load_signer(project_dir: Path | None = None) -> Signer | None:
    """The user's signing key (``SITEGEN_SIGNING_KEY``, else the user config), or ``None``
    without one. When ``project_dir`` declares a key, the user's must be that key."""
    path_text = os.environ.get(KEY_ENV)
    if not path_text:
        config = user_config_path()
        if config.is_file():
            try:
                path_text = json.loads(config.read_text(encoding="utf-8")).get("signing_key")
            except (OSError, ValueError, AttributeError) as exc:
                raise ConfigError(f"{config}: not a JSON object with signing_key ({exc})") from exc
    if not path_text:
        declared = project_key(project_dir) if project_dir is not None else None
        if declared is not None:
            raise ConfigError(
                f"{project_dir / PUBLIC_KEY_FILE} declares a signing key ({fingerprint(declared)}) "
                f"but none is configured here: set {KEY_ENV} to a copy of the project's "
                "private key (never commit it)"
            )
        return None
    path = Path(path_text).expanduser()
    try:
        key = serialization.load_pem_private_key(path.read_bytes(), password=None)
    except OSError as exc:
        raise StorageError.from_os_error(exc, "read the signing key", path) from exc
    except (ValueError, TypeError) as exc:
        raise ConfigError(f"{path}: not an unencrypted PEM private key ({exc})") from exc
    if not isinstance(key, Ed25519PrivateKey):
        raise ConfigError(f"{path}: not an Ed25519 key")
    signer = Signer(key, path)
    declared = project_key(project_dir) if project_dir is not None else None
    if declared is not None and fingerprint(declared) != signer.fingerprint:
        raise ConfigError(
            f"{path}: key {signer.fingerprint}, but {project_dir / PUBLIC_KEY_FILE} declares "
            f"{fingerprint(declared)}: sign with the project's key"
        )
    return signer


def init_keys(project_dir: Path, key_dir: Path | None = None) -> tuple[Path, Path, str]:
    """A new key pair: the private key outside the project (mode 0600, path written to
    the user config), the public key into ``project_dir/keys/signing.pub``. Refuses to
    replace a key the project already declares."""
    public_path = project_dir / PUBLIC_KEY_FILE
    if public_path.exists():
        raise ConfigError(
            f"{public_path} exists: the project already declares a key ({fingerprint(read_public_key(public_path))})"
        )
    key = Ed25519PrivateKey.generate()
    print_ = fingerprint(key.public_key())
    key_dir = key_dir or user_config_path().parent / "keys"
    key_dir.mkdir(parents=True, exist_ok=True)
    private_path = key_dir / f"{print_.removeprefix('sha256:')[:16]}.pem"
    pem = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    descriptor = os.open(private_path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(descriptor, "wb") as handle:
        handle.write(pem)
    config = user_config_path()
    config.parent.mkdir(parents=True, exist_ok=True)
    settings = json.loads(config.read_text(encoding="utf-8")) if config.is_file() else {}
    settings["signing_key"] = str(private_path)
    config.write_text(json.dumps(settings, indent=1) + "\n", encoding="utf-8")
    public_path.parent.mkdir(parents=True, exist_ok=True)
    public_path.write_text(public_key_line(key.public_key()), encoding="utf-8")
    return private_path, public_path, print_


def signature_issues(path: Path, public_key: Ed25519PublicKey) -> list[Issue]:
    """Whether ``path`` is signed by ``public_key`` and unchanged since: one issue naming
    the file otherwise (unsigned, signed by another key, changed after signing)."""
    signature_path = path.with_name(path.name + SIGNATURE_SUFFIX)
    try:
        signature = signature_path.read_bytes()
    except FileNotFoundError:
        signature = None
    except OSError as exc:
        return [Issue(str(signature_path), f"unreadable signature: {exc}", RULE)]
    try:
        data = path.read_bytes()
    except OSError as exc:
        return [Issue(str(path), f"cannot read: {exc.strerror or exc}", RULE)]
    problem = signature_problem(data, signature, public_key, signature_path.name)
    return [Issue(str(path), problem, RULE)] if problem else []


def signature_problem(
    data: bytes, signature: bytes | None, public_key: Ed25519PublicKey, signature_name: str
) -> str | None:
    """Why ``signature`` (a ``.sig`` file's bytes, ``None``: there is none) does not show
    ``data`` signed by ``public_key`` and unchanged since; ``None`` when it does."""
    expected = fingerprint(public_key)
    if signature is None:
        return f"unsigned: no {signature_name}; the project declares key {expected}"
    try:
        signed = Signature.model_validate_json(signature)
    except ValidationError as exc:
        return f"unreadable signature {signature_name}: {exc}"
    if signed.key != expected:
        return f"signed by key {signed.key}, not the project's {expected}"
    try:
        public_key.verify(base64.b64decode(signed.signature), data)
    except (InvalidSignature, ValueError):
        return f"changed after it was signed ({signed.signed_at}): its signature does not match"
    return None


def signed_at(path: Path) -> str | None:
    """When ``path`` was signed, from its signature file (``None``: unsigned)."""
    try:
        return Signature.model_validate_json(
            path.with_name(path.name + SIGNATURE_SUFFIX).read_bytes()
        ).signed_at
    except (OSError, ValidationError):
        return None


def sign_existing(directory: Path, signer: Signer) -> Path:
    """Sign a campaign's manifest once (one measured or imported before the project had a
    key): its files must match the manifest, and it must not be signed already. Returns
    the signature file; its ``signed_at`` is the date of signing the pages state."""
    # Imported here: the record modules import this one.
    from sitegen.records.layout import MANIFEST_FILE, write_atomic
    from sitegen.records.verify import verify_campaign

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
