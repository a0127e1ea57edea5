"""The system table per condition (method page, ``system.csv``), peak memory per trial and
device (``memory.csv``), split-GGUF shard hashes, and the latency breakdown (prefill time,
first text, natural finish, thinking vs answer tokens) from the engine to the speed page."""

from __future__ import annotations

import hashlib
import io
import sys
from types import SimpleNamespace

import pandas as pd
import pyarrow.parquet as pq
import pytest

from sitegen.commands.build import render_site
from sitegen.core.errors import ConfigError
from sitegen.engine.exllamav3 import result_to_events
from sitegen.engine.model_files import describe_model, gguf_shards
from sitegen.engine.nvml import nvml_cuda_version
from sitegen.engine.openai_stream import OpenAIStreamParser
from sitegen.pages.downloads import make_downloads
from sitegen.pages.render import check_rendered
from sitegen.pages.schema import field_dictionary
from sitegen.plan.plan_models import ConditionSpec, ModelSpec, SamplingOverride, SpeculativeSpec
from sitegen.records.campaign import read_campaigns
from sitegen.records.metrics import compute_metrics
from sitegen.records.record_models import TrialRecord
from sitegen.records.stream import StreamChunk, StreamEnd
from sitegen.records.table import RecordTable
from sitegen.statistics.report import make_report
from sitegen.statistics.system import memory_frame, system_table
from sitegen.statistics.trials import enters_statistics
from tests.conftest import make_plan
from tests.sitefixtures import PROJECT, publishable_campaign

# --------------------------------------------------------------------------- engine → metrics


def test_metrics_carry_prefill_and_split_token_counts():
    chunks = [StreamChunk(1.0, reasoning="hm"), StreamChunk(1.5, answer="42")]
    end = StreamEnd(
        t=2.0,
        finish="stop",
        generated_tokens=5,
        prompt_processing_s=0.25,
        reasoning_tokens=2,
        answer_tokens=1,
    )
    m = compute_metrics(0.5, chunks, end)
    assert m.prompt_processing_s == 0.25
    assert (m.reasoning_tokens, m.answer_tokens) == (2, 1)
    assert m.t_first_visible_s == pytest.approx(0.5)
    assert m.t_first_answer_s == pytest.approx(1.0)
    assert m.t_natural_finish_s == pytest.approx(1.5)
    unknown = compute_metrics(0.0, chunks, StreamEnd(t=2.0, finish="length", generated_tokens=5))
    assert unknown.prompt_processing_s is None and unknown.reasoning_tokens is None
    assert unknown.t_natural_finish_s is None


def test_llamacpp_final_chunk_timings_give_prompt_processing_seconds():
    parser = OpenAIStreamParser(speculative=False)
    parser.feed({"choices": [{"delta": {"content": "a"}, "finish_reason": None}]}, 1.0)
    parser.feed(
        {
            "choices": [{"delta": {}, "finish_reason": "stop"}],
            "timings": {"prompt_n": 25, "prompt_ms": 331.064, "predicted_n": 1},
        },
        1.1,
    )
    assert parser.end().prompt_processing_s == pytest.approx(0.331064)
    bare = OpenAIStreamParser(speculative=False)
    bare.feed({"choices": [{"delta": {"content": "a"}, "finish_reason": "stop"}]}, 1.0)
    assert bare.end().prompt_processing_s is None


def test_exllamav3_prefill_time_is_its_time_prefill():
    end = result_to_events(
        [
            {
                "stage": "streaming",
                "text": "ok",
                "eos": True,
                "eos_reason": "stop_token",
                "new_tokens": 2,
                "time_prefill": 0.42,
                "time_generate": 0.1,
            }
        ],
        lambda: 1.0,
    )[-1]
    assert isinstance(end, StreamEnd) and end.prompt_processing_s == 0.42
    assert end.reasoning_tokens is None  # ExLlamaV3 does not stream thinking apart


