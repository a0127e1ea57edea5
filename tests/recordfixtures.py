"""Realistic trial records built in memory, for statistics that need what records show
(provenance, prompts, draft counts) without measuring anything."""

from __future__ import annotations

import copy
from typing import Any

from sitegen.plan.plan_models import SpeculativeSpec
from sitegen.records.record_models import TrialRecord

H100_DRIVER = "550.54.15"
MTP = SpeculativeSpec(mode="draft-mtp", draft_max=3)


def h100_provenance(devices: int = 2) -> dict[str, Any]:
    """llama.cpp embedded on ``devices`` H100s of one host, everything recorded."""
    return {
        "engine": {
            "id": "llamacpp-embedded",
            "version": "xllamacpp 2026.10.11549",
            "build": "b6512-3f2a9c1",
            "api": "in-process completion",
        },
        "model": {
            "name": "GLM-4.5-Air",
            "file": "GLM-4.5-Air-Q4_K_M.gguf",
            "sha256": "ab" * 32,
            "size_bytes": 73_000_000_000,
            "quantization": "Q4_K_M",
        },
        "host": {
            "hostname": "gpu-a",
            "platform": "Linux 6.8.0 x86_64",
            "python": "3.11.9",
            "cpu_count": 64,
            "devices": [
                {"id": f"cuda:{i}", "name": "NVIDIA H100 80GB HBM3", "memory_total_mib": 81559}
                for i in range(devices)
            ],
            "driver": H100_DRIVER,
            "interconnect": "NVLink (NV18)",
            "cpu": "AMD EPYC 9454 48-Core Processor",
            "gpu_runtime": "CUDA 12.4",
        },
        "flags": {"n_ctx": "40960", "n_parallel": "1", "threads": "default", "spec_type": "none"},
        "env": {"CUDA_VISIBLE_DEVICES": "0,1", "NCCL_P2P_DISABLE": None, "OMP_NUM_THREADS": None},
        "template_kwargs": {},
        "sitegen_version": "0.1.0",
    }


def make_record(
    condition_id: str,
    input_id: str,
    gen_tps: float | None,
    repetition: int = 0,
    speculative: SpeculativeSpec | None = None,
    drafts: tuple[int, int] | None = None,
    prompt: str | None = None,
    campaign_id: str = "glm-h100-0123456789ab",
    provenance: dict[str, Any] | None = None,
) -> TrialRecord:
    """One usable measured record; ``drafts`` = (proposed, accepted), ``None``: the engine
    reported no draft counts."""
    speculative = speculative or SpeculativeSpec()
    provenance = copy.deepcopy(provenance) if provenance else h100_provenance()
    if speculative.mode != "off":
        provenance["flags"] = {
            **provenance["flags"],
            "spec_type": speculative.mode,
            "spec_draft_n_max": str(speculative.draft_max),
        }
    return TrialRecord.model_validate(
        {
            "campaign_id": campaign_id,
            "plan_sha256": "0" * 64,
            "trial_id": f"{condition_id}/{input_id}/r{repetition}",
            "condition_id": condition_id,
            "input_id": input_id,
            "role": "measured",
            "repetition": repetition,
            "order_index": repetition,
            "status": "ok",
            "failure_reason": None,
            "started_at": f"2026-11-30T10:00:{repetition:02d}+00:00",
            "speculative": speculative.model_dump(),
            "sampling": {"temperature": 0.0, "top_p": 1.0, "top_k": 0, "seed": 1234},
            "context_capacity": 40960,
            "max_output_tokens": 1024,
            "target_prompt_tokens": None,
            "prompt_tolerance_tokens": 4,
            "prompt_tokens": 8193,
            "prompt": prompt if prompt is not None else f"the text of {input_id}",
            "metrics": {
                "ttft_s": 1.0,
                "t_first_visible_s": 1.0,
                "t_first_answer_s": 1.2,
                "gen_tps": gen_tps,
                "native_tps": None,
                "t_natural_finish_s": 9.0,
                "e2e_s": 9.0,
                "generated_tokens": 1024,
                "finish": "stop",
                "answer_reached": True,
                "draft_proposed": drafts[0] if drafts else None,
                "draft_accepted": drafts[1] if drafts else None,
                "chunks": 1024,
            },
            "peak_memory": [],
            "text": "answer",
            "reasoning_text": "",
            "provenance": provenance,
        }
    )


def records_for(
    rates: dict[tuple[str, str], list[float | None]], **fields: Any
) -> list[TrialRecord]:
    """Records of each (condition, input) with the given generation rates; a condition
    whose id starts with ``on`` speculates (MTP) with healthy draft counts unless ``fields``
    say otherwise."""
    records = []
    for (condition_id, input_id), values in rates.items():
        on = condition_id.startswith("on")
        extra = {"speculative": MTP, "drafts": (300, 200)} if on else {}
        for repetition, rate in enumerate(values):
            records.append(
                make_record(condition_id, input_id, rate, repetition, **(extra | fields))
            )
    return records
