"""What an importer yields, as ``sitegen import`` stores it: each source file's description
and its measurements exactly as the file holds them, nothing invented.

A field the source does not have stays ``None``: never a default, never a value derived
from other fields by guesswork. Times are in seconds; each field says which source field
it comes from and in which unit the source wrote it. (Reading the files:
``importers/``.)
"""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import Field

from sitegen.core.strict_model import StrictModel


class SpeculativeTotals(StrictModel):
    """Speculative-decoding totals over a whole run, as the source states them (vLLM reads
    them from the server's Prometheus counters before and after the run)."""

    drafts: int = Field(ge=0)
    """Draft steps (vLLM ``spec_decode_num_drafts``)."""
    draft_tokens: int = Field(ge=0)
    """Draft tokens proposed (vLLM ``spec_decode_draft_tokens``)."""
    accepted_tokens: int = Field(ge=0)
    """Draft tokens accepted (vLLM ``spec_decode_accepted_tokens``)."""
    acceptance_rate_pct: float | None = None
    """Accepted ÷ proposed draft tokens in % as the source computed it (vLLM
    ``spec_decode_acceptance_rate``); ``None`` when the file does not state it."""
    acceptance_length: float | None = None
    """Mean tokens per step, 1 + accepted ÷ drafts, as the source computed it (vLLM
    ``spec_decode_acceptance_length``); ``None`` when the file does not state it."""
    per_position_acceptance: list[float] = Field(default_factory=list)
    """Fraction of drafts whose token at position k (0-based) was accepted (vLLM
    ``spec_decode_per_position_acceptance_rates``); empty when the file lists none."""


class SourceInfo(StrictModel):
    """Where imported measurements come from and what the file states about the run."""

    MEASURED_DATA: ClassVar[str] = (
        "what the source file states (its tool, version, target, model, stated facts), "
        "read by the importer, never written by the author"
    )

    format: str
    """Importer format name (``guidellm``, ``vllm``, ``aiperf``, ``llama-bench``, ``csv``)."""
    tool: str
    """The tool that wrote the file, e.g. ``GuideLLM`` or ``vLLM bench serve``."""
    tool_version: str | None
    """The tool's version as the file states it (``None``: the file does not say; vLLM's
    result file and AIPerf's per-record export never do)."""
    file: str
    """The file's name as given to the import."""
    sha256: str
    """SHA-256 of the file's bytes."""
    size_bytes: int = Field(ge=0)
    """Size of the file."""
    target: str | None = None
    """The server address the tool sent requests to, as the file states it."""
    model: str | None = None
    """The model as the tool named it (a served model name or a model file name); the
    declaration names the model measured."""
    backend: str | None = None
    """The tool's client or API kind as it names it, e.g. GuideLLM ``openai_http
    /v1/chat/completions``, vLLM ``openai-chat``, llama-bench ``CPU``."""
    speculative: SpeculativeTotals | None = None
    """Speculative-decoding totals over the run (``None``: the file states none)."""
    stated: dict[str, str] = Field(default_factory=dict)
    """Other facts the file states about the run, under the source's own key names, each
    value as the file wrote it (JSON text for numbers and lists), e.g. vLLM
    ``burstiness: 1.0``; never a value the file does not hold."""


Status = Literal["ok", "failed"]


