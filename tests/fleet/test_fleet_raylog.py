"""Ray's output on the driver goes to the fleet's log, without Ray: what other threads
print and what native code writes to file descriptors 1 and 2 land in the log; sitegen's
own lines reach the terminal, a real one (fd-backed streams) as well as pytest's;
everything is as before afterwards."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

from sitegen.fleet.raylog import ray_output_to


def _print_from_a_thread(text: str) -> None:
    # Ray's threads print what the cluster reports (a raylet's death …) like this.
    thread = threading.Thread(target=lambda: print(text, file=sys.stderr))
    thread.start()
    thread.join()


def test_only_sitegen_lines_reach_the_terminal_and_ray_output_is_logged(tmp_path, capfd):
    path = tmp_path / "data" / "logs" / "ray.log"
    stdout, stderr = sys.stdout, sys.stderr
    with ray_output_to(path, "fleet one") as ray_log:
        _print_from_a_thread("\x1b[33m(raylet)\x1b[0m Raylet is terminated.")
        os.write(2, b"[core_worker.cc:42] native\n")  # Ray's C++ core
        os.write(1, b"native stdout\n")
        print("Traceback (most recent call last):")  # Ray on the main thread
        ray_log.on_terminal(lambda line: print(line, file=sys.stderr))("b200 1/3 33%")
        with ray_log.to_terminal():
            print("shown on stdout")
            _print_from_a_thread("(raylet) while sitegen prints")
        ray_log.note("campaign h100: The actor died")
    assert (sys.stdout, sys.stderr) == (stdout, stderr)
    print("after")
    os.write(2, b"fd 2 after\n")
    captured = capfd.readouterr()
    assert captured.out == "shown on stdout\nafter\n"
    assert captured.err == "b200 1/3 33%\nfd 2 after\n"
    log = path.read_text()
    assert log.startswith("--- ") and log.splitlines()[0].endswith(" fleet one")
    for line in (
        "(raylet) Raylet is terminated.",  # colors stripped
        "[core_worker.cc:42] native",
        "native stdout",
        "Traceback (most recent call last):",
        "(raylet) while sitegen prints",
        "campaign h100: The actor died",
    ):
        assert line + "\n" in log
    with ray_output_to(path, "fleet two"):
        pass
    assert path.read_text().startswith(log)  # appended


SCRIPT = """
import os, sys, threading
from pathlib import Path
from sitegen.fleet.raylog import ray_output_to

with ray_output_to(Path(sys.argv[1]), "fleet") as ray_log:
    ray_thread = threading.Thread(target=lambda: print("(raylet) thread", file=sys.stderr))
    ray_thread.start()
    ray_thread.join()
    os.write(2, b"[core_worker.cc:42] native\\n")
    with ray_log.to_terminal():
        print("progress", file=sys.stderr)
        print("summary")
print("after")
"""


def test_on_a_real_terminal_the_streams_write_to_the_saved_descriptors(tmp_path):
    # A terminal's sys.stderr writes to fd 2, which meanwhile leads to the log.
    path = tmp_path / "ray.log"
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(path)],
        capture_output=True,
        text=True,
        check=True,
        cwd=Path(__file__).resolve().parents[2],
    )
    assert (done.stdout, done.stderr) == ("summary\nafter\n", "progress\n")
    log = path.read_text()
    assert "(raylet) thread\n" in log and "[core_worker.cc:42] native\n" in log