def test_metric_fields_reach_the_trials_table_and_the_data_dictionary(tmp_path):
    plan = make_plan(
        conditions=[
            ConditionSpec(id="off", context_capacity=512, engine_options={"thinking_tokens": 3}),
            ConditionSpec(
                id="on",
                speculative=SpeculativeSpec(mode="ngram-simple", draft_max=4),
                context_capacity=512,
            ),
        ]
    )
    publishable_campaign(tmp_path, plan)
    campaigns, issues = read_campaigns(tmp_path)
    assert issues == []
    report = make_report(campaigns[0])
    trials = report.usable_speed_trials
    thinking = trials[trials["condition_id"] == "off"]
    assert (thinking["reasoning_tokens"] == 3).all()
    assert (
        thinking["reasoning_tokens"] + thinking["answer_tokens"] == thinking["generated_tokens"]
    ).all()
    assert (thinking["t_first_answer_s"] > thinking["t_first_visible_s"]).all()
    assert (thinking["t_first_visible_s"] == thinking["ttft_s"]).all()
    plain = trials[trials["condition_id"] == "on"]
    assert plain["reasoning_tokens"].isna().all() and plain["answer_tokens"].isna().all()
    assert (trials["prompt_processing_s"] == 0.01).all()
    row = report.summary.set_index(["condition_id", "input_id"]).loc[("off", "short")]
    assert row["reasoning_tokens_median"] == 3
    assert row["prompt_processing_s_median"] == pytest.approx(0.01)
    assert row["t_natural_finish_s_n"] == row["n"]
    documented = {name for name, *_ in field_dictionary(TrialRecord)}
    for field in ("prompt_processing_s", "reasoning_tokens", "answer_tokens"):
        assert any(name.endswith(field) for name in documented), field
    assert any(name.endswith("shards") for name in documented)
    assert any(name.endswith("gpu_runtime") for name in documented)


# --------------------------------------------------------------------------- split GGUF


def test_every_shard_of_a_split_gguf_is_hashed(tmp_path):
    contents = [b"first", b"second shard", b"third"]
    for k, data in enumerate(contents, start=1):
        (tmp_path / f"big-0000{k}-of-00003.gguf").write_bytes(data)
    first = tmp_path / "big-00001-of-00003.gguf"
    spec = ModelSpec(name="big", source=str(first), quantization="Q4_K_M")
    info = describe_model(spec, first)
    assert [s.file for s in info.shards] == [f"big-0000{k}-of-00003.gguf" for k in (1, 2, 3)]
    assert [s.sha256 for s in info.shards] == [hashlib.sha256(c).hexdigest() for c in contents]
    assert info.sha256 == hashlib.sha256(b"first").hexdigest()
    assert info.size_bytes == sum(len(c) for c in contents)
    (tmp_path / "big-00003-of-00003.gguf").unlink()
    with pytest.raises(ConfigError, match="big-00003-of-00003.gguf"):
        gguf_shards(first)
    single = tmp_path / "small.gguf"
    single.write_bytes(b"x")
    assert describe_model(spec, single).shards == []


# --------------------------------------------------------------------------- system table


def _sweep_plan():
    return make_plan(
        conditions=[
            ConditionSpec(id="off", context_capacity=512),
            ConditionSpec(
                id="on",
                speculative=SpeculativeSpec(mode="ngram-simple", draft_max=4),
                context_capacity=1024,
                sampling=SamplingOverride(temperature=0.7),
            ),
        ],
        template_kwargs={"enable_thinking": False},
        record_env=["NCCL_P2P_DISABLE"],
    )


