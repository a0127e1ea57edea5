"""``sitegen build`` on whatever ``sitegen measure`` can leave behind: never a traceback;
a campaign without a usable trial is refused with its reasons, or left out with
``publish: false``."""

from __future__ import annotations

import errno
import hashlib
import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml

from sitegen.cli import main
from sitegen.commands.build import build_site, render_site
from sitegen.core.errors import DataError
from sitegen.core.lock import exclusive_lock
from sitegen.plan.plan_file import canonical_plan_json
from sitegen.plan.plan_models import InputSpec
from sitegen.records.campaign import read_campaigns
from sitegen.records.layout import LOCK_FILE
from sitegen.records.verify import verify_campaign
from tests.builtsites import rendered_page, rendered_reports, reusing_renders, tree_bytes
from tests.conftest import break_the_sixth_append, make_plan
from tests.sitefixtures import (
    PROJECT,
    publishable_campaign,
    read_records,
    report_address,
    write_records,
)
from tests.statistics.test_quality_records import quality_plan


def failed(reason: str, condition: str | None = None):
    def mutate(record: dict) -> None:
        if condition is None or record["condition_id"] == condition:
            record.update(status="failed", failure_reason=reason, metrics=None, peak_memory=[])

    return mutate


def build(data, tmp_path, capsys) -> tuple[int, str]:
    code = main(["build", "--data", str(data), "--site", str(tmp_path / "site")])
    return code, capsys.readouterr().err


def test_every_trial_failed_is_refused_with_the_reasons(tmp_path, capsys):
    publishable_campaign(tmp_path / "data", mutate=failed("engine failure: connection refused"))
    code, err = build(tmp_path / "data", tmp_path, capsys)
    assert code == 1 and "Traceback" not in err
    assert "[C-USABLE]" in err and "all 12 measured trial(s) failed" in err
    assert "connection refused" in err and not (tmp_path / "site").exists()


def test_every_trial_failed_some_without_a_reason_is_refused_in_lines(tmp_path, capsys):
    def failed_some_silently(record: dict) -> None:
        reason = None if record["trial_id"].endswith("r0") else "engine failure: 500"
        record.update(status="failed", failure_reason=reason, metrics=None, peak_memory=[])

    publishable_campaign(tmp_path / "data", mutate=failed_some_silently)
    code, err = build(tmp_path / "data", tmp_path, capsys)
    assert code == 1 and "Traceback" not in err
    assert "[C-USABLE]" in err and "all 12 measured trial(s) failed" in err
    assert "engine failure: 500; ?" in err or "?; engine failure: 500" in err
    assert "[C-RECORD]" in err and "a failed record needs a reason" in err


def test_publish_false_leaves_a_failed_campaign_out(tmp_path, capsys):
    bad = publishable_campaign(tmp_path / "data", mutate=failed("load failure: no GPU")).parent
    left_out = {
        "publish": False,
        "unpublished_reason": {"ja": "全試行が失敗", "en": "every trial failed"},
    }
    (bad / "annotations.yaml").write_text(yaml.safe_dump(left_out, allow_unicode=True))
    good = publishable_campaign(tmp_path / "data", make_plan(name="good"))
    rendered = render_site(tmp_path / "data", PROJECT)
    assert len(rendered.reports) == 1
    assert rendered_reports(rendered) == {report_address(good.parent)}
    assert [(e.campaign_id, e.reason.en) for e in rendered.left_out] == [
        (bad.name, "every trial failed")
    ]


def test_empty_campaign_directory_is_refused_in_one_line(tmp_path, capsys):
    directory = publishable_campaign(tmp_path / "data").parent
    (directory / "records.jsonl").write_text("")
    code, err = build(tmp_path / "data", tmp_path, capsys)
    assert code == 1 and "Traceback" not in err
    assert "[C-USABLE]" in err and "no measured trial recorded" in err
    (directory / "plan.json").unlink()
    code, err = build(tmp_path / "data", tmp_path, capsys)
    assert code == 1 and "missing plan file" in err and "Traceback" not in err


