"""Nothing lost, nothing forged: every fault ``sitegen measure`` meets ends in one line,
a documented exit code, and the records on disk exactly as before (or repaired)."""

from __future__ import annotations

import errno
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from sitegen.cli import main
from sitegen.core.errors import ConfigError
from sitegen.engine.fake import DOWN_FLAG_ENV, FakeEngine
from sitegen.measure import run_campaign
from sitegen.plan.expand import expand_trials
from sitegen.plan.plan_file import campaign_id, canonical_plan_json
from sitegen.plan.plan_models import ConditionSpec, Plan
from sitegen.records import manifest_writer, reopen, store
from sitegen.records.campaign import parse_records, read_campaign, read_campaigns
from sitegen.records.layout import ENGINE_LOG
from sitegen.records.registrations import find_campaign
from sitegen.records.verify import verify_campaign
from sitegen.statistics.trials import excluded_counts, trials_frame
from tests.conftest import break_the_sixth_append, make_plan

REPO = Path(__file__).resolve().parents[2]
PLANNED = 14  # trials of make_plan(): 2 conditions × (1 warm-up + 2 inputs × 3 repetitions)


@pytest.fixture
def plan() -> Plan:
    return make_plan()


@pytest.fixture
def plan_file(tmp_path, plan) -> Path:
    path = tmp_path / "plan.json"
    path.write_text(canonical_plan_json(plan), encoding="utf-8")
    return path


def _directory(data: Path, plan: Plan) -> Path:
    """The campaign of ``plan`` that measure resumes; before any (none registered), the id
    of a campaign registered before nonces, which measure takes over too."""
    return find_campaign(data / "campaigns", plan) or data / "campaigns" / campaign_id(plan)


def _lines(directory: Path) -> list[str]:
    return (directory / "records.jsonl").read_text(encoding="utf-8").splitlines()


def _measure(plan_file: Path, data: Path) -> int:
    return main(["measure", "--plan", str(plan_file), "--data", str(data)])


def _error(capsys) -> str:
    """The one error line ``sitegen`` printed on stderr, after any progress lines."""
    err = capsys.readouterr().err
    errors = [line for line in err.splitlines() if line.startswith("error: ")]
    assert len(errors) == 1 and err.endswith(errors[0] + "\n") and "Traceback" not in err, err
    return errors[0].removeprefix("error: ")


def _problems(capsys) -> list[str]:
    """The problems of the ``DataError`` ``sitegen`` printed, one per line."""
    err = capsys.readouterr().err
    header, *problems = err.splitlines()
    assert header.startswith("error: ") and "Traceback" not in err, err
    return [problem.removeprefix("  ") for problem in problems]


def _planned_once(directory: Path, plan: Plan) -> None:
    """Every planned trial has exactly one ok record; resume warm-ups are extra."""
    records = [json.loads(line) for line in _lines(directory)]
    ok = [r["trial_id"] for r in records if r["status"] == "ok"]
    planned = [t.trial_id for t in expand_trials(plan)]
    assert sorted(i for i in ok if "resume-warmup" not in i) == sorted(planned)


# --- refused before anything is created --------------------------------------------------


def test_invalid_engine_option_creates_no_directory(tmp_path, capsys):
    plan = make_plan(
        conditions=[ConditionSpec(id="off", context_capacity=512, engine_options={"tps": -1})]
    )
    problem = "condition 'off': engine 'fake' option 'tps': input should be greater than 0 (got -1)"
    with pytest.raises(ConfigError) as refused:
        run_campaign(plan, tmp_path / "data")
    assert str(refused.value) == problem
    path = tmp_path / "plan.json"
    path.write_text(canonical_plan_json(plan), encoding="utf-8")
    assert _measure(path, tmp_path / "data") == 2
    assert _error(capsys).endswith(problem)
    assert not (tmp_path / "data").exists()


# --- one measure per campaign ---------------------------------------------------------------

HOLD_LOCK = """
import sys, time
from pathlib import Path
from sitegen.core.lock import exclusive_lock
with exclusive_lock(Path(sys.argv[1]), "test"):
    print("held", flush=True)
    time.sleep(60)
"""


