"""Raw measurement records: one ``TrialRecord`` per request, and the campaign manifest.

``schema_version`` comes first; do not reorder or rename fields without bumping it.
A reader rejects versions it does not know by name.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import ClassVar, Final, Literal

from pydantic import Field, SerializerFunctionWrapHandler, model_serializer, model_validator

from sitegen.core.strict_model import StrictModel
from sitegen.core.text import CONTROL_CHARACTERS
from sitegen.plan.plan_models import SpeculativeSpec

RECORD_SCHEMA_VERSION: Final = 1
MANIFEST_SCHEMA_VERSION: Final = 1

Finish = Literal["stop", "length", "error"]


class EngineInfo(StrictModel):
    """Which engine produced the record."""

    id: str
    """Registered engine id, e.g. ``llamacpp-embedded``."""
    version: str
    """Version of the engine package or server, e.g. ``xllamacpp 2026.10.11549``."""
    build: str
    """Engine build as it reports itself, e.g. llama.cpp ``b0-unknown``."""
    api: str
    """Interface used: ``in-process completion``, ``http chat`` …"""


class ModelShard(StrictModel):
    """One file of a model split into several GGUF files."""

    file: str
    """File name, e.g. ``model-00002-of-00003.gguf`` (no host-specific path)."""
    sha256: str
    """SHA-256 of this file's bytes."""
    size_bytes: int
    """Size of this file on disk."""


class ModelInfo(StrictModel):
    """The model file that was measured."""

    name: str
    """Display name."""
    file: str
    """File or directory name (no host-specific path); for a split GGUF the first shard,
    the file given to the engine."""
    sha256: str
    """SHA-256 of the model file (of the sorted file hashes for a directory; of the first
    shard for a split GGUF, whose every shard is listed in ``shards``)."""
    size_bytes: int
    """Size on disk (every shard of a split GGUF together)."""
    quantization: str
    """Quantization format."""
    shards: list[ModelShard] = Field(default_factory=list)
    """Every shard of a split GGUF (``<name>-0000k-of-0000n.gguf``, k = 1 … n, the first
    included), each with its own SHA-256; empty for a single file or a directory (and in
    records written before shards were recorded)."""


UNKNOWN_REMOTE_SHA256 = "unknown-remote"
"""``ModelInfo.sha256`` of a model file on another host that could not be hashed here
(allowed only when the plan declares ``model.remote_unhashable``; pages say so)."""

ENGINE_NOT_LOADED_API = "-"
"""``EngineInfo.api`` of a record whose engine never loaded: its engine and model are the
plan's, with version, build and hash unknown, as no engine described itself."""


class DeviceInfo(StrictModel):
    """A device the engine ran on."""

    id: str
    """``cpu`` or ``cuda:<index>``."""
    name: str
    """Marketing name, e.g. ``NVIDIA H100 PCIe`` or the CPU model."""
    memory_total_mib: float | None = None
    """Total memory of the device, when known."""


class HostInfo(StrictModel):
    """The machine that ran the campaign."""

    hostname: str
    """Host name."""
    platform: str
    """Operating system and architecture."""
    python: str
    """Python version of the runner."""
    cpu_count: int
    """Logical CPUs visible to the runner."""
    devices: list[DeviceInfo]
    """Devices in use."""
    driver: str | None = None
    """GPU driver version, when a GPU is used."""
    interconnect: str | None = None
    """GPU interconnect (e.g. NVLink / PCIe topology), when known."""
    cpu: str | None = None
    """CPU model of the host (``model name`` in ``/proc/cpuinfo``), when known (``None`` in
    records written before it was recorded)."""
    gpu_runtime: str | None = None
    """GPU compute runtime that the driver provides, e.g. ``CUDA 12.4`` (NVML's
    ``nvmlSystemGetCudaDriverVersion``), when a GPU of this host is used; ``None`` without
    a GPU, for a remote server, or when unknown. The runtime an engine was built with, when
    it reports one, is part of ``engine.build`` or the flags (ExLlamaV3: ``torch_cuda``)."""


class NodeInfo(StrictModel):
    """The Ray node a fleet campaign's request ran on (``sitegen measure --fleet``)."""

    ray_node_id: str
    """Ray's node id (hex)."""
    hostname: str
    """Host name of the node."""
    accelerator_type: str | None = None
    """Ray accelerator type of the node (``accelerator_type:<name>`` resource), if any."""
    resources: dict[str, float] = Field(default_factory=dict)
    """The resources the campaign held on the node, as requested in the fleet plan."""


