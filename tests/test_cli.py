"""The command line: errors as one message with exit code 1 (measure: 2), the data
dictionary."""

from __future__ import annotations

import json

import pytest

from sitegen.cli import main
from sitegen.pages.schema import SCHEMA_MODELS
from sitegen.plan.io import canonical_plan_json
from tests.conftest import make_plan


def test_errors_are_one_message_and_exit_code_1(tmp_path, capsys):
    assert main(["check", "--data", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "no campaign found" in err and "Traceback" not in err


def test_refused_measure_exits_2_and_creates_nothing(tmp_path, capsys):
    data = tmp_path / "data"
    assert main(["measure", "--plan", str(tmp_path / "missing.yaml"), "--data", str(data)]) == 2
    assert "cannot read plan" in capsys.readouterr().err
    plan = tmp_path / "plan.json"
    plan.write_text(canonical_plan_json(make_plan(engine="nope")), encoding="utf-8")
    assert main(["measure", "--plan", str(plan), "--data", str(data)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "unknown engine 'nope'" in err
    assert not data.exists()


def test_measure_help_documents_the_exit_codes(capsys):
    with pytest.raises(SystemExit):
        main(["measure", "--help"])
    out = " ".join(capsys.readouterr().out.split())
    assert "0 every planned trial has an ok record" in out
    assert "3 some planned trials failed or are still pending" in out
    assert "2 refused or stopped by the printed error" in out


def test_engines_lists_the_fake_as_never_published(capsys):
    assert main(["engines"]) == 0
    lines = {line.split()[0]: line for line in capsys.readouterr().out.splitlines()}
    assert {"llamacpp-embedded", "llamacpp-http", "openai", "exllamav3", "fake"} <= lines.keys()
    assert "never published" in lines["fake"] and "publishable" in lines["llamacpp-embedded"]


def test_schema_documents_every_field(tmp_path):
    assert main(["schema", "--out", str(tmp_path)]) == 0
    for name in SCHEMA_MODELS:
        schema = json.loads((tmp_path / f"{name}.schema.json").read_text())
        models = [schema, *schema.get("$defs", {}).values()]
        for model in models:
            first = next(iter(model.get("properties", {})), None)
            for field, prop in model.get("properties", {}).items():
                assert prop.get("description"), (
                    f"{name}: {model.get('title')}.{field} has no docstring"
                )
            if model is schema:
                assert first == "schema_version"
