"""``sitegen keys init`` and ``sitegen keys sign``: the project's signing key, and the
campaigns measured before it."""

from __future__ import annotations

import argparse
import sys

from sitegen.commands.exit_status import EXIT_ERROR, EXIT_OK
from sitegen.core.errors import ConfigError, SitegenError


def keys_init(args: argparse.Namespace) -> int:
    """Create the key pair and sign every campaign under ``--data`` not yet signed;
    ``EXIT_ERROR`` when one cannot be (each named with how to sign it later)."""
    from sitegen.core.signing import SIGNATURE_SUFFIX, init_keys, read_signer
    from sitegen.records.layout import MANIFEST_FILE, campaign_directories
    from sitegen.records.verify import sign_existing

    private, public, print_ = init_keys(args.project, args.key_dir)
    print(f"private key {private} (keep it outside the project; its path is in your config)")
    print(
        f"public key {public}: {print_}, declared in {args.project / 'mkdocs.yml'} "
        "(commit both: the project now requires signed data)"
    )
    # The campaigns already there are signed now, or `sitegen check` would refuse them.
    signer, unsigned = read_signer(private), 0
    for directory in campaign_directories(args.data):
        manifest = directory / MANIFEST_FILE
        if directory.is_symlink() or not manifest.is_file():
            continue  # not a campaign a build reads as one (the check names it)
        if manifest.with_name(MANIFEST_FILE + SIGNATURE_SUFFIX).exists():
            continue  # signed already (by this key or not: the check tells)
        try:
            print(f"signed {sign_existing(directory, signer)}")
        except SitegenError as exc:
            unsigned += 1
            issues = getattr(exc, "issues", None)
            reason = "; ".join(str(i) for i in issues) if issues else str(exc)
            print(
                f"not signed: {directory}: {reason}; once `sitegen verify {directory}` passes, "
                f"run `sitegen keys sign {directory}`",
                file=sys.stderr,
            )
    return EXIT_ERROR if unsigned else EXIT_OK


def keys_sign(args: argparse.Namespace) -> None:
    """Sign each campaign directory with the configured key (once: the date is kept)."""
    from sitegen.core.signing import load_signer
    from sitegen.records.verify import sign_existing

    signer = load_signer(args.project)
    if signer is None:
        raise ConfigError("no signing key configured: run `sitegen keys init` first")
    for directory in args.campaigns:
        print(f"signed {sign_existing(directory, signer)} with {signer.fingerprint}")
