"""A small build writes its downloads in a forked process while its pages render; a
large one in its own process. Either way the same files, and a full temporary folder is
one line."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

from sitegen.cli import main
from sitegen.commands.build import render_site
from sitegen.core.forked import CAN_FORK
from sitegen.pages import downloads, render
from tests.sitefixtures import PROJECT, publishable_campaign

pytestmark = pytest.mark.forked_writer


def _file_bytes(docs: dict) -> dict[str, bytes]:
    return {
        path: content.read_bytes() if isinstance(content, Path) else content
        for path, content in docs.items()
    }


def test_a_small_build_writes_its_downloads_beside_its_pages_and_a_large_one_in_place(
    tmp_path, monkeypatch
):
    publishable_campaign(tmp_path / "data")
    writers = tmp_path / "writers"
    write = render.write_report_files

    def noting_the_process(*args, **kwargs):
        with writers.open("a") as out:  # a file: the child's memory is its own
            out.write(f"{os.getpid()}\n")
        return write(*args, **kwargs)

    monkeypatch.setattr(render, "write_report_files", noting_the_process)
    beside = render_site(tmp_path / "data", PROJECT)
    monkeypatch.setattr(render, "WRITE_BESIDE_BELOW_RECORDS", 0)
    in_place = render_site(tmp_path / "data", PROJECT)
    first, second = writers.read_text().split()
    assert first != str(os.getpid()) and second == str(os.getpid())
    written = _file_bytes(beside.docs)
    assert any("/downloads/records.jsonl.gz" in path for path in written)
    assert any("/answers/0.json" in path for path in written)
    assert written == _file_bytes(in_place.docs)


@pytest.mark.parametrize("beside", [True, False], ids=["forked", "in place"])
def test_a_full_temporary_folder_while_writing_downloads_is_one_line(
    tmp_path, capsys, monkeypatch, beside
):
    publishable_campaign(tmp_path / "data")
    if not beside:
        monkeypatch.setattr(render, "WRITE_BESIDE_BELOW_RECORDS", 0)

    def full(lines, target):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(target))

    monkeypatch.setattr(downloads, "_gzip_lines", full)
    code = main(["build", "--data", str(tmp_path / "data"), "--site", str(tmp_path / "site")])
    err = capsys.readouterr().err
    assert code == 1 and err.count("\n") == 1, err
    assert err.startswith("error: cannot write the downloads into ")
    assert err.endswith(": No space left on device\n") and not (tmp_path / "site").exists()


@pytest.mark.skipif(not CAN_FORK, reason="the writer runs in the test's own process")
def test_a_writer_that_dies_is_one_line_naming_it(tmp_path, capsys, monkeypatch):
    publishable_campaign(tmp_path / "data")
    monkeypatch.setattr(render, "write_report_files", lambda *args: os._exit(9))
    code = main(["check", "--data", str(tmp_path / "data"), "--project", str(PROJECT)])
    err = capsys.readouterr().err
    assert code == 1 and err == (
        "error: the process writing the downloads stopped before it finished (exit code 9); "
        "run the command again\n"
    )
