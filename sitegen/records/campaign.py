"""Reading a campaign back: its plan, records, annotations and registration, with every
problem collected as an ``Issue`` naming the file, the record and the field. Writing is
``records.store``; checking a copy against its manifest is ``records.verify``."""

from __future__ import annotations

import hashlib
import json
import os
from array import array
from collections.abc import Collection, Iterable, Iterator
from contextlib import suppress
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import cached_property
from pathlib import Path
from typing import BinaryIO, ClassVar, Literal

import numpy as np
import pandas as pd
from pydantic import BaseModel, ConfigDict, ValidationError

from sitegen.core.errors import Issue, pydantic_issues
from sitegen.plan.plan_models import Plan
from sitegen.records.annotations import ANNOTATIONS_FILE, Annotations, read_annotations
from sitegen.records.imported_campaign import ImportedCampaign, read_imported_campaign
from sitegen.records.layout import (
    CAMPAIGNS_DIR,
    IMPORT_FILE,
    MANIFEST_FILE,
    PLAN_FILE,
    PUBLISHED_FILE,
    RECORDS_FILE,
    FileDigest,
    campaign_directories,
    check_skipped,
)
from sitegen.records.record_models import (
    RECORD_SCHEMA_VERSION,
    Manifest,
    PublishedManifest,
    TrialRecord,
)
from sitegen.records.table import RecordTable, TableBuilder, out_of_range
from sitegen.records.verify import campaign_files, killed_tail

UNREADABLE = "unreadable"
"""Rule id of a line of ``records.jsonl`` that is not a JSON object: its campaign cannot
be read as a whole."""