class Provenance(StrictModel):
    """Everything needed to reproduce the request."""

    MEASURED_DATA: ClassVar[str] = "recorded by the engine and the measuring host"

    engine: EngineInfo
    """Engine and version."""
    model: ModelInfo
    """Model file."""
    host: HostInfo
    """Machine."""
    flags: dict[str, str]
    """Engine settings as passed (context size, threads, speculative options …)."""
    env: dict[str, str | None]
    """Values of the plan's recorded environment variables (``None``: unset)."""
    template_kwargs: dict[str, str | int | float | bool]
    """Chat-template arguments."""
    sitegen_version: str
    """Version of the runner."""
    node: NodeInfo | None = None
    """The Ray node of a fleet run (``None``: measured by a plain ``sitegen measure``)."""


class Sampling(StrictModel):
    """Sampling settings of this request."""

    temperature: float
    """Sampling temperature (0 = greedy)."""
    top_p: float
    """Nucleus threshold."""
    top_k: int
    """Top-k cut-off (0 = off)."""
    seed: int
    """Seed of this request (base, base+100000, base+200000 …)."""


class DeviceMemory(StrictModel):
    """Peak memory of one device during the request."""

    device: str
    """``cpu`` or ``cuda:<index>``."""
    source: Literal["process-rss", "nvml-used"]
    """``process-rss``: resident memory of the engine process; ``nvml-used``: device memory
    in use (NVML), sampled in a background thread."""
    peak_mib: float
    """Highest value observed (MiB)."""
    sample_interval_s: float
    """Sampling interval of the background thread."""


class DeviceTelemetry(StrictModel):
    """What one device did during the request: summaries of samples taken by a background
    thread at ``sample_interval_s`` (GPU: NVML), or the engine process's CPU time (CPU
    engines, where NVML has nothing to say). With concurrent requests the samples cover
    the whole round, so every request of the round carries the same summary."""

    device: str
    """``cuda:<index>`` (NVML, CUDA numbering) or ``cpu``."""
    source: Literal["nvml", "process-cpu-time"]
    """``nvml``: sampled GPU counters; ``process-cpu-time``: user + system CPU seconds of the
    engine process over the request (no utilization, power or clock on a CPU run)."""
    sample_interval_s: float | None
    """Declared sampling interval (``None`` for ``process-cpu-time``, read once at each end)."""
    samples: int = Field(ge=0)
    """Samples taken during the request (0 for ``process-cpu-time``)."""
    duration_s: float = Field(ge=0)
    """Time from the first to the last sample (or between the two CPU-time readings)."""
    sm_util_mean_pct: float | None = None
    """Mean SM (kernel) utilization, % of the sample period in which a kernel ran
    (``nvmlDeviceGetUtilizationRates().gpu``)."""
    sm_util_max_pct: float | None = None
    """Highest SM utilization sample (%)."""
    mem_bw_util_mean_pct: float | None = None
    """Mean memory-bandwidth utilization, % of the period in which device memory was read
    or written (``nvmlDeviceGetUtilizationRates().memory``)."""
    mem_bw_util_max_pct: float | None = None
    """Highest memory-bandwidth utilization sample (%)."""
    power_mean_w: float | None = None
    """Mean board power draw (W, ``nvmlDeviceGetPowerUsage`` ÷ 1000)."""
    power_max_w: float | None = None
    """Highest power sample (W)."""
    energy_j: float | None = None
    """Energy over the request (J): the device's energy counter difference
    (``nvmlDeviceGetTotalEnergyConsumption``) where available, else the power samples
    integrated over time (trapezoids). Derived, not a direct reading of the request."""
    energy_source: Literal["counter", "integrated-power"] | None = None
    """How ``energy_j`` was obtained (``None`` without it)."""
    sm_clock_median_mhz: float | None = None
    """Median SM clock (MHz, ``nvmlDeviceGetClockInfo(NVML_CLOCK_SM)``)."""
    temperature_max_c: float | None = None
    """Highest GPU temperature sample (°C)."""
    memory_used_max_mib: float | None = None
    """Highest device memory in use (MiB, all processes)."""
    cpu_time_s: float | None = None
    """``process-cpu-time``: user + system CPU seconds the engine process used."""


class RoundInfo(StrictModel):
    """The round of concurrent requests this request ran in (conditions with
    ``concurrency`` > 1)."""

    run_id: str
    """Identifies one physical round; requests run together share it. A resumed round
    runs all its requests again, recording only those still needed."""
    size: int = Field(ge=1)
    """Requests in flight together (the condition's ``concurrency``)."""
    wall_s: float = Field(ge=0)
    """First request handed to the engine → last request ended."""
    generated_tokens: int = Field(ge=0)
    """Tokens generated by all the round's requests (those not recorded included)."""
    aggregate_tps: float | None
    """``generated_tokens`` ÷ ``wall_s``: the engine's total output rate in this round
    (first tokens included, unlike ``gen_tps``)."""


