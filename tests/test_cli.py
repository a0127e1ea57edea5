"""The command line: errors as one message with exit code 1 (measure: 2), the data
dictionary."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from sitegen.cli import main
from sitegen.pages.schema import SCHEMA_MODELS
from sitegen.plan.plan_file import canonical_plan_json
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


def test_new_campaign_of_a_plan_without_series_is_refused_naming_the_file(
    tmp_path, capsys, monkeypatch
):
    monkeypatch.chdir(tmp_path)
    plan = tmp_path / "plan.json"
    plan.write_text(canonical_plan_json(make_plan()), encoding="utf-8")
    assert main(["measure", "--plan", str(plan), "--data", "data", "--new-campaign"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"plan {plan} declares no series" in err
    assert not (tmp_path / "data").exists()


def test_dry_run_names_the_campaign_a_series_measure_opens(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    plan = tmp_path / "plan.json"
    plan.write_text(
        canonical_plan_json(make_plan(series={"factor": "engine_build"}, repetitions=1)),
        encoding="utf-8",
    )
    measure = ["measure", "--plan", str(plan), "--data", "data"]
    assert main([*measure, "--dry-run"]) == 0
    assert "campaign: would register a new campaign (the next of its series)" in (
        capsys.readouterr().out
    )
    assert main(measure) == 0
    (directory,) = (tmp_path / "data" / "campaigns").iterdir()
    capsys.readouterr()
    assert main([*measure, "--dry-run"]) == 0
    assert f"campaign: would resume {Path('data', 'campaigns', directory.name)}" in (
        capsys.readouterr().out
    )
    assert main([*measure, "--dry-run", "--new-campaign"]) == 0
    assert "would register a new campaign (the next of its series)" in capsys.readouterr().out
    assert len(list((tmp_path / "data" / "campaigns").iterdir())) == 1


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


def _check_output(tmp_path, plan, capsys, mutate=None) -> str:
    from tests.sitefixtures import PROJECT, publishable_campaign

    publishable_campaign(tmp_path / "data", plan, mutate=mutate)
    capsys.readouterr()
    assert main(["check", "--data", str(tmp_path / "data"), "--project", str(PROJECT)]) == 0
    return capsys.readouterr().out


def test_check_warns_when_the_summary_carries_no_comparison(tmp_path, capsys):
    from sitegen.plan.plan_models import ConditionSpec, SpeculativeSpec

    spec = SpeculativeSpec(mode="ngram-simple", draft_max=4)
    configuration = make_plan(
        conditions=[
            ConditionSpec(id="off", context_capacity=512),
            ConditionSpec(id="on", speculative=spec, context_capacity=1024),
        ]
    )
    out = _check_output(tmp_path / "configuration", configuration, capsys)
    (warning,) = [line for line in out.splitlines() if line.startswith("warning:")]
    assert "campaign unit:" in warning and "configuration comparison on vs off" in warning
    assert "context_capacity" in warning and "short, padded" in warning

    def failed(record: dict) -> None:
        if record["condition_id"] == "on" and record["role"] == "measured":
            record.update(status="failed", failure_reason="server went away", metrics=None)

    out = _check_output(tmp_path / "failing", make_plan(), capsys, mutate=failed)
    summary, *observations = [line for line in out.splitlines() if line.startswith("warning:")]
    assert "no trials with a generation rate: on on short, on on padded" in summary
    assert observations == [
        f"warning: [observation] campaign {summary.split()[3]} no generation rate was measured "
        "for on on "
        f"input {name}"
        for name in ("short", "padded")
    ]

    def no_drafts(record: dict) -> None:
        if record["condition_id"] == "on" and record["metrics"]:
            record["metrics"].update(draft_proposed=0, draft_accepted=0)

    out = _check_output(tmp_path / "inactive", make_plan(), capsys, mutate=no_drafts)
    summary, *observations = [line for line in out.splitlines() if line.startswith("warning:")]
    assert "speculation of on did not run as declared (0 drafts proposed in 3 trials" in summary
    assert len(observations) == 2
    assert "speculation of on on input short did not run as declared" in observations[0]

    out = _check_output(tmp_path / "factor-only", make_plan(), capsys)
    assert out.startswith("ok: ") and "warning" not in out


def test_check_warns_for_each_observation_without_a_figure(tmp_path, capsys):
    """Draft counts not reported, a single trial a side, and a threshold without usable
    trials: each a warning naming the campaign, condition and input."""

    def no_counts(record: dict) -> None:
        if record["condition_id"] == "on" and record["metrics"]:
            record["metrics"].update(draft_proposed=None, draft_accepted=None)

    out = _check_output(tmp_path / "no-counts", make_plan(), capsys, mutate=no_counts)
    warnings = [line for line in out.splitlines() if line.startswith("warning:")]
    assert any(
        "speculation of on on input padded did not run as declared: its engine reported no "
        "draft counts" in w
        for w in warnings
    )
    out = _check_output(tmp_path / "single", make_plan(repetitions=1), capsys)
    warnings = [line for line in out.splitlines() if line.startswith("warning:")]
    assert any(
        "on vs off on input short: fewer than 2 trials with a generation rate on a side" in w
        for w in warnings
    )


def test_the_console_command_ends_at_once_after_a_check_with_its_output_flushed(tmp_path):
    # ``python -m sitegen`` ends a check without Python's teardown (os._exit): what it
    # printed into a pipe still arrives, and its scratch folder is gone.
    from sitegen.commands.build import SCRATCH_PREFIX
    from tests.sitefixtures import PROJECT, publishable_campaign

    publishable_campaign(tmp_path / "data")
    temporary = tmp_path / "tmp"
    temporary.mkdir()
    command = [sys.executable, "-m", "sitegen", "check", "--data", str(tmp_path / "data")]
    result = subprocess.run(
        [*command, "--project", str(PROJECT)],
        capture_output=True,
        text=True,
        # Output into a pipe is buffered, unless the environment says otherwise.
        env={**os.environ, "TMPDIR": str(temporary), "PYTHONUNBUFFERED": ""},
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("ok: 1 campaign(s), 14 records")
    assert not list(temporary.glob(f"{SCRATCH_PREFIX}*"))


@pytest.mark.parametrize("verb", ["build", "check"])
@pytest.mark.parametrize("skip", ["unit-000000000000", "unit-000000000000=", "=a reason"])
def test_skip_without_a_reason_is_refused_naming_the_form_it_takes(tmp_path, capsys, verb, skip):
    with pytest.raises(SystemExit) as exited:
        main([verb, "--data", str(tmp_path), "--skip", skip])
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert f"error: --skip {skip}: give the reason the campaign is left out" in err
    assert "--skip unit-000000000000=REASON" in err or "--skip CAMPAIGN=REASON" in err


def test_skip_gathers_each_campaign_with_its_reason(tmp_path, capsys):
    from sitegen.commands.build import render_site

    seen = {}

    def checked(data_dir, project_dir, skip=(), signer=None):
        seen.update(skip)
        return render_site(data_dir, project_dir, skip, signer)

    import sitegen.commands.build

    arguments = ["check", "--data", str(tmp_path), "--skip", "a=too slow = broken"]
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(sitegen.commands.build, "render_site", checked)
        assert main([*arguments, "--skip", "b=gone"]) == 2  # no directories of those names
    assert "error: --skip a, b: no campaign directory of that name" in capsys.readouterr().err
    assert seen == {"a": "too slow = broken", "b": "gone"}


def test_check_strict_fails_on_warnings_and_passes_without(tmp_path, capsys):
    from tests.sitefixtures import PROJECT, publishable_campaign

    def check(data, *flags):
        capsys.readouterr()
        code = main(["check", "--data", str(data), "--project", str(PROJECT), *flags])
        return code, capsys.readouterr()

    publishable_campaign(tmp_path / "single" / "data", make_plan(repetitions=1))
    code, out = check(tmp_path / "single" / "data")
    assert code == 0 and "warning: [observation] campaign" in out.out
    code, out = check(tmp_path / "single" / "data", "--strict")
    assert code == 1 and "--strict fails on any" in out.err
    assert "fewer than 2 trials with a generation rate on a side" in out.out
    publishable_campaign(tmp_path / "clean" / "data", make_plan())
    code, out = check(tmp_path / "clean" / "data", "--strict")
    assert code == 0 and "warning" not in out.out + out.err


def test_warnings_are_issues_with_a_severity():
    from sitegen.core.errors import Issue
    from sitegen.validation.warnings import warning

    assert Issue("plan.json", "bad").severity == "error"
    issue = warning("campaign x", "no ratio", "headline")
    assert issue.severity == "warning" and str(issue) == "[headline] campaign x: no ratio"
