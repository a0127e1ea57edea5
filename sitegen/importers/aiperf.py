"""NVIDIA AIPerf's profile export: the per-record JSON Lines (``profile_export.jsonl``, one
line per request) with, optionally, the run's summary (``profile_export_aiperf.json``) from
the same artifact directory, which alone states AIPerf's version, the server, the model and
the load (concurrency or request rate per phase).

The records file is one group. Each metric carries its unit (``{"value": …, "unit":
"ms"}``), converted here to seconds. A record with an ``error`` or cancelled is failed.
Token counts are the server's (``usage_*``); AIPerf's own tokenizer counts are not taken.
AIPerf's records keep neither the prompt nor the output text.

The records keep no finish reason and no output cap: ``finish_reason`` and ``output_cap``
stay ``None``. ``output_sequence_length`` is the length of the output AIPerf counted, not a
target; the ``max_tokens`` AIPerf sent (``--osl``) it keeps to itself, exporting only
``osl_mismatch_diff_pct``, the output's difference from it in %, which is not turned back
into a cap here; the summary's ``input_config.datasets[].osl`` is the setting the caps
were drawn from, not each request's cap.
"""

from __future__ import annotations

import json
from typing import Any

from sitegen.importers.limits import in_unix_range
from sitegen.importers.reading import (
    Reader,
    SourceFile,
    check_number,
    file_digest,
    json_lines,
    load_json,
    measurement,
    unix_to_iso,
)
from sitegen.records.import_source import ImportedMeasurement, ImportedSource, SourceInfo
from sitegen.validation.plausibility import refuse_duplicate_ids

PER_SECOND = {"ns": 1e9, "us": 1e6, "ms": 1e3, "sec": 1.0, "s": 1.0}
"""AIPerf's time units: how many make a second."""

PHASES = {"profiling": False, "warmup": True}
"""``metadata.benchmark_phase`` → whether the record is a warm-up."""


def parse(file: SourceFile, summary: SourceFile | None = None) -> ImportedSource:
    run = Reader(summary, None, load_json(summary)) if summary is not None else None
    phases, facts = _summary(run) if run is not None else ({}, {"tool_version": None})
    records = [Reader(file, f"line {number}", value) for number, value in json_lines(file)]
    measurements = [_record(record, phases) for record in records]
    refuse_duplicate_ids(
        file.name,
        "metadata.x_request_id",
        [
            (record.record, request_id)
            for record in records
            if (request_id := record.child("metadata").text("x_request_id")) is not None
        ],
    )
    if run is not None:
        _same_run(run, measurements)
    sha256, size = file_digest(file)
    return ImportedSource(
        source=SourceInfo(
            format="aiperf",
            tool="NVIDIA AIPerf",
            file=file.name,
            sha256=sha256,
            size_bytes=size,
            **facts,
        ),
        measurements=measurements,
    )


def _summary(run: Reader) -> tuple[dict[str, Reader], dict[str, Any]]:
    """The summary's phases by name, and what it states about the run."""
    summary = run.file
    config = run.child("input_config")
    endpoint = config.child("endpoint", required=False)
    urls = endpoint.raw("urls")
    if urls is not None and not (isinstance(urls, list) and all(isinstance(u, str) for u in urls)):
        raise endpoint.error("urls", "expected a list of addresses")
    models = config.child("models", required=False).raw("items") or []
    names = [
        Reader(summary, None, item, "input_config.models.items[].").text("name") for item in models
    ]
    phases = {}
    for index, raw in enumerate(config.raw("phases") or []):
        phase = Reader(summary, None, raw, f"input_config.phases[{index}].")
        phases[phase.text("name", required=True)] = phase
    streaming = endpoint.raw("streaming")
    kind = endpoint.text("type")
    return phases, {
        "tool_version": run.text("aiperf_version"),
        "target": ", ".join(urls) if urls else None,
        "model": ", ".join(name for name in names if name) or None,
        "backend": f"{kind} streaming" if kind and streaming is True else kind,
        "stated": {
            key: value if isinstance(value, str) else json.dumps(value)
            for key in ("benchmark_id", "start_time", "end_time", "was_cancelled", "is_complete")
            if (value := run.raw(key)) is not None
        }
        | _run_figures(run),
    }


RUN_FIGURES = ("request_throughput", "output_token_throughput", "request_error_rate")
"""The summary's run-level figures kept as stated (``<name>.avg``), as AIPerf prints them."""


