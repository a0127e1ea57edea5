"""The campaigns a version does not publish, each with why: nothing is left out unsaid.

A campaign is left out by its annotations (``publish: false``, with its
``unpublished_reason``), by the command line (``--skip NAME=REASON``), or was discarded:
registered by ``measure`` (``data/registry.jsonl``) and no longer in ``data/campaigns/``,
e.g. deleted and its plan measured again, which registers a new campaign with a new id.
The site lists them all on the version's changelog, and those of a report's plan on its
method page (``left_out()``), with their campaign id, plan name and reason.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from pydantic import ValidationError

from sitegen.core.errors import Issue, error_message
from sitegen.core.text import Bilingual
from sitegen.records.annotations import ANNOTATIONS_FILE, read_annotations
from sitegen.records.layout import IMPORT_FILE, PLAN_FILE, REGISTRY_FILE, campaign_directories
from sitegen.records.registrations import read_registry

Cause = Literal["annotations", "skip", "discarded"]


@dataclass(frozen=True)
class LeftOut:
    """A registered campaign that a version does not publish."""

    campaign_id: str
    """The campaign's id (its directory's name)."""
    plan_name: str | None
    """Its plan's name (an imported campaign's name); ``None`` when its plan cannot be read
    (a campaign left out because it cannot be read, say)."""
    cause: Cause
    """``annotations`` (``publish: false``), ``skip`` (``--skip``) or ``discarded``
    (registered, no longer in the data directory)."""
    reason: Bilingual | None
    """The author's reason: ``unpublished_reason``, or the ``--skip`` reason (one text, shown
    as written in both languages); ``None`` for a discarded campaign, which has none."""
    where: str
    """Where the reason was given (the annotations file, ``--skip NAME``), for issues."""
    measured_again_as: tuple[str, ...] = ()
    """A discarded campaign: the campaigns of the same plan in the data directory now."""


def skip_reasons(skip: Collection[str] | Mapping[str, str]) -> dict[str, str | None]:
    """Each campaign directory ``--skip`` leaves out, with its reason (``None``: a caller
    that passed names alone, which ``left_out_campaigns`` refuses)."""
    if isinstance(skip, Mapping):
        return dict(skip)
    return dict.fromkeys(skip)


def left_out_campaigns(
    data_dir: Path, skip: Collection[str] | Mapping[str, str] = ()
) -> tuple[list[LeftOut], list[Issue]]:
    """Every campaign of ``data_dir`` a build leaves out, and every discarded one the
    registry names, sorted by campaign id; with the problems of their reasons (a ``--skip``
    without one, blank or with a control character). A campaign whose annotations cannot be
    read is not left out: reading it reports what is wrong."""
    issues: list[Issue] = []
    reasons = skip_reasons(skip)
    found: list[LeftOut] = []
    directories = campaign_directories(data_dir)
    for directory in directories:
        if directory.name in reasons:
            where = f"--skip {directory.name}"
            reason = _skip_reason(where, reasons[directory.name], issues)
            found.append(LeftOut(directory.name, _plan_name(directory), "skip", reason, where))
        elif not directory.is_symlink() and (directory / ANNOTATIONS_FILE).is_file():
            path = directory / ANNOTATIONS_FILE
            problems: list[Issue] = []
            annotations = read_annotations(path, problems)
            if not problems and not annotations.publish:
                found.append(
                    LeftOut(
                        directory.name,
                        _plan_name(directory),
                        "annotations",
                        annotations.unpublished_reason,
                        f"{path} → unpublished_reason",
                    )
                )
    present = {directory.name for directory in directories}
    for registration in read_registry(data_dir, issues):
        if registration.campaign_id in present:
            continue
        hash_tail = f"-{registration.plan_sha256[:12]}"
        again = tuple(
            name
            for name in sorted(present)
            if name.startswith(f"{registration.plan_name}-") and name.endswith(hash_tail)
        )
        found.append(
            LeftOut(
                registration.campaign_id,
                registration.plan_name,
                "discarded",
                None,
                str(data_dir / REGISTRY_FILE),
                again,
            )
        )
    return sorted(found, key=lambda entry: entry.campaign_id), issues


def _skip_reason(where: str, text: str | None, issues: list[Issue]) -> Bilingual | None:
    if text is None or not text.strip():
        issues.append(
            Issue(
                where,
                "needs a reason, which the site shows where it lists the campaign as left "
                "out: --skip NAME=REASON",
                "data",
            )
        )
        return None
    try:
        return Bilingual(ja=text, en=text)
    except ValidationError as exc:
        issues.append(Issue(where, f"its reason: {error_message(exc.errors()[0])}", "data"))
        return None


def _plan_name(directory: Path) -> str | None:
    """The name in a campaign's ``plan.json`` (an imported campaign's ``import.json``),
    read alone: the campaign may be left out because it cannot be read."""
    for file in (PLAN_FILE, IMPORT_FILE):
        try:
            data = json.loads((directory / file).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        name = data.get("name") if isinstance(data, dict) else None
        if isinstance(name, str) and name:
            return name
    return None
