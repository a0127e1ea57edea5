"""Cost per million output tokens, per condition and speed input (pure): the declared
price of the devices a condition ran on (``content/prices.yaml``, never assumed) over the
output it measured at the plan's concurrency.

Throughput at the plan's concurrency is Σ output tokens ÷ Σ wall time over the usable
trials (``enters_statistics``) of one condition on one input: per input, as the speed
tables are, since the output rate depends on the input's length. A request that ran
alone adds its own generated tokens and its time from being handed to the engine to its
end (``e2e_s``); a round of concurrent requests adds, once per physical round
(``round.run_id``) with a usable request, every token the round generated and its wall
time (``round.generated_tokens``, ``round.wall_s``: the same span, first request handed
over → last ended). Cost per million output tokens = Σ declared price per hour of the
condition's devices ÷ 3600 ÷ throughput × 1,000,000 (one price per device: two devices
of one model cost twice its price).

Refused, with a reason and no figure: no price list (``no-prices``); no usable trial
(``no-trials``); a usable trial without a token count (``uncounted``); no output or no
time measured (``no-output``); records naming no device (``no-devices``); the
condition's records naming different devices (``devices-differ``); a device without a
declared price (``not-priced``).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Literal

import numpy as np
import pandas as pd

from sitegen.core.price_list import DevicePrice, PriceList
from sitegen.plan.plan_models import Plan
from sitegen.records.table import RecordTable
from sitegen.statistics.row_groups import row_groups
from sitegen.statistics.trials import floats

SECONDS_PER_HOUR = 3600
TOKENS_PER_UNIT = 1_000_000
"""Costs are per million output tokens."""

Refusal = Literal[
    "no-prices", "no-trials", "uncounted", "no-output", "no-devices", "devices-differ", "not-priced"
]


@dataclass(frozen=True)
class DeviceUse:
    """A device model a condition ran on: how many of it and its declared price."""

    device: str
    count: int
    price: DevicePrice | None
    """``None``: the price list declares none for it (or there is no price list)."""


@dataclass(frozen=True)
class TokenCost:
    """One condition on one speed input: its throughput at the plan's concurrency and,
    unless ``refused``, its cost per million output tokens."""

    condition_id: str
    input_id: str
    concurrency: int
    """Requests in flight together, as the plan declares for the condition."""
    output_tokens: int
    """Σ output tokens counted (each round's once)."""
    wall_s: float
    """Σ wall time they took."""
    spans: int
    """Lone requests and physical rounds counted."""
    throughput_tps: float | None
    """``output_tokens`` ÷ ``wall_s`` (``None`` without either)."""
    devices: tuple[DeviceUse, ...]
    """The devices every usable record of the condition ran on (empty when they differ)."""
    per_hour: float | None
    """Σ declared price per hour of ``devices`` (``None`` unless every one is priced)."""
    cost_per_million: float | None
    """Cost per million output tokens in the list's currency (``None``: refused)."""
    refused: Refusal | None
    """Why there is no cost (``None``: there is one)."""


@dataclass(frozen=True)
class TokenCosts:
    """Every condition × speed input's cost, and the price list they come from."""

    prices: PriceList | None
    """The project's declared prices (``None``: it declares none, so no cost is shown)."""
    rows: tuple[TokenCost, ...]
    """Every condition × speed input of the plan, in plan order (conditions, then inputs)."""


COST_COLUMNS = [
    "condition_id",
    "input_id",
    "provenance",
    "round_run_id",
    "generated_tokens",
    "round_generated_tokens",
    "e2e_s",
    "round_wall_s",
]
"""What ``token_costs`` reads of a record table's rows."""


def token_costs(
    plan: Plan, table: RecordTable, speed_ids: frozenset[str], prices: PriceList | None
) -> TokenCosts:
    """The cost of each condition on each speed input of ``plan`` from its records
    (``table``) and the declared ``prices`` (see the module)."""
    rows = table.rows
    # Only the columns a cost reads: each selection below copies every column it keeps.
    usable = rows.loc[table.usable & rows["input_id"].isin(speed_ids), COST_COLUMNS]
    names = [tuple(d.name for d in p.host.devices) for p in table.provenances]
    # Grouped once by position and read as numpy arrays: a selection per condition and
    # input costs more than a small campaign's sums.
    groups = dict(row_groups(usable, ("condition_id", "input_id")))
    provenance = usable["provenance"].to_numpy()
    spans = _Spans(usable)
    none = np.array([], dtype=np.int64)
    costs = []
    for condition in plan.conditions:
        mine = [at for (condition_id, _), at in groups.items() if condition_id == condition.id]
        device_sets = {names[i] for at in mine for i in provenance[at]}
        devices, device_refusal = _devices(device_sets, prices)
        for spec in plan.inputs:
            output = spans.output(groups.get((condition.id, spec.id), none))
            costs.append(
                _cost(condition.id, spec.id, condition.concurrency, output, devices, device_refusal)
            )
    return TokenCosts(prices, tuple(costs))


def _devices(
    device_sets: set[tuple[str, ...]], prices: PriceList | None
) -> tuple[tuple[DeviceUse, ...], Refusal | None]:
    """The devices of a condition's usable records with their prices, or why they give no
    price (none is given without records: the trials' own refusal says why)."""
    if len(device_sets) > 1:
        return (), "devices-differ"
    if not device_sets:
        return (), None
    (names,) = device_sets
    counted = Counter(names)
    uses = tuple(
        DeviceUse(name, n, prices.per_hour(name) if prices is not None else None)
        for name, n in counted.items()
    )
    if not uses:
        return uses, "no-devices"
    if prices is None:
        return uses, "no-prices"
    if any(use.price is None for use in uses):
        return uses, "not-priced"
    return uses, None


def _cost(
    condition_id: str,
    input_id: str,
    concurrency: int,
    output: Output,
    devices: tuple[DeviceUse, ...],
    device_refusal: Refusal | None,
) -> TokenCost:
    tokens, wall_s, spans, uncounted = output
    measured = tokens > 0 and wall_s > 0 and not uncounted
    throughput = tokens / wall_s if measured else None
    refused: Refusal | None
    if not spans:
        refused = "no-trials"
    elif uncounted:
        refused = "uncounted"
    elif throughput is None:
        refused = "no-output"
    else:
        refused = device_refusal
    per_hour = (
        sum(use.price.per_hour * use.count for use in devices if use.price is not None)
        if devices and all(use.price is not None for use in devices)
        else None
    )
    cost = None
    if refused is None and per_hour is not None and throughput is not None:
        cost = per_hour / SECONDS_PER_HOUR / throughput * TOKENS_PER_UNIT
    return TokenCost(
        condition_id,
        input_id,
        concurrency,
        tokens,
        wall_s,
        spans,
        throughput,
        devices,
        per_hour,
        cost,
        refused,
    )


Output = tuple[int, float, int, bool]
"""Σ output tokens, Σ wall time, the spans counted and whether a lone request has no token
count (``_Spans.output``)."""


class _Spans:
    """The usable trials' spans as numpy arrays: lone requests, and each physical round
    at its first request of a condition and input."""

    def __init__(self, trials: pd.DataFrame) -> None:
        in_round = trials["round_run_id"].notna().to_numpy()
        first = ~trials.duplicated(["condition_id", "input_id", "round_run_id"]).to_numpy()
        self.alone = ~in_round
        self.round_first = in_round & first
        self.generated = floats(trials["generated_tokens"])
        self.e2e_s = floats(trials["e2e_s"])
        self.round_generated = floats(trials["round_generated_tokens"])
        self.round_wall_s = floats(trials["round_wall_s"])

    def output(self, at: np.ndarray) -> Output:
        """Σ output tokens, Σ wall time and the spans counted (lone requests, then each
        physical round once) of the trials at positions ``at`` (one condition on one
        input), and whether one has no token count."""
        alone = at[self.alone[at]]
        rounds = at[self.round_first[at]]
        generated = self.generated[alone]
        uncounted = bool(np.isnan(generated).any())
        tokens = int(np.nansum(generated)) + int(np.nansum(self.round_generated[rounds]))
        wall_s = float(np.nansum(self.e2e_s[alone])) + float(np.nansum(self.round_wall_s[rounds]))
        return tokens, wall_s, len(alone) + len(rounds), uncounted
