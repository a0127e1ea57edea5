"""``sitegen init``: a new project (``commands.init_project``), and what to run in it."""

from __future__ import annotations

import argparse


def init(args: argparse.Namespace) -> None:
    """Write the project into ``DIR``, one path printed per file, then the next steps."""
    from sitegen.commands.init_project import init_project

    for path in init_project(args.directory):
        print(path)
    print(
        f"project {args.directory}: run `sitegen measure` and `sitegen build` in it "
        "(see its README.md)"
    )