def test_one_token_answers_build(tmp_path):
    plan = make_plan(inputs=[InputSpec(id="short", text="q", max_output_tokens=1)])

    def one_token(record):
        if record["metrics"]:
            record["metrics"].update(generated_tokens=1, gen_tps=None)

    publishable_campaign(tmp_path / "data", plan, mutate=one_token)
    assert len(render_site(tmp_path / "data", PROJECT).reports) == 1


def test_a_condition_whose_every_trial_failed_builds_without_a_ratio(tmp_path):
    directory = publishable_campaign(tmp_path / "data", mutate=failed("engine failure: oom", "on"))
    rendered = render_site(tmp_path / "data", PROJECT)
    html = rendered_page(rendered, f"reports/{report_address(directory.parent)}/index.md")
    assert 'data-claim="speed-ratio"' not in html and 'data-failed="6"' in html


def test_every_quality_trial_failed_names_the_cause(tmp_path, capsys):
    publishable_campaign(tmp_path / "data", quality_plan(), mutate=failed("engine failure: 500"))
    code, err = build(tmp_path / "data", tmp_path, capsys)
    assert code == 1 and "[C-USABLE]" in err and "engine failure: 500" in err
    assert "[C-TRUNC]" not in err


def test_a_symlinked_campaign_directory_is_refused(tmp_path, capsys):
    outside = publishable_campaign(tmp_path / "elsewhere").parent
    (tmp_path / "data" / "campaigns").mkdir(parents=True)
    (tmp_path / "data" / "campaigns" / outside.name).symlink_to(outside)
    code, err = build(tmp_path / "data", tmp_path, capsys)
    assert code == 1 and "a symbolic link" in err and "Traceback" not in err


def test_tampered_records_are_refused_by_the_build(tmp_path, capsys):
    records = publishable_campaign(tmp_path / "data")
    records.write_text(records.read_text().replace('"gen_tps": ', '"gen_tps": 9', 1))
    code, err = build(tmp_path / "data", tmp_path, capsys)
    assert code == 1 and "[C-SIGNED]" in err and "records.jsonl: changed" in err


def test_changed_annotations_show_in_the_changelog(published, tmp_path):
    _copy_published(published, tmp_path / "data", tmp_path / "site")  # v1
    (directory,) = (tmp_path / "data" / "campaigns").iterdir()
    (directory / "annotations.yaml").write_text(
        yaml.safe_dump({"review": "human", "reviewer": "A. Reviewer"})
    )
    build_site(tmp_path / "data", tmp_path / "site", PROJECT, version="v2")
    changelog = (tmp_path / "site" / "v" / "v2" / "en" / "changelog" / "index.html").read_text()
    assert "Declarations changed" in changelog and directory.name in changelog


def _edit_lines(edit):
    """A fault made by editing the records file's lines (not re-signed, like a hand edit)."""

    def apply(directory):
        path = directory / "records.jsonl"
        lines = path.read_text().splitlines(keepends=True)
        path.write_text("".join(edit(lines)))

    return apply


def _annotate(**fields):
    return lambda directory: (directory / "annotations.yaml").write_text(yaml.safe_dump(fields))


def _remove(name):
    return lambda directory: (directory / name).unlink()


