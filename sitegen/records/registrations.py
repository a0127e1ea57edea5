"""Which campaigns were ever registered: ``data/registry.jsonl``, one line per campaign
``measure`` registered (appended when its plan is first written, never rewritten), and
the registration nonce that makes every registration a campaign of its own.

A campaign's id is its plan's name and hash and, since nonces were introduced, a random
nonce drawn at registration (``<plan name>-<nonce>-<12 hex>``): a plan measured again
after its campaign was deleted is a new campaign with a new id, and the registry still
names the deleted one, which the site then lists as discarded (``records.left_out``).
Campaigns registered before keep their id (``<plan name>-<12 hex>``) and are resumed by it.

``measure`` finds the campaign of a plan to resume by its directory: the one directory of
that plan's name and hash under ``data/campaigns/`` (with or without a nonce). A plan that
declares a series (``Plan.series``) has one campaign per value of its factor, each
registered by ``measure --new-campaign``: ``measure`` resumes the latest registered one.
Finding it and creating a new one happen under a lock on the registry, so two ``measure``
of one plan started together find the same directory (and the second is refused by its
lock).
"""

from __future__ import annotations

import fcntl
import os
import re
import secrets
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from pydantic import Field, ValidationError

from sitegen.core.errors import (
    IntegrityError,
    Issue,
    StorageError,
    UsageError,
    one_line,
    pydantic_issues,
)
from sitegen.core.strict_model import StrictModel
from sitegen.plan.plan_file import plan_sha256
from sitegen.plan.plan_models import Plan
from sitegen.records.layout import MANIFEST_FILE, REGISTRY_FILE

NONCE_HEX = 8
"""Hex digits of a registration nonce (32 random bits)."""
NONCE = re.compile(rf"[0-9a-f]{{{NONCE_HEX}}}")


class Registration(StrictModel):
    """One campaign as ``measure`` registered it (a line of ``data/registry.jsonl``)."""

    campaign_id: str = Field(min_length=1)
    """The campaign's id, its directory under ``data/campaigns/``."""
    plan_name: str = Field(min_length=1)
    """Name of the registered plan (the report's address)."""
    plan_sha256: str = Field(pattern=r"^[0-9a-f]{64}$")
    """SHA-256 of the registered plan."""
    registered_at: str
    """When the campaign was registered (UTC, ISO 8601), as its manifest records it."""


