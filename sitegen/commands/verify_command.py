"""``sitegen verify``: re-hash campaign directories against their manifest.json (and its
signature, when the project has a key)."""

from __future__ import annotations

import argparse


def verify(args: argparse.Namespace) -> None:
    """One ``ok`` line per campaign directory; the first that does not match raises."""
    from sitegen.core.signing import fingerprint, project_key
    from sitegen.records.verify import verify_campaign

    key = project_key(args.project)
    signed = f", signed by {fingerprint(key)}" if key is not None else ""
    for directory in args.campaigns:
        verified = verify_campaign(directory, public_key=key)
        print(
            f"ok: {verified.directory}: {verified.files} file(s) and {verified.records} records "
            f"match manifest.json (plan sha256 {verified.plan_sha256[:12]}){signed}"
        )
