"""The pre-registered campaign: everything fixed before a request runs.

Do not reorder or rename fields without bumping ``PLAN_SCHEMA_VERSION``: the
plan's canonical JSON is hashed into every record.
"""

from __future__ import annotations

import math
from typing import Annotated, Any, Final, Literal

from pydantic import Field, model_validator

from sitegen.core.author_fields import (
    AUTHOR_NAME,
    ENGINE_ID,
    ENGINE_SETTING,
    ENV_NAME,
    HASH,
    ID_REFERENCE,
    PATH,
    PROMPT,
    TEMPLATE_ID,
    AuthorStr,
)
from sitegen.core.text import Bilingual
from sitegen.plan.plan_part import PlanModel
from sitegen.plan.series_spec import SeriesSpec

PLAN_SCHEMA_VERSION: Final = 1

MAX_SEED = 2**32 - 2
"""Largest request seed: engines take a 32-bit seed, and llama.cpp reads 2³² − 1 as
"pick a random seed"."""
MAX_PLANNED_REQUESTS = 1_000_000
"""Requests one plan may ask for (trials, warm-ups and quality pairs): beyond it, a typo
(``repetitions: 1e9``) would only exhaust memory before anything runs."""
MAX_TITLE_CHARACTERS = 200
"""A report title is a heading, not a document."""


SpeculativeMode = Literal[
    "off",
    "draft-mtp",
    "draft",
    "ngram-simple",
    "ngram-map-k",
    "ngram-mod",
    "ngram-cache",
]


class SpeculativeSpec(PlanModel):
    """Speculative decoding exactly as configured on the engine."""

    mode: SpeculativeMode = "off"
    """``off``; ``draft-mtp`` (the model's MTP heads); ``draft`` (a separate draft model);
    ``ngram-*`` (self-speculative lookup in the token history, no extra model)."""
    draft_max: int | None = Field(default=None, ge=1, le=256)
    """Maximum number of draft tokens proposed per step (``None`` when ``mode`` is off)."""
    draft_min: int | None = Field(default=None, ge=0, le=256)
    """Minimum number of draft tokens before a draft is verified (engine default if unset)."""
    ngram_size: int | None = Field(default=None, ge=1, le=1024)
    """For ``ngram-*`` modes: the length of the n-gram looked up in the history."""
    draft_model: Annotated[str, PATH] | None = None
    """For ``draft``: the draft model file or directory."""

    @model_validator(mode="after")
    def _draft_length_matches_mode(self) -> SpeculativeSpec:
        if self.mode == "off" and self.draft_max is not None:
            raise ValueError("draft_max must be unset when mode is 'off'")
        if self.mode != "off" and self.draft_max is None:
            raise ValueError(f"mode '{self.mode}' needs draft_max (the maximum draft length)")
        return self

    @property
    def label(self) -> str:
        """Short display name, e.g. ``ngram-simple (≤8)``; never calls an n-gram mode MTP."""
        return "off" if self.mode == "off" else f"{self.mode} (≤{self.draft_max})"


class SamplingSpec(PlanModel):
    """Sampling settings of every request of the plan (a condition may override temperature,
    top_p and top_k); the seed varies per trial."""

    temperature: float = Field(default=0.0, ge=0)
    """Sampling temperature; 0 means greedy decoding."""
    top_p: float = Field(default=1.0, gt=0, le=1)
    """Nucleus sampling threshold (1 disables it)."""
    top_k: int = Field(default=0, ge=0)
    """Top-k cut-off (0 disables it)."""
    seed_base: int = Field(default=1234, ge=0, le=MAX_SEED)
    """Seed of repetition 0; repetition r uses ``seed_base + r × seed_stride``."""
    seed_stride: int = Field(default=100_000, ge=1, le=MAX_SEED)
    """Distance between the seeds of successive repetitions (reference: 100,000)."""