def new_nonce() -> str:
    """A fresh registration nonce: ``NONCE_HEX`` random hex digits."""
    return secrets.token_hex(NONCE_HEX // 2)


def nonce_of(directory_name: str, plan: Plan) -> str | None:
    """The nonce in a campaign directory's name for ``plan`` (``None``: a campaign
    registered before nonces, named ``<plan name>-<12 hex>``). Raises ``ValueError`` for a
    name that is not one of ``plan``'s campaigns."""
    head, tail = f"{plan.name}-", f"-{plan_sha256(plan)[:12]}"
    if directory_name == f"{plan.name}{tail}":
        return None
    middle = directory_name.removeprefix(head).removesuffix(tail)
    if (
        directory_name.startswith(head)
        and directory_name.endswith(tail)
        and NONCE.fullmatch(middle)
    ):
        return middle
    raise ValueError(f"{directory_name} is not a campaign of plan {plan.name}")


def find_campaign(campaigns_dir: Path, plan: Plan, new: bool = False) -> Path | None:
    """The campaign directory of ``plan`` under ``campaigns_dir`` that ``measure`` opens
    (``None``: the plan is registered anew, as a new campaign). ``new``: the next campaign
    of a series (``measure --new-campaign``); only a directory left by a kill before its
    campaign began is taken over. Raises ``UsageError`` when ``measure`` cannot tell which
    campaign to resume, or ``new`` is asked of a plan without a series."""
    found = _plan_directories(campaigns_dir, plan)
    if plan.series is not None:
        return _series_campaign(campaigns_dir, plan, found, new)
    if new:
        raise UsageError(
            f"plan {plan.name} declares no series, so it has one campaign, resumed by every "
            "measure: declare `series: {factor: ...}` in the plan to measure it again as a "
            "campaign of its own"
        )
    if len(found) > 1:
        names = ", ".join(sorted(path.name for path in found))
        raise UsageError(
            f"{campaigns_dir}: several campaigns of plan {plan.name} ({names}); measure "
            "resumes one: move the others out of the data directory"
        )
    return found[0] if found else None


def _plan_directories(campaigns_dir: Path, plan: Plan) -> list[Path]:
    """Every campaign directory of ``plan`` (with or without a nonce), sorted by name."""
    if not campaigns_dir.is_dir():
        return []
    found = []
    for path in campaigns_dir.iterdir():
        try:
            nonce_of(path.name, plan)
        except ValueError:
            continue
        if path.is_dir():
            found.append(path)
    return sorted(found)


def _series_campaign(campaigns_dir: Path, plan: Plan, found: list[Path], new: bool) -> Path | None:
    """The campaign of a series plan to open: one a kill left before its first manifest
    (taken over, whether or not ``new``: it never began), else none when ``new``, else the
    latest registered (registry order)."""
    unstarted = [path for path in found if not (path / MANIFEST_FILE).exists()]
    if unstarted:
        return unstarted[0]
    if new:
        return None
    if len(found) <= 1:
        return found[0] if found else None
    issues: list[Issue] = []
    order = {
        registration.campaign_id: position
        for position, registration in enumerate(read_registry(campaigns_dir.parent, issues))
    }
    if issues:
        raise IntegrityError(
            f"{issues[0].location}: {issues[0].message}; measure reads the registry to tell "
            f"the latest campaign of series plan {plan.name} (repair or remove that line)"
        )
    unregistered = [path.name for path in found if path.name not in order]
    if unregistered:
        raise UsageError(
            f"{campaigns_dir}: campaign(s) {', '.join(unregistered)} of series plan "
            f"{plan.name} are not in {campaigns_dir.parent / REGISTRY_FILE}, so measure cannot "
            "tell the latest campaign to resume: move the others out of the data directory"
        )
    return max(found, key=lambda path: order[path.name])


@contextmanager
def registry_lock(data_dir: Path) -> Iterator[None]:
    """Hold the registry's lock (waiting for it: it is held only while a campaign directory
    is found or created, and while a line is appended)."""
    path = data_dir / REGISTRY_FILE
    try:
        data_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise StorageError.from_os_error(exc, "create the data directory", data_dir) from exc
    try:
        handle = path.open("a")
    except OSError as exc:
        raise StorageError.from_os_error(exc, "open the registry", path) from exc
    with handle:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)


def append_registration(data_dir: Path, registration: Registration) -> None:
    """Append ``registration`` to the registry (one line, synced)."""
    path = data_dir / REGISTRY_FILE
    line = (registration.model_dump_json() + "\n").encode("utf-8")
    with registry_lock(data_dir):
        try:
            with path.open("ab") as handle:
                handle.write(line)
                handle.flush()
                os.fsync(handle.fileno())
        except OSError as exc:
            raise StorageError.from_os_error(exc, "append to the registry", path) from exc


def read_registry(data_dir: Path, issues: list[Issue]) -> list[Registration]:
    """Every campaign the registry names, once each (the first line of an id: a campaign
        taken over after a kill before its first record is registered again), in registration
        order; a missing registry names none. Every unreadable line but a last one without its
    line feed (what a kill while appending leaves) is appended to ``issues``."""
    path = data_dir / REGISTRY_FILE
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return []
    except (OSError, UnicodeDecodeError) as exc:
        issues.append(Issue(str(path), f"cannot be read: {one_line(exc)}", "data"))
        return []
    registrations: dict[str, Registration] = {}
    lines = text.split("\n")
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            registration = Registration.model_validate_json(line)
        except ValidationError as exc:
            if number == len(lines):
                continue  # a line torn by a kill while it was appended: never written whole
            issues.extend(pydantic_issues(exc, f"{path}:{number}"))
            continue
        registrations.setdefault(registration.campaign_id, registration)
    return list(registrations.values())