def test_lock_held_by_another_process_refuses_at_once(tmp_path, plan, plan_file, capsys):
    directory = run_campaign(plan, tmp_path).directory
    before = (directory / "records.jsonl").read_bytes(), (directory / "manifest.json").read_bytes()
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD_LOCK, str(directory / ".lock")],
        cwd=REPO,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout.readline() == "held\n"
        started = time.monotonic()
        assert _measure(plan_file, tmp_path) == 2
        assert time.monotonic() - started < 5  # refused at once, not after waiting
    finally:
        holder.kill()
        holder.wait()
    assert _error(capsys) == (
        f"campaign {directory} is in use by another sitegen process (pid {holder.pid}, "
        f"lock {directory / '.lock'}); wait for it to finish"
    )
    after = (directory / "records.jsonl").read_bytes(), (directory / "manifest.json").read_bytes()
    assert after == before
    assert main(["verify", str(directory)]) == 0  # the lock file is not an artifact


# The measure command with every request slowed down, so a second one starts while the
# first is still running.
SLOW_MEASURE = """
import sys, time
from sitegen.cli import main
from sitegen.engine.fake import FakeEngine

generate = FakeEngine.generate

def slow_generate(self, request):
    time.sleep(0.2)
    yield from generate(self, request)

FakeEngine.generate = slow_generate
sys.exit(main(sys.argv[1:]))
"""


