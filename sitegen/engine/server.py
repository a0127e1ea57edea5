"""What the engines behind an HTTP server share (``llamacpp-http``, ``openai``): the base
class, waiting for readiness, JSON requests, the server's devices and memory when it runs
on this host, and the provenance of the model it serves."""

from __future__ import annotations

import json
import os
import time
from abc import abstractmethod
from dataclasses import dataclass
from pathlib import Path, PurePath
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import httpx

from sitegen.core.errors import EngineError, SitegenError
from sitegen.engine.contract import Engine, EngineDescription, WaitReport
from sitegen.engine.locality import is_local
from sitegen.engine.memory import MemoryProbe, ProcessRssProbe, cpu_name, listening_pid
from sitegen.engine.model_files import describe_model, resolve_model_path
from sitegen.engine.nvml import nvml_devices, nvml_probes
from sitegen.engine.sse import error_message
from sitegen.plan.engine_options import ServerOptions
from sitegen.plan.plan_models import ConditionSpec, ModelSpec, Plan
from sitegen.records.record_models import UNKNOWN_REMOTE_SHA256, DeviceInfo, EngineInfo, ModelInfo

"""The ``sha256`` of a model file on another host, declared ``remote_unhashable`` by the plan."""


class ServerMismatch(EngineError):
    """A server that contradicts its condition; ``problems`` names each contradiction."""

    def __init__(self, server: str, problems: list[str]) -> None:
        super().__init__(f"{server}: " + "; ".join(problems))
        self.server = server
        self.problems = problems


class ServerEngine(Engine):
    """An engine behind an HTTP server at ``options.base_url``. Subclasses take a
    ``ready`` (how to wait for the server), set ``_http``, ``_model_info`` and ``_flags``
    and implement ``engine_info``."""

    options: ServerOptions
    _http: httpx.Client
    _model_info: ModelInfo
    _flags: dict[str, str]
    _context_per_slot: int | None = None
    """Context per slot as the server reports it (``None``: it does not)."""

    if TYPE_CHECKING:  # each subclass's constructor (``preflight`` passes ``ready``)

        def __init__(
            self, plan: Plan, condition: ConditionSpec, ready: ReadyWait = ...
        ) -> None: ...

    @abstractmethod
    def engine_info(self) -> EngineInfo:
        """Engine id, server version and build."""

    @property
    def _path(self) -> str:
        return "/v1/chat/completions" if self.plan.api == "chat" else "/v1/completions"

    def describe(self) -> EngineDescription:
        devices, driver, interconnect = server_devices(self.options.base_url)
        return EngineDescription(
            engine=self.engine_info(),
            model=self._model_info,
            devices=devices,
            flags=self._flags,
            driver=driver,
            interconnect=interconnect,
            context_per_slot=self._context_per_slot,
        )

    def memory_probes(self) -> list[MemoryProbe]:
        return server_memory_probes(self.options.base_url, self.options.server_pid)

    def close(self) -> None:
        self._http.close()

    @classmethod
    def preflight(cls, plan: Plan, condition: ConditionSpec, on_wait: WaitReport) -> ServerEngine:
        # Asking the server is cheap, and the run keeps the engine (the model is hashed once).
        return cls(plan, condition, ready=ReadyWait(REFUSED_GRACE_S, on_wait))


def model_provenance(spec: ModelSpec, served: str | None) -> ModelInfo:
    """Provenance of the model a server serves, once it is known to be the plan's.

    ``served`` is what the server reports (a file path or a model id; ``None``: nothing).
    Its last path part must be the plan's model ``name``, the file name of its ``source``
    or of the local file. A model file readable here is hashed; one that is not is accepted
    only when the plan declares ``remote_unhashable`` (sha256 ``unknown-remote``).
    """
    local = _readable_model_path(spec.source)
    if served is not None:
        # ``package:<module>:<file>`` names its file last.
        names = {spec.name, PurePath(spec.source.split(":")[-1]).name}
        if local is not None:
            names.add(local.name)
        if not {served, PurePath(served).name} & names:
            raise EngineError(
                f"the server serves '{served}' but the plan's model is '{spec.name}' "
                f"(expected one of: {', '.join(sorted(names))}): start the server with the "
                "plan's model, or correct engine_options.base_url"
            )
    if local is not None:
        return describe_model(spec, local)
    if not spec.remote_unhashable:
        raise EngineError(
            f"the plan's model '{spec.source}' is not readable here, so it cannot be hashed; "
            "if it is on the server's host, declare model.remote_unhashable: true in the plan"
        )
    return ModelInfo(
        name=spec.name,
        file=PurePath(served).name if served else spec.source,
        sha256=UNKNOWN_REMOTE_SHA256,
        size_bytes=0,
        quantization=spec.quantization,
    )


