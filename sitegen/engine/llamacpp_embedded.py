"""``llamacpp-embedded``: llama.cpp's own server code in-process via the xllamacpp wheel.

Requests go through ``Server.handle_completions`` / ``handle_chat_completions``
with a streaming callback; tokenization uses the server's real HTTP listener on
127.0.0.1. Switching speculative decoding needs a new server, so one engine
instance serves one condition.

Options: ``EmbeddedLlamaCppOptions`` (``sitegen.plan.engine_options``), all recorded as flags.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import httpx

from sitegen.core.errors import ConfigError, EngineError, MissingDependency
from sitegen.engine.contract import Engine, EngineDescription, GenerationRequest
from sitegen.engine.memory import cpu_name
from sitegen.engine.model_files import describe_model, resolve_model_path
from sitegen.engine.native_output import NativeOutput
from sitegen.engine.openai_stream import OpenAIStreamParser, prompt_fields
from sitegen.plan.engine_options import EmbeddedLlamaCppOptions
from sitegen.plan.plan_models import ConditionSpec, Plan
from sitegen.records.record_models import DeviceInfo, EngineInfo
from sitegen.records.stream import StreamChunk, StreamEnd, StreamEvent

if TYPE_CHECKING:
    from sitegen.engine.contract import WaitReport

_SPEC_TYPES = {
    "ngram-simple": "NGRAM_SIMPLE",
    "ngram-map-k": "NGRAM_MAP_K",
    "ngram-mod": "NGRAM_MOD",
    "ngram-cache": "NGRAM_CACHE",
    "draft": "DRAFT_SIMPLE",
    "draft-mtp": "DRAFT_MTP",
}

_FLASH_ATTN_TYPES = {"auto": -1, "off": 0, "on": 1}
"""llama.cpp's ``llama_flash_attn_type`` values."""


def request_body(request: GenerationRequest, api: str) -> dict[str, Any]:
    """The llama.cpp request for ``request`` (prompt caching off: every trial prefills)."""
    body: dict[str, Any] = {
        "max_tokens": request.max_output_tokens,
        "temperature": request.temperature,
        "top_p": request.top_p,
        "top_k": request.top_k,
        "seed": request.seed,
        "stream": True,
        "cache_prompt": False,
    }
    if api == "chat":
        body["stream_options"] = {"include_usage": True}
    return body | prompt_fields(request, api)


