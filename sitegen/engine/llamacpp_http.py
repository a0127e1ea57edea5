"""``llamacpp-http``: a running llama-server, driven over its streaming HTTP API.

The operator starts the server with the condition's settings: speculative decoding
can only be switched by restarting it, so this engine checks what the server reports
(``/props``, ``/slots``) against the condition and refuses a contradiction.

Options (``condition.engine_options``, all recorded as flags):
``base_url`` (server root, default ``http://127.0.0.1:8080``), ``ready_timeout_s``
(how long to wait for ``/health``, default 300), ``server_pid`` (a local server's
process, whose RSS is sampled when no GPU is visible through NVML).
"""

from __future__ import annotations

import json
import os
import time
from abc import abstractmethod
from collections.abc import Iterator
from dataclasses import replace
from pathlib import PurePath
from typing import Any
from urllib.parse import urlsplit

import httpx

from sitegen.engine.base import (
    Engine,
    EngineDescription,
    GenerationRequest,
    StreamEnd,
    StreamEvent,
)
from sitegen.engine.llamacpp_embedded import cpu_name, request_body
from sitegen.engine.memory import MemoryProbe, ProcessRssProbe
from sitegen.engine.model_files import describe_model, resolve_model_path
from sitegen.engine.nvml import nvml_devices, nvml_probes
from sitegen.engine.openai_stream import OpenAIStreamParser
from sitegen.engine.sse import error_message, stream_openai
from sitegen.errors import ConfigError, EngineError, SitegenError
from sitegen.plan.models import ConditionSpec, ModelSpec, Plan, SpeculativeSpec
from sitegen.records.models import DeviceInfo, EngineInfo, ModelInfo

DEFAULT_BASE_URL = "http://127.0.0.1:8080"
DEFAULT_READY_TIMEOUT_S = 300.0
UNKNOWN_REMOTE_SHA256 = "unknown-remote"

# Plan modes → llama.cpp `--spec-type` names.
_SPEC_TYPE_NAMES = {
    "draft": "draft-simple",
    "draft-mtp": "draft-mtp",
    "ngram-simple": "ngram-simple",
    "ngram-map-k": "ngram-map-k",
    "ngram-mod": "ngram-mod",
    "ngram-cache": "ngram-cache",
}
# llama.cpp sampling defaults that apply to every request that does not set them.
_SERVER_SAMPLING_KEYS = ("min_p", "typical_p", "repeat_penalty", "samplers")


class ServerEngine(Engine):
    """An engine behind an HTTP server: the parts llama-server and OpenAI-compatible
    servers share. Subclasses set ``_base_url``, ``_http``, ``_model_info``, ``_flags``
    and implement ``engine_info``."""

    _base_url: str
    _http: httpx.Client
    _model_info: ModelInfo
    _flags: dict[str, str]

    @abstractmethod
    def engine_info(self) -> EngineInfo:
        """Engine id, server version and build."""

    @property
    def _path(self) -> str:
        return "/v1/chat/completions" if self.plan.api == "chat" else "/v1/completions"

    def describe(self) -> EngineDescription:
        devices, driver, interconnect = server_devices(self._base_url)
        return EngineDescription(
            engine=self.engine_info(),
            model=self._model_info,
            devices=devices,
            flags=self._flags,
            driver=driver,
            interconnect=interconnect,
        )

    def memory_probes(self) -> list[MemoryProbe]:
        return server_memory_probes(self._base_url, self.condition.engine_options)

    def close(self) -> None:
        self._http.close()


