"""Work in a forked child: its value, its errors and its end come back to the parent."""

from __future__ import annotations

import os
import time

import pytest

from sitegen.core.errors import BuildError, MissingDependency, StorageError
from sitegen.core.forked import CAN_FORK, ForkedCall

pytestmark = pytest.mark.skipif(not CAN_FORK, reason="this platform does not fork")


def test_the_value_is_computed_in_another_process_from_what_the_parent_holds():
    held = {"records": list(range(1000))}
    with ForkedCall(lambda: (os.getpid(), sum(held["records"]))) as call:
        child_pid, total = call.result()
    assert child_pid != os.getpid() and total == 499_500


def test_an_error_of_the_work_is_raised_in_the_parent_as_it_was():
    def work():
        raise StorageError("cannot write the downloads into /tmp/x: No space left on device")

    with ForkedCall(work) as call, pytest.raises(StorageError) as raised:
        call.result()
    assert str(raised.value) == "cannot write the downloads into /tmp/x: No space left on device"
    assert any("in the forked process" in note for note in raised.value.__notes__)


def test_an_error_that_cannot_be_rebuilt_from_its_pickle_is_named_in_a_build_error():
    def work():
        raise MissingDependency("exllamav3", "measuring on GPUs", "pip install exllamav3")

    with ForkedCall(work) as call, pytest.raises(BuildError, match=r"^MissingDependency: "):
        call.result()


def test_a_value_that_cannot_be_pickled_is_a_build_error():
    with ForkedCall(lambda: lambda: None) as call, pytest.raises(BuildError, match="pickle"):
        call.result()


def test_a_child_that_dies_is_a_build_error_with_its_exit_code():
    with ForkedCall(lambda: os._exit(3)) as call, pytest.raises(BuildError) as raised:
        call.result()
    assert "stopped before it finished (exit code 3)" in str(raised.value)


def test_leaving_the_block_stops_a_child_whose_result_was_not_asked_for():
    with ForkedCall(lambda: time.sleep(60)) as call:
        process = call._process
        assert process.is_alive()
    assert not process.is_alive()


def test_without_fork_the_work_runs_in_this_process_when_its_result_is_asked_for():
    ran = []
    with ForkedCall(lambda: ran.append(os.getpid()) or "done", fork=False) as call:
        assert ran == []
        assert call.result() == "done"
    assert ran == [os.getpid()]


def test_a_child_whose_parent_is_gone_ends_quietly():
    # The parent's end of the pipe closed (the build was killed): the child's report, more
    # than the pipe holds, cannot be sent, and it ends at once without a traceback. Its
    # output is read to the end, which comes when the child has ended too.
    import subprocess
    import sys

    script = (
        "import os, time\n"
        "from sitegen.core.forked import ForkedCall\n"
        "call = ForkedCall(lambda: time.sleep(0.5) or 'x' * 1_000_000)\n"
        "call._receive.close()\n"
        "os._exit(0)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=20
    )
    assert result.returncode == 0 and result.stderr == ""
