"""``llamacpp-http``: a running llama-server, driven over its streaming HTTP API.

The operator starts the server with the condition's settings: speculative decoding
can only be switched by restarting it, so this engine checks what the server reports
(``/props``, ``/slots``) against the condition and refuses a contradiction.

Options: ``LlamaCppHttpOptions`` (``sitegen.plan.engine_options``), all recorded as flags.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import httpx

from sitegen.core.errors import EngineError
from sitegen.engine.contract import GenerationRequest
from sitegen.engine.llamacpp_embedded import (
    context_per_slot,
    request_body,
    with_split_token_counts,
)
from sitegen.engine.openai_stream import OpenAIStreamParser
from sitegen.engine.server import (
    RUN_WAIT,
    ReadyWait,
    ServerEngine,
    ServerMismatch,
    get_json,
    model_provenance,
    post_json,
    wait_until_ready,
)
from sitegen.engine.sse import stream_openai
from sitegen.plan.engine_options import LlamaCppHttpOptions
from sitegen.plan.plan_models import ConditionSpec, Plan, SpeculativeSpec
from sitegen.records.record_models import EngineInfo, ModelInfo
from sitegen.records.stream import StreamChunk, StreamEnd, StreamEvent

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


class LlamaCppHttp(ServerEngine):
    engine_id = "llamacpp-http"
    options: LlamaCppHttpOptions

    def __init__(self, plan: Plan, condition: ConditionSpec, ready: ReadyWait = RUN_WAIT) -> None:
        super().__init__(plan, condition)
        self._speculative = condition.speculative.mode != "off"
        self._http = httpx.Client(base_url=self.options.base_url, timeout=30)
        try:
            wait_until_ready(self._http, "/health", self.options.ready_timeout_s, ready)
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
        self._context_per_slot = context_per_slot(props)
        self._flags = {
            **self.option_flags(),
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
        model_info = None
        try:
            model_info = model_provenance(
                self.plan.model_for(self.condition), props.get("model_path")
            )
        except EngineError as exc:
            problems.append(str(exc))
        found = [problem for problem in problems if problem]
        if found or model_info is None:  # no provenance: its reason is among those found
            raise ServerMismatch(f"llama-server at {self.options.base_url}", found)
        return model_info

    def generate(self, request: GenerationRequest) -> Iterator[StreamEvent]:
        parser = OpenAIStreamParser(speculative=self._speculative)
        body = request_body(request, self.plan.api)
        chunks: list[StreamChunk] = []
        for event in stream_openai(self._http, self._path, body, request.timeout_s, parser):
            if isinstance(event, StreamChunk):
                chunks.append(event)
            elif isinstance(event, StreamEnd):
                event = with_split_token_counts(event, self._http, chunks, self.plan.api)
                if not self._speculative and event.draft_proposed:
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
            return (
                "the condition declares speculative decoding off but the server drafts "
                "(restart it without --spec-type)"
            )
        if named:
            return (
                f"the condition declares speculative decoding off but the server uses {named} "
                "(restart it without --spec-type)"
            )
        return None
    wanted = _SPEC_TYPE_NAMES[declared.mode]
    if server_speculative is False:
        return (
            f"the condition declares '{wanted}' but the server has speculative decoding off "
            f"(restart it with --spec-type {wanted})"
        )
    if named and wanted not in named:
        return (
            f"the condition declares '{wanted}' but the server uses {named} "
            f"(restart it with --spec-type {wanted})"
        )
    return None


def _capacity_contradiction(declared: int, server_n_ctx: int | None) -> str | None:
    if server_n_ctx is None or server_n_ctx == declared:
        return None
    return (
        f"the condition declares a context capacity of {declared} tokens but the server's "
        f"slot has {server_n_ctx} (set -c/--ctx-size, divided by --parallel, to match)"
    )


def _slots(client: httpx.Client) -> list[dict[str, Any]] | None:
    """``/slots``, or ``None`` when the server runs with ``--no-slots``."""
    try:
        reply = client.get("/slots")
        return reply.json() if reply.status_code == 200 else None
    except (httpx.HTTPError, json.JSONDecodeError):
        return None


def _flag(value: bool | None) -> str:
    return "unknown" if value is None else str(value).lower()