@dataclass(frozen=True)
class Campaign:
    """A campaign read back from disk: its plan and its records in file order.

    ``table`` holds the records as columns, without their prompt, answer and thinking
    texts, so a build holds 400,000 records in bounded memory; ``iter_full_records`` and
    ``iter_texts`` read them back from ``records.jsonl`` when a page or a download needs
    them.
    """

    directory: Path
    plan: Plan
    plan_sha256: str
    table: RecordTable
    annotations: Annotations
    """Caveat metadata (defaults when the campaign has no annotations file)."""
    manifest_registered_at: datetime | None = None
    """The registration the manifest records (``None``: a campaign written before it was
    recorded, or no readable manifest, which C-SIGNED reports)."""
    records_file: FileDigest | None = None
    """``records.jsonl`` as this read saw it, hashed while it was parsed: checking it
    against the manifest needs no second read (``None``: the file could not be read)."""
    published_as: PublishedManifest | None = None
    """The manifest of the report this campaign was re-imported from (``published.json``):
    its ``plan.json`` is that report's published plan, and ``plan_sha256`` the registered
    plan's hash the manifest states. ``None`` for a campaign as measured."""

    imported: ClassVar[Literal[False]] = False
    """Measured by sitegen (``ImportedCampaign`` is the other kind)."""

    @property
    def report_name(self) -> str:
        """Its report's address: ``reports/<plan name>/``. A campaign of a plan that
        declares a series (``Plan.series``) is one of several campaigns of that plan, so
        its address is its campaign id without the plan hash they share
        (``reports/<plan name>-<nonce>/``): each build of the series has a report of its
        own, at an address that does not move when the next build is measured."""
        if self.plan.series is None:
            return self.plan.name
        return self.campaign_id.removesuffix(f"-{self.plan_sha256[:12]}")

    @property
    def latest_time(self) -> datetime | None:
        """Start of its latest record (``latest_start``)."""
        return self.latest_start

    @property
    def rows(self) -> pd.DataFrame:
        """One row per record (``RecordTable.rows``)."""
        return self.table.rows

    def __len__(self) -> int:
        return len(self.table)

    @property
    def registered_at(self) -> datetime | None:
        """When the plan was registered: the manifest's ``registered_at``, or for a campaign
        written before it was recorded the first record's start (the plan file precedes
        it; see ``registration_recorded``)."""
        if self.manifest_registered_at is not None:
            return self.manifest_registered_at
        starts = []
        for started_at in set(self.rows["started_at"]):
            with suppress(ValueError):  # C-PLANNED names a start that is not a timestamp
                starts.append(utc_time(started_at))
        return min(starts) if starts else None

    @cached_property
    def latest_start(self) -> datetime | None:
        """Start of the campaign's latest record (``None``: it has none), found once (the
        version's date and the signature of the downloads both need it). One start at a
        time: a large campaign's starts as Python strings at once would be a build's peak
        of memory."""
        starts = (datetime.fromisoformat(start) for start in self.rows["started_at"].unique())
        return max(starts, default=None)

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
        rows = self.rows
        return (
            f"{self.records_path}:{rows['line'].iat[index]} (trial {rows['trial_id'].iat[index]})"
        )

    def iter_full_records(self, indices: Iterable[int] | None = None) -> Iterator[TrialRecord]:
        """The records (all, or those at ``indices`` in that order), whole, one at a time,
        read back from ``records.jsonl`` (validated when the campaign was read)."""
        for line in self._lines(range(len(self)) if indices is None else indices):
            yield self.published(TrialRecord.model_validate_json(line))

    def iter_published_lines(self) -> Iterator[bytes]:
        """Every record as published, one JSON line each, in file order: the line itself
        where it is exactly the record as sitegen writes it and publishing changes
        nothing in it, else the record read back, published and written again."""
        kept = self.line_kept_as_is(self.rows).to_numpy()
        for index, line in enumerate(self._lines(range(len(self)))):
            published = self.published_line(index, line) if kept[index] else None
            if published is None:
                record = self.published(TrialRecord.model_validate_json(line))
                published = (record.model_dump_json() + "\n").encode("utf-8")
            yield published

    def line_kept_as_is(self, rows: pd.DataFrame) -> pd.Series:
        """Per record, whether ``published_line`` may publish its line (else it is read
        back and written again)."""
        return rows["canonical"]

    def published_line(self, index: int, line: bytes) -> bytes | None:
        """The line of the record at ``index`` as published, or ``None`` where the
        record must be read back to publish it."""
        return line if line.endswith(b"\n") else line + b"\n"

    def iter_texts(self, indices: Iterable[int]) -> Iterator[dict[str, str | None]]:
        """The prompt, answer and thinking texts (``RecordTexts``) of the records at ``indices``,
        in that order, read back from ``records.jsonl`` (only the texts are parsed)."""
        for line in self._lines(indices):
            yield self.published_texts(RecordTexts.model_validate_json(line))

    def _lines(self, indices: Iterable[int]) -> Iterator[bytes]:
        """The ``records.jsonl`` lines of the records at ``indices``, in that order (the
        file is not opened for none)."""
        offsets = self.rows["offset"].to_numpy()
        order = list(indices)
        if not order:
            return
        with self.records_path.open("rb") as handle:
            for index in order:
                handle.seek(int(offsets[index]))
                yield handle.readline()

    def published(self, record: TrialRecord) -> TrialRecord:
        """``record`` as pages show it (redacted in a ``RedactedCampaign``)."""
        return record

    def published_texts(self, texts: RecordTexts) -> dict[str, str | None]:
        """A record's texts as pages show them (redacted in a ``RedactedCampaign``)."""
        return texts.model_dump()


class RecordTexts(BaseModel):
    """Reads only the texts of a record line (the other fields are skipped, not built)."""

    model_config = ConfigDict(extra="ignore")
    prompt: str
    text: str
    reasoning_text: str | None = None


AnyCampaign = Campaign | ImportedCampaign
"""A campaign a build publishes: measured by sitegen or imported from another tool's files
(``campaign.imported`` tells which); both have ``campaign_id``, ``report_name``,
``annotations``, ``directory`` and ``latest_time``."""


