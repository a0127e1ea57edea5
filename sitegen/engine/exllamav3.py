"""``exllamav3``: the ExLlamaV3 (1.6.x) generator in-process, on CUDA hosts only.

Loading follows ExLlamaV3's own ``model_init``: caches exist before ``load()``; a draft
(a separate model, or the model's MTP head built from the same config) is loaded first
and handed to the main model's ``load()``, which budgets the device split around it.

Everything that needs no GPU is a pure function below (result mapping, sampler choice,
load order, load and cache arguments) and is unit-tested on CPU with plain dicts shaped
like ExLlamaV3's results; the class itself is exercised by
``scripts/gpu_check_exllamav3.py`` on a CUDA machine.

Options: ``ExLlamaV3Options`` (``sitegen.plan.engine_options``), all recorded as flags.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from importlib.metadata import version
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from sitegen.core.errors import ConfigError, EngineError, MissingDependency
from sitegen.engine.contract import Engine, EngineDescription, GenerationRequest
from sitegen.engine.memory import MemoryProbe, ProcessRssProbe
from sitegen.engine.model_files import describe_model, resolve_model_path
from sitegen.engine.nvml import nvml_devices, nvml_probes
from sitegen.plan.engine_options import ExLlamaV3Options
from sitegen.plan.plan_models import ConditionSpec, Plan, SpeculativeSpec
from sitegen.records.record_models import DeviceInfo, EngineInfo, Finish
from sitegen.records.stream import StreamChunk, StreamEnd, StreamEvent

if TYPE_CHECKING:
    from sitegen.engine.contract import WaitReport

PAGE_SIZE = 256
"""ExLlamaV3's cache page: the cache size must be a multiple of it."""

_FINISH: dict[str, Finish] = {
    "max_new_tokens": "length",
    "stop_token": "stop",
    "stop_string": "stop",
}


@dataclass(frozen=True)
class LoadStep:
    """One model to build and load, in order."""

    role: Literal["draft", "model"]
    directory: Path
    component: Literal["text", "mtp"]


def load_order(spec: SpeculativeSpec, model_dir: Path, draft_dir: Path | None) -> list[LoadStep]:
    """What to load, drafts first (the main ``load()`` takes the loaded draft)."""
    model = LoadStep("model", model_dir, "text")
    if spec.mode == "off":
        return [model]
    if spec.mode == "draft-mtp":
        return [LoadStep("draft", model_dir, "mtp"), model]
    if spec.mode == "draft":
        if draft_dir is None:
            raise ConfigError("speculative mode 'draft' needs draft_model (the draft's directory)")
        return [LoadStep("draft", draft_dir, "text"), model]
    raise ConfigError(
        f"the exllamav3 engine runs the speculative modes off, draft and draft-mtp, not "
        f"'{spec.mode}' (ExLlamaV3's own n-gram drafting is not llama.cpp's {spec.mode})"
    )


def load_arguments(options: ExLlamaV3Options, draft: bool = False) -> dict[str, Any]:
    """``Model.load()`` keyword arguments from the engine options. Drafts load without
    tensor parallelism, as in ExLlamaV3's ``model_init``."""
    arguments: dict[str, Any] = {}
    if options.tensor_p and not draft:
        arguments["tensor_p"] = True
        arguments["tp_backend"] = options.tp_backend
    for key in ("use_per_device", "reserve_per_device", "device"):
        if getattr(options, key) is not None:
            arguments[key] = getattr(options, key)
    return arguments


def cache_arguments(
    options: ExLlamaV3Options, capacity: int, draft_max: int | None
) -> dict[str, Any]:
    """``Cache()`` keyword arguments; ``k_bits``/``v_bits`` present means a quantized cache."""
    if capacity % PAGE_SIZE:
        raise ConfigError(
            f"exllamav3 needs a context capacity that is a multiple of {PAGE_SIZE} (got {capacity})"
        )
    # max_history: how far a recurrent layer can roll back a rejected draft.
    arguments: dict[str, Any] = {"max_num_tokens": capacity, "max_history": draft_max or 0}
    if options.cache_quant:
        arguments["k_bits"], arguments["v_bits"] = options.cache_quant
    return arguments


def sampler_settings(request: GenerationRequest) -> tuple[str, dict[str, Any]]:
    """The ExLlamaV3 sampler class name and its arguments: greedy at temperature 0."""
    if request.temperature == 0:
        return "ArgmaxSampler", {}
    return "ComboSampler", {
        "temperature": request.temperature,
        "top_p": request.top_p,
        "top_k": request.top_k,
    }


def map_eos_reason(reason: str | None) -> tuple[Finish, str | None]:
    """``eos_reason`` → (finish, error). Ends other than the cap or a stop condition
    (``end_filter``, ``loop_detected`` …) are errors: the request did not end as planned."""
    if reason in _FINISH:
        return _FINISH[reason], None
    return "error", f"exllamav3 ended the job: {reason or 'no reason given'}"


