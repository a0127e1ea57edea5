#!/usr/bin/env python3
"""GPU check of the ``exllamav3`` engine: CUDA hosts only, never run on CPU machines.

Builds two tiny random-weight models locally (nothing is downloaded) and measures them
through ``sitegen.measure.run_campaign`` like any campaign:

* a 2-layer Llama (fp16 safetensors, loaded unquantized), speculative decoding off and
  ``draft`` with itself as the separate draft model (4 tokens): the draft equals the
  model, so nearly every draft token should be accepted;
* a 2-layer HunYuan-V3 with one MTP layer, off and ``draft-mtp`` (2 tokens): random MTP
  weights are rarely accepted; the point is that the MTP path loads and reports counts.
* a 2×2 sweep on the Llama: speculation off / ``draft`` (4 tokens) × temperature 0 / 0.7,
  with NVML telemetry sampled every 100 ms (SM and memory-bandwidth utilization, power,
  clock, temperature, energy); it prints each speculative level's ratio to its matched
  baseline with the bootstrap interval, the speculation-health findings, and the
  telemetry per condition.

It prints each record's key metrics and the NVML device facts, and writes
``summary.json`` to ``$OUT`` (or a temp folder).

On the GPU machine (offline), with the wheels carried in a git-ignored folder::

    pip install --no-index --find-links WHEELS rich pydantic ninja marisa-trie llguidance
    pip install --no-index --no-deps WHEELS/exllamav3-1.6.*.whl
    TORCH_CUDA_ARCH_LIST=9.0 python scripts/gpu_check_exllamav3.py --budget 480 [--tp]

The first ``import exllamav3`` JIT-compiles its CUDA extension (minutes, silent);
``TORCH_EXTENSIONS_DIR`` (default: a folder in the temp dir) keeps it for a rerun on the
same machine, which resumes a build that was cut off.
"""

from __future__ import annotations

import argparse
import glob
import importlib.util
import json
import os
import shutil
import sys
import tempfile
import time
from importlib.metadata import version
from pathlib import Path

T0 = time.monotonic()
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from sitegen.engine.nvml import nvml_devices  # noqa: E402
from sitegen.measure import run_campaign  # noqa: E402
from sitegen.plan.plan_file import campaign_id  # noqa: E402
from sitegen.plan.plan_models import (  # noqa: E402
    ConditionSpec,
    InputSpec,
    ModelSpec,
    Plan,
    SamplingOverride,
    SpeculativeSpec,
    TelemetrySpec,
)
from sitegen.records.campaign import CAMPAIGNS_DIR, read_campaign  # noqa: E402
from sitegen.records.record_models import TrialRecord  # noqa: E402
from sitegen.statistics.report import make_report  # noqa: E402

OUT = Path(os.environ.get("OUT") or Path(tempfile.gettempdir()) / "exl3_check_out")
WORK = Path(tempfile.gettempdir()) / "exl3_check_work"
CONTEXT = 2048  # a multiple of ExLlamaV3's 256-token cache page
VOCAB = 4096
summary: dict = {"campaigns": {}}


def log(*parts: object) -> None:
    print(f"[{time.monotonic() - T0:7.1f}s]", *parts, flush=True)


def save() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "summary.json").write_text(json.dumps(summary, indent=1, default=str))


# --- tiny models, built on the CPU in seconds -------------------------------------------


