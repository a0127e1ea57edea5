"""What measure shows while it runs: the runner reports each condition's phase and every
trial against a total that never changes; the display is live on a terminal and plain
lines elsewhere."""

from __future__ import annotations

import io
import re

from sitegen.core.errors import EngineError
from sitegen.engine import fake
from sitegen.measure import run_campaign
from sitegen.measure.progress import MeasureDisplay
from sitegen.plan.expand import expand_trials
from tests.conftest import make_plan


def _observed(plan, tmp_path) -> tuple[list, list]:
    """Run ``plan``: the phases reported, and each progress call's (done, total)."""
    phases, done = [], []
    run_campaign(
        plan,
        tmp_path,
        progress=lambda index, total, record: done.append((index, total)),
        phase=lambda condition, phase, detail: phases.append((condition, phase, detail)),
    )
    return phases, done


def test_phases_and_progress_of_a_campaign(tmp_path):
    plan = make_plan()
    phases, done = _observed(plan, tmp_path)
    assert phases == [
        ("off", "loading", "model fake-model"),
        ("off", "warm-up", ""),
        ("off", "measuring", ""),
        ("on", "loading", "model fake-model"),
        ("on", "warm-up", ""),
        ("on", "measuring", ""),
    ]
    total = len(expand_trials(plan))
    assert done == [(index, total) for index in range(1, total + 1)]


def test_a_stopped_condition_keeps_the_total_and_says_why(tmp_path, monkeypatch):
    def refuse(self, plan, condition):
        raise EngineError("out of memory while loading")

    monkeypatch.setattr(fake.FakeEngine, "__init__", refuse)
    plan = make_plan()
    phases, done = _observed(plan, tmp_path)
    total = len(expand_trials(plan))
    assert {t for _, t in done} == {total}
    # Three failed loads, then the condition's four other trials count as done (pending).
    assert [index for index, _ in done] == [1, 2, 3, 8, 9, 10]
    stopped = [p for p in phases if p[1] == "stopped"]
    assert stopped == [
        ("off", "stopped", "4 left pending: load failure: out of memory while loading"),
        ("on", "stopped", "4 left pending: load failure: out of memory while loading"),
    ]


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def _measure(display: MeasureDisplay, tmp_path) -> None:
    plan = make_plan(
        conditions=[
            *make_plan().conditions[:1],
            make_plan()
            .conditions[1]
            .model_copy(update={"engine_options": {"fail_input": "question one"}}),
        ]
    )
    with display.campaign(plan.name) as shown:
        run_campaign(plan, tmp_path, progress=shown.trial, phase=shown.phase)


def test_plain_lines_off_a_terminal(tmp_path):
    out = io.StringIO()
    _measure(MeasureDisplay(out), tmp_path)
    lines = out.getvalue().splitlines()
    assert lines[0] == "unit: off loading (model fake-model)"
    assert (
        "unit: 2/14 14% elapsed " in lines[4] and "ETA" in lines[4] and "off/short/r0" in lines[4]
    )
    assert any("on/short/r0  FAILED" in line for line in lines)
    assert lines[-1].startswith("unit: 14/14 100%")


def test_a_live_display_on_a_terminal(tmp_path):
    out = _Terminal()
    _measure(MeasureDisplay(out), tmp_path)
    shown = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", out.getvalue())  # colours and cursor moves
    assert "unit  on · measuring" in shown and "14/14" in shown and "100%" in shown
    # The warm-up and the three trials of the failing input, each said as it happens.
    assert "FAILED on/short/r0: engine error" in shown and "4 failed" in shown
    assert "ETA" in shown and "tok/s" in shown
