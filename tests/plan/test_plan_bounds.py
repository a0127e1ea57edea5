"""Values that pass a type check but no engine or machine can run are refused when the
plan loads, naming the field, with exit 2 and nothing created."""

from __future__ import annotations

import pytest

from sitegen.cli import main
from sitegen.core.errors import ConfigError
from sitegen.plan.plan_file import load_plan

BASE = """
name: bounds
title: {{ja: "上限", en: "Bounds"}}
engine: fake
model: {{name: m, source: unused, quantization: none}}
conditions:
  - {{id: off, context_capacity: 512{condition}}}
  - {{id: on, context_capacity: 512, speculative: {{mode: ngram-simple, draft_max: {draft_max}}}}}
inputs:
  - {{id: a, text: x, max_output_tokens: 8}}
repetitions: {repetitions}
warmups: {warmups}
sampling: {{seed_base: {seed_base}, temperature: {temperature}}}
dispersion: {{bootstrap_resamples: {resamples}}}
"""
GOOD = dict(
    condition="",
    draft_max=4,
    repetitions=3,
    warmups=1,
    seed_base=1234,
    temperature=0,
    resamples=2000,
)
BAD = {
    "seed_base": ({"seed_base": 2**70}, "sampling.seed_base"),
    "seed overflow": ({"seed_base": 2**32 - 3, "repetitions": 2}, "largest request seed"),
    "temperature inf": ({"temperature": ".inf"}, "sampling.temperature"),
    "temperature nan": ({"temperature": ".nan"}, "sampling.temperature"),
    "draft_max": ({"draft_max": 1_000_000}, "draft_max"),
    "repetitions": ({"repetitions": "1e9"}, "repetitions"),
    "warmups": ({"warmups": "1e7"}, "warmups"),
    "bootstrap": ({"resamples": "1e8"}, "dispersion.bootstrap_resamples"),
    "threads": ({"condition": ", threads: 1000"}, "threads"),
    "requests": ({"repetitions": 40_000, "condition": ", concurrency: 16"}, "requests planned"),
}


def _write(tmp_path, **changes) -> object:
    path = tmp_path / "plan.yaml"
    path.write_text(BASE.format(**{**GOOD, **changes}), encoding="utf-8")
    return path


def test_the_base_plan_loads(tmp_path):
    assert load_plan(_write(tmp_path)).repetitions == 3


@pytest.mark.parametrize("case", BAD)
def test_out_of_bounds_values_are_refused_naming_the_field(case, tmp_path):
    changes, named = BAD[case]
    with pytest.raises(ConfigError, match=named.replace(".", r"\.")):
        load_plan(_write(tmp_path, **changes))


@pytest.mark.parametrize("case", ["seed_base", "temperature inf", "repetitions"])
def test_measure_refuses_with_exit_2_and_creates_nothing(case, tmp_path, capsys):
    path = _write(tmp_path, **BAD[case][0])
    data = tmp_path / "data"
    assert main(["measure", "--plan", str(path), "--data", str(data)]) == 2
    assert not data.exists()
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "Traceback" not in err


def test_a_ten_megabyte_title_is_refused(tmp_path):
    path = tmp_path / "plan.yaml"
    path.write_text(BASE.format(**GOOD).replace('en: "Bounds"', "en: " + "x" * 10_000_000))
    with pytest.raises(ConfigError, match="title.en has 10,000,000 characters"):
        load_plan(path)


def test_a_version_label_naming_a_site_file_is_refused(tmp_path, capsys):
    from tests.sitefixtures import PROJECT, publishable_campaign

    publishable_campaign(tmp_path / "data")
    build = ["build", "--data", str(tmp_path / "data"), "--site", str(tmp_path / "site")]
    assert main([*build, "--project", str(PROJECT), "--version", "versions.json"]) == 2
    assert "--version: version label 'versions.json' is not allowed" in capsys.readouterr().err
    assert not (tmp_path / "site").exists()
