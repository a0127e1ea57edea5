"""Reading a campaign back: its plan, records, annotations and registration, with every
problem collected as an ``Issue`` naming the file, the record and the field. Writing is
``records.store``; checking a copy against its manifest is ``records.verify``."""

from __future__ import annotations

import hashlib
import json
import os
import sys
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping
from contextlib import suppress
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import BinaryIO

import yaml
from pydantic import ValidationError

from sitegen.errors import Issue, one_line, pydantic_issues
from sitegen.models import StrictModel
from sitegen.plan.models import Plan, SpeculativeSpec
from sitegen.records.annotations import ANNOTATIONS_FILE, Annotations
from sitegen.records.layout import (
    CAMPAIGNS_DIR,
    MANIFEST_FILE,
    PLAN_FILE,
    RECORDS_FILE,
    check_skipped,
)
from sitegen.records.models import (
    RECORD_SCHEMA_VERSION,
    Manifest,
    Provenance,
    TrialRecord,
)
from sitegen.records.verify import campaign_files, killed_tail

UNREADABLE = "unreadable"
"""Rule id of a line of ``records.jsonl`` that is not a JSON object: its campaign cannot
be read as a whole."""


@dataclass(frozen=True)
class Campaign:
    """A campaign read back from disk: its plan and its records in file order.

    ``records`` are lean: the prompt, answer and thinking texts are left out so a build
    holds 40,000 records in bounded memory. ``full_record`` and ``iter_full_records`` read
    them back from ``records.jsonl`` when a page or a download needs the texts.
    """

    directory: Path
    plan: Plan
    plan_sha256: str
    records: list[TrialRecord]
    annotations: Annotations
    """Caveat metadata (defaults when the campaign has no annotations file)."""
    record_lines: tuple[int, ...] = ()
    """Line number in ``records.jsonl`` of each record (parallel to ``records``)."""
    record_offsets: tuple[int, ...] = ()
    """Byte offset in ``records.jsonl`` of each record (parallel to ``records``)."""
    manifest_registered_at: datetime | None = None
    """The registration the manifest records (``None``: a campaign written before it was
    recorded, or no readable manifest, which C-SIGNED reports)."""
    prompt_sha256: Mapping[tuple[str, str, int], str] = field(default_factory=dict)
    """SHA-256 of each record's prompt text by (campaign id, trial id, attempt): the lean
    records leave the text out, and comparisons match inputs by it."""

    @property
    def registered_at(self) -> datetime | None:
        """When the plan was registered: the manifest's ``registered_at``, or for a campaign
        written before it was recorded the first record's start (the plan file precedes
        it; see ``registration_recorded``)."""
        if self.manifest_registered_at is not None:
            return self.manifest_registered_at
        starts = []
        for record in self.records:
            with suppress(ValueError):  # C-PLANNED names a start that is not a timestamp
                starts.append(utc_time(record.started_at))
        return min(starts) if starts else None

    @property
    def registration_recorded(self) -> bool:
        """Whether the manifest recorded the registration (else it is the first record's
        start, which pages state)."""
        return self.manifest_registered_at is not None

    @property
    def campaign_id(self) -> str:
        return self.directory.name

    @property
    def records_path(self) -> Path:
        return self.directory / RECORDS_FILE

    @property
    def annotations_path(self) -> Path:
        return self.directory / ANNOTATIONS_FILE

    def record_location(self, index: int) -> str:
        """``<records.jsonl>:<line> (trial <id>)`` of the record at ``index``."""
        line = self.record_lines[index] if index < len(self.record_lines) else "?"
        return f"{self.records_path}:{line} (trial {self.records[index].trial_id})"

    def full_record(self, index: int) -> TrialRecord:
        """The record at ``index`` with its texts, read back from ``records.jsonl``."""
        with self.records_path.open("rb") as handle:
            handle.seek(self.record_offsets[index])
            return TrialRecord.model_validate_json(handle.readline())

    def iter_full_records(self, indices: Iterable[int] | None = None) -> Iterator[TrialRecord]:
        """The records (all, or those at ``indices`` in that order) with their texts, one at a
        time."""
        order = range(len(self.records)) if indices is None else indices
        with self.records_path.open("rb") as handle:
            for index in order:
                handle.seek(self.record_offsets[index])
                yield TrialRecord.model_validate_json(handle.readline())


