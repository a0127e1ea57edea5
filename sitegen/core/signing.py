"""Ed25519 signatures: a campaign's manifest signed by its measurer's key, a published
report's ``SHA256SUMS`` signed by its publisher's, checked against the key the project
declares.

The private key stays outside the project: its path is in the user's config
(``~/.config/sitegen/config.json``, ``signing_key``; ``SITEGEN_SIGNING_KEY`` overrides it).
The project declares its public key in ``keys/signing.pub`` (one line: ``ed25519
<base64>``) and pins it by its fingerprint in ``mkdocs.yml`` (``signing_key:
sha256:<hex>``, which ``sitegen keys init`` writes). When it does, ``verify``, ``check``
and ``build`` refuse a campaign that is unsigned, signed by another key, or changed after
it was signed, and refuse to run at all when the key file is missing or is another key
than the one pinned (a deleted key file must not turn the checks off).
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import re
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import yaml
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from pydantic import ValidationError

from sitegen.core.errors import ConfigError, Issue, StorageError, one_line
from sitegen.core.project import CONFIG_FILE, require_project
from sitegen.core.strict_model import StrictModel
from sitegen.core.yaml_text import load_yaml, read_yaml

PUBLIC_KEY_FILE = "keys/signing.pub"
"""Where a project declares its public key."""
SIGNATURE_SUFFIX = ".sig"
"""A signed file's detached signature: ``manifest.json.sig``, ``SHA256SUMS.sig``."""
KEY_ENV = "SITEGEN_SIGNING_KEY"
RULE = "C-SIGNED"
DECLARATION = "signing_key"
"""The ``mkdocs.yml`` setting that pins the project's key by its fingerprint."""
FINGERPRINT_PATTERN = r"^sha256:[0-9a-f]{64}$"
"""A key's fingerprint as ``fingerprint`` writes it."""


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


def declared_fingerprint(project_dir: Path) -> str | None:
    """The fingerprint ``mkdocs.yml`` pins the project's key to (its ``signing_key``;
    ``None``: it pins none, or there is no ``mkdocs.yml``). Raises ``ConfigError`` naming
    the file when it cannot be read or the setting is not a fingerprint."""
    path = project_dir / CONFIG_FILE
    if not path.is_file():
        return None
    try:
        loaded = read_yaml(path)
    except OSError as exc:
        raise StorageError.from_os_error(exc, "read", path) from exc
    except yaml.YAMLError as exc:
        raise ConfigError(f"{path}: not valid YAML: {one_line(exc)}") from None
    declared = loaded.get(DECLARATION) if isinstance(loaded, dict) else None
    if declared is None:
        return None
    if not isinstance(declared, str) or not re.fullmatch(FINGERPRINT_PATTERN, declared):
        raise ConfigError(
            f"{path} → {DECLARATION}: {declared!r} is not a key fingerprint "
            "'sha256:<64 hex digits>' (`sitegen keys init` writes it)"
        )
    return declared


def project_key(project_dir: Path) -> Ed25519PublicKey | None:
    """The public key the project declares (``None``: it declares none). Raises
    ``ConfigError`` (one line naming ``keys/signing.pub`` and ``mkdocs.yml``) when
    ``mkdocs.yml`` pins a key (``signing_key``) and the key file is missing or holds
    another key."""
    path = project_dir / PUBLIC_KEY_FILE
    declared = declared_fingerprint(project_dir)
    config = project_dir / CONFIG_FILE
    if not path.is_file():
        if declared is None:
            return None
        raise ConfigError(
            f"{path} is missing, but {config} declares {DECLARATION} {declared}: no signature "
            "can be checked without it; restore the project's public key (from its repository, or "
            f"the published site's {PUBLIC_KEY_FILE})"
        )
    key = read_public_key(path)
    if declared is not None and fingerprint(key) != declared:
        raise ConfigError(
            f"{path} holds key {fingerprint(key)}, but {config} declares {DECLARATION} "
            f"{declared}: restore the declared key's file (or, to change keys, declare the "
            f"new key's fingerprint as {DECLARATION} in {CONFIG_FILE})"
        )
    return key


