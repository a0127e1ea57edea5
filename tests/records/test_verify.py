"""``sitegen verify``: a campaign copied from another host, checked against its manifest."""

from __future__ import annotations

import json

import pytest

from sitegen.cli import main
from sitegen.core.errors import DataError, SitegenError
from sitegen.measure import run_campaign
from sitegen.records.verify import verify_campaign
from tests.conftest import make_plan


@pytest.fixture
def campaign(tmp_path):
    return run_campaign(make_plan(), tmp_path).directory


def _problems(directory) -> list[str]:
    with pytest.raises(DataError) as caught:
        verify_campaign(directory)
    assert isinstance(caught.value, SitegenError)
    return [f"{issue.location}: {issue.message}" for issue in caught.value.issues]


def test_untouched_campaign_verifies(campaign, capsys):
    verified = verify_campaign(campaign)
    assert (verified.files, verified.records) == (4, 14)
    assert main(["verify", str(campaign)]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"ok: {campaign}: 4 file(s) and 14 records match manifest.json")


def test_changed_file_names_both_hashes(campaign):
    manifest = json.loads((campaign / "manifest.json").read_text())
    listed = next(a for a in manifest["artifacts"] if a["path"] == "logs/engine.log")
    (campaign / "logs" / "engine.log").write_text("edited\n")
    (problem,) = _problems(campaign)
    assert problem.startswith(f"{campaign / 'logs' / 'engine.log'}: changed: sha256 ")
    assert f"the manifest lists {listed['sha256']}" in problem


def test_every_mismatch_is_reported_at_once(campaign, capsys):
    records = campaign / "records.jsonl"
    lines = records.read_text().splitlines(keepends=True)
    records.write_text("".join(lines[:-1]))  # one record lost in the copy
    (campaign / "logs" / "engine.log").unlink()
    (campaign / "notes.txt").write_text("added by hand\n")
    (campaign / "annotations.yaml").write_text("{}\n")  # written after measuring: not extra
    plan = campaign / "plan.json"
    plan.write_text(plan.read_text().replace('"repetitions":3', '"repetitions":4'))
    problems = _problems(campaign)
    assert len(problems) == 6
    assert any(p.startswith(f"{records}: changed") for p in problems)
    assert any(p.startswith(f"{plan}: changed") for p in problems)
    assert (
        f"{campaign / 'logs' / 'engine.log'}: missing: listed in the manifest, not found"
        in problems
    )
    assert f"{campaign / 'notes.txt'}: extra: not listed in the manifest" in problems
    assert f"{records}: 13 records, the manifest counts 14" in problems
    assert any(
        p.startswith(f"{plan}: plan hash ") and "the manifest registers" in p for p in problems
    )

    assert main(["verify", str(campaign)]) == 1
    assert "6 problem(s) found" in capsys.readouterr().err


def test_missing_manifest(tmp_path):
    (problem,) = _problems(tmp_path)
    assert problem == f"{tmp_path / 'manifest.json'}: missing manifest; 'sitegen measure' writes it"
    (problem,) = _problems(tmp_path / "absent")
    assert problem == f"{tmp_path / 'absent'}: not a campaign directory"
