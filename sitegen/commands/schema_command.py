"""``sitegen schema``: the JSON Schemas of plans and records, for editors and other tools."""

from __future__ import annotations

import argparse


def write_schemas(args: argparse.Namespace) -> None:
    """Write the schemas into ``--out``, one path printed per file."""
    from sitegen.pages.schema import write_json_schemas

    for path in write_json_schemas(args.out):
        print(path)