def _readable_model_path(source: str) -> Path | None:
    """The model file or directory when it is readable on this host."""
    try:
        local = resolve_model_path(source)
    except SitegenError:
        return None
    return local if os.access(local, os.R_OK) else None


def server_memory_probes(base_url: str, server_pid: int | None) -> list[MemoryProbe]:
    """NVML probes for a local server's GPUs; else the RSS of ``server_pid``, or of the
    process listening on the server's port; else none (a remote server's memory is not
    visible from here)."""
    if not is_local(base_url):
        return []
    probes = nvml_probes()
    if not probes:
        parts = urlsplit(base_url)
        pid = server_pid or listening_pid(parts.port or (443 if parts.scheme == "https" else 80))
        probes = [ProcessRssProbe(pid)] if pid else []
    return probes


def server_devices(base_url: str) -> tuple[list[DeviceInfo], str | None, str | None]:
    """Devices, driver and interconnect of a local server: its GPUs, else this CPU."""
    if not is_local(base_url):
        return [], None, None
    devices, driver, interconnect = nvml_devices()
    if not devices:
        devices = [DeviceInfo(id="cpu", name=cpu_name() or "cpu")]
    return devices, driver, interconnect


REFUSED_GRACE_S = 3.0
"""How long preflight retries a refused connection (a server still starting) before it
refuses the plan: nothing listening is a setup mistake, not a model loading."""


@dataclass(frozen=True)
class ReadyWait:
    """How a server engine waits for its server. The default (the run's loads) retries a
    refused connection until the ready timeout, as a server may be restarting."""

    refused_grace_s: float | None = None
    """Give up on a refused connection after this long (``None``: the ready timeout)."""
    on_wait: WaitReport | None = None
    """Told at every poll that did not find the server ready."""


RUN_WAIT = ReadyWait()
"""How the run's loads wait (a server restarting mid-campaign is waited for in full)."""


def wait_until_ready(
    client: httpx.Client, path: str, timeout_s: float, wait: ReadyWait = RUN_WAIT
) -> None:
    """Poll ``path`` until HTTP 200; 503 (model loading) is retried until ``timeout_s``, a
    refused connection (server starting) until ``wait.refused_grace_s`` or ``timeout_s``,
    any other status fails at once."""
    started = time.monotonic()
    deadline = started + timeout_s
    url = str(client.base_url).rstrip("/")
    while True:
        refused = False
        try:
            reply = client.get(path, timeout=max(min(10.0, timeout_s), 0.1))
        except httpx.TransportError as exc:
            refused = isinstance(exc, httpx.ConnectError)
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
        waited = time.monotonic() - started
        if refused and wait.refused_grace_s is not None and waited >= wait.refused_grace_s:
            raise EngineError(
                f"nothing answers at {url} ({state} for {waited:.0f} s): start the server, "
                "or correct engine_options.base_url"
            )
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise EngineError(f"server at {url} not ready after {timeout_s:g} s: {state}")
        if wait.on_wait is not None:
            wait.on_wait(url, waited, timeout_s)
        time.sleep(min(0.25, remaining))


def get_json(client: httpx.Client, path: str) -> Any:
    """``GET path``, decoded (see ``_json_reply``)."""
    return _json_reply(client, "GET", path, None)


def post_json(client: httpx.Client, path: str, body: dict[str, Any]) -> Any:
    """``POST path`` with a JSON body, decoded (see ``_json_reply``)."""
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
