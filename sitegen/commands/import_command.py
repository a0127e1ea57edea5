"""``sitegen import``: another tool's output files, or a published sitegen report, made a
signed campaign under ``data/campaigns/`` (``importers.import_campaign``)."""

from __future__ import annotations

import argparse
from pathlib import Path

from sitegen.commands.package_version import installed_version


def import_files(args: argparse.Namespace) -> None:
    """Import ``FILE``… as campaign ``--campaign``; one line says what it holds."""
    from sitegen.core.signing import load_signer
    from sitegen.importers.import_campaign import import_campaign

    result = import_campaign(
        args.format,
        args.files,
        args.declare,
        args.campaign,
        args.data,
        installed_version(),
        load_signer(Path(".")),
    )
    per_condition = ", ".join(f"{c}: {n}" for c, n in result.by_condition.items())
    detail = f" ({per_condition}; {result.failed} failed in the source)" if per_condition else ""
    print(
        f"imported {result.records} record(s) into {result.directory}{detail}; "
        f"`sitegen verify {result.directory}` checks it, `sitegen build` publishes it"
    )