@pytest.mark.slow
def test_two_concurrent_measures_record_every_trial_once(tmp_path, plan, plan_file):
    data = tmp_path / "data"
    arguments = ["measure", "--plan", str(plan_file), "--data", str(data)]
    first = subprocess.Popen(
        [sys.executable, "-c", SLOW_MEASURE, *arguments],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 60
    while not (
        (records := _directory(data, plan) / "records.jsonl").exists()
        and records.read_bytes().count(b"\n") >= 1
    ):
        assert time.monotonic() < deadline and first.poll() is None, first.communicate()
        time.sleep(0.01)
    second = subprocess.run(
        [sys.executable, "-m", "sitegen", *arguments],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
    )
    out, err = first.communicate(timeout=60)
    assert first.returncode == 0, err
    assert second.returncode == 2 and second.stdout == ""
    assert second.stderr == (
        f"error: campaign {records.parent} is in use by another sitegen process "
        f"(pid {first.pid}, lock {records.parent / '.lock'}); wait for it to finish\n"
    )
    assert len(_lines(records.parent)) == PLANNED
    _planned_once(records.parent, plan)
    verify_campaign(records.parent)


# --- the manifest is enforced, never re-signed ----------------------------------------------


def test_tampered_record_is_refused_and_never_re_signed(tmp_path, plan, plan_file, capsys):
    directory = run_campaign(plan, tmp_path).directory
    records, manifest = directory / "records.jsonl", directory / "manifest.json"
    lines = _lines(directory)
    rate = re.search(r'"gen_tps":([0-9.e+-]+)', lines[3]).group(1)
    # gen_tps → 999, keeping the file's length: only the hash can tell.
    lines[3] = lines[3].replace(f'"gen_tps":{rate}', f'"gen_tps":{"999.".ljust(len(rate), "0")}')
    records.write_text("\n".join(lines) + "\n", encoding="utf-8")
    before = records.read_bytes(), manifest.read_bytes()

    assert _measure(plan_file, tmp_path) == 2  # a no-op measure does not sign the edit
    artifacts = json.loads(before[1])["artifacts"]
    signed = next(a["size_bytes"] for a in artifacts if a["path"] == "records.jsonl")
    message = _error(capsys)
    assert message.startswith(f"{records}: changed: sha256 of its first {signed} bytes is ")
    assert message.endswith("; measure refuses to append to this campaign")
    assert (records.read_bytes(), manifest.read_bytes()) == before

    assert main(["verify", str(directory)]) == 1
    assert f"{records}: changed: sha256" in capsys.readouterr().err


def test_records_without_a_manifest_are_refused(tmp_path, plan, plan_file, capsys):
    directory = run_campaign(plan, tmp_path).directory
    (directory / "manifest.json").unlink()
    before = (directory / "records.jsonl").read_bytes()
    assert _measure(plan_file, tmp_path) == 2
    assert _error(capsys) == (
        f"{directory / 'manifest.json'}: missing, but records.jsonl holds {PLANNED} record(s); "
        "measure does not sign records it cannot check (restore the manifest, or measure "
        "into a new data directory)"
    )
    assert (directory / "records.jsonl").read_bytes() == before
    assert not (directory / "manifest.json").exists()


def test_unreadable_manifest_is_refused(tmp_path, plan, plan_file, capsys):
    directory = run_campaign(plan, tmp_path).directory
    (directory / "manifest.json").write_text("{", encoding="utf-8")
    before = (directory / "records.jsonl").read_bytes()
    assert _measure(plan_file, tmp_path) == 2
    message = _error(capsys)
    assert message.startswith(f"{directory / 'manifest.json'} → (the whole file): Invalid JSON")
    assert (directory / "records.jsonl").read_bytes() == before


def test_announced_record_of_a_kill_is_signed_any_other_is_refused(
    tmp_path, plan, plan_file, capsys, monkeypatch
):
    real_sign = store.CampaignStore.sign
    signatures = 0

    def killed_before_signing_the_fifth(self):
        nonlocal signatures
        signatures += 1  # the first signs the opened campaign, then one per record
        if signatures == 6:
            raise KeyboardInterrupt
        real_sign(self)

    monkeypatch.setattr(store.CampaignStore, "sign", killed_before_signing_the_fifth)
    with pytest.raises(KeyboardInterrupt):
        run_campaign(plan, tmp_path)
    monkeypatch.undo()
    directory = _directory(tmp_path, plan)
    manifest = json.loads((directory / "manifest.json").read_text())
    assert len(_lines(directory)) == 5 and manifest["record_count"] == 4
    assert manifest["pending_record_sha256"]  # the fifth line was announced
    assert main(["verify", str(directory)]) == 1  # a copy must match exactly, but the
    # cure of what a kill leaves is to resume, not to copy again
    assert _problems(capsys) == [
        f"[manifest] {directory / 'records.jsonl'}:5: the record a stopped measure appended "
        f"but had not signed; run `sitegen measure --plan {directory / 'plan.json'} --data "
        f"{tmp_path}` to sign it and finish the campaign"
    ]

    assert _measure(plan_file, tmp_path) == 0  # measure's own line: signed, not redone
    assert json.loads(_lines(directory)[4])["trial_id"] == "off/padded/r0"
    assert len(_lines(directory)) == PLANNED + 1  # + one resume warm-up
    _planned_once(directory, plan)
    verify_campaign(directory)

    records = directory / "records.jsonl"
    forged = json.loads(_lines(directory)[2]) | {"trial_id": "off/short/r3"}
    with records.open("a", encoding="utf-8") as handle:
        handle.write(json.dumps(forged) + "\n")
    before = records.read_bytes()
    capsys.readouterr()
    assert _measure(plan_file, tmp_path) == 2
    assert _error(capsys) == (
        f"{records}:{PLANNED + 2}: appended after the manifest last signed the file and not "
        "the record measure announced; measure does not sign records it did not write; "
        "measure refuses to append to this campaign"
    )
    assert records.read_bytes() == before


def test_corrupt_middle_line_is_refused_with_its_line(tmp_path, plan, plan_file, capsys):
    directory = run_campaign(plan, tmp_path).directory
    records = directory / "records.jsonl"
    lines = _lines(directory)
    lines[6] = lines[6][:40]  # a line cut short in the middle of the file
    records.write_text("\n".join(lines) + "\n", encoding="utf-8")
    before = records.read_bytes()
    assert _measure(plan_file, tmp_path) == 2
    message = _error(capsys)
    assert message.startswith(f"{records}:7: not valid JSON (")
    assert message.endswith("; measure refuses to append to this campaign")
    assert records.read_bytes() == before


def test_torn_last_line_is_repaired_and_its_trial_redone_once(
    tmp_path, plan, plan_file, capsys, monkeypatch
):
    break_the_sixth_append(monkeypatch, KeyboardInterrupt())  # the kill: half a line
    assert _measure(plan_file, tmp_path) == 130
    monkeypatch.undo()
    directory = _directory(tmp_path, plan)
    torn = (directory / "records.jsonl").read_bytes()
    assert torn.count(b"\n") == 5 and not torn.endswith(b"\n")
    before = torn[: torn.rfind(b"\n") + 1]
    capsys.readouterr()
    assert main(["verify", str(directory)]) == 1
    assert _problems(capsys) == [
        f"[manifest] {directory / 'records.jsonl'}:6: a torn last line, left by a measure "
        f"stopped while writing it; run `sitegen measure --plan {directory / 'plan.json'} "
        f"--data {tmp_path}` to drop the torn tail and finish the campaign"
    ]

    assert _measure(plan_file, tmp_path) == 0
    assert (
        "9 trial(s) run, 5 already recorded, 0 failed, 1 resume warm-up(s)"
        in capsys.readouterr().out
    )
    after = (directory / "records.jsonl").read_bytes()
    assert after.startswith(before)  # the whole records are kept as they were
    ids = [json.loads(line)["trial_id"] for line in _lines(directory)]
    assert ids.count("off/padded/r0") == 1  # the torn trial, redone once
    _planned_once(directory, plan)
    verify_campaign(directory)


# --- retries without losing history ---------------------------------------------------------


def test_outage_fails_three_then_leaves_the_rest_pending_and_a_rerun_retries(
    tmp_path, plan, plan_file, capsys, monkeypatch
):
    flag = tmp_path / "down"
    monkeypatch.setenv(DOWN_FLAG_ENV, str(flag))

    def server_dies_after_the_third(index, total, record):
        if index == 3:
            flag.write_text("off\n")

    result = run_campaign(plan, tmp_path, progress=server_dies_after_the_third)
    directory = result.directory
    records = [json.loads(line) for line in _lines(directory)]
    failed = [r["trial_id"] for r in records if r["status"] == "failed"]
    assert failed == ["off/short/r2", "off/padded/r0", "off/padded/r1"]
    assert all(
        "engine failure: fake engine down" in r["failure_reason"]
        for r in records
        if r["status"] == "failed"
    )
    assert "off/padded/r2" not in {r["trial_id"] for r in records}  # not burnt: pending
    assert [(s.condition_id, s.left_pending) for s in result.stopped] == [("off", 1)]
    assert (result.written, result.failed, result.incomplete) == (13, 3, 4)

    flag.unlink()  # the server is back
    assert _measure(plan_file, tmp_path) == 0
    out = capsys.readouterr().out
    assert "4 trial(s) run, 10 already recorded, 0 failed, 3 retried, 1 resume warm-up(s)" in out
    after = [json.loads(line) for line in _lines(directory)]
    assert after[:13] == records  # history kept as it was
    retried = {r["trial_id"]: r["attempt"] for r in after[13:]}
    assert retried == {
        "off/resume-warmup-1-0": 1,
        "off/short/r2": 2,
        "off/padded/r0": 2,
        "off/padded/r1": 2,
        "off/padded/r2": 1,
    }
    _planned_once(directory, plan)
    issues = []
    campaign = read_campaign(directory, issues)
    assert not issues
    planned = [t.trial_id for t in expand_trials(plan) if t.role == "measured"]
    assert excluded_counts(trials_frame(campaign.table), planned) == {
        "warmup": 3,
        "failed": 3,
        "measured": 12,
        "planned": 12,
        "missing": 0,
    }
    verify_campaign(directory)


def test_consecutive_load_failures_stop_the_condition_exit_3_then_0(
    tmp_path, plan, plan_file, capsys, monkeypatch
):
    flag = tmp_path / "down"
    flag.write_text("on\n")
    monkeypatch.setenv(DOWN_FLAG_ENV, str(flag))
    # Down after preflight passed (an outage mid-campaign), so each trial tries to load.
    monkeypatch.setattr(FakeEngine, "preflight", classmethod(lambda *args: None))
    assert _measure(plan_file, tmp_path) == 3
    captured = capsys.readouterr()
    directory = _directory(tmp_path, plan)
    assert "10 trial(s) run, 0 already recorded, 3 failed" in captured.out
    assert (
        "condition on stopped after 3 engine failures in a row (load failure: fake engine "
        f"down ({DOWN_FLAG_ENV})); 4 of its trial(s) left pending"
    ) in captured.err
    assert f"7 planned trial(s) of {directory.name} have no ok record" in captured.err
    first = [json.loads(line) for line in _lines(directory)]
    assert [r["trial_id"] for r in first if r["status"] == "failed"] == [
        "on/warmup-0",
        "on/short/r0",
        "on/short/r1",
    ]
    assert len(first) == 10

    assert _measure(plan_file, tmp_path) == 3  # still down: three more attempts, then stop
    assert len(_lines(directory)) == 13
    flag.unlink()
    capsys.readouterr()
    assert _measure(plan_file, tmp_path) == 0
    after = [json.loads(line) for line in _lines(directory)]
    assert after[:10] == first and len(after) == 20
    attempts = [
        (r["trial_id"], r["attempt"], r["status"]) for r in after if r["trial_id"] == "on/short/r0"
    ]
    assert attempts == [
        ("on/short/r0", 1, "failed"),
        ("on/short/r0", 2, "failed"),
        ("on/short/r0", 3, "ok"),
    ]
    _planned_once(directory, plan)
    # Nothing left: no trial with an ok record is run again.
    assert _measure(plan_file, tmp_path) == 0
    assert len(_lines(directory)) == 20


def test_reading_keys_records_by_trial_and_attempt(tmp_path, plan):
    directory = run_campaign(plan, tmp_path).directory
    lines = _lines(directory)
    failed = json.loads(lines[1]) | {"status": "failed", "failure_reason": "engine failure: x"}
    again = json.loads(lines[1]) | {"attempt": 2}
    path = Path("records.jsonl")
    text = "\n".join([json.dumps(failed), lines[1].replace('"attempt":1', '"attempt":2')])
    records, numbers, issues = parse_records(text.encode().split(b"\n"), path)
    assert len(records) == 2 and numbers == [1, 2] and not issues  # attempt 1 failed, 2 ok

    duplicate = "\n".join([lines[1], lines[1]])
    _, _, issues = parse_records(duplicate.encode().split(b"\n"), path)
    assert [f"{i.location}: {i.message}" for i in issues] == [
        "records.jsonl:2 (trial off/short/r0) → attempt: duplicate of line 1; each attempt of "
        "a trial is recorded once"
    ]
    after_ok = "\n".join([lines[1], json.dumps(again)])
    _, _, issues = parse_records(after_ok.encode().split(b"\n"), path)
    assert [f"{i.location}: {i.message}" for i in issues] == [
        "records.jsonl:2 (trial off/short/r0) → attempt: the trial already succeeded on line 1; "
        "a trial with an ok attempt is never run again"
    ]


# --- I/O errors are one line ----------------------------------------------------------------


def test_disk_full_while_appending_keeps_whole_records(
    tmp_path, plan, plan_file, capsys, monkeypatch
):
    break_the_sixth_append(monkeypatch, OSError(errno.ENOSPC, os.strerror(errno.ENOSPC)))
    assert _measure(plan_file, tmp_path) == 2
    directory = _directory(tmp_path, plan)
    records = directory / "records.jsonl"
    assert _error(capsys) == f"cannot append a record to {records}: No space left on device"
    assert records.read_bytes().endswith(b"\n") and len(_lines(directory)) == 5
    verify_campaign(directory)  # the five records are signed; the half line is gone

    monkeypatch.undo()
    assert _measure(plan_file, tmp_path) == 0
    _planned_once(directory, plan)


def test_manifest_that_cannot_be_written_is_one_line(
    tmp_path, plan, plan_file, capsys, monkeypatch
):
    directory = run_campaign(plan, tmp_path).directory
    # The engine logged more since the last signature: the next measure signs it anew
    # (with nothing new, the manifest is left as it is and never written).
    with (directory / ENGINE_LOG).open("a") as log:
        log.write("a line logged after the last signature\n")
    before = (directory / "records.jsonl").read_bytes(), (directory / "manifest.json").read_bytes()

    def no_space(path, data):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(path))

    monkeypatch.setattr(manifest_writer, "write_atomic", no_space)
    assert _measure(plan_file, tmp_path) == 2
    assert _error(capsys) == (
        f"cannot write the manifest {directory / 'manifest.json'}: No space left on device"
    )
    after = (directory / "records.jsonl").read_bytes(), (directory / "manifest.json").read_bytes()
    assert after == before