BUILD_FAULTS = {
    "corrupt middle line": (
        _edit_lines(lambda ls: [*ls[:3], "{not json\n", *ls[3:]]),
        "not valid JSON",
    ),
    "duplicate record": (_edit_lines(lambda ls: [*ls, ls[2]]), "duplicate of line"),
    "torn last line": (_edit_lines(lambda ls: [*ls[:-1], ls[-1][:40]]), "records.jsonl:"),
    "record edited": (
        _edit_lines(lambda ls: [ls[0].replace('"gen_tps": ', '"gen_tps": 9', 1), *ls[1:]]),
        "[C-SIGNED]",
    ),
    "manifest missing": (_remove("manifest.json"), "missing manifest"),
    "plan missing": (_remove("plan.json"), "missing plan file"),
    "records missing": (_remove("records.jsonl"), "missing records file"),
    "unknown schema version": (
        _edit_lines(
            lambda ls: [ls[0].replace('"schema_version": 1', '"schema_version": 9'), *ls[1:]]
        ),
        "unknown record schema_version 9",
    ),
    "control character in an id": (
        _edit_lines(
            lambda ls: [ls[0].replace('"trial_id": "', '"trial_id": "\\u0000', 1), *ls[1:]]
        ),
        "control character U+0000",
    ),
    "annotation date not a date": (
        _annotate(
            post_hoc=[
                {
                    "label": "x",
                    "exclude_templates": ["logic.order"],
                    "added_at": "2026-99-99 not a date",
                    "reason": {"ja": "理由", "en": "why"},
                }
            ]
        ),
        "added_at",
    ),
    "blank curated reason": (
        _annotate(
            curated_examples=[{"trial_id": "off/short/r0", "reason": {"ja": " ", "en": "x"}}]
        ),
        "curated_examples.0.reason.ja",
    ),
    "reviewer missing": (_annotate(review="human"), "needs a reviewer"),
    "annotations not YAML": (
        lambda d: (d / "annotations.yaml").write_text("review: [unclosed"),
        "not valid YAML",
    ),
}


@pytest.fixture(scope="module")
def published(tmp_path_factory):
    """A data directory and a site with one published version, to break afterwards."""
    root = tmp_path_factory.mktemp("faults")
    directory = publishable_campaign(root / "data").parent
    with reusing_renders():  # the builds of copies of these inputs reuse the rendering
        build_site(root / "data", root / "site", PROJECT, version="v1")
    return root, directory


def _copy_published(published, data: Path, site: Path) -> None:
    """``published``'s data and site (its releases beside it) copied to ``data`` and
    ``site``: a site where version v1 was built, without building it again."""
    root, _ = published
    shutil.copytree(root / "data", data)
    site.parent.mkdir(parents=True, exist_ok=True)
    shutil.copytree(root / "site", site, symlinks=True)  # a relative link to its release
    shutil.copytree(root / ".site.releases", site.with_name(".site.releases"), symlinks=True)


@pytest.mark.parametrize("fault", sorted(BUILD_FAULTS))
def test_a_fault_leaves_the_published_site_byte_identical(published, tmp_path, capsys, fault):
    root, original = published
    data = tmp_path / "data"
    shutil.copytree(root / "data", data)
    site = tmp_path / "site"
    shutil.copytree(root / "site", site, symlinks=True)
    shutil.copytree(root / ".site.releases", tmp_path / ".site.releases", symlinks=True)
    before = tree_bytes(site.resolve())
    break_it, expected = BUILD_FAULTS[fault]
    break_it(data / "campaigns" / original.name)
    code = main(["build", "--data", str(data), "--site", str(site), "--version", "v2"])
    err = capsys.readouterr().err
    assert code == 1 and expected in err and "Traceback" not in err, err
    assert all(line.startswith(("error: ", "  [")) for line in err.strip().splitlines()), err
    assert tree_bytes(site.resolve()) == before


def test_trials_tried_twice_are_counted_as_trials_with_their_attempts(tmp_path, capsys):
    records_path = publishable_campaign(
        tmp_path / "data", mutate=failed("engine failure: connection refused")
    )
    records = read_records(records_path)
    again = [{**r, "attempt": 2} for r in records if r["role"] == "measured"]
    write_records(records_path, records + again)
    code, err = build(tmp_path / "data", tmp_path, capsys)
    assert code == 1 and "all 12 measured trial(s) failed (24 attempts)" in err, err