def result_to_events(
    results: list[dict[str, Any]], clock: Callable[[], float]
) -> list[StreamEvent]:
    """One ``Generator.iterate()`` batch → events, stamped once with ``clock()``.

    The batch's tokens become one chunk (a speculative step releases several at once);
    a result with token ids but no text still counts as a delivery. Text held back while
    a stop string may be matching arrives when it is released, which is when a client
    would see it.
    """
    t = clock()
    pieces: list[str] = []
    delivered = False
    end: StreamEnd | None = None
    for result in results:
        if result.get("stage") == "error":
            end = StreamEnd(t=t, finish="error", error=f"exllamav3: {result.get('error')}")
            break
        if result.get("stage") != "streaming":
            continue  # "started", "prefill"
        if "text" in result or "token_ids" in result:
            delivered = True
            pieces.append(result.get("text", ""))
        if result.get("eos"):
            end = _end_of(result, t)
    events: list[StreamEvent] = []
    if delivered:
        events.append(StreamChunk(t=t, answer="".join(pieces)))
    if end is not None:
        events.append(end)
    return events


def _end_of(result: dict[str, Any], t: float) -> StreamEnd:
    finish, error = map_eos_reason(result.get("eos_reason"))
    new_tokens = result.get("new_tokens")
    time_generate = result.get("time_generate")
    # ExLlamaV3's own definition (its eval/spec_decode.py): every new token over the time
    # from the first decode step to the last token, unlike llama.cpp's (n - 1) / t.
    native_tps = new_tokens / time_generate if new_tokens and time_generate else None
    accepted = result.get("accepted_draft_tokens")
    rejected = result.get("rejected_draft_tokens")
    proposed = accepted + rejected if accepted is not None and rejected is not None else None
    if error is None and result.get("cached_tokens"):
        # Every trial must prefill in full, as the llama.cpp engines do with cache_prompt off.
        finish, error = "error", f"{result['cached_tokens']} prompt tokens came from the cache"
    return StreamEnd(
        t=t,
        finish=finish,
        generated_tokens=new_tokens,
        prompt_tokens=result.get("prompt_tokens"),
        native_tps=native_tps,
        draft_proposed=proposed,
        draft_accepted=accepted,
        error=error,
        prompt_processing_s=result.get("time_prefill"),
    )


def _chat_format(api: str, has_template: bool) -> str:
    if api != "chat":
        return "raw prompt"
    # Without a template (or transformers) the prompt goes in raw, and the flag says so.
    return "hf_chat_template" if has_template else "raw prompt (no chat template)"


