""" "Factor alone" only on positive evidence (C-CONFDIFF): every field other than the
declared factor recorded on both sides and equal; an unrecorded value equals nothing."""

from __future__ import annotations

import pytest

from sitegen.plan.plan_models import ConditionSpec, ModelSpec
from sitegen.records.record_models import UNKNOWN_REMOTE_SHA256
from sitegen.records.table import RecordTable
from sitegen.statistics.setups import SETUP_FIELDS, compare_records, is_unrecorded
from sitegen.statistics.speed import compare_conditions, speed_summary
from sitegen.statistics.trials import trials_frame, usable
from tests.conftest import make_plan
from tests.recordfixtures import MTP, h100_provenance, make_record, records_for


def gpus(name: str, count: int = 2, **host) -> dict:
    provenance = h100_provenance(count)
    for device in provenance["host"]["devices"]:
        device["name"] = name
    provenance["host"].update(host)
    return provenance


def side(provenance: dict, input_id: str = "short", prompt: str | None = None) -> list:
    return [
        make_record("off", input_id, rate, i, provenance=provenance, prompt=prompt)
        for i, rate in enumerate((50.0, 51.0, 52.0))
    ]


def test_the_same_setup_on_other_devices_differs_in_the_devices_alone():
    result = compare_records(side(gpus("H100")), side(gpus("B200")), "devices")
    assert result.factor_alone and result.factor_differs
    assert (result.differing, result.unrecorded) == ((), ())


def test_h100x2_and_b200x2_with_other_drivers_or_none_recorded_are_not_the_devices_alone():
    """The audit's case: two llama.cpp campaigns on H100×2 and B200×2, factor devices."""
    h100 = side(gpus("H100"))
    other_driver = compare_records(h100, side(gpus("B200", driver="570.86.10")), "devices")
    assert other_driver.differing == ("driver",) and not other_driver.factor_alone
    unknown = compare_records(
        h100, side(gpus("B200", driver=None, interconnect=None, cpu=None)), "devices"
    )
    assert unknown.differing == () and not unknown.factor_alone
    assert unknown.unrecorded == ("driver", "interconnect", "cpu")


@pytest.mark.parametrize(
    ("path", "value"),
    [
        (("engine",), {"id": "openai", "version": "unknown", "build": "unknown", "api": "http"}),
        (
            ("engine",),
            {
                "id": "llamacpp-http",
                "version": "llama-server b0-unknown",
                "build": "b0-unknown",
                "api": "http",
            },
        ),
        (("model", "sha256"), UNKNOWN_REMOTE_SHA256),
        (("model", "sha256"), ""),
        (("host", "gpu_runtime"), None),
        (("env",), {}),
        (("flags",), {}),
        (("host", "devices"), []),
    ],
)
def test_an_unrecorded_value_is_never_equal_even_to_itself(path, value):
    provenance = h100_provenance()
    target = provenance
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    result = compare_records(side(provenance), side(provenance), "devices")
    assert not result.factor_alone and result.unrecorded and not result.differing


def test_every_field_is_compared():
    """Each field, changed on one side alone, is named as differing."""
    base = side(h100_provenance())
    changes = {
        "engine_build": lambda p: p["engine"].update(build="b6600-0a0a0a0"),
        "model_file": lambda p: p["model"].update(sha256="cd" * 32),
        "quantization": lambda p: p["model"].update(quantization="Q8_0"),
        "gpu_runtime": lambda p: p["host"].update(gpu_runtime="CUDA 12.8"),
        "interconnect": lambda p: p["host"].update(interconnect="PCIe"),
        "environment": lambda p: p["env"].update(NCCL_P2P_DISABLE="1"),
        "platform": lambda p: p["host"].update(platform="Linux 6.1.0 x86_64"),
        "cpu": lambda p: p["host"].update(cpu="Intel Xeon"),
        "template_kwargs": lambda p: p.update(template_kwargs={"enable_thinking": False}),
        "flags": lambda p: p["flags"].update(threads="16"),
    }
    for field, change in changes.items():
        provenance = h100_provenance()
        change(provenance)
        assert compare_records(base, side(provenance), None).differing == (field,), field
    other_text = side(h100_provenance(), prompt="another text")
    assert compare_records(base, other_text, None).differing == ("input_text",)
    assert set(changes) | {"input_text"} <= set(SETUP_FIELDS)


def test_location_options_and_the_factor_s_own_flags_are_no_difference():
    left, right = h100_provenance(), h100_provenance()
    left["engine"]["id"] = right["engine"]["id"] = "llamacpp-http"
    left["flags"].update(base_url="http://a:8080", spec_type="none")
    right["flags"].update(base_url="http://b:9090", spec_type="draft-mtp", spec_draft_n_max="3")
    assert compare_records(side(left), side(right), "speculative").factor_alone
    assert compare_records(side(left), side(right), None).differing == ("flags",)