class SamplingOverride(PlanModel):
    """A condition's own sampling settings (e.g. a temperature sweep); unset fields keep
    the plan's. Seeds stay plan-wide so every condition runs the same seeds."""

    temperature: float | None = Field(default=None, ge=0)
    """Sampling temperature of this condition (``None``: the plan's)."""
    top_p: float | None = Field(default=None, gt=0, le=1)
    """Nucleus sampling threshold of this condition (``None``: the plan's)."""
    top_k: int | None = Field(default=None, ge=0)
    """Top-k cut-off of this condition (``None``: the plan's)."""


class ModelSpec(PlanModel):
    """Which model file is measured."""

    name: Annotated[str, AUTHOR_NAME]
    """Display name of the model, e.g. ``gemma-3-270m``."""
    source: Annotated[str, PATH]
    """``package:<module>`` (a PyPI package whose ``assemble()`` returns the GGUF path),
    ``package:<module>:<file inside the package>``, or a filesystem path."""
    quantization: Annotated[str, AUTHOR_NAME]
    """Quantization format as published, e.g. ``Q4_K_M`` or ``EXL3 3.10bpw``."""
    remote_unhashable: bool = False
    """The model file is on the server's host and cannot be hashed here: its records carry
    sha256 ``unknown-remote`` and its pages a caveat. Without this declaration a server
    engine refuses a model it cannot hash."""


class ConditionSpec(PlanModel):
    """One engine configuration; the model is loaded once per condition."""

    id: AuthorStr = Field(pattern=r"^[a-z0-9][a-z0-9_.-]*$", max_length=64)
    """Stable identifier used in trial ids and file names."""
    speculative: SpeculativeSpec = SpeculativeSpec()
    """Speculative decoding of this condition."""
    context_capacity: int = Field(ge=64, le=16_777_216)
    """Allocated context (tokens), distinct from the filled input length."""
    threads: int | None = Field(default=None, ge=1, le=512)
    """CPU threads for the engine (``None``: the engine's default)."""
    engine_options: Annotated[dict[str, str | int | float | bool], ENGINE_SETTING] = {}
    """Further engine-specific settings, recorded as flags; the keys, types and defaults are
    each engine's options model (``sitegen.plan.engine_options``), checked when the plan loads."""
    sampling: SamplingOverride | None = None
    """Sampling settings that differ from the plan's (``None``: the plan's), recorded in
    every record's ``sampling``."""
    model: ModelSpec | None = None
    """This condition's own model file (``None``: the plan's), e.g. an MTP variant shipped
    as a separate file; conditions with different model files are a configuration
    comparison, never a factor-only one."""
    concurrency: int = Field(default=1, ge=1, le=1024)
    """Requests in flight at once. Above 1, every measured round (one input × repetition)
    sends this many requests together, one per simulated user (user k's seed is the
    round's seed + k); each is its own record, and the round's aggregate rate (all tokens
    ÷ round time) is recorded beside each request's own rate. Warm-ups run alone."""
    label: Bilingual | None = None
    """What readers call this condition on every page, in both languages, e.g.
    ``{ja: 投機なし, en: no speculation}`` (``None``: a description made from its settings);
    the id stays in downloads and on the method page."""


class InputSpec(PlanModel):
    """One prompt: material and question, padded with filler to a target length."""

    id: AuthorStr = Field(pattern=r"^[a-z0-9][a-z0-9_.-]*$", max_length=64)
    """Stable identifier used in trial ids."""
    text: Annotated[str, PROMPT]
    """The material and question placed after the filler."""
    target_prompt_tokens: int | None = Field(default=None, ge=1, le=16_777_216)
    """Input length to reach with filler (``None``: the text as it is)."""
    max_output_tokens: int = Field(ge=1, le=16_777_216)
    """Output cap for this input."""


class DocumentSpec(PlanModel):
    """A document task: synthetic business records with several scored items."""

    task_id: AuthorStr = Field(pattern=r"^[a-z0-9][a-z0-9_.-]*$", max_length=64)
    """Stable identifier (also the trial's input id)."""
    n_records: int = Field(ge=1, le=100_000)
    """Records in the material (reference: 50 at 4K, 600 at 32K)."""
    seed: int = Field(ge=0)
    """Generator seed."""
    target_prompt_tokens: int | None = Field(default=None, ge=1, le=16_777_216)
    """Input length reached with filler (``None``: no filler)."""
    max_output_tokens: int = Field(ge=1, le=16_777_216)
    """Output cap."""