class LlamaCppHttp(ServerEngine):
    engine_id = "llamacpp-http"

    def __init__(self, plan: Plan, condition: ConditionSpec) -> None:
        super().__init__(plan, condition)
        options = condition.engine_options
        self._base_url = base_url_option(options, DEFAULT_BASE_URL)
        self._speculative = condition.speculative.mode != "off"
        self._http = httpx.Client(base_url=self._base_url, timeout=30)
        try:
            ready_timeout_s = float(options.get("ready_timeout_s", DEFAULT_READY_TIMEOUT_S))
            wait_until_ready(self._http, "/health", ready_timeout_s)
            props = get_json(self._http, "/props")
            slots = _slots(self._http)
            server_speculative = any(s.get("speculative") for s in slots) if slots else None
            self._model_info = self._check_server(props, server_speculative)
        except EngineError:
            self._http.close()
            raise
        settings = props.get("default_generation_settings", {})
        params = settings.get("params", {})
        self._build = str(props.get("build_info", "unknown"))
        self._bos_token = props.get("bos_token") or ""
        self._flags = {
            **{key: str(value) for key, value in options.items()},
            "api_path": self._path,
            "cache_prompt": "false",
            "spec_type": _SPEC_TYPE_NAMES.get(condition.speculative.mode, "none"),
            "server_speculative": _flag(server_speculative),
            "server_spec_types": str(params.get("speculative.types", "unknown")),
            "server_n_ctx_per_slot": str(settings.get("n_ctx", "unknown")),
            "server_total_slots": str(props.get("total_slots", "unknown")),
            "server_model_path": str(props.get("model_path", "unknown")),
            "server_sampling_defaults": json.dumps(
                {key: params[key] for key in _SERVER_SAMPLING_KEYS if key in params},
                sort_keys=True,
            ),
        }
        if self._speculative:
            self._flags["spec_draft_n_max"] = str(condition.speculative.draft_max)

    def _check_server(self, props: dict[str, Any], server_speculative: bool | None) -> ModelInfo:
        """The model's provenance, once the server is known to match the condition; every
        contradiction found is reported at once."""
        settings = props.get("default_generation_settings", {})
        speculative_types = settings.get("params", {}).get("speculative.types")
        problems = [
            speculative_contradiction(
                self.condition.speculative, server_speculative, speculative_types
            ),
            _capacity_contradiction(self.condition.context_capacity, settings.get("n_ctx")),
        ]
        model_path = props.get("model_path")
        model_info = None
        try:
            served_name = PurePath(model_path).name if model_path else None
            model_info = model_provenance(self.plan.model, model_path, check_name=served_name)
        except EngineError as exc:
            problems.append(str(exc))
        problems = [problem for problem in problems if problem]
        if problems:
            raise EngineError(f"llama-server at {self._base_url}: " + "; ".join(problems))
        return model_info

    def generate(self, request: GenerationRequest) -> Iterator[StreamEvent]:
        parser = OpenAIStreamParser(speculative=self._speculative)
        body = request_body(request, self.plan.api)
        for event in stream_openai(self._http, self._path, body, request.timeout_s, parser):
            if isinstance(event, StreamEnd) and not self._speculative and event.draft_proposed:
                event = replace(
                    event,
                    finish="error",
                    error="the server drafted tokens although the condition declares "
                    "speculative decoding off (restart it without --spec-type)",
                )
            yield event

    def count_tokens(self, text: str) -> int:
        if self.plan.api == "chat":
            template: dict[str, Any] = {"messages": [{"role": "user", "content": text}]}
            if self.plan.template_kwargs:
                template["chat_template_kwargs"] = self.plan.template_kwargs
            prompt = post_json(self._http, "/apply-template", template)["prompt"]
            # llama.cpp renders templates without the BOS text and adds BOS when tokenizing;
            # older builds rendered it, and adding a second one would miscount.
            add_bos = not (self._bos_token and prompt.startswith(self._bos_token))
            body = {"content": prompt, "add_special": add_bos, "parse_special": True}
        else:
            body = {"content": text, "add_special": True}
        return len(post_json(self._http, "/tokenize", body)["tokens"])

    def engine_info(self) -> EngineInfo:
        return EngineInfo(
            id=self.engine_id,
            version=f"llama-server {self._build}",
            build=self._build,
            api=f"http {self.plan.api}",
        )


def speculative_contradiction(
    declared: SpeculativeSpec, server_speculative: bool | None, server_types: str | None
) -> str | None:
    """Why the server's speculative setup contradicts ``declared``, or ``None``.

    ``server_speculative`` is ``/slots``' per-slot flag (the server state). ``server_types``
    is ``/props``' ``speculative.types``, a per-request default that some builds report as
    ``none`` even while drafting, so only a named type counts as evidence.
    """
    named = [t.strip() for t in (server_types or "").split(",") if t.strip() not in ("", "none")]
    if declared.mode == "off":
        if server_speculative:
            return "the condition declares speculative decoding off but the server drafts"
        if named:
            return f"the condition declares speculative decoding off but the server uses {named}"
        return None
    wanted = _SPEC_TYPE_NAMES[declared.mode]
    if server_speculative is False:
        return f"the condition declares '{wanted}' but the server has speculative decoding off"
    if named and wanted not in named:
        return f"the condition declares '{wanted}' but the server uses {named}"
    return None


def _capacity_contradiction(declared: int, server_n_ctx: int | None) -> str | None:
    if server_n_ctx is None or server_n_ctx == declared:
        return None
    return (
        f"the condition declares a context capacity of {declared} tokens but the server's "
        f"slot has {server_n_ctx} (set -c/--ctx-size, divided by --parallel, to match)"
    )


