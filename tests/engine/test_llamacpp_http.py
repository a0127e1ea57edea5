"""``llamacpp-http`` against the real HTTP listener that ``xllamacpp.Server`` opens on
127.0.0.1 (gemma-3-270m on CPU), measured through the runner like any campaign."""

from __future__ import annotations

import os
import socket
from pathlib import Path

import pytest

from sitegen.cli import main
from sitegen.core.errors import EngineError
from sitegen.engine.llamacpp_http import LlamaCppHttp, speculative_contradiction
from sitegen.engine.server import model_provenance
from sitegen.measure import run_campaign
from sitegen.plan.plan_file import canonical_plan_json
from sitegen.plan.plan_models import ConditionSpec, InputSpec, ModelSpec, Plan, SpeculativeSpec
from sitegen.records.record_models import TrialRecord
from tests.engine.conftest import CONTEXT, GEMMA

MODEL = GEMMA
REPEATING = "Codes: A-101, B-202, C-303, D-404, E-505, A-101, B-202, C-303, D-404, E-505,"


def make_plan(
    base_url: str,
    *,
    speculative: SpeculativeSpec | None = None,
    api: str = "completion",
    inputs: list[InputSpec] | None = None,
    request_timeout_s: float = 60.0,
    model: ModelSpec = MODEL,
    **options: str | int | float | bool,
) -> Plan:
    return Plan(
        name="http",
        title={"ja": "HTTPテスト", "en": "HTTP test"},
        engine="llamacpp-http",
        api=api,
        model=model,
        conditions=[
            ConditionSpec(
                id="c",
                speculative=speculative or SpeculativeSpec(),
                context_capacity=CONTEXT,
                engine_options={"base_url": base_url, "server_pid": os.getpid(), **options},
            )
        ],
        inputs=inputs
        or [
            InputSpec(
                id="prose",
                text="The harbour town began as a fishing village that",
                target_prompt_tokens=64,
                max_output_tokens=8,
            )
        ],
        repetitions=2,
        warmups=0,
        request_timeout_s=request_timeout_s,
    )


def measure(plan: Plan, data_dir: Path) -> list[TrialRecord]:
    result = run_campaign(plan, data_dir)
    lines = (result.directory / "records.jsonl").read_text(encoding="utf-8").splitlines()
    return [TrialRecord.model_validate_json(line) for line in lines]


def assert_measured(record: TrialRecord, target: int) -> None:
    assert record.status == "ok", record.failure_reason
    metrics = record.metrics
    assert metrics is not None and metrics.finish == "length"
    assert metrics.generated_tokens == 8
    assert metrics.gen_tps is not None and metrics.gen_tps > 0
    assert metrics.native_tps is not None and metrics.native_tps > 0
    assert metrics.ttft_s is not None and 0 < metrics.ttft_s <= metrics.e2e_s
    assert abs(record.prompt_tokens - target) <= record.prompt_tolerance_tokens
    assert record.text and record.peak_memory and record.peak_memory[0].peak_mib > 0


def test_completion_campaign_measures_every_trial(server_url, tmp_path):
    records = measure(make_plan(server_url), tmp_path)
    assert len(records) == 2
    for record in records:
        assert_measured(record, target=64)
        assert record.metrics.draft_proposed is None
        assert record.engine_context_per_slot == CONTEXT
    provenance = records[0].provenance
    assert provenance.engine.id == "llamacpp-http" and provenance.engine.api == "http completion"
    assert provenance.model.file == "gemma-3-270m-q4_k_m.gguf"
    assert len(provenance.model.sha256) == 64
    assert provenance.flags["server_speculative"] == "false"
    assert provenance.flags["server_n_ctx_per_slot"] == str(CONTEXT)
    assert provenance.host.devices[0].id == "cpu"


def test_chat_campaign_counts_the_templated_prompt(server_url, tmp_path):
    inputs = [
        InputSpec(
            id="ask", text="Name three colours.", target_prompt_tokens=48, max_output_tokens=8
        )
    ]
    records = measure(make_plan(server_url, api="chat", inputs=inputs), tmp_path)
    for record in records:
        assert_measured(record, target=48)
        # The engine's count of the templated prompt is what the server reports.
        assert record.prompt_tokens <= 48