class QualitySpec(PlanModel):
    """A paired quality evaluation: every problem × seed runs with the factor off and on."""

    suite_id: AuthorStr = Field(pattern=r"^[a-z0-9][a-z0-9_.-]*$", max_length=64)
    """Suite identifier (part of every problem id's namespace)."""
    per_template: int = Field(ge=1, le=100_000)
    """Problems generated per template (reference: 20 → 600 problems)."""
    suite_seed: int = Field(ge=0)
    """Seed of the deterministic problem generator."""
    templates: list[Annotated[str, TEMPLATE_ID]] | None = None
    """Only these template ids (``None``: all 30)."""
    suite_sha256: Annotated[str, HASH] = Field(pattern=r"^[0-9a-f]{64}$")
    """Content hash of the generated problems, fixed at registration; a different
    generator output refuses to run or build."""
    documents: list[DocumentSpec] = []
    """Document tasks run as pairs too (per-item scoring)."""
    seeds: int = Field(default=3, ge=1, le=1_000)
    """Seeds per problem: ``seed_base + k × seed_stride`` for k < seeds."""
    max_output_tokens: int = Field(ge=1, le=16_777_216)
    """Output cap of a problem answer."""
    off_condition: Annotated[str, ID_REFERENCE]
    """Condition id with the factor off."""
    on_condition: Annotated[str, ID_REFERENCE]
    """Condition id with the factor on."""
    pair_order: Literal["off-first", "alternate"] = "alternate"
    """Order within each pair: always off first, or alternating from pair to pair."""
    margin: float = Field(default=0.02, gt=0, lt=1)
    """Non-inferiority margin as a proportion (0.02 = 2 percentage points)."""
    bootstrap_resamples: int = Field(default=20_000, ge=100, le=1_000_000)
    """Bootstrap replicates B."""
    bootstrap_seed: int = Field(default=20_260_101, ge=0)
    """RNG seed of the bootstrap (recorded for reproducibility)."""


class DispersionSpec(PlanModel):
    """How spread and outliers are treated, declared before measuring (a choice made after
    seeing the data would be a post-hoc analysis)."""

    outliers: Literal["none", "iqr-1.5"] = "none"
    """``iqr-1.5``: a trial whose generation rate lies more than 1.5 × IQR outside the
    quartiles of its condition and input is labelled an outlier on charts and tables. It
    is never dropped: every statistic still includes it. ``none``: nothing is labelled."""
    bootstrap_resamples: int = Field(default=2_000, ge=100, le=1_000_000)
    """Bootstrap replicates B for the confidence interval of each median ratio."""
    bootstrap_seed: int = Field(default=20_260_101, ge=0)
    """RNG seed of that bootstrap (recorded, so the interval is reproducible)."""
    confidence: float = Field(default=0.95, gt=0.5, lt=1)
    """Confidence level of the interval (percentile bootstrap)."""


class TelemetrySpec(PlanModel):
    """Device telemetry sampled during every request."""

    interval_s: float = Field(default=0.1, ge=0.01, le=10)
    """Sampling interval of the GPU counters (NVML: SM and memory-bandwidth utilization,
    power, SM clock, temperature, memory used). CPU runs record the engine process's CPU
    time instead."""


class SpeculationHealthSpec(PlanModel):
    """When speculation counts as working. A speculative condition outside these bounds gets
    no ratio as a speculation effect (C-SPECHEALTH); the page says what was observed.
    Zero drafts proposed always counts as inactive."""

    min_acceptance: float | None = Field(default=None, ge=0, le=1)
    """Lowest pooled draft acceptance (accepted ÷ proposed) of a working drafter
    (``None``: no floor)."""
    max_device_memory_mib: float | None = Field(default=None, gt=0)
    """Highest peak memory per device (MiB) within the declared headroom, e.g. 76,800 for
    75 GiB per GPU: above it the drafter may not have loaded (``None``: no limit)."""


