"""``openai``: any OpenAI-compatible streaming endpoint (vLLM, SGLang, llama-server …).

Only what the OpenAI API defines is used: the streamed text, ``finish_reason`` and
``usage.completion_tokens`` (requested with ``stream_options.include_usage``). The API
has no native tok/s, no prefill time and no draft counters, so those stay ``None`` even
when a server adds fields of its own; thinking and answer token counts stay ``None`` too
(whether a server splits thinking off depends on its setup). The server's speculative
setup and prefix caching cannot be read through the API; the condition's declaration is
recorded as given.

The model the server serves must be the plan's (its id names the plan's model ``name``
or the file name of its ``source``); anything else is refused before a request runs.

Options: ``OpenAIOptions`` (``sitegen.plan.engine_options``), all recorded as flags (the API
key's variable by name only).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import httpx

from sitegen.core.errors import ConfigError, EngineError
from sitegen.engine.contract import GenerationRequest
from sitegen.engine.openai_stream import OpenAIStreamParser, prompt_fields
from sitegen.engine.server import (
    RUN_WAIT,
    ReadyWait,
    ServerEngine,
    ServerMismatch,
    get_json,
    model_provenance,
    wait_until_ready,
)
from sitegen.engine.sse import error_message, stream_openai
from sitegen.plan.engine_options import OpenAIOptions
from sitegen.plan.plan_models import ConditionSpec, Plan
from sitegen.records.record_models import EngineInfo, ModelInfo
from sitegen.records.stream import StreamEnd, StreamEvent


def openai_request_body(request: GenerationRequest, api: str, model: str) -> dict[str, Any]:
    """The streaming request for ``request``; usage is requested so the token count is the
    server's own."""
    body: dict[str, Any] = {
        "model": model,
        "max_tokens": request.max_output_tokens,
        "temperature": request.temperature,
        "top_p": request.top_p,
        "seed": request.seed,
        "stream": True,
        "stream_options": {"include_usage": True},
    }
    if request.top_k:
        body["top_k"] = request.top_k  # an extension that vLLM, SGLang and llama.cpp accept
    return body | prompt_fields(request, api)


class OpenAICompatible(ServerEngine):
    engine_id = "openai"
    options: OpenAIOptions

    def __init__(self, plan: Plan, condition: ConditionSpec, ready: ReadyWait = RUN_WAIT) -> None:
        super().__init__(plan, condition)
        headers = {}
        if self.options.api_key_env:
            key = os.environ.get(self.options.api_key_env)
            if not key:
                raise ConfigError(f"environment variable {self.options.api_key_env} is not set")
            headers["Authorization"] = f"Bearer {key}"
        self._http = httpx.Client(base_url=self.options.base_url, headers=headers, timeout=30)
        try:
            wait_until_ready(self._http, "/v1/models", self.options.ready_timeout_s, ready)
            self._model, max_model_len = self._served_model()
            self._model_info = self._check_server(max_model_len)
        except EngineError:
            self._http.close()
            raise
        self._version = _server_version(self._http)
        self._flags = {
            **self.option_flags(),
            "model": self._model,
            "api_path": self._path,
            "spec_type": condition.speculative.mode,
            "spec_verified": "false (not readable through the OpenAI API)",
        }
        if condition.speculative.draft_max is not None:
            self._flags["spec_draft_max"] = str(condition.speculative.draft_max)

    def _served_model(self) -> tuple[str, int | None]:
        """The model to request and its ``max_model_len`` when the server states it (vLLM)."""
        base_url = self.options.base_url
        served = get_json(self._http, "/v1/models").get("data") or []
        ids = [entry.get("id") for entry in served]
        model = self.options.model or (ids[0] if ids else None)
        if model is None:
            raise EngineError(f"{base_url}/v1/models lists no model")
        if model not in ids:
            raise EngineError(f"{base_url} does not serve '{model}' (it serves {ids})")
        entry = served[ids.index(model)]
        return model, entry.get("max_model_len")

    def _check_server(self, max_model_len: int | None) -> ModelInfo:
        """The model's provenance, once the served model is known to be the plan's at the
        condition's capacity; every contradiction found is reported at once."""
        problems: list[str] = []
        capacity = self.condition.context_capacity
        if max_model_len is not None and max_model_len != capacity:
            problems.append(
                f"the condition declares a context capacity of {capacity} tokens but "
                f"'{self._model}' is served with {max_model_len}"
            )
        model_info = None
        try:
            model_info = model_provenance(self.plan.model_for(self.condition), self._model)
        except EngineError as exc:
            problems.append(str(exc))
        if problems or model_info is None:  # no provenance: its reason is among the problems
            raise ServerMismatch(self.options.base_url, problems)
        return model_info

    def generate(self, request: GenerationRequest) -> Iterator[StreamEvent]:
        parser = OpenAIStreamParser(speculative=False)
        body = openai_request_body(request, self.plan.api, self._model)
        for event in stream_openai(self._http, self._path, body, request.timeout_s, parser):
            if isinstance(event, StreamEnd):
                event = replace(
                    event,
                    native_tps=None,
                    draft_proposed=None,
                    draft_accepted=None,
                    prompt_processing_s=None,
                )
                if event.finish != "error" and event.generated_tokens is None:
                    event = replace(
                        event,
                        finish="error",
                        error="the stream carried no usage.completion_tokens "
                        "(stream_options.include_usage unsupported?)",
                    )
            yield event

    def count_tokens(self, text: str) -> int:
        """vLLM's ``/tokenize`` (SGLang mirrors it), which applies the chat template the same
        way the chat endpoint does. Other servers have no such endpoint in the API."""
        if self.plan.api == "chat":
            body: dict[str, Any] = {
                "model": self._model,
                "messages": [{"role": "user", "content": text}],
                "add_generation_prompt": True,
            }
            if self.plan.template_kwargs:
                body["chat_template_kwargs"] = self.plan.template_kwargs
        else:
            body = {"model": self._model, "prompt": text}
        try:
            reply = self._http.post("/tokenize", json=body)
        except httpx.HTTPError as exc:
            raise EngineError(f"POST {self.options.base_url}/tokenize failed: {exc}") from exc
        count = reply.json().get("count") if _is_json_object(reply) else None
        if reply.status_code != 200 or not isinstance(count, int):
            detail = f"HTTP {reply.status_code}: {error_message(reply.text)}"
            raise ConfigError(
                f"{self.options.base_url} has no vLLM-style /tokenize ({detail}), so input-length "
                "targets cannot be met with the 'openai' engine: remove target_prompt_tokens, "
                "or use 'llamacpp-http' for a llama-server"
            )
        return count

    def engine_info(self) -> EngineInfo:
        return EngineInfo(
            id=self.engine_id, version=self._version, build="unknown", api=f"http {self.plan.api}"
        )


def _server_version(client: httpx.Client) -> str:
    """``GET /version`` (vLLM, SGLang: ``{"version": …}``), else a generic label."""
    try:
        reply = client.get("/version")
    except httpx.HTTPError:
        return "unknown"
    if reply.status_code == 200 and _is_json_object(reply) and reply.json().get("version"):
        return str(reply.json()["version"])
    return "unknown"


def _is_json_object(reply: httpx.Response) -> bool:
    try:
        return isinstance(reply.json(), dict)
    except ValueError:
        return False