def campaign_directories(data_dir: Path) -> list[Path]:
    """The campaign directories under ``data_dir/campaigns``, sorted by name."""
    campaigns_dir = data_dir / CAMPAIGNS_DIR
    if not campaigns_dir.is_dir():
        return []
    return sorted(p for p in campaigns_dir.iterdir() if p.is_dir())


def read_campaigns(
    data_dir: Path, skip: Collection[str] = ()
) -> tuple[list[Campaign], list[Issue]]:
    """Every campaign under ``data_dir/campaigns`` but those named in ``skip`` (directory
    names; raises ``UsageError`` for a name that is not there), with every problem found
    reading them."""
    check_skipped(data_dir, skip)
    directories = campaign_directories(data_dir)
    if not directories:
        where = data_dir / CAMPAIGNS_DIR
        return [], [Issue(str(where), "no campaign found; run 'sitegen measure' first", "data")]
    issues: list[Issue] = []
    campaigns = []
    for directory in directories:
        if directory.name in skip:
            continue  # left out by the command line: not even read
        if directory.is_symlink():
            # A campaign is published from data/ itself: a link could point anywhere.
            issues.append(
                Issue(
                    str(directory),
                    f"a symbolic link (to {os.readlink(directory)}); copy the campaign into "
                    f"{data_dir / CAMPAIGNS_DIR} and check it with 'sitegen verify'",
                    "data",
                )
            )
        elif not _published(directory / ANNOTATIONS_FILE):
            continue  # left out by its annotations: its records are not even read
        elif (campaign := read_campaign(directory, issues)) is not None:
            campaigns.append(campaign)
    return campaigns, issues


def _published(annotations_path: Path) -> bool:
    """Whether a campaign's annotations leave it published (a missing or unreadable file
    does: reading the campaign reports what is wrong with it)."""
    issues: list[Issue] = []
    annotations = _read_annotations(annotations_path, issues)
    return annotations.publish or bool(issues)


def read_campaign(directory: Path, issues: list[Issue]) -> Campaign | None:
    """Read one campaign, appending every problem to ``issues``. A campaign that cannot be
    read as a whole (nothing in it, no plan, what a stopped measure left at the end of its
    records, an unreadable line) is one issue that names the cure, and ``None``."""
    leave_out = f"or leave it out with --skip {directory.name}"
    if not campaign_files(directory) and not (directory / MANIFEST_FILE).exists():
        issues.append(
            Issue(
                str(directory),
                "an empty campaign directory (a measure stopped before writing its plan "
                f"leaves one); remove it, {leave_out}",
                "data",
            )
        )
        return None
    plan_path = directory / PLAN_FILE
    try:
        plan_bytes = plan_path.read_bytes()
        plan = Plan.model_validate_json(plan_bytes)
    except FileNotFoundError:
        issues.append(
            Issue(
                str(plan_path),
                "missing plan file; copy the campaign again from the host that measured it, "
                + leave_out,
                "data",
            )
        )
        return None
    except ValidationError as exc:
        issues.extend(pydantic_issues(exc, str(plan_path)))
        return None
    # The registered plan is the file's bytes: its hash stays valid when the plan model
    # later gains optional fields.
    expected_hash = hashlib.sha256(plan_bytes).hexdigest()
    if not directory.name.endswith(f"-{expected_hash[:12]}"):
        issues.append(
            Issue(
                str(directory),
                f"directory name does not end with the plan hash '{expected_hash[:12]}'; "
                "the plan was changed after the campaign started",
                "data",
            )
        )
    manifest = _read_manifest(directory / MANIFEST_FILE)
    tail = killed_tail(directory, manifest) if manifest is not None else None
    if tail is not None:
        issues.append(
            Issue(tail.location(directory), f"{tail.cure(directory)} ({leave_out})", "data")
        )
        return None
    lean = _LeanRecords()
    record_issues: list[Issue] = []
    records, lines, offsets = _read_records(directory / RECORDS_FILE, record_issues, lean)
    unreadable = [issue for issue in record_issues if issue.rule == UNREADABLE]
    if unreadable:
        first = unreadable[0]
        more = f" (and {len(unreadable) - 1} more such line(s))" if len(unreadable) > 1 else ""
        issues.append(
            Issue(
                first.location,
                f"{first.message}{more}; repair {RECORDS_FILE} from a copy on the host that "
                f"measured it (check it with 'sitegen verify'), {leave_out}",
                "data",
            )
        )
        return None
    issues.extend(record_issues)
    annotations = _read_annotations(directory / ANNOTATIONS_FILE, issues)
    return Campaign(
        directory,
        plan,
        expected_hash,
        records,
        annotations,
        tuple(lines),
        tuple(offsets),
        _manifest_registration(manifest, directory / MANIFEST_FILE, issues),
        lean.prompt_sha256,
    )


