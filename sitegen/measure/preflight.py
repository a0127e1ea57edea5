"""Preflight: every condition's engine checked before a campaign directory is created.

A setup mistake (a server not started, swapped ports, the wrong model, a context too
small for the inputs, a speculative mode the server does not run, memory that cannot be
read) would otherwise become failed records of the campaign, published for good.
``sitegen measure`` checks every plan first and creates nothing unless all pass;
``--dry-run`` stops after the checks. An engine whose construction loads nothing here
(a server asked over HTTP) is kept for the run; an in-process model is only checked
cheaply (files, mode, capacity arithmetic), so the run's first load is the one measured.
"""

from __future__ import annotations

import os
from collections import Counter
from dataclasses import dataclass, field

from sitegen.core.errors import SitegenError
from sitegen.engine.contract import Engine, WaitReport
from sitegen.engine.engines import get_engine_class
from sitegen.engine.locality import is_local
from sitegen.engine.server import ServerMismatch
from sitegen.plan.engine_options import ServerOptions
from sitegen.plan.engine_registry import engine_entry, validate_engine_options
from sitegen.plan.expand import expand_trials
from sitegen.plan.items import PlanItem, plan_items
from sitegen.plan.plan_file import campaign_id
from sitegen.plan.plan_models import ConditionSpec, Plan
from sitegen.validation.figure_checks import author_figure_issues

RUN_ORDER_SHOWN = 3
"""Trials named at each end of the run order in a dry run's summary."""


@dataclass
class Preflight:
    """The checks of one plan."""

    plan: Plan
    problems: list[str] = field(default_factory=list)
    """One line per problem: the condition, what is wrong and how to fix it."""
    warnings: list[str] = field(default_factory=list)
    """What is allowed but worth knowing (a remote server without memory figures)."""
    engines: dict[str, Engine] = field(default_factory=dict)
    """Engines the checks constructed, by condition id, for the run to keep."""

    def close(self) -> None:
        """Release the engines the run did not take over (closing twice is harmless)."""
        for engine in self.engines.values():
            engine.close()
        self.engines.clear()


def preflight(plan: Plan, on_wait: WaitReport | None = None) -> Preflight:
    """Check every condition of ``plan``; every problem found is listed, none raised.
    ``on_wait`` is told while a server is waited for (one that answers 503 while its
    model loads, up to its ``ready_timeout_s``; a refused connection only briefly)."""
    validate_engine_options(plan)
    entry = engine_entry(plan.engine)
    engine_class = get_engine_class(plan.engine)
    result = Preflight(plan)
    # What the build would refuse is refused before hours of measuring: a figure written
    # by hand in the plan's author text (C-FIGURE).
    result.problems += [
        f"{issue.location}: {issue.message}" for issue in author_figure_issues(plan, "plan")
    ]
    items = list(plan_items(plan).values())
    in_process = not issubclass(entry.options_model, ServerOptions)
    for condition in plan.conditions:
        where = f"condition '{condition.id}'"
        if in_process and (problem := _threads_problem(condition)):
            result.problems.append(f"{where}: {problem}")
            continue
        try:
            engine = engine_class.preflight(plan, condition, on_wait or _silent)
        except ServerMismatch as exc:
            result.problems += [f"{where}: {exc.server}: {problem}" for problem in exc.problems]
            continue
        except SitegenError as exc:
            result.problems.append(f"{where}: {exc}")
            continue
        if engine is not None:
            result.engines[condition.id] = engine
            _check_memory(where, engine, result)
        result.problems += [
            f"{where}: {problem}" for problem in _capacity_problems(plan, condition, items, engine)
        ]
    return result


def _silent(url: str, waited_s: float, timeout_s: float) -> None:
    pass


def _threads_problem(condition: ConditionSpec) -> str | None:
    """More engine threads than this machine has logical CPUs: llama.cpp cannot start
    them all and ends the process in native code, where nothing can report it."""
    cpus = os.cpu_count() or 1
    if condition.threads is not None and condition.threads > cpus:
        return (
            f"threads {condition.threads}, more than this machine's {cpus} logical CPUs; "
            f"set threads to at most {cpus}"
        )
    return None


