"""Typed engine options: one model per registered engine, checked without importing any
engine; location options recorded but not compared."""

from __future__ import annotations

import subprocess
import sys
from typing import get_type_hints

import pytest

from sitegen.core.errors import ConfigError
from sitegen.core.strict_model import field_docstrings
from sitegen.engine.engines import get_engine_class
from sitegen.plan.engine_registry import (
    ENGINES,
    location_options,
    options_model,
    parse_engine_options,
    validate_engine_options,
)
from sitegen.plan.plan_models import ConditionSpec, SpeculativeSpec
from sitegen.statistics.speed import condition_differences
from tests.conftest import make_plan

MTP = SpeculativeSpec(mode="draft-mtp", draft_max=3)


def http_plan(*conditions: ConditionSpec):
    return make_plan(engine="llamacpp-http", conditions=list(conditions))


@pytest.mark.parametrize("engine_id", sorted(ENGINES))
def test_every_engine_has_a_documented_options_model(engine_id):
    model = options_model(engine_id)
    assert model.model_config["extra"] == "forbid"
    undocumented = [name for name in model.model_fields if name not in field_docstrings(model)]
    assert not undocumented, f"{engine_id}: fields without a docstring: {undocumented}"
    model()  # every option has a default: a condition may set none


@pytest.mark.parametrize("engine_id", sorted(ENGINES))
def test_the_engine_reads_the_registered_options_model(engine_id):
    # Importing the engine module is light: heavy packages load when an engine is built.
    engine_class = get_engine_class(engine_id)
    assert get_type_hints(engine_class)["options"] is ENGINES[engine_id].options_model
    assert engine_class.engine_id == engine_id


def test_location_options_are_declared_on_the_fields():
    assert location_options("llamacpp-http") == {"base_url", "server_pid", "memory_unavailable"}
    assert location_options("openai") == {
        "base_url",
        "server_pid",
        "api_key_env",
        "memory_unavailable",
    }
    assert location_options("exllamav3") == location_options("llamacpp-embedded") == set()
    with pytest.raises(ConfigError, match="unknown engine 'vllm'"):
        location_options("vllm")


def test_unknown_key_names_condition_engine_key_and_allowed_keys():
    plan = http_plan(
        ConditionSpec(id="on", context_capacity=512, engine_options={"base_ulr": "http://h:1"})
    )
    with pytest.raises(ConfigError) as caught:
        validate_engine_options(plan)
    assert str(caught.value) == (
        "condition 'on': engine 'llamacpp-http' has no option 'base_ulr' "
        "(allowed: base_url, memory_unavailable, ready_timeout_s, server_pid)"
    )


def test_ill_typed_value_is_refused():
    plan = http_plan(
        ConditionSpec(id="on", context_capacity=512, engine_options={"ready_timeout_s": "soon"})
    )
    with pytest.raises(ConfigError) as caught:
        validate_engine_options(plan)
    message = str(caught.value)
    assert message.startswith("condition 'on': engine 'llamacpp-http' option 'ready_timeout_s': ")
    assert "valid number" in message and "'soon'" in message and "\n" not in message


def test_a_bad_base_url_is_refused_when_the_plan_loads():
    plan = http_plan(
        ConditionSpec(id="c", context_capacity=512, engine_options={"base_url": "localhost:80"})
    )
    with pytest.raises(ConfigError, match="option 'base_url': must start with http://"):
        validate_engine_options(plan)


def test_a_key_shared_by_conditions_is_named_once():
    shared = {"tps": 10, "retries": 3}
    plan = make_plan(
        conditions=[
            ConditionSpec(id="off", context_capacity=512, engine_options=shared),
            ConditionSpec(id="on", context_capacity=512, engine_options={**shared, "tps": 0}),
        ]
    )
    with pytest.raises(ConfigError) as caught:
        validate_engine_options(plan)
    assert str(caught.value) == (
        "conditions 'off', 'on': engine 'fake' has no option 'retries' (allowed: fail_input, "
        "thinking_tokens, tps); condition 'on': engine 'fake' option 'tps': input should be greater than 0 "
        "(got 0)"
    )


def test_unknown_engine_is_refused():
    with pytest.raises(ConfigError, match="unknown engine 'vllm' \\(known: exllamav3, fake"):
        validate_engine_options(make_plan(engine="vllm"))


def test_typed_values():
    condition = ConditionSpec(
        id="c",
        context_capacity=512,
        engine_options={"use_per_device": "23,23.5", "cache_quant": "8,6", "tensor_p": True},
    )
    options = parse_engine_options("exllamav3", condition)
    assert (options.use_per_device, options.cache_quant, options.tp_backend) == (
        [23.0, 23.5],
        (8, 6),
        "native",
    )
    url = ConditionSpec(id="c", context_capacity=512, engine_options={"base_url": "http://h:1/"})
    assert parse_engine_options("openai", url).base_url == "http://h:1"


def test_location_options_do_not_make_conditions_differ():
    off = ConditionSpec(
        id="off",
        context_capacity=8192,
        engine_options={"base_url": "http://127.0.0.1:8080", "ready_timeout_s": 60},
    )
    on = ConditionSpec(
        id="on",
        speculative=MTP,
        context_capacity=8192,
        engine_options={"base_url": "http://127.0.0.1:8081", "ready_timeout_s": 60},
    )
    assert condition_differences(off, on, "speculative", "llamacpp-http") == ()
    slower = on.model_copy(update={"engine_options": {**on.engine_options, "server_pid": 7}})
    assert condition_differences(off, slower, "speculative", "llamacpp-http") == ()
    waits = on.model_copy(update={"engine_options": {"ready_timeout_s": 600}})
    assert condition_differences(off, waits, "speculative", "llamacpp-http") == ("engine_options",)


def test_checking_options_imports_no_engine():
    # Plans are loaded on machines without the engines' dependencies, and quickly.
    code = (
        "import sys; from sitegen.plan.plan_file import load_plan; "
        "from sitegen.plan.engine_registry import validate_engine_options; "
        "heavy = {'torch', 'exllamav3', 'xllamacpp', 'httpx'} & set(sys.modules); "
        "engines = [m for m in sys.modules if m.startswith('sitegen.engine')]; "
        "print(sorted(heavy), engines)"
    )
    output = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert output.strip() == "[] []"
