"""vLLM's serving benchmark result (``vllm bench serve --save-result --save-detailed``).

The file is one group: one run of one client configuration. Its per-request lists
(``ttfts``, ``itls``, ``latencies``, ``input_lens``, ``output_lens``, ``errors``, in
seconds and tokens) are read index by index. A request is failed when ``errors[i]`` holds
text, or when ``ttfts[i]`` and ``latencies[i]`` are both 0 (vLLM's values for a request
that never started streaming, which it saves with an empty error when the server's
refusal gave no reason). A failed request's timings and output length are vLLM's
placeholders (0), so they are not imported. ``start_times`` are ``time.perf_counter``
readings, not wall-clock times. The file states no vLLM version and no server address.

The file keeps no finish reason and no output cap per request: ``output_lens`` are the
tokens generated, and the cap vLLM sent (``max_tokens``, from an option such as
``--custom-output-len``) is saved nowhere in it. ``finish_reason`` and ``output_cap`` stay
``None``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping

from sitegen.importers.reading import (
    Reader,
    SourceFile,
    check_count,
    check_number,
    file_digest,
    load_json,
    measurement,
)
from sitegen.records.import_source import (
    ImportedMeasurement,
    ImportedSource,
    SourceInfo,
    SpeculativeTotals,
)

PER_REQUEST = ("ttfts", "itls", "latencies", "input_lens", "output_lens", "errors")
"""The lists ``--save-detailed`` keeps, one entry per request."""

STATED = (
    "date",
    "label",
    "tokenizer_id",
    "num_prompts",
    "request_rate",
    "burstiness",
    "max_concurrency",
    "ramp_up_strategy",
    "ramp_up_start_rps",
    "ramp_up_end_rps",
    "duration",
    "completed",
    "failed",
    "request_throughput",
    "output_throughput",
)
"""Run facts kept in ``SourceInfo.stated`` when the file has them (the throughputs and
counts are the run-level figures the imported page shows as vLLM's)."""


def parse(file: SourceFile) -> ImportedSource:
    result = Reader(file, None, load_json(file))
    if not isinstance(result.value, dict):
        raise result.error(None, "expected a JSON object (vLLM's result file)")
    missing = [name for name in PER_REQUEST if name not in result.value]
    if missing:
        raise result.error(
            missing[0], "missing: the per-request lists are saved only with --save-detailed"
        )
    lists = {name: result.items(name) for name in PER_REQUEST}
    for name in ("generated_texts", "start_times"):
        if result.raw(name) is not None:
            lists[name] = result.items(name)
    count = len(lists["ttfts"])
    for name, values in lists.items():
        if len(values) != count:
            raise result.error(name, f"{len(values)} entries, but ttfts has {count}")
    # "inf" is vLLM's unlimited rate: no rate was aimed at.
    unlimited = result.raw("request_rate") == "inf"
    load = {
        "concurrency": result.count("max_concurrency", minimum=1),
        "request_rate": None if unlimited else result.number("request_rate"),
    }
    measurements = [
        _request(Reader(file, f"index {index}", None), lists, index, load) for index in range(count)
    ]
    sha256, size = file_digest(file)
    return ImportedSource(
        source=SourceInfo(
            format="vllm",
            tool="vLLM bench serve",
            tool_version=None,
            file=file.name,
            sha256=sha256,
            size_bytes=size,
            model=result.text("model_id"),
            backend=result.text("backend") or result.text("endpoint_type"),
            speculative=_speculative(result),
            stated={
                key: value if isinstance(value, str) else json.dumps(value)
                for key in STATED
                if (value := result.raw(key)) is not None
            },
        ),
        measurements=measurements,
    )


def _request(
    at: Reader, lists: dict[str, list], index: int, load: Mapping[str, object]
) -> ImportedMeasurement:
    def number(name: str) -> float:
        return check_number(at, f"{name}[{index}]", lists[name][index])

    error = lists["errors"][index]
    if error is not None and not isinstance(error, str):
        raise at.error(f"errors[{index}]", "expected text or null")
    ttft, e2e = number("ttfts"), number("latencies")
    failed = bool(error) or (ttft == 0 and e2e == 0)
    start = number("start_times") if "start_times" in lists else None
    prompt_tokens = check_count(at, f"input_lens[{index}]", lists["input_lens"][index])
    if failed:
        return measurement(
            at,
            status="failed",
            error=error or None,
            started_monotonic_s=start,
            prompt_tokens=prompt_tokens,
            **load,
        )
    itls = lists["itls"][index]
    if not isinstance(itls, list):
        raise at.error(f"itls[{index}]", "expected a list of seconds")
    text = lists["generated_texts"][index] if "generated_texts" in lists else None
    if text is not None and not isinstance(text, str):
        raise at.error(f"generated_texts[{index}]", "expected text")
    return measurement(
        at,
        status="ok",
        started_monotonic_s=start,
        ttft_s=ttft,
        e2e_s=e2e,
        inter_chunk_latencies_s=[
            check_number(at, f"itls[{index}][{k}]", gap) for k, gap in enumerate(itls)
        ],
        prompt_tokens=prompt_tokens,
        output_tokens=check_count(at, f"output_lens[{index}]", lists["output_lens"][index]),
        output_text=text,
        **load,
    )


def _speculative(result: Reader) -> SpeculativeTotals | None:
    if result.raw("spec_decode_num_drafts") is None:
        return None
    rates = result.raw("spec_decode_per_position_acceptance_rates") or []
    if not isinstance(rates, list):
        raise result.error("spec_decode_per_position_acceptance_rates", "expected a list")
    return SpeculativeTotals(
        drafts=result.count("spec_decode_num_drafts", required=True),
        draft_tokens=result.count("spec_decode_draft_tokens", required=True),
        accepted_tokens=result.count("spec_decode_accepted_tokens", required=True),
        acceptance_rate_pct=result.number("spec_decode_acceptance_rate"),
        acceptance_length=result.number("spec_decode_acceptance_length"),
        per_position_acceptance=[
            check_number(result, f"spec_decode_per_position_acceptance_rates[{k}]", rate)
            for k, rate in enumerate(rates)
        ],
    )