def read_campaigns(
    data_dir: Path, skip: Collection[str] = ()
) -> tuple[list[AnyCampaign], list[Issue]]:
    """Every campaign under ``data_dir/campaigns`` that its annotations publish, measured or
    imported, in directory order, but those named in ``skip`` (directory names; raises
    ``UsageError`` for a name that is not there), with every problem found reading them."""
    check_skipped(data_dir, skip)
    directories = campaign_directories(data_dir)
    if not directories:
        where = data_dir / CAMPAIGNS_DIR
        return [], [Issue(str(where), "no campaign found; run 'sitegen measure' first", "data")]
    issues: list[Issue] = []
    campaigns: list[AnyCampaign] = []
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
        elif (directory / IMPORT_FILE).is_file():
            if (imported := read_imported_campaign(directory, issues)) is not None:
                campaigns.append(imported)
        elif (campaign := read_campaign(directory, issues)) is not None:
            campaigns.append(campaign)
    return campaigns, issues


def _published(annotations_path: Path) -> bool:
    """Whether a campaign's annotations leave it published (a missing or unreadable file
    does: reading the campaign reports what is wrong with it)."""
    issues: list[Issue] = []
    annotations = read_annotations(annotations_path, issues)
    return annotations.publish or bool(issues)


def read_campaign(directory: Path, issues: list[Issue]) -> Campaign | None:
    """Read one campaign, appending every problem to ``issues``. A campaign that cannot be
    read as a whole (nothing in it, no plan, what a stopped measure left at the end of its
    records, an unreadable line) is one issue that names the cure, and ``None``."""
    leave_out = f"or leave it out with --skip {directory.name}=REASON"
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
    read_plan = _read_plan(directory / PLAN_FILE, leave_out, issues)
    if read_plan is None:
        return None
    plan, plan_bytes = read_plan
    # The registered plan is the file's bytes: its hash stays valid when the plan model
    # later gains optional fields.
    expected_hash = hashlib.sha256(plan_bytes).hexdigest()
    published_as = _read_published_as(directory / PUBLISHED_FILE, expected_hash, issues)
    if published_as is not None:
        expected_hash = published_as.registered_plan_sha256
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
    record_issues: list[Issue] = []
    table, records_file = _read_records(directory / RECORDS_FILE, record_issues)
    unreadable = [issue for issue in record_issues if issue.rule == UNREADABLE]
    if unreadable:
        issues.append(_unreadable_records(unreadable, leave_out))
        return None
    issues.extend(record_issues)
    annotations = read_annotations(directory / ANNOTATIONS_FILE, issues)
    return Campaign(
        directory,
        plan,
        expected_hash,
        table,
        annotations,
        _manifest_registration(manifest, directory / MANIFEST_FILE, issues),
        records_file,
        published_as,
    )


def _read_plan(path: Path, leave_out: str, issues: list[Issue]) -> tuple[Plan, bytes] | None:
    """A campaign's plan and the file's bytes (what its hash is taken of); ``None``, with
    the issue, when it is missing or not a plan."""
    try:
        plan_bytes = path.read_bytes()
        return Plan.model_validate_json(plan_bytes), plan_bytes
    except FileNotFoundError:
        issues.append(
            Issue(
                str(path),
                "missing plan file; copy the campaign again from the host that measured it, "
                + leave_out,
                "data",
            )
        )
    except ValidationError as exc:
        issues.extend(pydantic_issues(exc, str(path)))
    return None


def _unreadable_records(unreadable: list[Issue], leave_out: str) -> Issue:
    """One issue for the lines of ``records.jsonl`` that are not JSON objects: the first,
    how many more, and the cure."""
    first = unreadable[0]
    more = f" (and {len(unreadable) - 1} more such line(s))" if len(unreadable) > 1 else ""
    return Issue(
        first.location,
        f"{first.message}{more}; repair {RECORDS_FILE} from a copy on the host that "
        f"measured it (check it with 'sitegen verify'), {leave_out}",
        "data",
    )


