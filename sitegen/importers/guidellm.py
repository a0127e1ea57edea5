"""GuideLLM's benchmark report (``guidellm run --output kind=json``; report format version 2,
written by GuideLLM 0.8).

One group per ``benchmarks[i]`` (one load strategy each). Every request of
``requests.successful``, ``.errored`` and ``.incomplete`` is a measurement; errored and
incomplete ones are ``failed`` with GuideLLM's error text. Times are Unix seconds from
``info.timings``; GuideLLM keeps no per-token times, only the first and last.

A request's output cap is the one its body states (``request_args.body``, as GuideLLM sent
it): ``max_tokens`` (``/v1/completions``), ``max_completion_tokens``
(``/v1/chat/completions``) or ``max_output_tokens`` (``/v1/responses``); none where the
body names no cap, or names two that differ (which one the server applied is not the
file's to say), or where the file keeps no body (GuideLLM stores none for a request the
server refused). GuideLLM 0.8 keeps no finish reason (it reads none from the response):
``finish_reason`` stays ``None``, never inferred from an output as long as its cap.
"""

from __future__ import annotations

import json
from collections.abc import Mapping

from sitegen.importers.limits import loads
from sitegen.importers.reading import (
    Reader,
    SourceFile,
    file_digest,
    load_json,
    measurement,
    unix_to_iso,
)
from sitegen.records.import_source import ImportedMeasurement, ImportedSource, SourceInfo
from sitegen.validation.plausibility import refuse_duplicate_ids

REPORT_VERSION = 2
"""``metadata.version`` of the report layout this importer reads."""

_LISTS = {"successful": "ok", "errored": "failed", "incomplete": "failed"}
"""GuideLLM's request lists and the status of their requests."""

CAP_KEYS = ("max_tokens", "max_completion_tokens", "max_output_tokens")
"""The request body's output-token cap, under the name each API gives it."""


def parse(file: SourceFile) -> ImportedSource:
    report = Reader(file, None, load_json(file))
    metadata = report.child("metadata")
    version = metadata.count("version", required=True)
    if version != REPORT_VERSION:
        raise metadata.error(
            "version",
            f"GuideLLM report format {version} is not read here (format {REPORT_VERSION}, "
            "written by GuideLLM 0.8)",
        )
    backend = report.child("config").child("spec").child("backend", required=False)
    api = " ".join(part for part in (backend.text("kind"), backend.text("request_format")) if part)
    measurements, stated = [], {}
    ids: list[tuple[str, str]] = []
    for index, raw in enumerate(report.items("benchmarks")):
        benchmark = Reader(file, f"benchmarks[{index}]", raw)
        measurements += _benchmark(benchmark, index, ids)
        # The benchmark's run window (Unix s): every request must lie within it.
        for key in ("start_time", "end_time"):
            if (value := benchmark.number(key)) is not None:
                stated[f"benchmarks[{index}].{key}"] = json.dumps(value)
        stated |= _run_figures(benchmark, index)
    refuse_duplicate_ids(file.name, "request_id", ids)
    sha256, size = file_digest(file)
    return ImportedSource(
        source=SourceInfo(
            format="guidellm",
            tool="GuideLLM",
            tool_version=metadata.text("guidellm_version"),
            file=file.name,
            sha256=sha256,
            size_bytes=size,
            target=backend.text("target"),
            model=backend.text("model"),
            backend=api or None,
            stated=stated,
        ),
        measurements=measurements,
    )


RUN_FIGURES = (
    "requests_per_second.successful.mean",
    "output_tokens_per_second.successful.mean",
    "request_totals.successful",
    "request_totals.errored",
    "request_totals.incomplete",
)
"""The benchmark's run-level figures (under ``metrics``) kept as stated: GuideLLM's
requests/s and output tokens/s over the benchmark's duration, and its request counts."""


def _run_figures(benchmark: Reader, index: int) -> dict[str, str]:
    """Each of ``RUN_FIGURES`` the benchmark states, as ``benchmarks[i].metrics.<path>``."""
    stated = {}
    for path in RUN_FIGURES:
        *parents, name = path.split(".")
        at = benchmark.child("metrics", required=False)
        for parent in parents:
            at = at.child(parent, required=False)
        if at.number(name) is not None:  # checked a number; kept as the file wrote it
            stated[f"benchmarks[{index}].metrics.{path}"] = json.dumps(at.raw(name))
    return stated


def _benchmark(
    benchmark: Reader, index: int, ids: list[tuple[str, str]]
) -> list[ImportedMeasurement]:
    strategy = benchmark.child("config").child("strategy")
    requests = benchmark.child("requests")
    measurements = []
    load = {
        "group": f"benchmarks[{index}]",
        "concurrency": strategy.count("streams", minimum=1),
        "request_rate": strategy.number("rate"),
        "load_pattern": strategy.text("type_", required=True),
    }
    for name, status in _LISTS.items():
        for position, raw in enumerate(requests.items(name)):
            where = f"benchmarks[{index}].requests.{name}[{position}]"
            request = Reader(benchmark.file, where, raw)
            if (request_id := request.text("request_id")) is not None:
                ids.append((where, request_id))
            measurements.append(_request(request, status, load))
    return measurements


def _request(request: Reader, status: str, load: Mapping[str, object]) -> ImportedMeasurement:
    info = request.child("info")
    timings = info.child("timings")
    start = timings.number("request_start")
    started_at = unix_to_iso(start, timings, "request_start") if start is not None else None
    body = _body(request)
    return measurement(
        request,
        status=status,
        error=info.text("error"),
        started_at=started_at,
        ttft_s=_since(timings, start, "first_token_iteration"),
        last_token_s=_since(timings, start, "last_token_iteration"),
        e2e_s=_since(timings, start, "request_end"),
        prompt_tokens=request.count("prompt_tokens"),
        output_tokens=request.count("output_tokens"),
        output_text=request.text("output"),
        request_body=None
        if body.value is None
        else json.dumps(body.value, ensure_ascii=False, separators=(",", ":")),
        output_cap=_output_cap(body),
        **load,
    )


def _since(timings: Reader, start: float | None, name: str) -> float | None:
    """Seconds from ``request_start`` to the time ``name`` (``None`` without either)."""
    time = timings.number(name)
    if time is None or start is None:
        return None
    if time < start:
        raise timings.error(name, f"{time} is before request_start {start}")
    return time - start


def _body(request: Reader) -> Reader:
    """The JSON body GuideLLM sent (``None`` inside where the file keeps none)."""
    # GuideLLM stores the request as JSON text: method, headers, params and body.
    args = request.text("request_args")
    if args is None:
        return Reader(request.file, request.record, None, "request_args.body.")
    try:
        parsed = loads(args, f"{request.file.name} {request.record} → request_args")
    except ValueError:
        raise request.error("request_args", "not valid JSON text") from None
    body = Reader(request.file, request.record, parsed, "request_args.").raw("body")
    return Reader(request.file, request.record, body, "request_args.body.")


def _output_cap(body: Reader) -> int | None:
    """The cap the body states under one of ``CAP_KEYS``; ``None`` without one, or when two
    differ."""
    if not isinstance(body.value, dict):
        return None
    caps = {body.count(key, minimum=1) for key in CAP_KEYS if body.raw(key) is not None}
    return caps.pop() if len(caps) == 1 else None