def _good_and_damaged(data: Path, damage: str) -> tuple[Path, Path]:
    """A publishable campaign and one that cannot be read: an empty directory, or records
    with a corrupt middle line or a torn last line (what a kill mid-append leaves)."""
    good = publishable_campaign(data, make_plan(name="good")).parent
    if damage == "empty directory":
        bad = data / "campaigns" / "broken-000000000000"
        bad.mkdir()
        return good, bad
    bad = publishable_campaign(data).parent
    lines = (bad / "records.jsonl").read_bytes().split(b"\n")
    if damage == "corrupt middle line":
        lines[3] = b'{"schema_version": 1, "trial'
    else:
        lines[-1] = b'{"schema_version": 1, "trial'  # after the last newline: torn
    (bad / "records.jsonl").write_bytes(b"\n".join(lines))
    return good, bad


DAMAGES = ["empty directory", "corrupt middle line", "torn last line"]


@pytest.mark.parametrize("damage", DAMAGES)
def test_publish_false_leaves_out_a_campaign_that_cannot_be_read(tmp_path, damage):
    good, bad = _good_and_damaged(tmp_path / "data", damage)
    with pytest.raises(DataError):
        render_site(tmp_path / "data", PROJECT)
    left_out = {"publish": False, "unpublished_reason": {"ja": "読めない", "en": "unreadable"}}
    (bad / "annotations.yaml").write_text(yaml.safe_dump(left_out, allow_unicode=True))
    assert rendered_reports(render_site(tmp_path / "data", PROJECT)) == {report_address(good)}


def _cure(damage: str, bad: Path, data: Path) -> str:
    """The one line the build prints for a campaign with ``damage``."""
    leave_out = f"leave it out with --skip {bad.name}=REASON"
    command = f"sitegen measure --plan {bad / 'plan.json'} --data {data}"
    return {
        "empty directory": f"[data] {bad}: an empty campaign directory (a measure stopped "
        f"before writing its plan leaves one); remove it, or {leave_out}",
        "corrupt middle line": f"[data] {bad / 'records.jsonl'}:4: not valid JSON (Invalid "
        "control character at column 29); repair records.jsonl from a copy on the host that "
        f"measured it (check it with 'sitegen verify'), or {leave_out}",
        "torn last line": f"[data] {bad / 'records.jsonl'}:15: a torn last line, left by a "
        f"measure stopped while writing it; run `{command}` to drop the torn tail and finish "
        f"the campaign (or {leave_out})",
    }[damage]