class LoadInfo(StrictModel):
    """The open-loop load run this request was sent in (plans with ``load.profile``
    ``constant`` or ``poisson``): its schedule, when it was really sent, and the run's
    figures, shared by every request of the run. Offsets are seconds after the run's start
    (monotonic clock), to the microsecond."""

    profile: Literal["constant", "poisson"]
    """Arrival profile of the run."""
    offered_rate: float = Field(gt=0)
    """Declared rate of the run (requests/s)."""
    request_index: int = Field(ge=0)
    """Position of the request in the run's schedule (0 = first)."""
    scheduled_s: float = Field(ge=0)
    """When the plan's schedule sends it."""
    sent_s: float | None = Field(default=None, ge=0)
    """When it was handed to the engine (``t0`` of the metrics): the schedule plus the
    dispatcher's lag. Sends never wait for earlier requests to end (open loop). ``None``
    when the run sent nothing (its engine would not load, or its prompt missed its
    length)."""
    run_id: str
    """Identifies one physical run; requests sent together share it. A resumed run is
    sent again whole, recording only the requests still needed."""
    run_requests: int = Field(ge=1)
    """Requests the run sent (those not recorded included)."""
    run_wall_s: float = Field(ge=0)
    """The run's start → the last of its requests ended."""
    run_completed: int = Field(ge=0)
    """Requests of the run that ended without an error or a failure."""
    run_generated_tokens: int = Field(ge=0)
    """Tokens generated by all the run's requests."""


class TrialMetrics(StrictModel):
    """Timings and counts of one request. Clock: monotonic; t0 = the request handed to
    the loaded engine (model load and tokenization excluded)."""

    ttft_s: float | None
    """First streamed token of any kind (thinking included) − t0."""
    t_first_visible_s: float | None
    """First non-empty text, thinking included − t0."""
    t_first_answer_s: float | None
    """First non-empty answer text after the thinking section − t0; ``None`` if never reached."""
    gen_tps: float | None
    """(n_generated − 1) / (t_last_token − t_first_token): generation rate excluding the first
    token, with n_generated from the engine's token count. Includes thinking and control
    tokens; not characters per second."""
    native_tps: float | None
    """The engine's own figure (llama.cpp ``timings.predicted_per_second``)."""
    t_natural_finish_s: float | None
    """End − t0 when the finish was natural (``stop``), else ``None``."""
    e2e_s: float
    """End − t0 for every request."""
    generated_tokens: int | None
    """Tokens generated, as counted by the engine."""
    finish: Finish
    """``stop`` (natural end), ``length`` (output cap reached) or ``error``."""
    answer_reached: bool
    """Whether any answer text (after thinking) was produced."""
    draft_proposed: int | None
    """Draft tokens proposed (llama.cpp ``timings.draft_n``); ``None`` without drafting."""
    draft_accepted: int | None
    """Draft tokens accepted (``timings.draft_n_accepted``)."""
    chunks: int
    """Stream chunks received (a speculative step may deliver several tokens in one)."""
    generation_s: float | None = None
    """t_last_token − t_first_token: the span ``gen_tps`` divides by (``None`` with fewer
    than two chunks; absent from records written before it was recorded)."""
    prompt_processing_s: float | None = None
    """Prompt processing (prefill) time as the engine itself reports it: llama.cpp
    ``timings.prompt_ms`` ÷ 1000 from the final stream chunk (the embedded engine's
    result), ExLlamaV3 ``time_prefill``. Measured inside the engine, so it is part of, not
    equal to, ``ttft_s``. ``None`` when the engine reports none (the ``openai`` engine) and
    in records written before it was recorded."""
    reasoning_tokens: int | None = None
    """Thinking tokens, where the engine streams thinking apart from the answer (llama.cpp's
    chat API: ``reasoning_content``): the streamed thinking text tokenized again with the
    engine's own tokenizer (llama.cpp ``/tokenize``, no BOS, special-token text parsed),
    since llama.cpp reports no thinking count of its own. The thinking delimiters and the
    end-of-generation token are in neither this nor ``answer_tokens`` (only in
    ``generated_tokens``), and re-tokenizing a text can differ from the generated sequence
    by a few tokens. ``None`` where thinking is not separated (completion API, ``openai``,
    ``exllamav3``) and in records written before it was recorded."""
    answer_tokens: int | None = None
    """Answer tokens (after thinking), counted like ``reasoning_tokens``: the streamed
    answer text tokenized again with the engine's tokenizer; ``None`` exactly when
    ``reasoning_tokens`` is."""
    chunk_times_s: list[float] | None = None
    """Arrival time of every stream chunk − t0, in order, to the microsecond (the first is
    ``ttft_s``): the gaps between them are the inter-token latencies (ITL). ``None`` in
    records written before chunk times were recorded."""