def test_ngram_server_reports_drafts(ngram_server_url, tmp_path):
    spec = SpeculativeSpec(mode="ngram-simple", draft_max=8, ngram_size=3)
    inputs = [InputSpec(id="repeat", text=REPEATING, max_output_tokens=8)]
    plan = make_plan(ngram_server_url, speculative=spec, inputs=inputs)
    records = measure(plan, tmp_path)
    for record in records:
        assert record.status == "ok", record.failure_reason
        assert record.metrics.draft_proposed > 0
        assert 0 <= record.metrics.draft_accepted <= record.metrics.draft_proposed
    assert records[0].provenance.flags["server_speculative"] == "true"


def test_condition_that_contradicts_the_server_fails_to_load(ngram_server_url, tmp_path):
    records = measure(make_plan(ngram_server_url), tmp_path)
    assert [r.status for r in records] == ["failed", "failed"]
    assert "declares speculative decoding off but the server drafts" in records[0].failure_reason


def test_wrong_context_capacity_fails_to_load(server_url, tmp_path):
    plan = make_plan(server_url)
    condition = plan.conditions[0].model_copy(update={"context_capacity": 2048})
    records = measure(plan.model_copy(update={"conditions": [condition]}), tmp_path)
    assert all("context capacity of 2048" in r.failure_reason for r in records)


def test_timeout_fails_the_trial_and_the_campaign_goes_on(server_url, tmp_path):
    inputs = [
        InputSpec(id="slow", text=REPEATING, max_output_tokens=8),
        InputSpec(id="next", text="Hello", max_output_tokens=2),
    ]
    records = measure(make_plan(server_url, inputs=inputs, request_timeout_s=0.02), tmp_path)
    assert len(records) == 4
    assert all(r.status == "failed" and "timeout" in r.failure_reason for r in records)
    assert all(r.metrics is not None and r.metrics.finish == "error" for r in records)
    # The server is free again afterwards.
    assert measure(make_plan(server_url), tmp_path / "after")[0].status == "ok"


def test_http_error_status_becomes_a_failed_record(server_url, tmp_path):
    inputs = [InputSpec(id="huge", text="word " * 2000, max_output_tokens=4)]
    records = measure(make_plan(server_url, inputs=inputs), tmp_path)
    assert all("HTTP 400" in r.failure_reason for r in records)
    assert "context size" in records[0].failure_reason


def test_refused_connection_is_a_load_failure(tmp_path):
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        closed_port = probe.getsockname()[1]
    plan = make_plan(f"http://127.0.0.1:{closed_port}", ready_timeout_s=0.3)
    result = run_campaign(plan, tmp_path)
    assert result.written == 2 and result.failed == 2
    records = measure(plan, tmp_path)  # resumes: nothing left to run
    assert all("load failure" in r.failure_reason for r in records)
    assert "not ready after 0.3 s" in records[0].failure_reason
    assert "refused" in records[0].failure_reason.lower()


def test_speculative_contradiction_rules():
    off = SpeculativeSpec()
    mtp = SpeculativeSpec(mode="draft-mtp", draft_max=2)
    assert speculative_contradiction(off, False, "none") is None
    assert speculative_contradiction(off, None, None) is None
    assert "drafts" in speculative_contradiction(off, True, "none")
    assert "ngram-simple" in speculative_contradiction(off, None, "ngram-simple")
    # /props says "none" while the server drafts on some builds: no evidence either way.
    assert speculative_contradiction(mtp, True, "none") is None
    assert speculative_contradiction(mtp, None, "none,draft-mtp") is None
    assert "speculative decoding off" in speculative_contradiction(mtp, False, None)
    assert "ngram-mod" in speculative_contradiction(mtp, True, "ngram-mod")