class ExamplesSpec(PlanModel):
    """The random draw of example answers, registered before measuring so it cannot be
    chosen after the answers are known."""

    count: int = Field(default=3, ge=0, le=1_000)
    """How many answers to draw from the measured, successful trials."""
    seed: int = Field(default=0, ge=0, le=MAX_SEED)
    """Seed of the draw (``random.Random(seed).sample`` over the trials in run order),
    shown beside the examples."""


MAX_LOAD_RATE = 10_000.0
"""Highest offered rate (requests/s) a load profile may declare."""


class LoadSpec(PlanModel):
    """How requests arrive. ``concurrency``: closed rounds, each condition's
    ``concurrency`` requests together and the next round once they all ended (the
    default, today's rounds). ``constant`` and ``poisson``: an open-loop run per condition ×
    speed input × rate, after the condition's repetitions: the requests are sent on an
    arrival schedule computed before anything runs, each at its time whether or not the
    earlier ones have ended."""

    profile: Literal["concurrency", "constant", "poisson"] = "concurrency"
    """``concurrency``: closed rounds (no ``rates``); ``constant``: one request every
    1 ÷ rate seconds; ``poisson``: exponential gaps with mean 1 ÷ rate, drawn from ``seed``.
    The first request of a run is sent at once (offset 0)."""
    rates: list[float] = []
    """Offered rates in requests per second, one open-loop run each (ascending order is
    not required; pages sort them)."""
    requests: int | None = Field(default=None, ge=1, le=100_000)
    """Requests per run (give this or ``duration_s``)."""
    duration_s: float | None = Field(default=None, gt=0, le=86_400)
    """Length of each run's schedule instead of a count: every arrival before this many
    seconds is sent (give this or ``requests``)."""
    seed: int = Field(default=0, ge=0, le=MAX_SEED)
    """Seed of the Poisson arrival times (Python's ``random.Random``, one generator per
    rate), so every schedule is fixed when the plan is registered."""

    @model_validator(mode="after")
    def _profile_complete(self) -> LoadSpec:
        if self.profile == "concurrency":
            if self.rates or self.requests is not None or self.duration_s is not None:
                raise ValueError(
                    "load: the concurrency profile takes no rates, requests or duration_s "
                    "(its rounds take their size from each condition's concurrency)"
                )
            return self
        if not self.rates:
            raise ValueError(f"load: the {self.profile} profile needs rates (requests/s)")
        bad = [r for r in self.rates if not 0 < r <= MAX_LOAD_RATE]
        if bad:
            raise ValueError(
                f"load.rates: {bad[0]:g} is not a rate above 0 and at most {MAX_LOAD_RATE:g} "
                "requests/s"
            )
        if len(set(self.rates)) != len(self.rates):
            raise ValueError("load.rates: each rate may appear once")
        if (self.requests is None) == (self.duration_s is None):
            raise ValueError("load: give requests (per run) or duration_s, one of them")
        return self

    @property
    def open_loop(self) -> bool:
        """Whether the plan sends requests on an arrival schedule (``constant``,
        ``poisson``)."""
        return self.profile != "concurrency"

    def expected_requests(self) -> int:
        """An upper estimate of the requests of one run at the highest rate, computed
        without drawing the schedule (``plan.arrivals``), to refuse a plan of billions of
        requests before expanding it."""
        if self.requests is not None:
            return self.requests
        if self.duration_s is None or not self.rates:
            return 0
        # Poisson: the mean plus ten standard deviations; constant: exactly ceil(rate × t).
        mean = max(self.rates) * self.duration_s
        return math.ceil(mean + 10 * math.sqrt(mean)) + 1