def _read_manifest(path: Path) -> Manifest | None:
    """The manifest; ``None`` without a readable one (C-SIGNED reports why)."""
    try:
        return Manifest.model_validate_json(path.read_bytes())
    except (OSError, ValidationError):
        return None


def _manifest_registration(
    manifest: Manifest | None, path: Path, issues: list[Issue]
) -> datetime | None:
    """The manifest's ``registered_at``; ``None`` without one (a missing or unreadable
    manifest is C-SIGNED's to report)."""
    if manifest is None or manifest.registered_at is None:
        return None
    try:
        return utc_time(manifest.registered_at)
    except ValueError:
        issues.append(
            Issue(
                f"{path} → registered_at",
                f"'{manifest.registered_at}' is not an ISO 8601 timestamp",
                "data",
            )
        )
        return None


def utc_time(text: str) -> datetime:
    """An ISO 8601 timestamp as an aware datetime (one without a zone is UTC)."""
    moment = datetime.fromisoformat(text)
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def _read_annotations(path: Path, issues: list[Issue]) -> Annotations:
    if not path.exists():
        return Annotations()
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        return Annotations.model_validate(raw)
    except yaml.YAMLError as exc:
        issues.append(Issue(str(path), f"not valid YAML: {one_line(exc)}", "data"))
    except ValidationError as exc:
        issues.extend(pydantic_issues(exc, str(path)))
    return Annotations()


def _read_records(
    path: Path, issues: list[Issue], lean: _LeanRecords
) -> tuple[list[TrialRecord], list[int], list[int]]:
    """Every valid record of ``records.jsonl``, lean (see ``Campaign``), with its line number
    and byte offset; every problem becomes an issue. The file is read line by line."""
    try:
        handle = path.open("rb")
    except FileNotFoundError:
        issues.append(Issue(str(path), "missing records file", "data"))
        return [], [], []
    except OSError as exc:
        issues.append(Issue(str(path), f"cannot read: {exc.strerror or exc}", "data"))
        return [], [], []
    offsets: list[int] = []
    with handle:
        # Binary lines split on b"\n" only: answer texts may hold U+2028 or U+0085.
        lines = _numbered_lines(handle, offsets)
        records, numbers, problems = parse_records_from(lines, path, lean.prepare, lean.keep)
    issues.extend(problems)
    by_line = dict(zip(range(1, len(offsets) + 1), offsets, strict=True))
    return records, numbers, [by_line[n] for n in numbers]


def _numbered_lines(handle: BinaryIO, offsets: list[int]) -> Iterator[bytes]:
    offset = 0
    for line in handle:
        offsets.append(offset)
        offset += len(line)
        yield line


class _LeanRecords:
    """Prepares record lines to be kept without their texts, sharing one object for equal
    provenance and speculative values (most records of a campaign have the
    same): a few KB per record instead of every text."""

    _SHARED = {"provenance": Provenance, "speculative": SpeculativeSpec}
    _TEXTS = ("prompt", "text", "reasoning_text")
    _REPEATED = ("campaign_id", "plan_sha256", "condition_id", "input_id")
    """Strings most records share: one interned copy instead of one per record."""

    def __init__(self) -> None:
        self._shared: dict[tuple[str, str], StrictModel] = {}
        self._fields_sets: dict[frozenset[str], set[str]] = {}
        self.prompt_sha256: dict[tuple[str, str, int], str] = {}
        """What is kept of the prompts (``Campaign.prompt_sha256``)."""

    def prepare(self, raw: dict) -> dict:
        """``raw`` ready to validate as a lean record; a field that does not validate on its
        own is left as it is, for the record's validation to report where it is."""
        lean = dict(raw)
        prompt = raw.get("prompt")
        if isinstance(prompt, str):
            key = (str(raw.get("campaign_id")), str(raw.get("trial_id")), raw.get("attempt", 1))
            self.prompt_sha256[key] = hashlib.sha256(prompt.encode("utf-8")).hexdigest()
        for name in self._TEXTS:
            if isinstance(lean.get(name), str):
                lean[name] = ""
        for name in self._REPEATED:
            if isinstance(lean.get(name), str):
                lean[name] = sys.intern(lean[name])
        for name, model in self._SHARED.items():
            value = lean.get(name)
            if not isinstance(value, dict):
                continue
            key = (name, json.dumps(value, sort_keys=True))
            if key not in self._shared:
                try:
                    self._shared[key] = model.model_validate(value)
                except ValidationError:
                    continue
            lean[name] = self._shared[key]
        return lean

    def keep(self, record: TrialRecord) -> TrialRecord:
        """``record`` with its per-instance sets of set fields replaced by shared ones:
        pydantic keeps one set per model instance (2 KB for a record), and these never
        change."""
        for model in (
            record,
            record.metrics,
            record.sampling,
            record.round,
            *record.peak_memory,
            *record.telemetry,
        ):
            if model is not None:
                fields = frozenset(model.__pydantic_fields_set__)
                # A set, as pydantic expects; copies (model_copy) copy it before changing it.
                shared = self._fields_sets.setdefault(fields, set(fields))
                object.__setattr__(model, "__pydantic_fields_set__", shared)
        return record