def test_engine_can_be_used_directly(server_url):
    plan = make_plan(server_url)
    engine = LlamaCppHttp(plan, plan.conditions[0])
    try:
        assert engine.count_tokens("Hello world") == 3  # BOS + 2
        assert [p.source for p in engine.memory_probes()] == ["process-rss"]
    finally:
        engine.close()


def test_model_provenance_local_remote_and_mismatch():
    local = model_provenance(MODEL, "/srv/models/gemma-3-270m-q4_k_m.gguf")
    assert local.size_bytes > 0 and len(local.sha256) == 64
    remote_spec = MODEL.model_copy(
        update={"source": "/nowhere/big-model.gguf", "remote_unhashable": True}
    )
    remote = model_provenance(remote_spec, "/srv/models/big-model.gguf")
    assert (remote.file, remote.sha256, remote.size_bytes) == (
        "big-model.gguf",
        "unknown-remote",
        0,
    )
    undeclared = remote_spec.model_copy(update={"remote_unhashable": False})
    with pytest.raises(EngineError, match="cannot be hashed.*remote_unhashable: true"):
        model_provenance(undeclared, "/srv/models/big-model.gguf")
    with pytest.raises(EngineError, match="the server serves '/srv/other.gguf'"):
        model_provenance(MODEL, "/srv/other.gguf")
    # A remote file is checked by name too, though it cannot be hashed.
    with pytest.raises(EngineError, match="expected one of: big-model.gguf, gemma-3-270m"):
        model_provenance(remote_spec, "/srv/other.gguf")


@pytest.mark.slow
def test_unhashable_remote_model_needs_the_declaration(server_url, tmp_path):
    elsewhere = MODEL.model_copy(update={"source": "/srv/models/gemma-3-270m-q4_k_m.gguf"})
    records = measure(make_plan(server_url, model=elsewhere), tmp_path)
    assert [r.status for r in records] == ["failed", "failed"]
    assert "cannot be hashed" in records[0].failure_reason
    assert "remote_unhashable: true" in records[0].failure_reason
    declared = elsewhere.model_copy(update={"remote_unhashable": True})
    records = measure(make_plan(server_url, model=declared), tmp_path / "declared")
    assert all(r.status == "ok" for r in records), records[0].failure_reason
    assert records[0].provenance.model.sha256 == "unknown-remote"


def test_a_local_server_without_a_pid_is_found_by_its_port(server_url):
    """The listener runs in this test process: its RSS is the server's memory."""
    plan = make_plan(server_url)
    options = {k: v for k, v in plan.conditions[0].engine_options.items() if k != "server_pid"}
    condition = plan.conditions[0].model_copy(update={"engine_options": options})
    engine = LlamaCppHttp(plan, condition)
    try:
        (probe,) = engine.memory_probes()
        assert probe.source == "process-rss" and probe.pid == os.getpid()
        assert probe.read_mib() > 100
    finally:
        engine.close()


def _measure_cli(plan: Plan, tmp_path: Path) -> int:
    path = tmp_path / "plan.json"
    path.write_text(canonical_plan_json(plan), encoding="utf-8")
    return main(["measure", "--plan", str(path), "--data", str(tmp_path / "data")])


def test_preflight_passes_and_the_run_measures(server_url, tmp_path, capsys):
    assert _measure_cli(make_plan(server_url), tmp_path) == 0
    captured = capsys.readouterr()
    assert "2 trial(s) run, 0 already recorded, 0 failed" in captured.out
    assert "error" not in captured.err and "warning" not in captured.err


def test_preflight_refuses_a_server_serving_another_model(server_url, tmp_path, capsys):
    other = MODEL.model_copy(
        update={"name": "other", "source": "/srv/other.gguf", "remote_unhashable": True}
    )
    assert _measure_cli(make_plan(server_url, model=other), tmp_path) == 2
    err = capsys.readouterr().err
    assert (
        f"error: plan http: condition 'c': llama-server at {server_url}: the server serves" in err
    )
    assert "but the plan's model is 'other'" in err
    assert not (tmp_path / "data").exists()
