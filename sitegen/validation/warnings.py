"""Warnings: what a site publishes correctly, but rarely as its author meant. Each is an
``Issue`` of severity ``warning`` with the rule or topic it concerns; ``sitegen check``
prints them after its verdict and ``sitegen check --strict`` fails on them.

Validation's own are the project's (its key and palette); the statistics add theirs about
each computed summary and comparison (``statistics.summary_warnings``)."""

from __future__ import annotations

from pathlib import Path

from sitegen.core.errors import Issue
from sitegen.core.signing import PUBLIC_KEY_FILE, undeclared_key
from sitegen.core.site_settings import read_site_settings
from sitegen.validation.contrast import palette_warning


def warning(location: str, message: str, topic: str) -> Issue:
    return Issue(location, message, topic, "warning")


def project_warnings(project_dir: Path) -> list[Issue]:
    """An undeclared signing key, and a palette whose text fails WCAG AA contrast."""
    issues = []
    if declaration := undeclared_key(project_dir):
        issues.append(
            warning(
                str(project_dir / PUBLIC_KEY_FILE),
                f"not declared in {project_dir / 'mkdocs.yml'}: add `{declaration}` to it, so "
                "that a missing or replaced key file is refused",
                "C-SIGNED",
            )
        )
    palette = read_site_settings(project_dir).palette
    if palette and (text := palette_warning(palette.primary, palette.accent)):
        location, _, message = text.partition(": ")  # "mkdocs.yml → palette: …"
        issues.append(warning(location, message, "contrast"))
    return issues