class TrialRecord(StrictModel):
    """One request of a campaign, written once and never changed."""

    MEASURED_DATA: ClassVar[str] = "written by sitegen from what the engine returned"

    schema_version: Literal[1] = RECORD_SCHEMA_VERSION
    """Version of the record format."""
    campaign_id: str
    """``<plan name>-<12 hex of the plan hash>``."""
    plan_sha256: str
    """SHA-256 of the canonical plan JSON (pre-registration)."""
    trial_id: str
    """Stable id: ``<condition>/<input>/r<repetition>`` or ``<condition>/warmup-<k>``."""
    attempt: int = Field(default=1, ge=1)
    """1 for the first attempt at this trial; a trial whose latest attempt failed is tried
    again by a later ``measure`` as attempt 2, 3 … Every attempt stays recorded; a trial
    with an ok attempt is never run again. (Records written before this field are 1.)"""
    condition_id: str
    """Condition of the plan."""
    input_id: str
    """Input of the plan."""
    role: Literal["warmup", "measured"]
    """Warm-ups are kept and excluded from statistics."""
    repetition: int
    """Repetition index (0-based)."""
    order_index: int
    """Position in the pre-registered run order."""
    status: Literal["ok", "failed"]
    """``failed``: the request could not be measured as planned; kept, excluded from statistics."""
    failure_reason: str | None
    """Why the trial failed (``None`` when ok)."""
    started_at: str
    """Wall-clock start (UTC, ISO 8601)."""
    speculative: SpeculativeSpec
    """Speculative decoding of the condition."""
    sampling: Sampling
    """Sampling of this request."""
    context_capacity: int
    """Allocated context (tokens), distinct from the filled input length."""
    max_output_tokens: int
    """Output cap."""
    target_prompt_tokens: int | None
    """Input length the plan asked for."""
    prompt_tolerance_tokens: int
    """Allowed distance from the target."""
    prompt_tokens: int | None
    """Actual input length (engine's count)."""
    prompt: str
    """The exact prompt text sent (filler included)."""
    metrics: TrialMetrics | None
    """Timings and counts; ``None`` when the request never started."""
    peak_memory: list[DeviceMemory]
    """Peak memory per device during the request."""
    text: str
    """Full answer text. Untrusted data: always escaped, never markup."""
    reasoning_text: str
    """Full thinking text (empty if none). Untrusted data."""
    provenance: Provenance
    """Engine, model, host, flags and environment."""
    telemetry: list[DeviceTelemetry] = Field(default_factory=list)
    """Per device: GPU counters sampled during the request (NVML), or the engine process's
    CPU time on CPU runs; empty when nothing was sampled (and in records written before
    telemetry was recorded)."""
    round: RoundInfo | None = None
    """The round of concurrent requests (``None``: the request ran alone)."""
    engine_context_per_slot: int | None = Field(default=None, ge=1)
    """The context (tokens) the engine actually allocated to this request's slot, as it
    reports it: llama.cpp's ``/props`` ``default_generation_settings.n_ctx`` (embedded and
    HTTP engines; llama.cpp may round the requested size up). It must equal
    ``context_capacity`` (C-CAPACITY). ``None`` where the engine cannot report it
    (``openai``, ``exllamav3``) and in records written before it was recorded: the
    capacity is then as declared."""
    load: LoadInfo | None = None
    """The open-loop load run it was sent in (``None``: a closed round or alone, and in
    records written before load runs existed)."""

    @model_validator(mode="after")
    def _no_control_characters(self) -> TrialRecord:
        # Ids, provenance and settings reach pages as text; the free texts (prompt,
        # answer, thinking, failure reason) may hold anything and are shown escaped.
        free_text = {"prompt", "text", "reasoning_text", "failure_reason"}
        # Fast path (every record of a build passes here): the JSON serializer escapes C0
        # characters as \b, \f or \u00XX and writes DEL and C1 as themselves, so JSON
        # without those may skip the walk. A backslash that is itself escaped may look
        # like one: the walk below then decides.
        dumped = self.model_dump_json(exclude=free_text)
        if ("\\" not in dumped and dumped.isascii()) or not _MAYBE_CONTROL.search(dumped):
            return self
        for path, value in _strings(self.model_dump(exclude=free_text)):
            found = CONTROL_CHARACTERS.search(value)
            if found:
                raise ValueError(
                    f"{path}: control character U+{ord(found.group()):04X} (ids, provenance "
                    "and settings are plain text)"
                )
        return self