class ExLlamaV3(Engine):
    engine_id = "exllamav3"
    options: ExLlamaV3Options

    def __init__(self, plan: Plan, condition: ConditionSpec) -> None:
        super().__init__(plan, condition)
        try:
            import exllamav3
            import torch
        except ImportError as exc:
            raise MissingDependency(
                "exllamav3", "engine exllamav3", "pip install exllamav3 (CUDA host)"
            ) from exc
        if not torch.cuda.is_available():
            raise EngineError("the exllamav3 engine needs a CUDA device; none is visible")
        self._exl3 = exllamav3
        self._torch = torch
        spec = condition.speculative
        model_dir = resolve_model_path(plan.model_for(condition).source)
        draft_dir = resolve_model_path(spec.draft_model) if spec.draft_model else None
        steps = load_order(spec, model_dir, draft_dir)
        cache_kwargs = cache_arguments(self.options, condition.context_capacity, spec.draft_max)
        # exllamav3's objects (untyped), loaded by ``_load``
        self._model: Any = None
        self._draft: Any = None
        self._generator: Any = None
        try:
            self._load(steps, cache_kwargs)
        except Exception as exc:  # CUDA out of memory, unsupported architecture …
            with contextlib.suppress(Exception):  # free what did load; the campaign goes on
                self.close()
            raise EngineError(f"exllamav3 could not load {model_dir.name}: {exc}") from exc
        self._chat_template = plan.api == "chat" and self._has_chat_template()
        self._stop_conditions = list(dict.fromkeys(self._config.eos_token_id_list))
        self._model_info = describe_model(plan.model_for(condition), model_dir)
        self._flags = {
            **self.option_flags(),
            "cache_tokens": str(cache_kwargs["max_num_tokens"]),
            "cache_layer": (
                f"quant k{cache_kwargs['k_bits']} v{cache_kwargs['v_bits']}"
                if "k_bits" in cache_kwargs
                else "fp16"
            ),
            "spec_type": spec.mode if spec.mode != "off" else "none",
            "chat_format": _chat_format(plan.api, self._chat_template),
            "prompt_cache": "reset before each request",
            "torch": torch.__version__,
            "torch_cuda": str(torch.version.cuda),
        }
        if spec.mode != "off":
            self._flags["num_draft_tokens"] = str(spec.draft_max)
            self._flags["draft_component"] = steps[0].component

    def _load(self, steps: list[LoadStep], cache_kwargs: dict[str, Any]) -> None:
        exl3 = self._exl3
        layer = exl3.CacheLayer_quant if "k_bits" in cache_kwargs else exl3.CacheLayer_fp16
        self._config = exl3.Config.from_directory(str(steps[-1].directory))
        self._model = exl3.Model.from_config(self._config)
        cache = exl3.Cache(self._model, layer_type=layer, **cache_kwargs)
        draft_cache = None
        for step in steps:
            if step.role == "model":
                self._model.load(**load_arguments(self.options), draft_model=self._draft)
                continue
            # MTP heads share the main config; a separate draft model has its own.
            config = (
                self._config
                if step.component == "mtp"
                else exl3.Config.from_directory(str(step.directory))
            )
            self._draft = exl3.Model.from_config(config, component=step.component)
            draft_cache = exl3.Cache(self._draft, layer_type=layer, **cache_kwargs)
            self._draft.load(**load_arguments(self.options, draft=True))
        self._tokenizer = exl3.Tokenizer.from_config(self._config)
        drafting = {}
        if self._draft is not None:
            drafting = dict(
                draft_model=self._draft,
                draft_cache=draft_cache,
                num_draft_tokens=self.condition.speculative.draft_max,
            )
        self._generator = exl3.Generator(self._model, cache, self._tokenizer, **drafting)

    def _has_chat_template(self) -> bool:
        """Whether the tokenizer can render the chat template (it needs ``transformers``
        and a template in the model directory)."""
        try:
            self._tokenizer.hf_chat_template(
                [{"role": "user", "content": "x"}], add_generation_prompt=True
            )
        except Exception:  # ImportError, or transformers' ValueError for a missing template
            return False
        return True

    def _encode(self, text: str) -> Any:
        if self._chat_template:
            return self._tokenizer.hf_chat_template(
                [{"role": "user", "content": text}],
                add_generation_prompt=True,
                **self.plan.template_kwargs,
            )
        return self._tokenizer.encode(text, add_bos=True)

    def generate(self, request: GenerationRequest) -> Iterator[StreamEvent]:
        exl3 = self._exl3
        generator = self._generator
        sampler_name, sampler_kwargs = sampler_settings(request)
        # Tokenizing here falls after t0, as it does in the llama.cpp servers, which
        # tokenize each request themselves.
        job = exl3.Job(
            input_ids=self._encode(request.prompt),
            max_new_tokens=request.max_output_tokens,
            stop_conditions=self._stop_conditions,
            sampler=getattr(exl3, sampler_name)(**sampler_kwargs),
            seed=request.seed,
        )
        # Forget every cached page so that no trial reuses an earlier trial's prefill.
        generator.pagetable.reset_page_table()
        generator.enqueue(job)
        deadline = time.monotonic() + request.timeout_s
        try:
            while generator.num_remaining_jobs():
                for event in result_to_events(generator.iterate(), time.monotonic):
                    yield event
                    if isinstance(event, StreamEnd):
                        return
                if time.monotonic() > deadline:
                    yield StreamEnd(
                        t=time.monotonic(),
                        finish="error",
                        error=f"timeout: no end after {request.timeout_s:g} s",
                    )
                    return
            yield StreamEnd(
                t=time.monotonic(), finish="error", error="the job left without an end result"
            )
        except Exception as exc:  # e.g. CUDA out of memory: this request failed, not the run
            yield StreamEnd(t=time.monotonic(), finish="error", error=f"exllamav3: {exc}")
        finally:
            if generator.num_remaining_jobs():
                generator.cancel(job)

    def count_tokens(self, text: str) -> int:
        return int(self._encode(text).shape[-1])

    def describe(self) -> EngineDescription:
        torch = self._torch
        devices, driver, interconnect = nvml_devices()
        if not devices:
            devices = [
                DeviceInfo(
                    id=f"cuda:{i}",
                    name=torch.cuda.get_device_name(i),
                    memory_total_mib=round(
                        torch.cuda.get_device_properties(i).total_memory / 2**20, 1
                    ),
                )
                for i in range(torch.cuda.device_count())
            ]
        return EngineDescription(
            engine=EngineInfo(
                id=self.engine_id,
                version=f"exllamav3 {version('exllamav3')}",  # the package sets no __version__
                build=f"torch {torch.__version__}, CUDA {torch.version.cuda}",
                api=f"in-process {self.plan.api}",
            ),
            model=self._model_info,
            devices=devices,
            flags=self._flags,
            driver=driver,
            interconnect=interconnect,
        )

    def memory_probes(self) -> list[MemoryProbe]:
        return nvml_probes() or [ProcessRssProbe(os.getpid())]

    @classmethod
    def preflight(cls, plan: Plan, condition: ConditionSpec, on_wait: WaitReport) -> None:
        # Without loading: the package is there, the model files resolve, the mode is run.
        if importlib.util.find_spec("exllamav3") is None:
            raise MissingDependency(
                "exllamav3", "engine exllamav3", "pip install exllamav3 (CUDA host)"
            )
        spec = condition.speculative
        draft_dir = resolve_model_path(spec.draft_model) if spec.draft_model else None
        load_order(spec, resolve_model_path(plan.model_for(condition).source), draft_dir)

    def close(self) -> None:
        if self._generator is not None:
            self._generator.close()
        for model in (self._model, self._draft):
            if model is not None:
                model.unload()
        self._torch.cuda.empty_cache()
