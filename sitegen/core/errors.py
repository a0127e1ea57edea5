"""The one exception root: everything meant for the user is a SitegenError.

The CLI prints these as one message with no traceback (``--debug`` shows it).
"""

from __future__ import annotations

import re
import shutil
from dataclasses import dataclass
from typing import Literal

from pydantic import ValidationError
from pydantic_core import ErrorDetails


class SitegenError(Exception):
    """An error whose message is written for the user."""


class ConfigError(SitegenError):
    """A plan, option or configuration value is invalid."""


class UsageError(ConfigError):
    """A command-line argument names something that is not there (the CLI exits 2, as for
    any argument it refuses)."""


class EngineError(SitegenError):
    """An engine could not be loaded or failed outside a single request."""


class StorageError(SitegenError):
    """A file or directory could not be read or written (disk full, permissions …)."""

    @classmethod
    def from_os_error(cls, exc: OSError, action: str, path: object = None) -> StorageError:
        """``cannot <action> <path>: <reason>`` from an ``OSError``."""
        where = path if path is not None else exc.filename
        return cls(f"cannot {action} {where}: {os_reason(exc)}")


def os_reason(exc: OSError) -> str:
    """Why the system refused, in its own words (``No space left on device``).
    ``shutil.copytree`` goes on after a file it cannot copy and then raises one
    ``shutil.Error`` listing every file with its message as text (a full disk refuses them
    all): the first file's reason stands for all of them."""
    failures = exc.args[0] if isinstance(exc, shutil.Error) and exc.args else None
    if isinstance(failures, list) and failures:
        reason = str(failures[0][-1])
        # "[Errno 28] No space left on device: '/path'" → "No space left on device"
        found = re.fullmatch(r"\[Errno \d+\] (.*?)(?:: '.*')?", reason, re.DOTALL)
        return found[1] if found else one_line(Exception(reason))
    return exc.strerror or one_line(exc)


class LockedError(SitegenError):
    """Another sitegen process holds the campaign or the site."""


class IntegrityError(SitegenError):
    """A campaign on disk does not match its manifest or holds an unreadable record, so
    ``measure`` refuses to append to it (and never re-signs it)."""


class BuildError(SitegenError):
    """The renderer failed; the previous site is untouched."""


class ArchiveError(SitegenError):
    """A published version would change, or the archive on disk is not as published."""


class MissingDependency(SitegenError):
    """An optional package is needed; the message names the install command."""

    def __init__(self, package: str, feature: str, install: str) -> None:
        super().__init__(f"{feature} needs the package '{package}'. Install it with: {install}")


@dataclass(frozen=True)
class Issue:
    """One validation finding with where it was found."""

    location: str
    """File, record and field, e.g. ``data/x/records.jsonl:3 (trial t01) → metrics.gen_tps``."""
    message: str
    """What is wrong and what to change."""
    rule: str = "schema"
    """The rule id (``schema``, ``C-TRUNC``, …)."""
    severity: Literal["error", "warning"] = "error"
    """``error``: nothing is published; ``warning``: the site is published as it is, and
    ``sitegen check --strict`` fails on it."""

    def __str__(self) -> str:
        return f"[{self.rule}] {self.location}: {self.message}"


class DataError(SitegenError):
    """Records or content failed validation; carries every issue found."""

    def __init__(self, issues: list[Issue]) -> None:
        self.issues = issues
        lines = [f"{len(issues)} problem(s) found; nothing was written:"]
        lines += [f"  {issue}" for issue in issues]
        super().__init__("\n".join(lines))


def error_message(error: ErrorDetails) -> str:
    """A pydantic error's message without pydantic's "Value error, " prefix."""
    return error["msg"].removeprefix("Value error, ")


def pydantic_issues(exc: ValidationError, where: str) -> list[Issue]:
    """One issue per pydantic error, located as ``where → field.path``."""
    return [
        Issue(
            f"{where} → {'.'.join(str(p) for p in error['loc']) or '(the whole file)'}",
            error_message(error),
        )
        for error in exc.errors()
    ]


def one_line(exc: BaseException) -> str:
    """An exception's message on one line (YAML and JSON parsers write several: the
    problem, then a quoted excerpt with a caret)."""
    mark = getattr(exc, "problem_mark", None)
    problem = getattr(exc, "problem", None)
    if problem and mark is not None:
        return f"{problem} at line {mark.line + 1}, column {mark.column + 1}"
    return " ".join(str(exc).split())