def _read_published_as(
    path: Path, plan_sha256: str, issues: list[Issue]
) -> PublishedManifest | None:
    """A re-imported campaign's ``published.json`` (``None``: a campaign as measured); its
    plan must be the one it states."""
    try:
        published = PublishedManifest.model_validate_json(path.read_bytes())
    except FileNotFoundError:
        return None
    except OSError as exc:
        issues.append(Issue(str(path), f"cannot read: {exc.strerror or exc}", "data"))
        return None
    except ValidationError as exc:
        issues.extend(pydantic_issues(exc, str(path)))
        return None
    if published.plan_sha256 != plan_sha256:
        issues.append(
            Issue(
                str(path) + " → plan_sha256",
                f"{published.plan_sha256}, but plan.json's sha256 is {plan_sha256}",
                "data",
            )
        )
    return published


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


def _read_records(path: Path, issues: list[Issue]) -> tuple[RecordTable, FileDigest | None]:
    """Every valid record of ``records.jsonl`` as a table, and the file's digest; every
    problem becomes an issue. The file is read once, line by line, hashed as it is
    parsed."""
    table = TableBuilder()
    try:
        handle = path.open("rb")
    except FileNotFoundError:
        issues.append(Issue(str(path), "missing records file", "data"))
        return table.finish(), None
    except OSError as exc:
        issues.append(Issue(str(path), f"cannot read: {exc.strerror or exc}", "data"))
        return table.finish(), None
    reading = _HashedLines()
    with handle:
        # Binary lines split on b"\n" only: answer texts may hold U+2028 or U+0085.
        for number, record, line in iter_valid_records(reading.lines(handle), path, issues):
            if (value := out_of_range(line)) is not None:
                field, _, shown = value.partition(": ")
                issues.append(
                    Issue(
                        f"{path}:{number} (trial {record.trial_id}) → {field}",
                        f"{shown} is outside the 64-bit integer range (±9,223,372,036,854,775,807)",
                        "data",
                    )
                )
                continue
            table.add(record, line, number, reading.offsets[number - 1])
    records = table.finish()
    issues.extend(repeated_attempts(records.rows, path))
    return records, reading.digest()


class _HashedLines:
    """The lines of a file as read, with each line's byte offset, the file's hash and its
    count of non-blank lines."""

    def __init__(self) -> None:
        self.offsets = array("q")
        self._hash = hashlib.sha256()
        self._size = 0
        self._lines = 0

    def lines(self, handle: BinaryIO) -> Iterator[bytes]:
        for line in handle:
            self.offsets.append(self._size)
            self._size += len(line)
            self._hash.update(line)
            self._lines += bool(line.strip())
            yield line

    def digest(self) -> FileDigest:
        return FileDigest(self._hash.hexdigest(), self._size, self._lines)


def parse_records(
    lines: Iterable[bytes], path: Path
) -> tuple[list[TrialRecord], list[int], list[Issue]]:
    """The valid records of the lines of ``records.jsonl`` (split on newline bytes only:
    answer texts may hold U+2028 or U+0085, which JSON writes raw) with their line numbers,
    and an issue for each invalid line, each repeated attempt of a trial and each attempt
    after an ok one (a trial with an ok attempt is never run again)."""
    records: list[TrialRecord] = []
    numbers: list[int] = []
    issues: list[Issue] = []
    for number, record, _ in iter_records(lines, path, issues):
        records.append(record)
        numbers.append(number)
    return records, numbers, issues


def iter_records(
    lines: Iterable[bytes],
    path: Path,
    issues: list[Issue],
) -> Iterator[tuple[int, TrialRecord, bytes]]:
    """Each valid record of ``lines`` with its line number and line, as the lines are
    read; the problems ``parse_records`` reports are appended to ``issues``."""
    seen: dict[tuple[str, int], int] = {}
    ok_line: dict[str, int] = {}
    for number, record, raw_line in iter_valid_records(lines, path, issues):
        where = f"{path}:{number} (trial {record.trial_id})"
        key = (record.trial_id, record.attempt)
        if key in seen:
            issues.append(_duplicate(where, seen[key]))
        elif record.trial_id in ok_line:
            issues.append(_after_ok(where, ok_line[record.trial_id]))
        seen.setdefault(key, number)
        if record.status == "ok":
            ok_line.setdefault(record.trial_id, number)
        yield number, record, raw_line


