"""``sitegen build``: publish the records as a new version of the site (``commands.build``),
unless nothing changed since the site in place was built.

An unchanged site is known before the renderer (slow to import) is imported: the build
pipeline is imported only when there is something to build.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from sitegen.core.errors import SitegenError, UsageError


def build(args: argparse.Namespace) -> None:
    """Build the site of ``--data`` and ``--project`` into ``--site``; one line says what
    happened, warnings follow on stderr."""
    from sitegen.core.project import require_project
    from sitegen.publish.archive import check_label
    from sitegen.publish.inputs import unchanged_build

    started = time.monotonic()
    project = args.project.resolve()
    require_project(project)
    if args.version is not None:
        try:
            check_label(args.version)
        except SitegenError as exc:  # a refused argument, like --skip's
            raise UsageError(f"--version: {exc}") from None
    inputs_sha256, marker = unchanged_build(args.data, args.site, project, args.version, args.skip)
    if marker is not None:
        outcome, version, campaigns, records = (
            "up-to-date",
            marker.version,
            marker.campaigns,
            marker.records,
        )
    else:
        from sitegen.commands.build import build_site

        result = build_site(
            args.data, args.site, project, args.version, inputs_sha256, skip=args.skip
        )
        outcome, version, campaigns, records = (
            result.outcome,
            result.version,
            result.campaigns,
            result.records,
        )
    what = {
        "published": f"version {version} published",
        "unchanged": f"version {version} was already published with the same content",
        "up-to-date": f"nothing changed since version {version} was built",
    }[outcome]
    print(
        f"site {args.site}: {what} ({campaigns} campaign(s), {records} records, "
        f"{time.monotonic() - started:.1f} s)"
    )
    if outcome != "up-to-date":  # nothing was rendered: said when it was
        _warn_palette(project)


def _warn_palette(project: Path) -> None:
    """A palette whose text fails WCAG AA contrast: one warning line (nothing refused)."""
    from sitegen.core.site_settings import read_site_settings
    from sitegen.validation.contrast import palette_warning

    palette = read_site_settings(project).palette
    if palette and (warning := palette_warning(palette.primary, palette.accent)):
        print(f"warning: {warning}", file=sys.stderr)