def parse_records(data: bytes, path: Path) -> tuple[list[TrialRecord], list[int], list[Issue]]:
    """The valid records of ``records.jsonl`` bytes with their line numbers, and an issue
    for each invalid line, each repeated attempt of a trial and each attempt after an ok
    one (a trial with an ok attempt is never run again)."""
    # Split on newline bytes only: answer texts may hold U+2028 or U+0085, which JSON
    # writes raw.
    return parse_records_from(iter(data.split(b"\n")), path)


def parse_records_from(
    lines: Iterator[bytes],
    path: Path,
    prepare: Callable[[dict], dict] = lambda raw: raw,
    keep: Callable[[TrialRecord], TrialRecord] = lambda record: record,
) -> tuple[list[TrialRecord], list[int], list[Issue]]:
    """``parse_records`` over lines as they are read; ``prepare`` turns each line's JSON
    object into what is validated, ``keep`` each valid record into what is kept (e.g. a
    lean record)."""
    records: list[TrialRecord] = []
    numbers: list[int] = []
    issues: list[Issue] = []
    seen: dict[tuple[str, int], int] = {}
    ok_line: dict[str, int] = {}
    for number, raw_line in enumerate(lines, start=1):
        if not raw_line.strip():
            continue
        where = f"{path}:{number}"
        try:
            raw = json.loads(raw_line.decode("utf-8"))
        except UnicodeDecodeError as exc:
            reason = f"not valid UTF-8 ({exc.reason} at byte {exc.start + 1})"
            issues.append(Issue(where, reason, UNREADABLE))
            continue
        except json.JSONDecodeError as exc:
            # Some messages end in "at" already ("Invalid control character at").
            reason = f"not valid JSON ({exc.msg.removesuffix(' at')} at column {exc.colno})"
            issues.append(Issue(where, reason, UNREADABLE))
            continue
        if not isinstance(raw, dict):
            issues.append(Issue(where, "a record must be a JSON object", UNREADABLE))
            continue
        trial = raw.get("trial_id", "?")
        where = f"{path}:{number} (trial {trial})"
        version = raw.get("schema_version")
        if version != RECORD_SCHEMA_VERSION:
            issues.append(
                Issue(
                    f"{where} → schema_version",
                    f"unknown record schema_version {version!r}; "
                    f"this sitegen reads version {RECORD_SCHEMA_VERSION}",
                )
            )
            continue
        try:
            record = TrialRecord.model_validate(prepare(raw))
        except ValidationError as exc:
            issues.extend(pydantic_issues(exc, where))
            continue
        key = (record.trial_id, record.attempt)
        if key in seen:
            issues.append(
                Issue(
                    f"{where} → attempt",
                    f"duplicate of line {seen[key]}; each attempt of a trial is recorded once",
                    "data",
                )
            )
        elif record.trial_id in ok_line:
            issues.append(
                Issue(
                    f"{where} → attempt",
                    f"the trial already succeeded on line {ok_line[record.trial_id]}; "
                    "a trial with an ok attempt is never run again",
                    "data",
                )
            )
        seen.setdefault(key, number)
        if record.status == "ok":
            ok_line.setdefault(record.trial_id, number)
        records.append(keep(record))
        numbers.append(number)
    return records, numbers, issues


# --- verifying against the manifest ------------------------------------------------------