@pytest.mark.parametrize(
    ("stop", "code"),
    [(OSError(errno.ENOSPC, os.strerror(errno.ENOSPC)), 2), (KeyboardInterrupt(), 130)],
)
def test_a_measure_stopped_before_its_plan_leaves_no_directory(
    tmp_path, plan, plan_file, monkeypatch, stop, code
):
    def stopped(path, data):
        raise stop

    monkeypatch.setattr(reopen, "write_atomic", stopped)
    assert _measure(plan_file, tmp_path) == code
    assert not _directory(tmp_path, plan).exists()
    monkeypatch.undo()
    assert _measure(plan_file, tmp_path) == 0
    _planned_once(_directory(tmp_path, plan), plan)


def test_a_directory_killed_before_its_plan_is_taken_over_by_the_next_measure(
    tmp_path, plan, plan_file
):
    directory = _directory(tmp_path, plan)
    directory.mkdir(parents=True)
    (directory / ".lock").write_text("4194303\n")  # a pid long gone
    (directory / ".plan.json.tmp").write_text('{"name": "un')  # the plan, half written
    _, issues = read_campaigns(tmp_path)
    assert [issue.message.split(";")[0] for issue in issues] == [
        "an empty campaign directory (a measure stopped before writing its plan leaves one)"
    ]
    assert _measure(plan_file, tmp_path) == 0
    assert sorted(path.name for path in directory.iterdir()) == [
        ".lock",
        "logs",
        "manifest.json",
        "plan.json",
        "records.jsonl",
    ]
    _planned_once(directory, plan)
    verify_campaign(directory)