def iter_valid_records(
    lines: Iterable[bytes], path: Path, issues: list[Issue]
) -> Iterator[tuple[int, TrialRecord, bytes]]:
    """Each valid record of ``lines`` with its line number and line; an issue for each
    line that is not a valid record."""
    for number, raw_line in enumerate(lines, start=1):
        if not raw_line.strip():
            continue
        try:
            record = TrialRecord.model_validate_json(raw_line)
        except ValidationError as exc:
            issues.extend(_line_problems(raw_line, f"{path}:{number}", exc))
            continue
        yield number, record, raw_line


def repeated_attempts(rows: pd.DataFrame, path: Path) -> list[Issue]:
    """``iter_records``'s issues of repeated attempts, from a records table (columns
    ``trial_id``, ``attempt``, ``status`` and ``line``, in file order): each repeated
    attempt of a trial and each attempt after an ok one."""
    # On numpy arrays: pandas' groupby costs more than the whole read of a small campaign.
    trial, _ = pd.factorize(rows["trial_id"])
    attempt, attempts = pd.factorize(rows["attempt"])
    lines = rows["line"].to_numpy()
    # np.unique's index is each (trial, attempt)'s first row (it sorts stably for it).
    _, first, key_of_row = np.unique(
        trial * len(attempts) + attempt, return_index=True, return_inverse=True
    )
    first_line = lines[first[key_of_row]]
    duplicate = first[key_of_row] != np.arange(len(rows))
    ok = (rows["status"] == "ok").to_numpy(dtype=bool)
    first_ok = np.full(len(rows), np.iinfo(np.int64).max)  # no ok attempt: after none
    np.minimum.at(first_ok, trial[ok], lines[ok])
    ok_line = first_ok[trial]
    after_ok = ~duplicate & (ok_line < lines)
    issues = []
    for i in np.flatnonzero(duplicate | after_ok).tolist():
        where = f"{path}:{lines[i]} (trial {rows['trial_id'].iat[i]})"
        if duplicate[i]:
            issues.append(_duplicate(where, int(first_line[i])))
        else:
            issues.append(_after_ok(where, int(ok_line[i])))
    return issues


def _duplicate(where: str, first_line: int) -> Issue:
    return Issue(
        f"{where} → attempt",
        f"duplicate of line {first_line}; each attempt of a trial is recorded once",
        "data",
    )


def _after_ok(where: str, ok_line: int) -> Issue:
    return Issue(
        f"{where} → attempt",
        f"the trial already succeeded on line {ok_line}; "
        "a trial with an ok attempt is never run again",
        "data",
    )


def _line_problems(raw_line: bytes, where: str, error: ValidationError) -> list[Issue]:
    """What is wrong with a line that is not a valid record, in the reader's terms: not
    UTF-8, not JSON, not an object, another schema version, else the fields at fault."""
    try:
        raw = json.loads(raw_line.decode("utf-8"))
    except UnicodeDecodeError as exc:
        reason = f"not valid UTF-8 ({exc.reason} at byte {exc.start + 1})"
        return [Issue(where, reason, UNREADABLE)]
    except json.JSONDecodeError as exc:
        # Some messages end in "at" already ("Invalid control character at").
        reason = f"not valid JSON ({exc.msg.removesuffix(' at')} at column {exc.colno})"
        return [Issue(where, reason, UNREADABLE)]
    if not isinstance(raw, dict):
        return [Issue(where, "a record must be a JSON object", UNREADABLE)]
    where = f"{where} (trial {raw.get('trial_id', '?')})"
    version = raw.get("schema_version")
    if version != RECORD_SCHEMA_VERSION:
        return [
            Issue(
                f"{where} → schema_version",
                f"unknown record schema_version {version!r}; "
                f"this sitegen reads version {RECORD_SCHEMA_VERSION}",
            )
        ]
    return pydantic_issues(error, where)