def _run_figures(run: Reader) -> dict[str, str]:
    """Each of ``RUN_FIGURES`` the summary states, as ``<name>.avg`` → its number."""
    stated = {}
    for name in RUN_FIGURES:
        metric = run.child(name, required=False)
        if metric.value is not None and metric.number("avg") is not None:
            stated[f"{name}.avg"] = json.dumps(metric.raw("avg"))
    return stated


def _record(record: Reader, phases: dict[str, Reader]) -> ImportedMeasurement:
    metadata = record.child("metadata")
    metrics = record.child("metrics", required=False)
    phase_name = metadata.text("benchmark_phase", required=True)
    if phase_name not in PHASES:
        raise metadata.error(
            "benchmark_phase", f"unknown phase {phase_name!r} (known: {', '.join(PHASES)})"
        )
    error = record.child("error", required=False)
    cancelled = metadata.raw("was_cancelled")
    if cancelled is not None and not isinstance(cancelled, bool):
        raise metadata.error("was_cancelled", "expected true or false")
    failed = error.value is not None or cancelled is True
    start_ns = metadata.count("request_start_ns")
    if start_ns is not None and not in_unix_range(start_ns / 1e9):
        raise metadata.error(
            "request_start_ns", f"{start_ns:.3g} ns is not a Unix time between 1970 and 9999"
        )
    phase = phases.get(metadata.text("phase_name") or phase_name)
    return measurement(
        record,
        status="failed" if failed else "ok",
        error=_error_text(error) if error.value is not None else None,
        warmup=PHASES[phase_name],
        started_at=unix_to_iso(start_ns / 1e9) if start_ns is not None else None,
        ttft_s=_seconds(metrics, "time_to_first_token"),
        e2e_s=_seconds(metrics, "request_latency"),
        inter_chunk_latencies_s=_seconds_list(metrics, "inter_chunk_latency"),
        prompt_tokens=_tokens(metrics, "usage_prompt_tokens"),
        output_tokens=_tokens(metrics, "usage_completion_tokens"),
        concurrency=phase.count("concurrency", minimum=1) if phase else None,
        request_rate=phase.number("rate") if phase else None,
        load_pattern=phase.text("type") if phase else None,
    )


def _error_text(error: Reader) -> str:
    # ``{"code": 400, "type": "Bad Request", "message": "…"}`` → ``400 Bad Request: …``
    head = " ".join(str(part) for part in (error.raw("code"), error.text("type")) if part)
    message = error.text("message")
    return f"{head}: {message}" if head and message else head or message or json.dumps(error.value)


def _metric(metrics: Reader, name: str) -> tuple[Reader, object, str] | None:
    metric = metrics.child(name, required=False)
    if metric.value is None:
        return None
    return metric, metric.raw("value"), metric.text("unit", required=True)


def _per_second(metric: Reader, unit: str) -> float:
    if unit not in PER_SECOND:
        known = ", ".join(PER_SECOND)
        raise metric.error("unit", f"{unit!r} is not a time unit (known: {known})")
    return PER_SECOND[unit]


def _seconds(metrics: Reader, name: str) -> float | None:
    found = _metric(metrics, name)
    if found is None:
        return None
    metric, _, unit = found
    return metric.number("value", required=True) / _per_second(metric, unit)


def _seconds_list(metrics: Reader, name: str) -> list[float] | None:
    found = _metric(metrics, name)
    if found is None:
        return None
    metric, values, unit = found
    per_second = _per_second(metric, unit)
    if not isinstance(values, list):
        raise metric.error("value", "expected a list")
    return [check_number(metric, f"value[{k}]", v) / per_second for k, v in enumerate(values)]


def _tokens(metrics: Reader, name: str) -> int | None:
    found = _metric(metrics, name)
    if found is None:
        return None
    metric, _, unit = found
    if unit != "tokens":
        raise metric.error("unit", f"expected 'tokens', got {unit!r}")
    return metric.count("value", required=True)


def _same_run(run: Reader, measurements: list[ImportedMeasurement]) -> None:
    """Refuses a summary that counts another number of requests than the records file
    holds: it belongs to another run."""
    counted = run.child("completed_request_count", required=False).number("avg")
    held = sum(1 for m in measurements if m.warmup is False)
    if counted is not None and counted != held:
        raise run.error(
            "completed_request_count.avg",
            f"{counted:g} requests, but the records file holds {held} profiling records: "
            "the summary is of another run",
        )
