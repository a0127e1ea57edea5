"""What ``sitegen measure`` shows while it runs (the terminal edge of the runner).

On a terminal: a live display per campaign (rich), refreshed several times a second, so
the elapsed time moves while a server loads or a long request runs: the condition and its
phase, a bar with %, done/total, elapsed, ETA, the last generation rate and the failures
so far. Elsewhere (a log file, CI): one plain line per finished trial and per phase.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import IO, TYPE_CHECKING

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    SpinnerColumn,
    TaskID,
    TaskProgressColumn,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.status import Status
from rich.text import Text

from sitegen.records.record_models import TrialRecord

if TYPE_CHECKING:
    from sitegen.engine.contract import WaitReport

WAIT_LINE_EVERY_S = 10
"""Seconds between the plain lines about a server waited for (not on a terminal)."""


def _rate(record: TrialRecord) -> str:
    metrics = record.metrics
    return f"{metrics.gen_tps:.1f} tok/s" if metrics and metrics.gen_tps else "-"


@dataclass
class CampaignProgress:
    """One campaign's progress: what the runner reports goes to the display."""

    name: str
    display: MeasureDisplay
    task: TaskID | None = None
    condition: str = ""
    phase_name: str = ""
    failures: int = 0
    started: float = field(default_factory=time.monotonic)

    def phase(self, condition_id: str, phase: str, detail: str = "") -> None:
        self.condition, self.phase_name = condition_id, phase
        self.display.phase(self, detail)

    def trial(self, done: int, total: int, record: TrialRecord) -> None:
        self.failures += record.status == "failed"
        self.display.trial(self, done, total, record)

    @property
    def label(self) -> str:
        where = f"{self.condition} · {self.phase_name}" if self.condition else "starting"
        return f"{self.name}  {where}"


def _terminal() -> IO[str]:
    """Standard error as it is now, kept apart from file descriptor 2 (which measure
    points at the engine log while native code runs); an in-memory stream (a test's
    capture) is used as it is."""
    try:
        descriptor = sys.stderr.fileno()
    except (OSError, ValueError, AttributeError):
        return sys.stderr
    return os.fdopen(os.dup(descriptor), "w", buffering=1)


class MeasureDisplay:
    """Live on a terminal, plain lines elsewhere; ``stream`` defaults to the terminal as
    it is now (measure points file descriptor 2 at the engine log while it runs, so the
    display keeps its own copy)."""

    def __init__(self, stream: IO[str] | None = None) -> None:
        self.stream = stream or _terminal()
        self.live = self.stream.isatty()
        self.progress: Progress | None = None

    @contextmanager
    def campaign(self, name: str):
        """The progress of one campaign while the block runs."""
        campaign = CampaignProgress(name, self)
        if not self.live:
            yield campaign
            return
        self.progress = Progress(
            SpinnerColumn(),
            TextColumn("{task.description}"),
            BarColumn(),
            TaskProgressColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            TextColumn("ETA"),
            TimeRemainingColumn(),
            TextColumn("{task.fields[rate]}  {task.fields[failures]}"),
            console=Console(file=self.stream, stderr=True),
        )
        with self.progress:
            campaign.task = self.progress.add_task(campaign.label, total=None, rate="", failures="")
            yield campaign
        self.progress = None

    @contextmanager
    def preflight(self, name: str) -> Iterator[WaitReport]:
        """While one plan's preflight runs: a report of the servers waited for, shown as a
        live status line on a terminal, elsewhere as a line every ``WAIT_LINE_EVERY_S``."""
        status: Status | None = None
        printed: dict[str, int] = {}

        def waiting(url: str, waited_s: float, timeout_s: float) -> None:
            nonlocal status
            line = f"{name}: waiting for {url} ({waited_s:.0f} s of {timeout_s:g} s)"
            if self.live:
                if status is None:
                    status = Status(line, console=Console(file=self.stream, stderr=True))
                    status.start()
                status.update(line)
            elif printed.get(url, -1) < int(waited_s // WAIT_LINE_EVERY_S):
                printed[url] = int(waited_s // WAIT_LINE_EVERY_S)
                print(line, file=self.stream, flush=True)

        try:
            yield waiting
        finally:
            if status is not None:
                status.stop()

    def phase(self, campaign: CampaignProgress, detail: str) -> None:
        if self.progress is not None and campaign.task is not None:
            self.progress.update(campaign.task, description=campaign.label)
            if detail:
                self.progress.console.print(Text(f"{campaign.label}: {detail}", style="dim"))
            return
        line = f"{campaign.name}: {campaign.condition} {campaign.phase_name}"
        print(line + (f" ({detail})" if detail else ""), file=self.stream, flush=True)

    def trial(self, campaign: CampaignProgress, done: int, total: int, record: TrialRecord):
        failed = record.status == "failed"
        if self.progress is not None and campaign.task is not None:
            self.progress.update(
                campaign.task,
                completed=done,
                total=total,
                description=campaign.label,
                rate=_rate(record),
                failures=f"{campaign.failures} failed" if campaign.failures else "",
            )
            if failed:
                message = f"FAILED {record.trial_id}: {record.failure_reason or ''}"
                self.progress.console.print(Text(message, style="red"))
            return
        elapsed = time.monotonic() - campaign.started
        eta = elapsed / done * (total - done) if done else 0.0
        status = f"FAILED {record.failure_reason or ''}" if failed else _rate(record)
        print(
            f"{campaign.name}: {done}/{total} {100 * done // max(total, 1)}% "
            f"elapsed {elapsed:.0f} s, ETA {eta:.0f} s  {record.trial_id}  {status}",
            file=self.stream,
            flush=True,
        )
