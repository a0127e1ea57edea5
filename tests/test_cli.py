"""The command line: errors as one message with exit code 1, the data dictionary."""

from __future__ import annotations

import json

from sitegen.cli import main
from sitegen.pages.schema import SCHEMA_MODELS


def test_errors_are_one_message_and_exit_code_1(tmp_path, capsys):
    assert main(["check", "--data", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "no campaign found" in err and "Traceback" not in err
    assert main(["measure", "--plan", str(tmp_path / "missing.yaml")]) == 1
    assert "cannot read plan" in capsys.readouterr().err


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
