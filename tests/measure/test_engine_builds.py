"""Two real builds of llama.cpp's wheel (xllamacpp) measured as one series by
``scripts/measure_builds.sh``: the installed build and the oldest build the script lists
(each in a light venv of its own, the older one installed from the package index), one
campaign per build, then ``sitegen check`` on both."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import xllamacpp
import yaml

from sitegen.cli import main
from sitegen.records.record_models import TrialRecord
from sitegen.records.series_factor import record_factor_value

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "measure_builds.sh"
OLDER_BUILD = "2026.5.9294"
"""The oldest build the script measures by default: the first whose
``CommonParams.speculative`` has ``types``, which the embedded engine sets."""


def _tiny_series_plan(path: Path) -> Path:
    """The demo's series plan with two tokens' worth of work per condition."""
    plan = yaml.safe_load((ROOT / "examples" / "plans" / "demo-builds.yaml").read_text())
    for condition in plan["conditions"]:
        # One thread: llama.cpp's spinning worker threads crawl on a busy 2-core machine.
        condition["threads"] = 1
    plan["inputs"][0]["max_output_tokens"] = 8
    plan |= {"repetitions": 1, "warmups": 0, "examples": {"count": 1, "seed": 0}}
    path.write_text(yaml.safe_dump(plan, allow_unicode=True))
    return path


def _measure_builds(data: Path, plan: Path, venvs: Path, *builds: str) -> str:
    env = os.environ | {
        "SITEGEN_PYTHON": sys.executable,
        "SITEGEN_BUILDS_PLAN": str(plan),
        "SITEGEN_BUILDS_VENVS": str(venvs),
    }
    run = subprocess.run(
        ["bash", str(SCRIPT), str(data), *builds],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    return run.stdout


def _records(campaign: Path) -> list[TrialRecord]:
    lines = (campaign / "records.jsonl").read_text().splitlines()
    return [TrialRecord.model_validate(json.loads(line)) for line in lines]


def test_two_real_builds_measure_as_two_campaigns_of_one_series(tmp_path):
    installed = xllamacpp.__version__
    assert installed != OLDER_BUILD
    data, venvs = tmp_path / "data", tmp_path / "venvs"
    plan = _tiny_series_plan(tmp_path / "demo-builds.yaml")

    _measure_builds(data, plan, venvs, OLDER_BUILD, installed)

    campaigns = sorted((data / "campaigns").iterdir())
    assert len(campaigns) == 2
    versions, factors = set(), set()
    for campaign in campaigns:
        records = _records(campaign)
        assert {r.status for r in records} == {"ok"}
        assert {r.condition_id for r in records} == {"spec-off", "ngram"}
        versions |= {r.provenance.engine.version for r in records}
        factors |= {record_factor_value(r, "engine_build") for r in records}
    assert versions == {f"xllamacpp {OLDER_BUILD}", f"xllamacpp {installed}"}
    assert len(factors) == 2
    # The build's own venv read the installed wheel from the main environment.
    assert not list((venvs / f"xllamacpp-{installed}").glob("lib/*/site-packages/xllamacpp"))

    # Again: each build already has its campaign, so nothing new is registered.
    again = _measure_builds(data, plan, venvs, OLDER_BUILD, installed)
    assert f"xllamacpp {OLDER_BUILD}: measured before" in again
    assert sorted((data / "campaigns").iterdir()) == campaigns

    assert main(["check", "--data", str(data), "--project", str(ROOT)]) == 0