def _gpu_provenance(record: dict) -> None:
    """Two GPUs on an NVLink host; one 'on' trial ran under another driver, and the model
    is a split GGUF."""
    host = record["provenance"]["host"]
    host["devices"] = [
        {"id": f"cuda:{i}", "name": "NVIDIA H100 80GB HBM3", "memory_total_mib": 81559.0}
        for i in range(2)
    ]
    host["driver"] = "575.57.08" if record["trial_id"] != "on/short/r1" else "580.65.06"
    host["gpu_runtime"] = "CUDA 12.9"
    host["interconnect"] = "NVLink (18 active links per GPU)"
    host["cpu"] = "AMD EPYC 9654"
    record["provenance"]["model"]["shards"] = [
        {"file": f"m-0000{k}-of-00002.gguf", "sha256": f"{k}" * 64, "size_bytes": k} for k in (1, 2)
    ]
    record["provenance"]["env"] = {"NCCL_P2P_DISABLE": "1"}
    record["peak_memory"] = [
        {
            "device": f"cuda:{i}",
            "source": "nvml-used",
            "peak_mib": 1000.0 + i,
            "sample_interval_s": 0.1,
        }
        for i in range(2)
    ]


@pytest.fixture(scope="module")
def gpu_site(tmp_path_factory):
    data = tmp_path_factory.mktemp("data")
    publishable_campaign(data, _sweep_plan(), mutate=_gpu_provenance)
    return render_site(data, PROJECT)


def _rows(condition):
    return {row.name: row for row in condition.rows}


def test_system_table_lists_each_distinct_value_per_condition(gpu_site):
    report = gpu_site.reports[0]
    conditions = {c.condition_id: c for c in report.system}
    assert list(conditions) == ["off", "on"]
    rows = report.campaign.rows
    usable = rows[enters_statistics(rows)]
    on = conditions["on"]
    assert on.records == (usable["condition_id"] == "on").sum()
    rows = _rows(on)
    drivers = {v.value: v.records for v in rows["driver"].values}
    assert drivers == {"575.57.08": on.records - 1, "580.65.06": 1}
    assert on.differs(rows["driver"])
    # Several values in every record (two shards) are not a difference between records.
    assert [v.value for v in rows["model_shards"].values] == [
        f"m-0000{k}-of-00002.gguf sha256 {str(k) * 64}" for k in (1, 2)
    ]
    assert not on.differs(rows["model_shards"])
    assert [v.value for v in rows["device_count"].values] == [2]
    assert [v.value for v in rows["sampling_temperature"].values] == [0.7]
    assert [v.value for v in _rows(conditions["off"])["sampling_temperature"].values] == [0.0]
    assert [v.value for v in rows["context_capacity"].values] == [1024]
    assert [v.value for v in rows["template.enable_thinking"].values] == [False]
    assert [v.value for v in rows["env.NCCL_P2P_DISABLE"].values] == ["1"]
    assert [v.value for v in rows["flags.spec_type"].values] == ["ngram-simple"]
    assert [v.value for v in rows["gpu_runtime"].values] == ["CUDA 12.9"]
    assert [v.value for v in rows["cpu"].values] == ["AMD EPYC 9654"]


def test_system_and_memory_downloads(gpu_site, tmp_path):
    report = gpu_site.reports[0]
    files = {f.name: f for f in make_downloads(report, tmp_path)}
    for name in ("system.csv", "system.parquet", "memory.csv", "memory.parquet"):
        assert name in files
        assert name in files["SHA256SUMS"].read_bytes().decode()
    system = pq.read_table(io.BytesIO(files["system.parquet"].read_bytes())).to_pandas()
    drivers = system[(system["condition_id"] == "on") & (system["field"] == "driver")]
    assert sorted(drivers["value"]) == ["575.57.08", "580.65.06"]
    assert set(system.columns) == {"condition_id", "field", "value", "records", "condition_records"}
    memory = pq.read_table(io.BytesIO(files["memory.parquet"].read_bytes())).to_pandas()
    records = list(report.campaign.iter_full_records())
    assert len(memory) == sum(len(r.peak_memory) for r in records) == 2 * len(records)
    first = memory[memory["trial_id"] == "on/short/r0"].sort_values("device")
    assert list(first["device"]) == ["cuda:0", "cuda:1"]
    assert list(first["peak_mib"]) == [1000.0, 1001.0]
    assert set(first["device_name"]) == {"NVIDIA H100 80GB HBM3"}
    csv = pd.read_csv(io.BytesIO(files["memory.csv"].read_bytes()), encoding="utf-8-sig")
    assert len(csv) == len(memory)