class EmbeddedLlamaCpp(Engine):
    engine_id = "llamacpp-embedded"
    options: EmbeddedLlamaCppOptions

    def __init__(self, plan: Plan, condition: ConditionSpec) -> None:
        super().__init__(plan, condition)
        try:
            import xllamacpp
        except ImportError:
            raise MissingDependency(
                "xllamacpp", "engine llamacpp-embedded", "pip install xllamacpp"
            ) from None
        self._xllamacpp = xllamacpp
        self._model_path = resolve_model_path(plan.model_for(condition).source)
        self._flags = self._configure_flags()
        params = xllamacpp.CommonParams()
        params.model.path = str(self._model_path)
        # One slot per concurrent user, each with the condition's whole context.
        params.n_ctx = condition.context_capacity * condition.concurrency
        params.n_parallel = condition.concurrency
        params.port = 0  # any free port on 127.0.0.1
        if condition.threads:
            params.cpuparams.n_threads = condition.threads
            params.cpuparams_batch.n_threads = condition.threads
        if self.options.threads_batch:
            params.cpuparams_batch.n_threads = self.options.threads_batch
        if self.options.n_batch:
            params.n_batch = self.options.n_batch
        if self.options.n_ubatch:
            params.n_ubatch = self.options.n_ubatch
        if self.options.flash_attn:
            params.flash_attn_type = _FLASH_ATTN_TYPES[self.options.flash_attn]
        spec = condition.speculative
        if spec.mode != "off":
            if missing := _missing_speculative_fields(xllamacpp, params):
                raise EngineError(missing)
            kind = getattr(
                xllamacpp.common_speculative_type,
                f"COMMON_SPECULATIVE_TYPE_{_SPEC_TYPES[spec.mode]}",
            )
            params.speculative.types = [kind]
            params.speculative.draft.n_max = spec.draft_max
            if spec.draft_min is not None:
                params.speculative.draft.n_min = spec.draft_min
            if spec.mode == "ngram-simple":
                params.speculative.ngram_simple.size_n = spec.ngram_size or 3
                params.speculative.ngram_simple.size_m = spec.draft_max
            if spec.draft_model:
                params.speculative.draft.mparams.path = str(resolve_model_path(spec.draft_model))
        native = NativeOutput()
        try:
            self._server = xllamacpp.Server(params)
        except Exception as exc:  # the wheel raises plain RuntimeError/ValueError
            # The wheel's message is generic; llama.cpp's log says why.
            cause = native.error_line() or str(exc)
            raise EngineError(f"llama.cpp could not load {self._model_path.name}: {cause}") from exc
        self._http = httpx.Client(base_url=self._server.listening_address, timeout=30)
        try:
            props = self._http.get("/props").json()
        except (httpx.HTTPError, ValueError) as exc:
            self.close()
            raise EngineError(
                f"llama.cpp loaded {self._model_path.name} but GET /props failed: {exc}"
            ) from exc
        self._build = props.get("build_info", "unknown")
        self._context_per_slot = context_per_slot(props)
        self._model_info = describe_model(plan.model_for(condition), self._model_path)

    @classmethod
    def preflight(cls, plan: Plan, condition: ConditionSpec, on_wait: WaitReport) -> None:
        # Without loading (the run's first load is the one measured): the wheel is there,
        # the model files resolve and the wheel knows the speculative mode.
        try:
            import xllamacpp
        except ImportError:
            raise MissingDependency(
                "xllamacpp", "engine llamacpp-embedded", "pip install xllamacpp"
            ) from None
        spec = condition.speculative
        if spec.mode == "draft" and not spec.draft_model:
            raise ConfigError("speculative mode 'draft' needs speculative.draft_model")
        if spec.mode != "off":
            name = f"COMMON_SPECULATIVE_TYPE_{_SPEC_TYPES[spec.mode]}"
            if not hasattr(xllamacpp.common_speculative_type, name):
                raise ConfigError(
                    f"xllamacpp {xllamacpp.__version__} has no speculative mode "
                    f"'{spec.mode}': upgrade xllamacpp or choose another mode"
                )
            if missing := _missing_speculative_fields(xllamacpp, xllamacpp.CommonParams()):
                raise ConfigError(missing)
        resolve_model_path(plan.model_for(condition).source)
        if spec.draft_model:
            resolve_model_path(spec.draft_model)

    def _configure_flags(self) -> dict[str, str]:
        condition = self.condition
        spec = condition.speculative
        flags = {
            **self.option_flags(),
            "n_ctx": str(condition.context_capacity * condition.concurrency),
            "n_parallel": str(condition.concurrency),
            "threads": str(condition.threads or "default"),
            "cache_prompt": "false",
            "spec_type": "none" if spec.mode == "off" else spec.mode,
        }
        if spec.mode != "off":
            flags["spec_draft_n_max"] = str(spec.draft_max)
        if spec.mode == "ngram-simple":
            flags["spec_ngram_simple_size_n"] = str(spec.ngram_size or 3)
            flags["spec_ngram_simple_size_m"] = str(spec.draft_max)
        return flags

    def generate(self, request: GenerationRequest) -> Iterator[StreamEvent]:
        parser = OpenAIStreamParser(speculative=self.condition.speculative.mode != "off")
        chunks: list[StreamChunk] = []
        deadline = time.monotonic() + request.timeout_s
        timed_out = False

        def on_chunk(raw: str) -> bool:
            nonlocal timed_out
            now = time.monotonic()
            chunk = parser.feed(json.loads(raw), now)
            if chunk is not None:
                chunks.append(chunk)
            timed_out = now > deadline
            return timed_out  # True asks the server to stop generating

        body = json.dumps(request_body(request, self.plan.api))
        if self.plan.api == "chat":
            self._server.handle_chat_completions(body, on_chunk)
        else:
            self._server.handle_completions(body, on_chunk)
        yield from chunks
        if timed_out:
            end = parser.end(error=f"timeout: no end after {request.timeout_s:g} s")
        else:
            end = parser.end(t=parser.t_last_event or time.monotonic())
        yield with_split_token_counts(end, self._http, chunks, self.plan.api)

    def count_tokens(self, text: str) -> int:
        if self.plan.api == "chat":
            reply = self._http.post(
                "/apply-template", json={"messages": [{"role": "user", "content": text}]}
            )
            text = reply.json()["prompt"]
            # llama.cpp renders the template without the BOS text and adds BOS when tokenizing.
            tokens = self._http.post(
                "/tokenize", json={"content": text, "add_special": True, "parse_special": True}
            )
        else:
            tokens = self._http.post("/tokenize", json={"content": text, "add_special": True})
        return len(tokens.json()["tokens"])

    def describe(self) -> EngineDescription:
        import platform

        return EngineDescription(
            engine=EngineInfo(
                id=self.engine_id,
                version=f"xllamacpp {self._xllamacpp.__version__}",
                build=self._build,
                api=f"in-process {'chat' if self.plan.api == 'chat' else 'completion'}",
            ),
            model=self._model_info,
            devices=[DeviceInfo(id="cpu", name=cpu_name() or platform.processor() or "cpu")],
            flags=self._flags,
            context_per_slot=self._context_per_slot,
        )

    @property
    def listening_address(self) -> str:
        """The server's real HTTP listener on 127.0.0.1 (``http://127.0.0.1:<port>``): the
        same llama.cpp server code that ``llamacpp-http`` drives on GPU hosts."""
        return self._server.listening_address

    def close(self) -> None:
        self._http.close()
        del self._server


