"""Each engine's ``engine_options``, typed: the keys a condition may set, their types and
defaults, documented field by field.

They are part of the plan's schema (a condition's ``engine_options``), so they live with
it and import no engine: a plan's options are checked when it is loaded without importing
any engine (torch, exllamav3, xllamacpp, httpx). A field marked ``location`` only says
where a server is, how to reach or observe it: it is recorded as a flag but does not make
two conditions differ (``location_options``). Which model belongs to which engine is said
by the engine's row in ``sitegen.plan.engine_registry``.
"""

from __future__ import annotations

from typing import Annotated, Any, ClassVar, Literal
from urllib.parse import urlsplit

from pydantic import BeforeValidator, Field, field_validator

from sitegen.core.strict_model import StrictModel

LOCATION: dict[str, Any] = {"location": True}
"""``json_schema_extra`` of an option that only locates a server (host, port, process)."""


class EngineOptions(StrictModel):
    """Settings of one engine under one condition (``ConditionSpec.engine_options``)."""

    concurrent_requests: ClassVar[bool] = True
    """Whether the engine serves several requests at once (``ConditionSpec.concurrency``)."""

    @classmethod
    def location_keys(cls) -> frozenset[str]:
        """Options marked ``location``: they locate a server and change nothing measured."""
        return frozenset(
            name
            for name, field in cls.model_fields.items()
            if isinstance(field.json_schema_extra, dict) and field.json_schema_extra.get("location")
        )


class ServerOptions(EngineOptions):
    """Options shared by the engines that drive a running HTTP server."""

    base_url: str = Field(default="http://127.0.0.1:8080", json_schema_extra=LOCATION)
    """Root of the server, ``http(s)://host:port``."""
    ready_timeout_s: float = Field(default=300.0, gt=0)
    """How long to wait for the server to report ready before the condition fails (seconds)."""
    server_pid: int | None = Field(default=None, ge=1, json_schema_extra=LOCATION)
    """Process id of a server on this host, whose RSS is sampled when no GPU is visible
    through NVML (``None``: no memory figure without a GPU)."""
    memory_unavailable: bool = Field(default=False, json_schema_extra=LOCATION)
    """Declares that the server's memory cannot be read from here (no GPU visible through
    NVML and no process to sample, e.g. a server in another container): its records carry
    no peak memory. Without it, preflight refuses a server on this host it cannot probe,
    and warns about a remote one. It changes nothing measured."""

    @field_validator("base_url")
    @classmethod
    def _http_root(cls, base_url: str) -> str:
        if urlsplit(base_url).scheme not in ("http", "https"):
            raise ValueError(f"must start with http:// or https:// (got {base_url!r})")
        return base_url.rstrip("/")


class LlamaCppHttpOptions(ServerOptions):
    """``llamacpp-http``: a running llama-server."""


class OpenAIOptions(ServerOptions):
    """``openai``: an OpenAI-compatible server (vLLM, SGLang, llama-server …)."""

    base_url: str = Field(default="http://127.0.0.1:8000", json_schema_extra=LOCATION)
    """Root of the server, ``http(s)://host:port`` (vLLM's default port is 8000)."""
    model: str | None = None
    """Served model id to request (``None``: the first of ``/v1/models``); either way it
    must name the plan's model."""
    api_key_env: str | None = Field(default=None, json_schema_extra=LOCATION)
    """Name of the environment variable holding the server's bearer token (only the name is
    recorded; ``None``: no token)."""


class EmbeddedLlamaCppOptions(EngineOptions):
    """``llamacpp-embedded``: llama.cpp in-process (``xllamacpp``); unset keeps llama.cpp's
    defaults."""

    n_batch: int | None = Field(default=None, ge=2)
    """Logical batch size of prompt processing, llama.cpp ``-b`` (``None``: 2048). At
    least 2: llama.cpp's warm-up decodes two tokens (BOS, EOS) in one batch, and a batch
    of 1 aborts the whole process."""
    n_ubatch: int | None = Field(default=None, ge=1)
    """Physical batch size of prompt processing, llama.cpp ``-ub`` (``None``: 512)."""
    threads_batch: int | None = Field(default=None, ge=1)
    """CPU threads of prompt processing, llama.cpp ``-tb`` (``None``: the condition's
    ``threads``)."""
    flash_attn: Literal["on", "off", "auto"] | None = None
    """Flash attention, llama.cpp ``-fa`` (``None``: ``auto``, on where the backend has it).
    On CPUs it also decides whether a speculative mode's batched verification computes
    attention exactly like one-token decoding (``on``) or with a different matrix kernel
    (``off``), whose rounding can change a sampled token."""


def _gigabytes_per_device(value: Any) -> Any:
    """``"23,23.5"`` → ``[23.0, 23.5]`` (one entry per device); a number stays one number."""
    if not isinstance(value, str):
        return value
    try:
        return [float(part) for part in value.split(",")]
    except ValueError:
        raise ValueError(f"must be GB per device, e.g. '23,23' (got {value!r})") from None


def _cache_bits(value: Any) -> Any:
    """``8`` or ``"8"`` → ``(8, 8)``; ``"8,6"`` → ``(8, 6)``: key and value bits."""
    if isinstance(value, int) and not isinstance(value, bool):
        return (value, value)
    if not isinstance(value, str):
        return value
    try:
        bits = [int(part) for part in value.split(",")]
    except ValueError:
        bits = []
    if len(bits) not in (1, 2):
        raise ValueError(f"must be 'K' or 'K,V' bits (got {value!r})")
    return (bits[0], bits[-1])


GigabytesPerDevice = Annotated[float | list[float], BeforeValidator(_gigabytes_per_device)]
"""GB for every device (one number) or per device (a comma list such as ``"23,23"``)."""


class ExLlamaV3Options(EngineOptions):
    """``exllamav3``: ExLlamaV3's generator in-process; unset keeps ExLlamaV3's defaults."""

    # One generator job at a time: sitegen's ExLlamaV3 engine does not batch requests.
    concurrent_requests: ClassVar[bool] = False

    tensor_p: bool = False
    """Split the model over the visible GPUs by tensor parallelism (a draft loads without)."""
    tp_backend: Literal["native", "nccl"] = "native"
    """Communication backend of tensor parallelism."""
    use_per_device: GigabytesPerDevice | None = None
    """GB the model may use per device: one number or a comma list (``None``: automatic)."""
    reserve_per_device: GigabytesPerDevice | None = None
    """GB kept free per device: one number or a comma list (``None``: ExLlamaV3's default)."""
    device: str | None = None
    """Load everything onto this one device, e.g. ``cuda:0`` (``None``: automatic split)."""
    cache_quant: Annotated[tuple[int, int] | None, BeforeValidator(_cache_bits)] = None
    """Quantized cache: ``"K"`` or ``"K,V"`` bits of keys and values, e.g. ``"8,6"``
    (``None``: an FP16 cache)."""


class FakeOptions(EngineOptions):
    """``fake``: the deterministic test engine."""

    tps: float = Field(default=50.0, gt=0)
    """Tokens per second it pretends to generate."""
    fail_input: str | None = None
    """Requests whose prompt contains this text end with an engine error (``None``: none)."""
    thinking_tokens: int = Field(default=0, ge=0)
    """Tokens streamed as thinking before the answer, like llama.cpp's chat API; with more
    than zero the engine reports thinking and answer token counts (else ``None``)."""