def test_memory_frame_without_readings_is_empty_with_columns():
    frame = memory_frame(RecordTable.of([]))
    assert len(frame) == 0 and "peak_mib" in frame.columns


def test_pages_show_system_and_latency_tables_with_their_caveats(gpu_site):
    assert check_rendered(gpu_site.docs, gpu_site.reports) == []
    slug = gpu_site.reports[0].slug
    for suffix in ("", ".en"):
        method = gpu_site.docs[f"reports/{slug}/method{suffix}.md"].decode()
        system = method[method.index('data-claim="system-table"') :]
        for caveat in ("C-HARDWARE", "C-CAPACITY"):
            assert f'data-caveat="{caveat}"' in system
        assert "580.65.06" in system and "1" * 64 in system and "CUDA 12.9" in system
        speed = gpu_site.docs[f"reports/{slug}/speed{suffix}.md"].decode()
        latency = speed[speed.index('data-claim="latency-table"') :]
        for caveat in ("C-UNITS", "C-HARDWARE", "C-CAPACITY"):
            assert f'data-caveat="{caveat}"' in latency
    en = gpu_site.docs[f"reports/{slug}/method.en.md"].decode()
    assert "in 1 of" in en  # the driver that only one record shows, with its count


@pytest.mark.parametrize(
    ("page", "claim", "rule"),
    [
        ("speed", "latency-table", "C-UNITS"),
        ("speed", "latency-table", "C-CAPACITY"),
        ("speed", "latency-table", "C-HARDWARE"),
        ("method", "system-table", "C-HARDWARE"),
        ("method", "system-table", "C-CAPACITY"),
    ],
)
def test_a_table_without_its_caveat_fails_the_build(gpu_site, page, claim, rule):
    slug = gpu_site.reports[0].slug
    path = f"reports/{slug}/{page}.md"
    html = gpu_site.docs[path].decode()
    start = html.index(f'data-claim="{claim}"')
    broken_tail = html[start:].replace(f'data-caveat="{rule}"', "")
    broken = dict(gpu_site.docs)
    broken[path] = (html[:start] + broken_tail).encode()
    issues = check_rendered(broken, gpu_site.reports)
    assert any(i.rule == rule and path in i.location for i in issues)


def test_records_without_the_new_fields_stay_valid(gpu_site):
    record = next(
        r
        for r in gpu_site.reports[0].campaign.iter_full_records()
        if (r.role, r.status) == ("measured", "ok")
    )
    dumped = record.model_dump(mode="json")
    for field in ("prompt_processing_s", "reasoning_tokens", "answer_tokens"):
        dumped["metrics"].pop(field)
    dumped["provenance"]["model"].pop("shards")
    for field in ("cpu", "gpu_runtime"):
        dumped["provenance"]["host"].pop(field)
    old = TrialRecord.model_validate(dumped)
    assert old.metrics.prompt_processing_s is None and old.provenance.model.shards == []
    assert system_table(RecordTable.of([old]), gpu_site.reports[0].plan)


def test_cuda_version_from_nvml(monkeypatch):
    class NVMLError(Exception):
        pass

    def v2():
        raise NVMLError("not supported")  # older drivers: fall back to the first call

    fake = SimpleNamespace(
        NVMLError=NVMLError,
        nvmlInit=lambda: None,
        nvmlSystemGetCudaDriverVersion_v2=v2,
        nvmlSystemGetCudaDriverVersion=lambda: 12040,
    )
    monkeypatch.setitem(sys.modules, "pynvml", fake)
    assert nvml_cuda_version() == "CUDA 12.4"
    monkeypatch.setitem(sys.modules, "pynvml", None)
    assert nvml_cuda_version() is None