class SLOSpec(PlanModel):
    """Latency targets of one request, declared before measuring: a request meets them
    when its time to first token, its end-to-end time and its own 99th percentile of the
    gaps between stream chunks are each at most the target. Goodput counts the requests
    that met every declared target."""

    ttft_p95_s: float | None = Field(default=None, gt=0, le=86_400)
    """Time to first token target (seconds), each request's own TTFT ≤ it (named for the
    95th percentile of requests it is usually quoted at; the page shows that too)."""
    itl_p99_ms: float | None = Field(default=None, gt=0, le=86_400_000)
    """Inter-chunk gap target (milliseconds): each request's own 99th percentile of the
    gaps between its stream chunks ≤ it (a request with fewer than two chunks has no gap
    and meets it)."""
    e2e_p95_s: float | None = Field(default=None, gt=0, le=86_400)
    """End-to-end target (seconds): each request's send → end ≤ it."""

    @model_validator(mode="after")
    def _some_target(self) -> SLOSpec:
        if self.ttft_p95_s is None and self.itl_p99_ms is None and self.e2e_p95_s is None:
            raise ValueError("slo: declare at least one target (ttft_p95_s, itl_p99_ms, e2e_p95_s)")
        return self


class HeadlineSpec(PlanModel):
    """The headline the summary leads with, chosen by the author before measuring: one
    pair of conditions, on one speed input or on every one, by one metric. Without it the
    cards take the first pair in plan order on its first input (and say so)."""

    baseline: Annotated[str, ID_REFERENCE]
    """The condition the ratio divides by (a condition id, usually speculation off)."""
    treatment: Annotated[str, ID_REFERENCE]
    """The condition compared with it (a condition id, e.g. the chosen draft length)."""
    input: Annotated[str, ID_REFERENCE] | None = None
    """The speed input shown (an input id); ``None`` (left out): every speed input, one
    card each."""
    metric: Literal["gen_tps"] = "gen_tps"
    """The quoted metric: ``gen_tps``, the median generation rate (tokens/s) and its ratio
    (the one metric with a ratio and an interval); the latency cards show both sides."""

    @model_validator(mode="after")
    def _a_pair(self) -> HeadlineSpec:
        if self.baseline == self.treatment:
            raise ValueError("headline: baseline and treatment must be different conditions")
        return self


