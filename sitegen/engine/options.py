"""Each engine's ``engine_options``, typed: the keys a condition may set, their types and
defaults, documented field by field.

This module imports no engine, so a plan's options are checked when it is
loaded without importing any engine (torch, exllamav3, xllamacpp, httpx). A field marked
``location`` only says where a server is, how to reach or observe it: it is recorded as a flag
but does not make two conditions differ (``location_options``). Which model belongs to
which engine is said by the engine's row in ``sitegen.engine.engines``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any, ClassVar, Literal
from urllib.parse import urlsplit

from pydantic import BeforeValidator, Field, ValidationError, field_validator

from sitegen.core.errors import ConfigError, error_message
from sitegen.core.strict_model import StrictModel
from sitegen.engine.engines import engine_entry

if TYPE_CHECKING:
    from sitegen.plan.plan_models import ConditionSpec, Plan

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


def is_local(base_url: str) -> bool:
    """Whether a server runs on this machine (its GPUs and processes are visible here)."""
    host = urlsplit(base_url).hostname or ""
    return host == "localhost" or host == "::1" or host.startswith("127.")


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


def options_model(engine_id: str) -> type[EngineOptions]:
    """The model of ``engine_id``'s options (a ``ConfigError`` for an unknown engine)."""
    return engine_entry(engine_id).options_model


def location_options(engine_id: str) -> frozenset[str]:
    """Options of ``engine_id`` that only locate a server (base URL, process id …): recorded
    as flags, but two conditions that differ only in them are configured alike."""
    return options_model(engine_id).location_keys()


def parse_engine_options(engine_id: str, condition: ConditionSpec) -> EngineOptions:
    """``condition.engine_options`` as the engine's typed options; a ``ConfigError`` names
    the condition, the engine and each bad key."""
    model = options_model(engine_id)
    try:
        return model.model_validate(condition.engine_options)
    except ValidationError as exc:
        unknown, invalid = _option_problems(exc)
        problems = _describe(engine_id, unknown, invalid)
        raise ConfigError(f"condition '{condition.id}': {problems}") from None


def validate_engine_options(plan: Plan) -> None:
    """Refuse an unknown engine, an unknown option key or an ill-typed option value in any
    condition, in one line that names each problem once with the conditions it is in."""
    model = options_model(plan.engine)
    # A key set in a grid's ``common`` fails in every condition: it is named once.
    unknown_in: dict[str, list[str]] = {}
    invalid_in: dict[str, list[str]] = {}
    for condition in plan.conditions:
        try:
            model.model_validate(condition.engine_options)
        except ValidationError as exc:
            unknown, invalid = _option_problems(exc)
            for key in unknown:
                unknown_in.setdefault(key, []).append(condition.id)
            for problem in invalid:
                invalid_in.setdefault(problem, []).append(condition.id)
    groups: dict[tuple[str, ...], tuple[list[str], list[str]]] = {}
    for key, ids in unknown_in.items():
        groups.setdefault(tuple(ids), ([], []))[0].append(key)
    for problem, ids in invalid_in.items():
        groups.setdefault(tuple(ids), ([], []))[1].append(problem)
    alone = [c.id for c in plan.conditions if c.concurrency > 1]
    if alone and not model.concurrent_requests:
        raise ConfigError(
            f"{_conditions(tuple(alone))}: engine '{plan.engine}' serves one request at a "
            "time; concurrency must be 1"
        )
    if groups:
        raise ConfigError(
            "; ".join(
                f"{_conditions(ids)}: {_describe(plan.engine, unknown, invalid)}"
                for ids, (unknown, invalid) in groups.items()
            )
        )


def _option_problems(exc: ValidationError) -> tuple[list[str], list[str]]:
    """Unknown keys, and one problem per ill-typed key (a value that fits no branch of a
    union fails each branch; the first is told)."""
    unknown: list[str] = []
    invalid: dict[str, str] = {}
    for error in exc.errors():
        key = str(error["loc"][0])
        if error["type"] == "extra_forbidden":
            unknown.append(key)
        elif key not in invalid:
            if error["type"] == "value_error":  # our own validators quote the value
                message = error_message(error)
            else:
                message = f"{error['msg'][:1].lower()}{error['msg'][1:]} (got {error['input']!r})"
            invalid[key] = f"option '{key}': {message}"
    return unknown, list(invalid.values())


def _describe(engine_id: str, unknown: list[str], invalid: list[str]) -> str:
    problems = list(invalid)
    if unknown:
        allowed = ", ".join(sorted(options_model(engine_id).model_fields))
        keys = ", ".join(f"'{key}'" for key in unknown)
        noun = "option" if len(unknown) == 1 else "options"
        problems.insert(0, f"has no {noun} {keys} (allowed: {allowed})")
    return f"engine '{engine_id}' " + "; ".join(problems)


def _conditions(ids: tuple[str, ...]) -> str:
    if len(ids) == 1:
        return f"condition '{ids[0]}'"
    return "conditions " + ", ".join(f"'{i}'" for i in ids)