def test_data_dir_that_is_a_file_is_one_line(tmp_path, plan_file, plan, capsys):
    # Tests run as root, where a read-only mode does not stop writes: a regular file where
    # the data directory should be cannot hold a campaign either.
    data = tmp_path / "data"
    data.write_text("not a directory\n")
    assert _measure(plan_file, data) == 2
    # The registry in the data directory is the first thing measure opens.
    assert _error(capsys) == f"cannot create the data directory {data}: File exists"
    assert data.read_text() == "not a directory\n"


def test_read_only_data_dir_is_one_line(tmp_path, plan_file, plan, capsys, monkeypatch):
    def read_only(self, *args, **kwargs):
        raise OSError(errno.EROFS, os.strerror(errno.EROFS), str(self))

    monkeypatch.setattr(Path, "mkdir", read_only)
    assert _measure(plan_file, tmp_path / "data") == 2
    monkeypatch.undo()
    assert _error(capsys) == (
        f"cannot create the data directory {tmp_path / 'data'}: Read-only file system"
    )
    assert not (tmp_path / "data").exists()


# A file size limit makes the kernel refuse the write (EFBIG) once records.jsonl would pass it.
LIMITED_MEASURE = """
import resource, signal, sys
from sitegen.cli import main

signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # fail the write instead of killing the process
limit = int(sys.argv[1])
resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
sys.exit(main(sys.argv[2:]))
"""