class Plan(PlanModel):
    """A measurement campaign, fixed before anything runs (pre-registration)."""

    schema_version: Literal[1] = PLAN_SCHEMA_VERSION
    """Version of this plan format."""
    name: AuthorStr = Field(pattern=r"^[a-z0-9][a-z0-9_.-]*$", max_length=64)
    """Campaign name; the campaign directory is ``<name>-<nonce>-<first 12 hex of the plan
    hash>`` (``<name>-<first 12 hex>`` for campaigns registered before nonces were)."""
    title: Bilingual
    """Report title in each language."""
    engine: Annotated[str, ENGINE_ID] = "llamacpp-embedded"
    """Registered engine id (see ``sitegen engines``)."""
    api: Literal["completion", "chat"] = "completion"
    """``completion`` sends the prompt as raw text; ``chat`` as one user message."""
    model: ModelSpec
    """The measured model."""
    factor: Literal["speculative"] = "speculative"
    """The declared factor: conditions compared by a ratio may differ in this alone."""
    conditions: list[ConditionSpec] = Field(min_length=1)
    """Engine configurations, in block order."""
    inputs: list[InputSpec] = []
    """Speed prompts measured under every condition."""
    sampling: SamplingSpec = SamplingSpec()
    """Sampling settings (a condition's ``sampling`` overrides parts of them)."""
    template_kwargs: Annotated[dict[str, str | int | float | bool], ENGINE_SETTING] = {}
    """Chat-template arguments (e.g. reasoning effort, thinking on/off)."""
    repetitions: int = Field(default=3, ge=1, le=100_000)
    """Measured trials per condition and input."""
    warmups: int = Field(default=1, ge=0, le=1_000)
    """Warm-up requests per condition, kept as records and excluded from statistics."""
    order: Literal["sequential", "interleaved"] = "sequential"
    """``sequential``: one block per condition, in the order of ``conditions``;
    ``interleaved``: conditions alternate per input and repetition (all conditions'
    engines stay loaded)."""
    round_order: Literal["alternate", "as-listed"] | None = None
    """Interleaved plans only: the order of the conditions within each round (one input ×
    repetition, e.g. an off/on pair). ``alternate`` reverses the listed order on odd
    repetitions so neither condition always runs second; ``as-listed`` never reverses it.
    An interleaved plan that leaves it out gets ``alternate``; ``None`` for sequential plans."""
    prompt_tolerance_tokens: int = Field(default=4, ge=0, le=1_000_000)
    """Allowed distance between actual and target input length; a miss fails the trial."""
    filler: Annotated[str, PROMPT] = (
        "参考ログ（回答には使用しないこと / reference log, not to be used for the answer）: "
        "定期点検は予定どおり完了し、特記事項はありません。"
    )
    """Filler sentence repeated before the material to reach the target length."""
    record_env: list[Annotated[str, ENV_NAME]] = [
        "CUDA_VISIBLE_DEVICES",
        "NCCL_P2P_DISABLE",
        "OMP_NUM_THREADS",
    ]
    """Environment variables whose values are recorded in every record."""
    request_timeout_s: float = Field(default=600.0, gt=0, le=86_400)
    """A request running longer is stopped and recorded as failed."""
    quality: QualitySpec | None = None
    """Paired quality evaluation (``None``: speed only)."""
    dispersion: DispersionSpec = DispersionSpec()
    """Spread, outlier labelling and the bootstrap interval of every ratio."""
    telemetry: TelemetrySpec = TelemetrySpec()
    """Device telemetry during each request."""
    speculation_health: SpeculationHealthSpec = SpeculationHealthSpec()
    """Bounds of working speculation (C-SPECHEALTH)."""
    examples: ExamplesSpec = ExamplesSpec()
    """The random draw of example answers (C-EXAMPLE); plans registered before it existed
    draw with the defaults."""
    load: LoadSpec | None = None
    """How requests arrive (``None``: closed rounds only, as ``profile: concurrency``);
    ``constant`` or ``poisson`` adds open-loop runs at each declared rate."""
    slo: SLOSpec | None = None
    """Per-request latency targets for goodput (``None``: no goodput is computed)."""
    headline: HeadlineSpec | None = None
    """The comparison the summary leads with (``None``: the first pair in plan order on
    its first input, stated as such on the summary)."""
    series: SeriesSpec | None = None
    """The factor this plan's campaigns vary in, one campaign per value: a series of
    campaigns of this plan (``None``: one campaign, resumed by every ``measure``)."""

    @model_validator(mode="before")
    @classmethod
    def _interleaved_round_order_stated(cls, data: Any) -> Any:
        # The stored plan states the round order it ran with, not an implied default.
        interleaved = isinstance(data, dict) and data.get("order") == "interleaved"
        if interleaved and data.get("round_order") is None:
            return {**data, "round_order": "alternate"}
        return data

    @model_validator(mode="after")
    def _round_order_only_when_interleaved(self) -> Plan:
        if self.order == "sequential" and self.round_order is not None:
            raise ValueError("round_order applies to interleaved plans only (order: interleaved)")
        return self

    @model_validator(mode="after")
    def _something_to_run(self) -> Plan:
        if not self.inputs and self.quality is None:
            raise ValueError("a plan needs speed inputs, a quality evaluation, or both")
        if self.quality is not None:
            conditions = {c.id: c for c in self.conditions}
            for name in ("off_condition", "on_condition"):
                if getattr(self.quality, name) not in conditions:
                    raise ValueError(f"quality.{name} is not a condition id")
            for name in ("off_condition", "on_condition"):
                if conditions[getattr(self.quality, name)].concurrency != 1:
                    raise ValueError(f"quality.{name} must run requests alone (concurrency 1)")
            # A pair may differ in the declared factor only, not in how it samples.
            off = self.sampling_for(conditions[self.quality.off_condition])
            on = self.sampling_for(conditions[self.quality.on_condition])
            if off != on:
                raise ValueError(
                    "quality.off_condition and quality.on_condition must sample alike; "
                    "their conditions' sampling differs"
                )
        return self

    @model_validator(mode="after")
    def _title_is_a_title(self) -> Plan:
        for lang, title in self.title.model_dump().items():
            if len(title) > MAX_TITLE_CHARACTERS:
                raise ValueError(
                    f"title.{lang} has {len(title):,} characters; a title has at most "
                    f"{MAX_TITLE_CHARACTERS}"
                )
        return self

    @model_validator(mode="after")
    def _within_bounds(self) -> Plan:
        users = max(c.concurrency for c in self.conditions)
        rounds = max(self.repetitions, self.quality.seeds if self.quality else 1)
        largest_seed = self.sampling.seed_base + (rounds - 1) * self.sampling.seed_stride
        if largest_seed + users - 1 > MAX_SEED:
            raise ValueError(
                f"the largest request seed would be {largest_seed + users - 1:,}, above "
                f"{MAX_SEED:,} (engines take a 32-bit seed): lower sampling.seed_base, "
                "sampling.seed_stride or the repetitions"
            )
        requests = len(self.conditions) * (
            self.warmups + len(self.inputs) * self.repetitions * users
        )
        if self.load is not None and self.load.open_loop:
            per_run = self.load.expected_requests()
            if self.sampling.seed_base + per_run - 1 > MAX_SEED:
                raise ValueError(
                    f"a load run's largest request seed would be "
                    f"{self.sampling.seed_base + per_run - 1:,}, above {MAX_SEED:,}: lower "
                    "sampling.seed_base or the requests per run"
                )
            requests += len(self.conditions) * len(self.inputs) * len(self.load.rates) * per_run
        if self.quality is not None:
            from sitegen.quality.suites import TEMPLATES  # the suite generator, on demand

            templates = len(self.quality.templates or TEMPLATES)
            items = self.quality.per_template * templates + len(self.quality.documents)
            requests += 2 * self.quality.seeds * items
        if requests > MAX_PLANNED_REQUESTS:
            raise ValueError(
                f"{requests:,} requests planned; a plan asks for at most {MAX_PLANNED_REQUESTS:,}"
            )
        return self

    @model_validator(mode="after")
    def _load_has_inputs(self) -> Plan:
        open_loop = self.load is not None and self.load.open_loop
        if open_loop and not self.inputs:
            raise ValueError("load: open-loop runs send the speed inputs; the plan has none")
        if self.slo is not None and not open_loop:
            raise ValueError(
                "slo: goodput is counted per offered rate; declare load with a constant or "
                "poisson profile"
            )
        return self

    @model_validator(mode="after")
    def _headline_names_the_plan(self) -> Plan:
        if self.headline is None:
            return self
        conditions = {c.id for c in self.conditions}
        for name in ("baseline", "treatment"):
            if getattr(self.headline, name) not in conditions:
                raise ValueError(f"headline.{name} is not a condition id")
        if self.headline.input is not None and self.headline.input not in {
            i.id for i in self.inputs
        }:
            raise ValueError("headline.input is not a speed input id")
        if not self.inputs:
            raise ValueError("headline: the plan has no speed inputs to lead with")
        return self

    @model_validator(mode="after")
    def _ids_unique(self) -> Plan:
        for kind, ids in (
            ("condition", [c.id for c in self.conditions]),
            ("input", [i.id for i in self.inputs]),
        ):
            duplicates = sorted({i for i in ids if ids.count(i) > 1})
            if duplicates:
                raise ValueError(f"duplicate {kind} id(s): {', '.join(duplicates)}")
        return self

    def model_for(self, condition: ConditionSpec) -> ModelSpec:
        """The model file a condition loads: its own, or the plan's."""
        return condition.model or self.model

    def sampling_for(self, condition: ConditionSpec) -> SamplingSpec:
        """The plan's sampling with the condition's own settings applied."""
        if condition.sampling is None:
            return self.sampling
        return self.sampling.model_copy(update=condition.sampling.model_dump(exclude_none=True))