class ImportedMeasurement(StrictModel):
    """One measured request (or one llama-bench repetition) exactly as the source holds it.
    Every timing is in seconds."""

    MEASURED_DATA: ClassVar[str] = "a measurement exactly as the source file holds it"

    location: str
    """Where in the file it came from: ``line 12``, ``benchmarks[0].requests.successful[3]``,
    ``index 2``, ``tests[1].samples_ts[2]``."""
    status: Status
    """``failed`` when the source marks the request as failed (an error, a cancelled or
    incomplete request); the source's own error text is in ``error``."""
    error: str | None = None
    """The source's error text for a failed request (``None`` when ok, or when the source
    gives none)."""
    group: str | None = None
    """The group the source puts the measurement in, within its file: GuideLLM
    ``benchmarks[0]``, llama-bench the parameters that differ between the file's test
    configurations (``n_threads=2``), a CSV's declared group column; ``None`` where the
    file is the group (vLLM, AIPerf, a single llama-bench configuration). The declaration
    maps (file, group) to a condition."""
    warmup: bool | None = None
    """Whether the source marks it as a warm-up (AIPerf ``benchmark_phase``); ``None`` where
    the source does not say (its files hold only measured requests)."""
    started_at: str | None = None
    """Wall-clock start (UTC, ISO 8601) where the source gives an absolute time: GuideLLM
    ``info.timings.request_start`` (Unix s), AIPerf ``request_start_ns`` (Unix ns), a CSV
    column declared as Unix seconds."""
    started_monotonic_s: float | None = None
    """Start on the tool's own monotonic clock (vLLM ``start_times``, ``time.perf_counter``
    s): only differences between requests of one file mean anything."""
    ttft_s: float | None = Field(default=None, ge=0)
    """Request start → first streamed token: GuideLLM ``first_token_iteration −
    request_start`` (s), vLLM ``ttfts`` (s), AIPerf ``time_to_first_token`` (ms)."""
    last_token_s: float | None = Field(default=None, ge=0)
    """Request start → last streamed token: GuideLLM ``last_token_iteration −
    request_start`` (s)."""
    e2e_s: float | None = Field(default=None, ge=0)
    """Request start → end of the response as the source measures it: GuideLLM
    ``request_end − request_start`` (s), vLLM ``latencies`` (s; vLLM ends it at the last
    chunk that carried a token), AIPerf ``request_latency`` (ms)."""
    inter_chunk_latencies_s: list[float] | None = None
    """Gaps between successive streamed chunks after the first (vLLM ``itls`` s, AIPerf
    ``inter_chunk_latency`` ms); a chunk may carry several tokens (speculative decoding).
    ``None`` where the source keeps no per-chunk times (GuideLLM)."""
    prompt_tokens: int | None = Field(default=None, ge=0)
    """Input length in tokens as the source reports it: GuideLLM ``prompt_tokens``, vLLM
    ``input_lens``, AIPerf ``usage_prompt_tokens`` (the server's count), llama-bench
    ``n_prompt``."""
    output_tokens: int | None = Field(default=None, ge=0)
    """Generated tokens as the source reports it: GuideLLM ``output_tokens``, vLLM
    ``output_lens``, AIPerf ``usage_completion_tokens`` (the server's count), llama-bench
    ``n_gen``."""
    output_text: str | None = None
    """The generated text (GuideLLM ``output``, vLLM ``generated_texts``). Untrusted data."""
    prompt_text: str | None = None
    """The prompt text, where the source keeps it as text (a CSV column). Untrusted data."""
    request_body: str | None = None
    """The JSON body the tool sent, compact (GuideLLM ``request_args.body``; its headers are
    left out, as they may hold credentials). Untrusted data."""
    concurrency: int | None = Field(default=None, ge=1)
    """Requests the tool kept in flight, as it states it: GuideLLM ``strategy.streams``,
    vLLM ``max_concurrency``, AIPerf ``phases[].concurrency``."""
    request_rate: float | None = Field(default=None, gt=0)
    """Requests per second the tool aimed at, as it states it (GuideLLM
    ``strategy.rate``, vLLM ``request_rate``); ``None`` for an unlimited or unstated rate."""
    load_pattern: str | None = None
    """How the tool sent the requests, in its own words: GuideLLM ``strategy.type_``
    (``synchronous``, ``concurrent``, ``constant``, ``poisson``, ``throughput``), AIPerf
    ``phases[].type``."""
    measure: str | None = None
    """llama-bench's test as it prints it: ``pp512`` (processing a 512-token prompt),
    ``tg128`` (generating 128 tokens), ``pp512+tg128``, `` @ d4096`` after a context depth."""
    tokens_per_s: float | None = Field(default=None, ge=0)
    """llama-bench ``samples_ts``: tokens per second of this repetition."""
    duration_s: float | None = Field(default=None, ge=0)
    """llama-bench ``samples_ns`` (ns): the duration of this repetition."""
    input: str | None = None
    """The input the source names for it (a CSV's declared input column, e.g. ``8k``):
    its records get this input id, and figures and ratios are per input."""
    finish_reason: str | None = None
    """Why generation stopped, as the source writes it (``stop``, ``length`` …): a CSV's
    declared column. GuideLLM's report, vLLM's result file and AIPerf's records keep none;
    never inferred from an output as long as its cap."""
    output_cap: int | None = Field(default=None, ge=1)
    """The output-token cap of the request as the source states it: GuideLLM the request
    body's ``max_tokens``, ``max_completion_tokens`` or ``max_output_tokens``
    (``request_args.body``), a CSV's declared column. vLLM's result file and AIPerf's
    records state none."""
    draft_tokens: int | None = Field(default=None, ge=0)
    """Draft tokens proposed for this request, as the source counts them."""
    accepted_tokens: int | None = Field(default=None, ge=0)
    """Draft tokens accepted for this request, as the source counts them."""
    peak_memory_mib: float | None = Field(default=None, ge=0)
    """Peak memory of the run as the source states it for this measurement (MiB)."""
    tool_tokens_per_s: float | None = Field(default=None, ge=0)
    """The tool's own rate (tokens/s) as the file holds it, by the tool's definition (the
    declaration's ``csv.columns.tool_tokens_per_s.definition``); never sitegen's
    generation rate, and no time is derived from it."""


class ImportedSource(StrictModel):
    """Everything one source file yields."""

    source: SourceInfo
    """The file and what it states about the run."""
    measurements: list[ImportedMeasurement]
    """Its measurements, in file order."""
