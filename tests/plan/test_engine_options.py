"""A plan whose engine options are wrong is refused when it loads, before any campaign
directory exists; a model declared ``remote_unhashable`` keeps old plans' hashes."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from sitegen.cli import EXIT_MEASURE_REFUSED
from sitegen.core.errors import ConfigError
from sitegen.plan.plan_file import canonical_plan_json, load_plan, plan_sha256
from tests.conftest import make_plan

PLANS = Path(__file__).resolve().parents[2] / "examples" / "plans"

HTTP_PLAN = """
name: http
title: {{ja: HTTP, en: HTTP}}
engine: llamacpp-http
model: {{name: glm, source: /srv/glm.gguf, quantization: Q4_K_M}}
conditions:
  - id: on
    context_capacity: 8192
    engine_options: {options}
inputs:
  - {{id: q, text: question, max_output_tokens: 8}}
"""

BAD_OPTIONS = {
    "misspelt key": (
        '{base_ulr: "http://127.0.0.1:8081"}',
        "condition 'on': engine 'llamacpp-http' has no option 'base_ulr' "
        "(allowed: base_url, memory_unavailable, ready_timeout_s, server_pid)",
    ),
    "ill-typed value": (
        "{ready_timeout_s: soon}",
        "condition 'on': engine 'llamacpp-http' option 'ready_timeout_s': input should be a "
        "valid number, unable to parse string as a number (got 'soon')",
    ),
}


def write_plan(tmp_path: Path, options: str) -> Path:
    path = tmp_path / "bad.yaml"
    path.write_text(HTTP_PLAN.format(options=options), encoding="utf-8")
    return path


@pytest.mark.parametrize("case", sorted(BAD_OPTIONS))
def test_load_plan_refuses_bad_engine_options(tmp_path, case):
    options, expected = BAD_OPTIONS[case]
    path = write_plan(tmp_path, options)
    with pytest.raises(ConfigError) as caught:
        load_plan(path)
    assert str(caught.value) == f"{path}: {expected}"


@pytest.mark.parametrize("case", sorted(BAD_OPTIONS))
def test_measure_refuses_before_creating_a_campaign(tmp_path, case):
    options, expected = BAD_OPTIONS[case]
    path = write_plan(tmp_path, options)
    data = tmp_path / "data"
    finished = subprocess.run(
        [sys.executable, "-m", "sitegen", "measure", "--plan", str(path), "--data", str(data)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert finished.returncode == EXIT_MEASURE_REFUSED
    assert finished.stderr == f"error: {path}: {expected}\n"
    assert "Traceback" not in finished.stderr + finished.stdout
    assert not (data / "campaigns").exists()


def test_example_plans_load_with_their_options():
    # fleet-*.yaml are fleet plans (tests/fleet), listing these plans.
    plans = sorted(p for p in PLANS.glob("*.yaml") if not p.name.startswith("fleet-"))
    assert plans
    for path in plans:
        load_plan(path)


def test_remote_unhashable_is_hashed_only_when_declared():
    plan = make_plan()
    assert "remote_unhashable" not in canonical_plan_json(plan)
    declared = make_plan(model=plan.model.model_copy(update={"remote_unhashable": True}))
    assert '"remote_unhashable":true' in canonical_plan_json(declared)
    assert plan_sha256(declared) != plan_sha256(plan)