@pytest.mark.parametrize("damage", DAMAGES)
def test_an_unreadable_campaign_is_one_line_with_its_cure_and_skip_checks_the_rest(
    tmp_path, capsys, damage
):
    data = tmp_path / "data"
    good, bad = _good_and_damaged(data, damage)
    code, err = build(data, tmp_path, capsys)
    assert code == 1 and "Traceback" not in err
    assert err.splitlines() == [
        "error: 1 problem(s) found; nothing was written:",
        f"  {_cure(damage, bad, data)}",
    ]
    assert main(["check", "--data", str(data), "--skip", f"{bad.name}=cannot be read"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("ok: 1 campaign(s)")
    assert f"left out: campaign {bad.name} (skip): cannot be read\n" in out


@pytest.mark.slow  # publishes a site
def test_skip_builds_the_rest(tmp_path, capsys):
    # Once for every damage: a skipped campaign is neither read nor an input of the build.
    data = tmp_path / "data"
    good, bad = _good_and_damaged(data, "corrupt middle line")
    site = tmp_path / "site"
    arguments = ["build", "--data", str(data), "--site", str(site), "--version", "v1"]
    skip = ["--skip", f"{bad.name}=its records are damaged"]
    assert main([*arguments, *skip]) == 0, capsys.readouterr().err
    reports = site / "v" / "v1" / "reports"
    assert {p.name for p in reports.iterdir()} == {report_address(good)}


def test_the_cure_of_a_torn_tail_is_the_command_the_build_names(tmp_path, capsys, monkeypatch):
    import shlex

    plan_file = tmp_path / "plan.json"
    plan_file.write_text(canonical_plan_json(make_plan()), encoding="utf-8")
    data = tmp_path / "data"
    break_the_sixth_append(monkeypatch, KeyboardInterrupt())  # the kill: half a line
    assert main(["measure", "--plan", str(plan_file), "--data", str(data)]) == 130
    monkeypatch.undo()
    code, err = build(data, tmp_path, capsys)
    assert code == 1 and "a torn last line" in err, err
    command = err.split("`")[1]
    assert command.startswith("sitegen measure ")
    assert main(shlex.split(command)[1:]) == 0  # the fake engine: the cure, for real
    directory = next((data / "campaigns").iterdir())
    verify_campaign(directory)
    assert read_campaigns(data)[1] == []


def test_an_announced_unsigned_record_points_to_sitegen_measure(tmp_path, capsys):
    # What a kill between appending a record and signing it leaves: after the signed
    # lines, the one the manifest announced.
    records_path = publishable_campaign(tmp_path / "data")
    line = records_path.read_bytes().split(b"\n")[0].replace(b"/r0", b"/r9") + b"\n"
    with records_path.open("ab") as records:
        records.write(line)
    manifest_path = records_path.with_name("manifest.json")
    manifest = json.loads(manifest_path.read_text())
    manifest["pending_record_sha256"] = hashlib.sha256(line).hexdigest()
    manifest_path.write_text(json.dumps(manifest))
    code, err = build(tmp_path / "data", tmp_path, capsys)
    assert code == 1 and err.count("\n") == 2, err
    assert f"{records_path}:15: the record a stopped measure appended but had not signed" in err
    assert "to sign it and finish the campaign" in err


def test_a_line_measure_did_not_write_is_refused_as_changed(tmp_path, capsys):
    records_path = publishable_campaign(tmp_path / "data")
    extra = records_path.read_bytes().split(b"\n")[0]
    with records_path.open("ab") as records:
        records.write(extra + b"\n")
    code, err = build(tmp_path / "data", tmp_path, capsys)
    assert code == 1 and "15 records, the manifest counts 14" in err
    # Measure refuses to sign a line it did not write: no advice to run it.
    assert "copy the campaign again from its host" in err and "sitegen measure" not in err


def test_skip_of_a_campaign_that_is_not_there_is_one_line_exit_2(tmp_path, capsys):
    data = tmp_path / "data"
    publishable_campaign(data)
    for verb in (["build", "--site", str(tmp_path / "site")], ["check"]):
        skip = ["--skip", "nope=a reason", "--skip", "gone=another"]
        assert main([*verb, "--data", str(data), *skip]) == 2
        assert capsys.readouterr().err == (
            f"error: --skip gone, nope: no campaign directory of that name in "
            f"{data / 'campaigns'}\n"
        )
    assert not (tmp_path / "site").exists()


@pytest.mark.slow  # publishes a site
def test_a_build_with_another_skip_list_is_not_the_unchanged_build(tmp_path, capsys):
    data = tmp_path / "data"
    good, empty = _good_and_damaged(data, "empty directory")  # no file: only the list differs
    arguments = ["build", "--data", str(data), "--site", str(tmp_path / "site"), "--version", "v1"]
    skip = ["--skip", f"{empty.name}=left empty by a stopped measure"]
    assert main([*arguments, *skip]) == 0
    capsys.readouterr()
    (empty / "notes.txt").write_text("a skipped campaign's files are no input\n")
    assert main([*arguments, *skip]) == 0
    assert "nothing changed since version v1 was built" in capsys.readouterr().out
    (empty / "notes.txt").unlink()
    # The same list with another reason, which the changelog shows: not the unchanged build.
    other = ["--skip", f"{empty.name}=another reason"]
    assert main([*arguments[:-1], "v2", *other]) == 0
    assert "version v2 published" in capsys.readouterr().out
    # The same files as the first build, but without --skip: not the unchanged build.
    assert main(arguments) == 1
    assert f"{empty}: an empty campaign directory" in capsys.readouterr().err


@pytest.mark.usefixtures("reuse_renders")  # faults after rendering: the inputs rendered once
def test_a_full_disk_while_rendering_is_one_line_and_leaves_the_site(
    published, tmp_path, capsys, monkeypatch
):
    import errno
    import os

    from sitegen.pages import mkdocs

    _copy_published(published, tmp_path / "data", tmp_path / "site")  # v1
    before = tree_bytes(tmp_path / "site")

    def full(*args, **kwargs):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(mkdocs.shutil, "copytree", full)
    code = main(
        [
            "build",
            "--data",
            str(tmp_path / "data"),
            "--site",
            str(tmp_path / "site"),
            "--project",
            str(PROJECT),
            "--version",
            "v2",
        ]
    )
    err = capsys.readouterr().err
    assert code == 1 and err.count("\n") == 1 and "No space left on device" in err, err
    assert tree_bytes(tmp_path / "site") == before


def refuse_writes(monkeypatch, refused: Callable[[str], bool], number: int) -> list[str]:
    """Make every write to an absolute path that ``refused`` picks fail with the OS error
    ``number`` (EROFS: a read-only file system; ENOSPC: a full disk), as the kernel would:
    opening for writing, creating, linking, renaming, removing. CI runs as root, where a
    read-only mode stops nothing. Returns the paths refused, as they are refused."""
    import builtins
    import io

    hits: list[str] = []

    def guard(function, positions, writes=lambda *args, **kwargs: True):
        def guarded(*args, **kwargs):
            paths = [args[i] for i in positions if i < len(args)]
            if kwargs.get("dir_fd") is not None:  # shutil.rmtree: names in an open folder
                paths = []
            for path in paths:
                if isinstance(path, int):  # a file descriptor
                    continue
                where = os.path.abspath(os.fsdecode(path))
                if writes(*args, **kwargs) and refused(where):
                    hits.append(where)
                    raise OSError(number, os.strerror(number), where)
            return function(*args, **kwargs)

        return guarded

    def opens_to_write(file, mode="r", *args, **kwargs) -> bool:
        return any(letter in mode for letter in "wax+")

    def os_open_to_write(path, flags, *args, **kwargs) -> bool:
        return bool(flags & (os.O_WRONLY | os.O_RDWR | os.O_CREAT))

    monkeypatch.setattr(builtins, "open", guard(builtins.open, [0], opens_to_write))
    monkeypatch.setattr(io, "open", guard(io.open, [0], opens_to_write))
    monkeypatch.setattr(os, "open", guard(os.open, [0], os_open_to_write))
    for name in ("mkdir", "unlink", "remove", "rmdir", "truncate"):
        monkeypatch.setattr(os, name, guard(getattr(os, name), [0]))
    for name in ("symlink", "link", "rename", "replace"):
        monkeypatch.setattr(os, name, guard(getattr(os, name), [0, 1]))
    return hits


def _published_v1(published, root: Path) -> tuple[Path, Path, dict[str, bytes]]:
    """Data, a site in ``root/www`` with version v1, and the site's bytes."""
    site = root / "www" / "site"
    _copy_published(published, root / "data", site)
    return root / "data", site, tree_bytes(site.resolve())


def _build_v2(data: Path, site: Path) -> list[str]:
    return ["build", "--data", str(data), "--site", str(site), "--version", "v2"]


@pytest.mark.parametrize("read_only", ["the site's folder", "the releases"])
@pytest.mark.usefixtures("reuse_renders")  # faults after rendering: the inputs rendered once
def test_a_read_only_site_is_one_line_and_leaves_the_site(
    published, tmp_path, capsys, monkeypatch, read_only
):
    data, site, before = _published_v1(published, tmp_path)
    release = site.resolve()
    folder = site.parent if read_only == "the site's folder" else site.parent / ".site.releases"
    hits = refuse_writes(
        monkeypatch, lambda path: path.startswith(f"{folder}{os.sep}"), errno.EROFS
    )
    code = main(_build_v2(data, site))
    err = capsys.readouterr().err
    monkeypatch.undo()
    assert hits and code == 1 and err.count("\n") == 1, err
    assert err.startswith("error: cannot ") and err.endswith(": Read-only file system\n"), err
    assert site.resolve() == release and tree_bytes(release) == before
    assert main(_build_v2(data, site)) == 0  # writable again: the next build publishes


PUBLISH_STEPS = {
    "the new version's pages": lambda path: "/staging-" in path and "/v/v2/" in path,
    "the versions carried over": lambda path: "/staging-" in path and "/v/v1/" in path,
    "the root redirect": lambda path: "/staging-" in path and path.endswith("/site/index.html"),
    "the build marker": lambda path: path.endswith(".sitegen-build.json.tmp"),
    "the switch": lambda path: "/link-" in path,
}


@pytest.mark.parametrize("step", sorted(PUBLISH_STEPS))
@pytest.mark.usefixtures("reuse_renders")  # faults after rendering: the inputs rendered once
def test_a_full_disk_while_publishing_is_one_line_and_leaves_the_site(
    published, tmp_path, capsys, monkeypatch, step
):
    data, site, before = _published_v1(published, tmp_path)
    release = site.resolve()
    hits = refuse_writes(monkeypatch, PUBLISH_STEPS[step], errno.ENOSPC)
    code = main(_build_v2(data, site))
    err = capsys.readouterr().err
    monkeypatch.undo()
    assert hits and code == 1 and err.count("\n") == 1, err
    assert err.startswith("error: cannot ") and err.endswith(": No space left on device\n"), err
    assert site.resolve() == release and tree_bytes(release) == before
    assert not list((site.parent / ".site.releases").glob("staging-*"))
    assert main(_build_v2(data, site)) == 0  # space again: the next build publishes


@pytest.mark.slow  # publishes a site
def test_a_killed_builds_scratch_folder_is_removed_by_the_next_build(tmp_path, monkeypatch):
    import subprocess
    import sys
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    gone = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    abandoned = tmp_path / "tmp" / f"sitegen-build-{gone}-abc123"
    (abandoned / "downloads").mkdir(parents=True)
    ours = tmp_path / "tmp" / f"sitegen-build-{os.getpid()}-live"
    ours.mkdir()
    publishable_campaign(tmp_path / "data")
    build_site(tmp_path / "data", tmp_path / "site", PROJECT, version="v1")
    assert not abandoned.exists() and ours.exists()


def test_an_unchanged_build_stops_before_importing_the_renderer(published, tmp_path):
    import subprocess
    import sys

    _copy_published(published, tmp_path / "data", tmp_path / "site")  # v1 of these inputs
    script = (
        "import sys; from sitegen.cli import main; "
        f"code = main(['build', '--data', {str(tmp_path / 'data')!r}, '--site', "
        f"{str(tmp_path / 'site')!r}, '--project', {str(PROJECT)!r}, '--version', 'v1']); "
        "print(code, sorted(m for m in ('pandas', 'mkdocs', 'plotly') if m in sys.modules))"
    )
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert "nothing changed since version v1 was built" in run.stdout, run.stderr
    assert run.stdout.strip().endswith("0 []")


def test_the_lock_a_measure_takes_leaves_the_build_unchanged(published, tmp_path, capsys):
    """A measure with nothing left to run still takes its campaign's lock (and writes its
    pid in the lock file): no input of the site, so the next build is the unchanged one."""
    data, site = tmp_path / "data", tmp_path / "site"
    _copy_published(published, data, site)  # v1 of these inputs
    directory = next((data / "campaigns").iterdir())
    lock = directory / LOCK_FILE
    before = lock.stat().st_mtime_ns
    with exclusive_lock(lock, f"campaign {directory}"):
        lock.write_text("4194304\n")  # another process's pid: another size and time
    assert lock.stat().st_mtime_ns != before
    arguments = ["build", "--data", str(data), "--site", str(site), "--project", str(PROJECT)]
    assert main([*arguments, "--version", "v1"]) == 0
    assert "nothing changed since version v1 was built" in capsys.readouterr().out