def make_tokenizer(directory: Path) -> None:
    """Byte-level BPE trained on the calibration text inside the exllamav3 wheel
    (``find_spec`` locates it without importing, so the JIT build is not triggered)."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    package = Path(list(importlib.util.find_spec("exllamav3").submodule_search_locations)[0])
    files = sorted(glob.glob(str(package / "conversion" / "standard_cal_data" / "*.utf8")))
    tokenizer = Tokenizer(models.BPE(unk_token=None))
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=VOCAB,
        special_tokens=["<unk>", "<s>", "</s>"],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tokenizer.train(files, trainer)
    directory.mkdir(parents=True, exist_ok=True)
    tokenizer.save(str(directory / "tokenizer.json"))
    special = {"bos_token": "<s>", "eos_token": "</s>", "unk_token": "<unk>"}
    (directory / "tokenizer_config.json").write_text(json.dumps(special))


def _writer(seed: int):
    import torch

    generator = torch.Generator().manual_seed(seed)

    def weight(*shape: int, std: float = 0.02):
        return (torch.randn(*shape, generator=generator) * std).half()

    def ones(n: int):
        return torch.ones(n, dtype=torch.half)

    return weight, ones


def _attention(
    tensors: dict, prefix: str, weight, ones, hidden, heads, kv_heads, head_dim, qk_norm
):
    tensors.update(
        {
            f"{prefix}.input_layernorm.weight": ones(hidden),
            f"{prefix}.post_attention_layernorm.weight": ones(hidden),
            f"{prefix}.self_attn.q_proj.weight": weight(heads * head_dim, hidden),
            f"{prefix}.self_attn.k_proj.weight": weight(kv_heads * head_dim, hidden),
            f"{prefix}.self_attn.v_proj.weight": weight(kv_heads * head_dim, hidden),
            f"{prefix}.self_attn.o_proj.weight": weight(hidden, heads * head_dim),
        }
    )
    if qk_norm:
        tensors[f"{prefix}.self_attn.q_norm.weight"] = ones(head_dim)
        tensors[f"{prefix}.self_attn.k_norm.weight"] = ones(head_dim)


def _mlp(tensors: dict, prefix: str, weight, hidden: int, intermediate: int) -> None:
    tensors[f"{prefix}.gate_proj.weight"] = weight(intermediate, hidden)
    tensors[f"{prefix}.up_proj.weight"] = weight(intermediate, hidden)
    tensors[f"{prefix}.down_proj.weight"] = weight(hidden, intermediate)


def make_llama(
    directory: Path, hidden=256, intermediate=768, layers=2, heads=4, kv_heads=2
) -> None:
    """Random fp16 Llama; a sharp lm_head avoids near-ties between draft and verify passes."""
    from safetensors.torch import save_file

    head_dim = hidden // heads
    config = {
        "architectures": ["LlamaForCausalLM"],
        "vocab_size": VOCAB,
        "hidden_size": hidden,
        "intermediate_size": intermediate,
        "num_hidden_layers": layers,
        "num_attention_heads": heads,
        "num_key_value_heads": kv_heads,
        "head_dim": head_dim,
        "hidden_act": "silu",
        "rms_norm_eps": 1e-6,
        "rope_theta": 10000.0,
        "max_position_embeddings": 4096,
        "tie_word_embeddings": False,
        "bos_token_id": 1,
        "eos_token_id": 2,
        "torch_dtype": "float16",
    }
    (directory / "config.json").write_text(json.dumps(config, indent=1))
    weight, ones = _writer(seed=0)
    tensors = {
        "model.embed_tokens.weight": weight(VOCAB, hidden),
        "model.norm.weight": ones(hidden),
        "lm_head.weight": weight(VOCAB, hidden, std=0.16),
    }
    for i in range(layers):
        prefix = f"model.layers.{i}"
        _attention(tensors, prefix, weight, ones, hidden, heads, kv_heads, head_dim, qk_norm=False)
        _mlp(tensors, f"{prefix}.mlp", weight, hidden, intermediate)
    save_file(tensors, str(directory / "model.safetensors"), metadata={"format": "pt"})


def make_hyv3_mtp(directory: Path, hidden=256, intermediate=768, layers=2, experts=8) -> None:
    """Random HunYuan-V3 whose MTP layer (MoE) is stored right after the trunk."""
    import torch
    from safetensors.torch import save_file

    heads, kv_heads, head_dim, expert_size = 4, 2, 64, 256
    config = {
        "architectures": ["HYV3ForCausalLM"],
        "vocab_size": VOCAB,
        "hidden_size": hidden,
        "intermediate_size": intermediate,
        "num_hidden_layers": layers,
        "num_attention_heads": heads,
        "num_key_value_heads": kv_heads,
        "head_dim": head_dim,
        "qk_norm": True,
        "hidden_act": "silu",
        "rms_norm_eps": 1e-6,
        "rope_theta": 10000.0,
        "max_position_embeddings": 4096,
        "first_k_dense_replace": layers,
        "num_experts": experts,
        "num_experts_per_tok": 2,
        "moe_intermediate_size": expert_size,
        "num_shared_experts": 1,
        "router_scaling_factor": 1.0,
        "num_nextn_predict_layers": 1,
        "tie_word_embeddings": False,
        "bos_token_id": 1,
        "eos_token_id": 2,
    }
    (directory / "config.json").write_text(json.dumps(config, indent=1))
    weight, ones = _writer(seed=1)
    tensors = {
        "model.embed_tokens.weight": weight(VOCAB, hidden),
        "model.norm.weight": ones(hidden),
        "lm_head.weight": weight(VOCAB, hidden, std=0.16),
    }
    for i in range(layers + 1):  # the last one is the MTP layer
        prefix = f"model.layers.{i}"
        _attention(tensors, prefix, weight, ones, hidden, heads, kv_heads, head_dim, qk_norm=True)
        if i < layers:
            _mlp(tensors, f"{prefix}.mlp", weight, hidden, intermediate)
    mtp = f"model.layers.{layers}"
    tensors.update(
        {
            f"{mtp}.hnorm.weight": ones(hidden),
            f"{mtp}.enorm.weight": ones(hidden),
            f"{mtp}.eh_proj.weight": weight(hidden, 2 * hidden),
            f"{mtp}.final_layernorm.weight": ones(hidden),
            f"{mtp}.mlp.router.gate.weight": weight(experts, hidden),
            f"{mtp}.mlp.expert_bias": torch.zeros(experts),
        }
    )
    for expert in range(experts):
        _mlp(tensors, f"{mtp}.mlp.experts.{expert}", weight, hidden, expert_size)
    _mlp(tensors, f"{mtp}.mlp.shared_mlp", weight, hidden, expert_size)
    save_file(tensors, str(directory / "model.safetensors"), metadata={"format": "pt"})


# --- campaigns through the real runner ---------------------------------------------------


def make_plan(name: str, model_dir: Path, conditions: list[ConditionSpec], tokens: int) -> Plan:
    return Plan(
        name=name,
        title={"ja": f"GPU確認 {name}", "en": f"GPU check {name}"},
        engine="exllamav3",
        api="completion",
        model=ModelSpec(name=name, source=str(model_dir), quantization="fp16 (unquantized)"),
        conditions=conditions,
        inputs=[
            InputSpec(
                id="padded",
                text="The history of the city begins with",
                target_prompt_tokens=128,
                max_output_tokens=tokens,
            ),
            InputSpec(
                id="code",
                text="def quicksort(arr):\n    if len(arr) <= 1:",
                max_output_tokens=tokens,
            ),
        ],
        repetitions=2,
        warmups=1,
        request_timeout_s=120,
    )


def measure(plan: Plan, data_dir: Path) -> None:
    log(f"campaign {plan.name}: {[c.id for c in plan.conditions]}")
    result = run_campaign(plan, data_dir)
    lines = (result.directory / "records.jsonl").read_text(encoding="utf-8").splitlines()
    records = [TrialRecord.model_validate_json(line) for line in lines]
    rows = []
    for record in records:
        metrics = record.metrics
        row = {
            "trial": record.trial_id,
            "status": record.status,
            "failure": record.failure_reason,
            "prompt_tokens": record.prompt_tokens,
            "finish": metrics and metrics.finish,
            "generated": metrics and metrics.generated_tokens,
            "chunks": metrics and metrics.chunks,
            "ttft_s": metrics and metrics.ttft_s,
            "gen_tps": metrics and metrics.gen_tps,
            "native_tps": metrics and metrics.native_tps,
            "draft_proposed": metrics and metrics.draft_proposed,
            "draft_accepted": metrics and metrics.draft_accepted,
            "peak_mib": {m.device: m.peak_mib for m in record.peak_memory},
            "telemetry": [t.model_dump(exclude_none=True) for t in record.telemetry],
        }
        rows.append(row)
        print(json.dumps(row, default=str), flush=True)
    summary["campaigns"][plan.name] = {
        "written": result.written,
        "failed": result.failed,
        "flags": {record.condition_id: record.provenance.flags for record in records},
        "engine": records[0].provenance.engine.model_dump(),
        "records": rows,
    }
    save()


def sweep_check(model_dir: Path, tokens: int, data_dir: Path) -> None:
    """The 2×2 sweep, measured like any campaign, then its statistics as the pages show them."""
    conditions = [
        ConditionSpec(
            id=f"{name}-t{temperature:g}",
            speculative=speculative,
            context_capacity=CONTEXT,
            sampling=SamplingOverride(temperature=temperature),
        )
        for name, speculative in (
            ("off", SpeculativeSpec()),
            ("draft4", SpeculativeSpec(mode="draft", draft_max=4, draft_model=str(model_dir))),
        )
        for temperature in (0.0, 0.7)
    ]
    plan = make_plan("sweep-2x2", model_dir, conditions, tokens).model_copy(
        update={"telemetry": TelemetrySpec(interval_s=0.1), "repetitions": 4}
    )
    measure(plan, data_dir)
    issues: list = []
    campaign = read_campaign(data_dir / CAMPAIGNS_DIR / campaign_id(plan), issues)
    report = make_report(campaign)
    cells = [
        {
            "treatment": c.treatment,
            "baseline": c.baseline,
            "input": c.input_id,
            "ratio": c.ratio,
            "interval": c.ratio_interval,
            "health": [f.kind for f in c.health],
            "differing": c.differing_fields,
        }
        for c in report.comparisons
    ]
    telemetry = report.telemetry.to_dict("records")
    for row in cells + telemetry:
        print(json.dumps(row, default=str), flush=True)
    summary["sweep"] = {
        "issues": [str(i) for i in issues],
        "comparisons": cells,
        "telemetry": telemetry,
        "energy_per_token_j": report.summary[
            ["condition_id", "input_id", "energy_per_token_j_median"]
        ].to_dict("records"),
    }
    save()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tokens", type=int, default=128, help="output tokens per request")
    parser.add_argument(
        "--budget", type=float, default=480, help="seconds; no campaign starts after"
    )
    parser.add_argument("--tp", action="store_true", help="add a tensor-parallel condition")
    args = parser.parse_args()

    os.environ.setdefault("MAX_JOBS", str(os.cpu_count() or 4))
    extensions = Path(
        os.environ.setdefault("TORCH_EXTENSIONS_DIR", str(Path(tempfile.gettempdir()) / "exl3_ext"))
    )
    for stale_lock in extensions.glob("*/lock"):  # left by a killed build; import would hang
        stale_lock.unlink()

    devices, driver, interconnect = nvml_devices()
    summary["nvml"] = {
        "devices": [d.model_dump() for d in devices],
        "driver": driver,
        "interconnect": interconnect,
    }
    log("NVML:", json.dumps(summary["nvml"]))

    shutil.rmtree(WORK, ignore_errors=True)
    llama, hyv3 = WORK / "llama-tiny", WORK / "hyv3-mtp-tiny"
    make_tokenizer(llama)
    hyv3.mkdir(parents=True)
    for name in ("tokenizer.json", "tokenizer_config.json"):
        shutil.copy(llama / name, hyv3 / name)
    make_llama(llama)
    make_hyv3_mtp(hyv3)
    log("tiny models built")

    started = time.monotonic()
    import exllamav3  # noqa: F401  (first import JIT-builds the extension)
    import torch

    summary.update(
        import_s=round(time.monotonic() - started, 1),
        exllamav3=version("exllamav3"),  # the package sets no __version__
        torch=torch.__version__,
        torch_cuda=torch.version.cuda,
    )
    save()
    log(f"import exllamav3 {summary['exllamav3']} took {summary['import_s']} s")

    data_dir = WORK / "data"
    conditions = [
        ConditionSpec(id="off", context_capacity=CONTEXT),
        ConditionSpec(
            id="self-draft",
            speculative=SpeculativeSpec(mode="draft", draft_max=4, draft_model=str(llama)),
            context_capacity=CONTEXT,
        ),
    ]
    if args.tp:
        options = {"tensor_p": True, "tp_backend": "native"}
        conditions.append(
            ConditionSpec(id="off-tp", context_capacity=CONTEXT, engine_options=options)
        )
    measure(make_plan("llama-tiny", llama, conditions, args.tokens), data_dir)

    if time.monotonic() - T0 < args.budget:
        conditions = [
            ConditionSpec(id="off", context_capacity=CONTEXT),
            ConditionSpec(
                id="mtp",
                speculative=SpeculativeSpec(mode="draft-mtp", draft_max=2),
                context_capacity=CONTEXT,
            ),
        ]
        measure(make_plan("hyv3-mtp-tiny", hyv3, conditions, args.tokens), data_dir)
    else:
        log("budget spent: MTP campaign skipped")

    if time.monotonic() - T0 < args.budget:
        sweep_check(llama, args.tokens, data_dir)
    else:
        log("budget spent: sweep skipped")

    summary["total_s"] = round(time.monotonic() - T0, 1)
    save()
    log(f"done; summary in {OUT / 'summary.json'}")


if __name__ == "__main__":  # tensor-parallel loading spawns helper processes
    main()