def _capacity_problems(
    plan: Plan, condition: ConditionSpec, items: list[PlanItem], engine: Engine | None
) -> list[str]:
    """Whether the longest input of the condition and its output cap fit in one slot's
    context. The input is its target length, else the text as the engine counts it (an
    engine not loaded here cannot count: such inputs are checked when measured)."""
    quality = plan.quality
    compared = quality is not None and condition.id in (
        quality.off_condition,
        quality.on_condition,
    )
    too_long: list[tuple[int, int, PlanItem]] = []
    for item in items:
        if item.kind != "speed" and not compared:
            continue
        tokens = item.target_prompt_tokens
        if tokens is None and engine is not None:
            try:
                tokens = engine.count_tokens(item.text)
            except SitegenError:  # e.g. a server without /tokenize: the run needs none here
                tokens = None
        if tokens is not None and tokens + item.max_output_tokens > condition.context_capacity:
            too_long.append((tokens + item.max_output_tokens, tokens, item))
    if not too_long:
        return []
    need, tokens, item = max(too_long, key=lambda entry: entry[0])
    more = f" ({len(too_long) - 1} more input(s) do not fit either)" if len(too_long) > 1 else ""
    return [
        f"input '{item.item_id}' needs {tokens} input tokens + output cap "
        f"{item.max_output_tokens} = {need}, above context_capacity "
        f"{condition.context_capacity}{more}: raise context_capacity (and the server's "
        "context with it) or shorten the input"
    ]


def _check_memory(where: str, engine: Engine, result: Preflight) -> None:
    """A memory probe that reads, or a declaration that there is none."""
    options = engine.options
    server = options if isinstance(options, ServerOptions) else None
    if server is not None and server.memory_unavailable:
        return
    probes = engine.memory_probes()
    if not probes and server is not None and not is_local(server.base_url):
        result.warnings.append(
            f"{where}: the server at {server.base_url} is on another host, so its records "
            "carry no memory figures (engine_options.memory_unavailable: true declares it)"
        )
    elif not probes:
        at = f" at {server.base_url}" if server is not None else ""
        result.problems.append(
            f"{where}: no memory probe for the server{at} (no GPU visible through NVML, no "
            "process found on its port): set engine_options.server_pid, or declare "
            "engine_options.memory_unavailable: true"
        )
    for probe in probes:
        try:
            probe.read_mib()
        except Exception as exc:  # a gone process, an NVML error: the run's sampler would stop
            result.problems.append(
                f"{where}: memory probe {probe.source} of {probe.device} cannot be read "
                f"({exc}): correct engine_options.server_pid"
            )


def trial_summary(plan: Plan) -> list[str]:
    """What ``measure`` would run: requests per condition and input, the run order's ends
    and the seeds (``--dry-run``)."""
    trials = expand_trials(plan)
    items = plan_items(plan)
    order = plan.order + (f", rounds {plan.round_order}" if plan.round_order else "")
    lines = [
        # The nonce is drawn when measure registers the campaign (one it resumes keeps its id).
        f"campaign {campaign_id(plan, '<nonce>')}: {len(trials)} request(s), "
        f"engine {plan.engine}, "
        f"order {order}"
    ]
    for condition in plan.conditions:
        mine = [t for t in trials if t.condition_id == condition.id]
        measured = Counter(t.input_id for t in mine if t.role == "measured" and t.load_rate is None)
        parts = [f"{sum(t.role == 'warmup' for t in mine)} warm-up(s)"]
        parts += [f"{spec.id} ×{measured[spec.id]}" for spec in plan.inputs]
        sent = [t for t in mine if t.load_rate is not None]
        if sent:
            rates = len({t.load_rate for t in sent})
            parts.append(f"{len(sent)} open-loop request(s) at {rates} rate(s)")
        answers = sum(n for item_id, n in measured.items() if items[item_id].kind != "speed")
        if answers:
            parts.append(f"{answers} quality answer(s)")
        lines.append(f"  {condition.id}: " + ", ".join(parts))
    ids = [t.trial_id for t in trials]
    shown = ", ".join(ids)
    if len(ids) > 2 * RUN_ORDER_SHOWN:
        shown = f"{', '.join(ids[:RUN_ORDER_SHOWN])} … {', '.join(ids[-RUN_ORDER_SHOWN:])}"
    seeds = [t.seed for t in trials]
    lines.append(f"  run order: {shown}")
    lines.append(f"  seeds: {min(seeds)} … {max(seeds)}")
    return lines