def undeclared_key(project_dir: Path) -> str | None:
    """The line to add to ``mkdocs.yml`` when the project has a key file but pins no
    fingerprint (a project made before the declaration existed); ``None`` otherwise."""
    key = project_key(project_dir)
    if key is None or declared_fingerprint(project_dir) is not None:
        return None
    return f'{DECLARATION}: "{fingerprint(key)}"'


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
        if project_dir is not None and declared is not None:
            raise ConfigError(
                f"{project_dir / PUBLIC_KEY_FILE} declares a signing key ({fingerprint(declared)}) "
                f"but none is configured here: set {KEY_ENV} to a copy of the project's "
                "private key (never commit it)"
            )
        return None
    signer = read_signer(Path(path_text).expanduser())
    declared = project_key(project_dir) if project_dir is not None else None
    if (
        project_dir is not None
        and declared is not None
        and fingerprint(declared) != signer.fingerprint
    ):
        raise ConfigError(
            f"{signer.path}: key {signer.fingerprint}, but {project_dir / PUBLIC_KEY_FILE} declares "
            f"{fingerprint(declared)}: sign with the project's key"
        )
    return signer


def read_signer(path: Path) -> Signer:
    """The private key in ``path`` (unencrypted PEM, Ed25519)."""
    try:
        key = serialization.load_pem_private_key(path.read_bytes(), password=None)
    except OSError as exc:
        raise StorageError.from_os_error(exc, "read the signing key", path) from exc
    except (ValueError, TypeError) as exc:
        raise ConfigError(f"{path}: not an unencrypted PEM private key ({exc})") from exc
    if not isinstance(key, Ed25519PrivateKey):
        raise ConfigError(f"{path}: not an Ed25519 key")
    return Signer(key, path)


def declaration_text(config_text: str, declared: str) -> str:
    """``mkdocs.yml``'s text with ``signing_key: "<declared>"`` appended (the rest kept
    byte for byte); raises ``ConfigError`` when the result would not read back as that
    declaration (a file that is not a YAML mapping written line by line)."""
    text = config_text if not config_text or config_text.endswith("\n") else config_text + "\n"
    text += (
        "\n# The fingerprint of keys/signing.pub (written by `sitegen keys init`): build, check\n"
        "# and verify refuse to run when that file is missing or holds another key. Customers\n"
        "# pin it: `sitegen audit SITE --key <this fingerprint>`.\n"
        f'{DECLARATION}: "{declared}"\n'
    )
    try:
        loaded = load_yaml(text)
    except yaml.YAMLError:
        loaded = None
    if not isinstance(loaded, dict) or loaded.get(DECLARATION) != declared:
        raise ConfigError(
            f"{CONFIG_FILE} is not a YAML mapping written line by line: add "
            f'`{DECLARATION}: "{declared}"` to it by hand'
        )
    return text


def init_keys(project_dir: Path, key_dir: Path | None = None) -> tuple[Path, Path, str]:
    """A new key pair: the private key outside the project (mode 0600, path written to
    the user config), the public key into ``project_dir/keys/signing.pub``, its
    fingerprint declared in ``project_dir/mkdocs.yml`` (``signing_key``). Refuses to
    replace a key the project already declares (by either file)."""
    project_config = require_project(project_dir)
    public_path = project_dir / PUBLIC_KEY_FILE
    if public_path.exists():
        raise ConfigError(
            f"{public_path} exists: the project already declares a key ({fingerprint(read_public_key(public_path))})"
        )
    declared = declared_fingerprint(project_dir)
    if declared is not None:
        raise ConfigError(
            f"{project_config} declares {DECLARATION} {declared} but {public_path} is missing: "
            f"restore that file (from the project's repository, or the published site's "
            f"{PUBLIC_KEY_FILE}), or remove {DECLARATION} from {CONFIG_FILE} to make a new key"
        )
    try:
        config_text = project_config.read_text(encoding="utf-8")
    except OSError as exc:
        raise StorageError.from_os_error(exc, "read", project_config) from exc
    key = Ed25519PrivateKey.generate()
    print_ = fingerprint(key.public_key())
    # Checked before anything is written: a file it cannot extend leaves no key behind.
    declared_config = declaration_text(config_text, print_)
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
    project_config.write_text(declared_config, encoding="utf-8")
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
    if problem and signature is None:
        # A campaign measured or imported before the project had a key: signed once.
        problem += f"; sign it once with `sitegen keys sign {path.parent}`"
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