_MAYBE_CONTROL = re.compile(r"\\[bfu]|[\x7f-\x9f]")


def _strings(value: object, path: str = "") -> Iterator[tuple[str, str]]:
    """Every string of a dumped model, keys included, with its dotted path."""
    if isinstance(value, str):
        yield path, value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _strings(str(key), f"{path}.{key}".lstrip("."))
            yield from _strings(item, f"{path}.{key}".lstrip("."))
    elif isinstance(value, list | tuple):
        for index, item in enumerate(value):
            yield from _strings(item, f"{path}.{index}")


class ArtifactEntry(StrictModel):
    """One file of a campaign."""

    path: str
    """Path relative to the campaign directory."""
    sha256: str
    """SHA-256 of the file's bytes."""
    size_bytes: int
    """Size of the file."""


class Manifest(StrictModel):
    """The list of a campaign's files with their hashes; a copy verifies against it."""

    schema_version: Literal[1] = MANIFEST_SCHEMA_VERSION
    """Version of the manifest format."""
    campaign_id: str
    """Campaign."""
    plan_sha256: str
    """Plan hash."""
    registered_at: str | None = None
    """When the campaign was created (UTC, ISO 8601): the plan's registration, written into
    the first manifest before any request runs and kept by every later one; every record
    starts after it (C-PLANNED). ``None`` in campaigns written before it was recorded,
    whose registration is then the first record's start, as the method page states."""
    registration_nonce: str | None = Field(default=None, pattern=r"^[0-9a-f]{8}$")
    """The random nonce drawn when the campaign was registered, part of its id
    (``<plan name>-<nonce>-<12 hex of the plan hash>``): a plan measured again after its
    campaign was deleted is a new campaign, and the site lists the deleted one as
    discarded. Absent in campaigns registered before nonces were, whose id is
    ``<plan name>-<12 hex>`` (the key is written only when set, so their manifests keep
    their bytes)."""
    record_count: int = Field(ge=0)
    """Records in ``records.jsonl`` when the manifest was written."""
    artifacts: list[ArtifactEntry]
    """The campaign's files (``logs/engine.log``, ``logs/telemetry.jsonl``, ``plan.json``,
    ``records.jsonl``), sorted by path. Lock files, temporary files and ``annotations.yaml`` (written after measuring)
    are not listed."""
    pending_record_sha256: str | None = None
    """SHA-256 of the record line ``measure`` is about to append, written before the append
    and cleared once the manifest signs it. After a kill between the two, a last unsigned
    line with this hash is known to be measure's own and is signed on resume; any other
    unsigned line is refused. ``None`` when every record is signed."""

    @model_serializer(mode="wrap")
    def _nonce_only_when_set(self, handler: SerializerFunctionWrapHandler) -> dict:
        data = handler(self)
        if data.get("registration_nonce") is None:
            data.pop("registration_nonce", None)
        return data


class PublishedManifest(StrictModel):
    """What a report's ``manifest.json`` download states: the published ``plan.json`` and
    records exactly as published (host names, addresses and paths redacted to labels),
    tied to the campaign as measured. The measured campaign's own manifest signs files
    that are never published (the plan and records before redaction, engine logs); this
    one signs the published ones, so anyone can rebuild the campaign from the downloads
    and recompute every figure. A campaign re-imported from a report's downloads keeps it
    as ``published.json``."""

    schema_version: Literal[2] = 2
    """Version of the format (1 is a measured campaign's ``Manifest``, which reports
    published before this one carried instead)."""
    campaign_id: str
    """The campaign, as measured (its directory name: the plan's name and registered
    hash)."""
    registered_at: str | None = None
    """The plan's registration, as the measured campaign's manifest records it."""
    record_count: int = Field(ge=0)
    """Records published (every record of the campaign)."""
    registered_plan_sha256: str
    """SHA-256 of the plan as registered before measuring: the hash the records carry and
    the method page states."""
    plan_sha256: str
    """SHA-256 of the published ``plan.json``: the registered plan with redaction applied
    (the same as ``registered_plan_sha256`` when nothing in the plan was redacted)."""
    records_sha256: str
    """SHA-256 of the published records: ``records.jsonl.gz`` decompressed."""
    measured_manifest_sha256: str
    """SHA-256 of the measured campaign's ``manifest.json`` (which its measurer signs),
    from which the published files were made."""