def model_provenance(spec: ModelSpec, served: str | None, check_name: str | None) -> ModelInfo:
    """The plan's model when its source is readable here (hashed), else the served name with
    sha256 ``unknown-remote``. ``check_name``: the file name the server reports; a local
    file of another name is refused rather than hashed in its place."""
    try:
        local = resolve_model_path(spec.source)
    except SitegenError:
        local = None
    if local is not None and os.access(local, os.R_OK):
        if check_name and check_name != local.name:
            raise EngineError(
                f"the server runs '{check_name}' but the plan's model is '{local.name}'"
            )
        return describe_model(spec, local)
    return ModelInfo(
        name=spec.name,
        file=PurePath(served).name if served else spec.source,
        sha256=UNKNOWN_REMOTE_SHA256,
        size_bytes=0,
        quantization=spec.quantization,
    )


def base_url_option(options: dict[str, Any], default: str) -> str:
    """``engine_options["base_url"]``: the server root, ``http(s)://host:port``."""
    base_url = str(options.get("base_url", default)).rstrip("/")
    if urlsplit(base_url).scheme not in ("http", "https"):
        raise ConfigError(
            f"engine option base_url must start with http:// or https:// ({base_url!r})"
        )
    return base_url


def is_local(base_url: str) -> bool:
    """Whether the server runs on this machine (its GPUs and processes are visible here)."""
    host = urlsplit(base_url).hostname or ""
    return host == "localhost" or host == "::1" or host.startswith("127.")


def server_memory_probes(base_url: str, options: dict[str, Any]) -> list[MemoryProbe]:
    """NVML probes for a local server's GPUs; else the RSS of ``server_pid``; else none
    (a remote server's memory is not visible from here)."""
    if not is_local(base_url):
        return []
    probes = nvml_probes()
    if not probes and options.get("server_pid"):
        probes = [ProcessRssProbe(int(options["server_pid"]))]
    return probes


def server_devices(base_url: str) -> tuple[list[DeviceInfo], str | None, str | None]:
    """Devices, driver and interconnect of a local server: its GPUs, else this CPU."""
    if not is_local(base_url):
        return [], None, None
    devices, driver, interconnect = nvml_devices()
    if not devices:
        devices = [DeviceInfo(id="cpu", name=cpu_name() or "cpu")]
    return devices, driver, interconnect


def wait_until_ready(client: httpx.Client, path: str, timeout_s: float) -> None:
    """Poll ``path`` until HTTP 200; 503 (model loading) and a refused connection (server
    starting) are retried until ``timeout_s``, any other status fails at once."""
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            reply = client.get(path, timeout=max(min(10.0, timeout_s), 0.1))
        except httpx.TransportError as exc:
            state = f"unreachable ({exc or type(exc).__name__})"
        else:
            if reply.status_code == 200:
                return
            if reply.status_code != 503:
                raise EngineError(
                    f"{client.base_url.join(path)} answered HTTP {reply.status_code}: "
                    f"{error_message(reply.text)}"
                )
            state = "still loading (HTTP 503)"
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise EngineError(
                f"server at {client.base_url} not ready after {timeout_s:g} s: {state}"
            )
        time.sleep(min(0.25, remaining))


def get_json(client: httpx.Client, path: str) -> Any:
    return _json_reply(client, "GET", path, None)


def post_json(client: httpx.Client, path: str, body: dict[str, Any]) -> Any:
    return _json_reply(client, "POST", path, body)


def _json_reply(client: httpx.Client, method: str, path: str, body: dict[str, Any] | None) -> Any:
    """The decoded reply; transport errors and error statuses become ``EngineError`` so the
    runner records them instead of stopping the campaign."""
    try:
        reply = client.request(method, path, json=body)
    except httpx.HTTPError as exc:
        raise EngineError(f"{method} {client.base_url.join(path)} failed: {exc}") from exc
    if reply.status_code != 200:
        raise EngineError(
            f"{method} {client.base_url.join(path)} answered HTTP {reply.status_code}: "
            f"{error_message(reply.text)}"
        )
    try:
        return reply.json()
    except json.JSONDecodeError as exc:
        raise EngineError(f"{method} {client.base_url.join(path)} did not return JSON") from exc


def _slots(client: httpx.Client) -> list[dict[str, Any]] | None:
    """``/slots``, or ``None`` when the server runs with ``--no-slots``."""
    try:
        reply = client.get("/slots")
        return reply.json() if reply.status_code == 200 else None
    except (httpx.HTTPError, json.JSONDecodeError):
        return None


def _flag(value: bool | None) -> str:
    return "unknown" if value is None else str(value).lower()