def context_per_slot(props: dict[str, Any]) -> int | None:
    """The context of one slot as the llama.cpp server allocated it (``/props``:
    ``default_generation_settings.n_ctx``), ``None`` when it does not say."""
    n_ctx = (props.get("default_generation_settings") or {}).get("n_ctx")
    return n_ctx if isinstance(n_ctx, int) and not isinstance(n_ctx, bool) and n_ctx > 0 else None


TOKENIZE_ATTEMPTS = 3
"""Tries of the re-tokenization of a finished request's texts before the counts stay
unknown (``None``)."""


def with_split_token_counts(
    end: StreamEnd, client: httpx.Client, chunks: list[StreamChunk], api: str
) -> StreamEnd:
    """``end`` with thinking and answer token counts where llama.cpp streams thinking apart
    (the chat API's ``reasoning_content``): each text tokenized again by the server (no
    BOS, special-token text parsed). The completion API leaves think tags inside the text,
    so both stay ``None`` there, and when the server cannot tokenize. Called after the
    stream ended: the request's times are already taken."""
    if api != "chat":
        return end
    for attempt in range(TOKENIZE_ATTEMPTS):
        try:
            reasoning = _text_tokens(client, "".join(c.reasoning for c in chunks))
            answer = _text_tokens(client, "".join(c.answer for c in chunks))
        except (httpx.HTTPError, ValueError, KeyError, TypeError):
            # A server still closing the finished request can refuse for a moment.
            time.sleep(0.2 * (attempt + 1))
            continue
        return replace(end, reasoning_tokens=reasoning, answer_tokens=answer)
    return end


def _text_tokens(client: httpx.Client, text: str) -> int:
    if not text:
        return 0
    reply = client.post(
        "/tokenize", json={"content": text, "add_special": False, "parse_special": True}
    )
    reply.raise_for_status()
    return len(reply.json()["tokens"])


SPECULATIVE_FIELDS = ("types", "draft", "ngram_simple")
"""The speculative settings this engine sets (``params.speculative``): builds before
2026.5.9294 lay them out otherwise (a single ``type``; flat ``n_max``, ``ngram_size_n``)."""


def _missing_speculative_fields(xllamacpp: Any, params: Any) -> str | None:
    """Why this wheel's ``CommonParams.speculative`` cannot take the settings, or ``None``:
    said before anything is registered or loaded, not as an AttributeError mid-campaign."""
    missing = [name for name in SPECULATIVE_FIELDS if not hasattr(params.speculative, name)]
    if not missing:
        return None
    return (
        f"xllamacpp {xllamacpp.__version__} lays out its speculative settings otherwise "
        f"(no speculative.{', speculative.'.join(missing)}): speculative decoding needs "
        "xllamacpp 2026.5.9294 or later; upgrade it, or measure this build with speculation off"
    )
