"""``sitegen check``: every stage of a build but publishing, nothing written; with
``--strict`` a warning fails it too (a CI gate before publishing)."""

from __future__ import annotations

import argparse
import sys

from sitegen.commands.exit_status import EXIT_ERROR, EXIT_OK


def check(args: argparse.Namespace) -> int:
    """Render the site of ``--data`` and ``--project`` in memory and say what passed, each
    warning and each campaign left out; ``EXIT_ERROR`` on a warning under ``--strict``."""
    from sitegen.commands.build import render_site
    from sitegen.statistics.summary_warnings import summary_warnings
    from sitegen.validation.warnings import project_warnings

    project = args.project.resolve()
    checked = render_site(args.data, project, args.skip)
    checked.scratch.cleanup()  # nothing is written: the downloads were made to be checked
    pages = sum(1 for path in checked.docs if path.endswith(".md"))
    print(
        f"ok: {len(checked.reports)} campaign(s), {checked.records} records, {pages} pages "
        "pass validation and the caveat rules (nothing written)"
    )
    warnings = project_warnings(project) + summary_warnings(checked.reports, checked.comparisons)
    for issue in warnings:
        print(f"warning: {issue}")
    # Listed on the changelog and the method pages: said here too.
    for entry in checked.left_out:
        why = entry.reason.en if entry.reason else "no reason recorded"
        print(f"left out: campaign {entry.campaign_id} ({entry.cause}): {why}")
    if warnings and args.strict:
        print(f"error: {len(warnings)} warning(s), and --strict fails on any", file=sys.stderr)
        return EXIT_ERROR
    return EXIT_OK