@pytest.mark.slow
def test_file_size_limit_while_appending_is_one_line(tmp_path, plan, plan_file):
    reference = _lines(run_campaign(plan, tmp_path / "reference").directory)
    limit = sum(len(line) + 1 for line in reference[:5]) + len(reference[5]) // 2
    data = tmp_path / "data"
    arguments = ["measure", "--plan", str(plan_file), "--data", str(data)]
    limited = subprocess.run(
        [sys.executable, "-c", LIMITED_MEASURE, str(limit), *arguments],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
    )
    directory = _directory(data, plan)
    records = directory / "records.jsonl"
    assert limited.returncode == 2
    assert "Traceback" not in limited.stderr
    last = limited.stderr.splitlines()[-1]  # after the progress lines
    assert last == f"error: cannot append a record to {records}: File too large"
    assert records.read_bytes().endswith(b"\n") and len(_lines(directory)) == 5
    verify_campaign(directory)
    assert main(arguments) == 0
    _planned_once(directory, plan)


def test_an_integer_no_column_holds_is_one_line_naming_the_field(tmp_path):
    """JSON and the record model take any integer; a column holds 64 bits: a larger one is
    named with its line and field, not an Arrow traceback."""
    directory = run_campaign(make_plan(), tmp_path).directory
    path = directory / "records.jsonl"
    lines = path.read_text(encoding="utf-8").splitlines()
    record = json.loads(lines[1])
    record["sampling"]["seed"] = 2**70
    lines[1] = json.dumps(record)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    issues: list = []
    campaign = read_campaign(directory, issues)
    (issue,) = [i for i in issues if "sampling.seed" in i.location]
    assert issue.location.startswith(f"{path}:2 (trial {record['trial_id']})")
    assert str(2**70) in issue.message and "64-bit" in issue.message
    assert len(campaign) == len(lines) - 1  # the others are read
