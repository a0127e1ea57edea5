"""``sitegen audit``: print what ``commands.audit`` found of a published version, one line
per mismatch, and its verdict."""

from __future__ import annotations

import argparse
import time

from sitegen.commands.exit_status import EXIT_AUDIT_MISMATCH, EXIT_OK


def audit(args: argparse.Namespace) -> int:
    """Audit ``SITE_DIR_OR_URL``; ``EXIT_AUDIT_MISMATCH`` when anything does not check."""
    from sitegen.commands.audit import audit_site

    started = time.monotonic()
    result = audit_site(args.site, args.version, args.key, args.deadline)
    print(f"version {result.version} of {args.site}")
    if result.key_fingerprint and args.key is None:
        print(
            f"signing key {result.key_fingerprint} (the key this site publishes: pin the "
            "fingerprint the publisher gave you with --key)"
        )
    elif result.key_fingerprint is not None:
        print(f"signing key {result.key_fingerprint}: the pinned key")
    for finding in result.findings:
        print(finding)
    for note in result.notes:
        print(f"note: {note}")
    checked = (
        f"{result.figures} figure(s) on {result.pages} page(s), {result.listed} file(s) "
        f"checked against signed lists, {result.files} download(s) hashed, {result.tables} "
        "derived download(s) recomputed, "
        f"{time.monotonic() - started:.1f} s"
    )
    if result.findings:
        print(f"FAILED: {len(result.findings)} mismatch(es); {checked}")
        return EXIT_AUDIT_MISMATCH
    print(f"ok: every figure and file matches its recomputation; {checked}")
    return EXIT_OK