def test_an_engine_describes_itself_by_whatever_of_version_and_build_it_reported():
    """A pip package's version names its build (llama.cpp inside reports ``b0-unknown``);
    a server may state its version alone."""
    left, right = h100_provenance(), h100_provenance()
    left["engine"]["build"] = right["engine"]["build"] = "b0-unknown"
    assert compare_records(side(left), side(right), "devices").factor_alone
    right["engine"]["version"] = "xllamacpp 2026.11.12000"
    assert compare_records(side(left), side(right), "devices").differing == ("engine_build",)


def test_unrecorded_words():
    assert all(is_unrecorded(v) for v in (None, "", "  ", "unknown", "b0-unknown", "Unknown"))
    assert not any(is_unrecorded(v) for v in ("b6512-3f2a9c1", "none", "0", "fake"))


def _openai_record(condition: ConditionSpec, rate: float, repetition: int, server: dict):
    provenance = h100_provenance()
    provenance["engine"] = {
        "id": "openai",
        "version": server["version"],
        "build": server["build"],
        "api": "http chat",
    }
    provenance["model"].update(
        file=server["file"], sha256=server["sha256"], quantization=server["quantization"]
    )
    # A remote server: this host sees none of its devices.
    provenance["host"].update(devices=[], driver=None, interconnect=None, gpu_runtime=None)
    provenance["flags"] = {
        **{k: str(v) for k, v in condition.engine_options.items()},
        "model": server["model"],
        "api_path": "/v1/chat/completions",
        "spec_type": condition.speculative.mode,
    }
    return make_record(
        condition.id,
        "short",
        rate,
        repetition,
        speculative=condition.speculative,
        provenance=provenance,
    )


def _openai_plan():
    return make_plan(
        engine="openai",
        model=ModelSpec(name="glm", source="glm", quantization="Q4_K_M", remote_unhashable=True),
        conditions=[
            ConditionSpec(
                id="off", context_capacity=40960, engine_options={"base_url": "http://a:8080"}
            ),
            ConditionSpec(
                id="on",
                speculative=MTP,
                context_capacity=40960,
                engine_options={"base_url": "http://b:9090"},
            ),
        ],
        inputs=make_plan().inputs[:1],
    )


GGUF_SERVER = {
    "version": "unknown",
    "build": "unknown",
    "file": "glm",
    "sha256": UNKNOWN_REMOTE_SHA256,
    "quantization": "Q4_K_M",
    "model": "glm-4.5-air-q4_k_m.gguf",
}
EXL3_SERVER = GGUF_SERVER | {"model": "glm-4.5-air-exl3-4.0bpw"}


@pytest.mark.parametrize(
    ("servers", "differing", "unrecorded"),
    [
        # What an ``openai`` run records: nothing about either server's build or file.
        (
            (GGUF_SERVER, EXL3_SERVER),
            ("flags",),
            ("engine_build", "model_file", "devices", "device_count", "driver"),
        ),
        # Servers that describe themselves: the build and the model file differ.
        (
            (
                GGUF_SERVER | {"version": "llama.cpp", "build": "b6512", "sha256": "ab" * 32},
                EXL3_SERVER | {"version": "exllamav3", "build": "0.0.6", "sha256": "cd" * 32},
            ),
            ("engine_build", "model_file", "flags"),
            ("devices", "device_count", "driver"),
        ),
    ],
)
def test_two_openai_servers_of_other_engines_are_no_speculation_effect(
    servers, differing, unrecorded
):
    """The audit's case: two ``openai`` conditions served by a llama.cpp GGUF server and an
    ExLlamaV3 EXL3 server printed 1.35× "in the declared factor alone"."""
    plan = _openai_plan()
    off, on = plan.conditions
    records = [
        _openai_record(condition, rate, i, server)
        for condition, server, rates in ((off, servers[0], (40, 41)), (on, servers[1], (54, 55)))
        for i, rate in enumerate(rates)
    ]
    frame = trials_frame(RecordTable.of(records))
    (comparison,) = compare_conditions(plan, speed_summary(usable(frame)), records, usable(frame))
    assert comparison.ratio is None and not comparison.is_factor_only
    assert comparison.differing_fields == differing
    assert set(unrecorded) <= set(comparison.unrecorded_fields)


def test_a_plan_s_conditions_on_one_host_are_factor_only():
    records = records_for({("off", "short"): [50.0, 51.0], ("on", "short"): [60.0, 61.0]})
    frame = trials_frame(RecordTable.of(records))
    plan = make_plan(inputs=make_plan().inputs[:1])
    (comparison,) = compare_conditions(plan, speed_summary(usable(frame)), records, usable(frame))
    assert comparison.is_factor_only and comparison.ratio == pytest.approx(60.5 / 50.5)
