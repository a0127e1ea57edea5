"""Plausibility of imported measurements: what no real run can produce is refused, at
``sitegen import`` and again at every build (rules C-TIMELINE, C-LATORDER, C-DUPLICATE,
C-BOUNDS and C-MAGNITUDE of ``validation/rules.yaml``).

Each violation is one line naming the file, the record and the field, with the rule's cure.
The bounds are data (``BOUNDS``, by the declared device kind), stated in
``docs/importing.md``; they are far above anything measured, so a real run never meets them
and a manipulated or mis-declared one does.
"""

from __future__ import annotations

import json
import statistics
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

from sitegen.core.errors import DataError, Issue
from sitegen.validation.rules import capped, check, violation

if TYPE_CHECKING:
    from sitegen.records.import_declaration import ImportDeclaration
    from sitegen.records.import_source import ImportedMeasurement, SourceInfo
    from sitegen.records.imported_campaign import ImportedCampaign


@dataclass(frozen=True)
class Bounds:
    """The physical bounds of one request on one kind of device."""

    output_tps: float
    """Most output tokens per second one request can generate (sitegen's generation rate,
    a llama-bench ``tg`` test's rate)."""
    prompt_tps: float
    """Most prompt tokens per second one test can process (a llama-bench ``pp`` test)."""
    tokens: int
    """Most prompt or output tokens one request can hold."""


BOUNDS = {
    "cpu": Bounds(output_tps=1_000, prompt_tps=100_000, tokens=10_000_000),
    "gpu": Bounds(output_tps=5_000, prompt_tps=1_000_000, tokens=10_000_000),
    "default": Bounds(output_tps=10_000, prompt_tps=1_000_000, tokens=10_000_000),
}
"""Per declared device kind (``hardware.devices[].kind``); another kind (``accelerator``)
takes ``default``, and a server of several kinds the most permissive of theirs."""

MAX_REQUEST_S = 86_400.0
"""Longest time one request (or one llama-bench repetition) can take: a day."""
EARLIEST_START = datetime(2000, 1, 1, tzinfo=UTC)
"""No measurement of an LLM server started before 2000."""
CLOCK_SKEW = timedelta(hours=1)
"""How far after the import time a source's clock may place a request (a skewed clock)."""
WINDOW_SLACK_S = 1.0
"""How far outside its run's stated window a request may start or end (rounding)."""
ORDER_SLACK_S = 1e-6
"""Rounding allowed between TTFT, last token and end-to-end time."""
MAGNITUDE = {"ttft_min_s": 1e-4, "ttft_max_s": 600.0, "rate_min_tps": 0.1}
"""A group's median TTFT lies within [0.1 ms, 600 s] and its median generation rate is at
least 0.1 tok/s; outside, its times are in another unit than declared (ms read as s …)."""

TIME_FIELDS = ("ttft_s", "last_token_s", "e2e_s", "duration_s")


def bounds_for(declaration: ImportDeclaration) -> Bounds:
    """The bounds of the declared hardware (the most permissive of its device kinds)."""
    kinds: list[str] = [device.kind for device in declaration.hardware.devices] or ["default"]
    found = [BOUNDS.get(kind, BOUNDS["default"]) for kind in kinds]
    return Bounds(
        output_tps=max(b.output_tps for b in found),
        prompt_tps=max(b.prompt_tps for b in found),
        tokens=max(b.tokens for b in found),
    )


def refuse_duplicate_ids(file: str, field: str, ids: Iterable[tuple[str | None, str]]) -> None:
    """C-DUPLICATE where the format has request ids: ``ids`` (location, id) each once."""
    seen: dict[str, str | None] = {}
    issues = []
    for location, request_id in ids:
        if request_id in seen:
            issues.append(
                _issue(
                    "C-DUPLICATE",
                    f"{file} {location} → {field}",
                    f"request id {request_id!r} again (first at {seen[request_id]})",
                )
            )
        else:
            seen[request_id] = location
    if issues:
        raise DataError(_capped(issues))


def refuse_implausible(
    sources: Iterable[tuple[SourceInfo, list[ImportedMeasurement]]],
    declaration: ImportDeclaration,
    now: datetime,
) -> None:
    """Every check over what the files yield, before anything is written."""
    issues = implausible(sources, declaration, now)
    if issues:
        raise DataError(issues)


@check("C-BOUNDS", "campaign", imported=True)
def _imported_values_plausible(campaign: ImportedCampaign) -> list[Issue]:
    """The import's checks again over an imported campaign as a build reads it (C-TIMELINE,
    C-LATORDER, C-DUPLICATE, C-BOUNDS, C-MAGNITUDE): bounds may have tightened since, and
    records may have been written by hand."""
    registration = campaign.registration
    by_file: dict[str, list[ImportedMeasurement]] = defaultdict(list)
    for record in campaign.records:
        by_file[record.origin.file].append(record.measurement)
    sources = [(info, by_file.get(info.file, [])) for info in registration.sources]
    now = datetime.fromisoformat(registration.imported_at)
    found = implausible(sources, registration.declaration, now)
    return [Issue(f"{campaign.directory}: {i.location}", i.message, i.rule) for i in found]


def implausible(
    sources: Iterable[tuple[SourceInfo, list[ImportedMeasurement]]],
    declaration: ImportDeclaration,
    now: datetime,
) -> list[Issue]:
    """Every violation, at most a few per rule and file."""
    bounds = bounds_for(declaration)
    issues = []
    for info, measurements in sources:
        found: list[Issue] = []
        for measurement in measurements:
            where = f"{info.file} {measurement.location}"
            found += _timeline(where, measurement, _window(info, measurement.group), now)
            found += _order(where, measurement)
            found += _bounds(where, measurement, bounds)
        found += _identical(info.file, measurements)
        found += _magnitude(info.file, measurements)
        issues += _capped(found)
    return issues


def _issue(rule_id: str, location: str, problem: str) -> Issue:
    return violation(rule_id, location, problem)


def _capped(issues: list[Issue], limit: int = 5) -> list[Issue]:
    by_rule: dict[str, list[Issue]] = defaultdict(list)
    for issue in issues:
        by_rule[issue.rule].append(issue)
    return [issue for found in by_rule.values() for issue in capped(found, limit)]


def _moment(value: str) -> datetime | None:
    """A stated time: Unix seconds, or ISO 8601 (UTC when it names no offset)."""
    try:
        number = json.loads(value)
    except ValueError:
        number = None
    try:
        if isinstance(number, int | float) and not isinstance(number, bool):
            return datetime.fromtimestamp(number, UTC)
        moment = datetime.fromisoformat(value)
    except (ValueError, OverflowError, OSError):
        return None
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


def _window(info: SourceInfo, group: str | None) -> tuple[datetime, datetime] | None:
    """The run window the source states for ``group`` (GuideLLM ``benchmarks[i].start_time``
    and ``end_time``, AIPerf's summary ``start_time`` and ``end_time``)."""
    prefix = f"{group}." if group else ""
    start, end = (info.stated.get(f"{prefix}{key}") for key in ("start_time", "end_time"))
    if start is None or end is None:
        return None
    moments = _moment(start), _moment(end)
    return None if None in moments else moments  # type: ignore[return-value]


def _timeline(
    where: str,
    m: ImportedMeasurement,
    window: tuple[datetime, datetime] | None,
    now: datetime,
) -> list[Issue]:
    """C-TIMELINE: a start after 2000, not after the import, within the run's window."""
    if m.started_at is None:
        return []
    at = f"{where} → started_at"
    start = datetime.fromisoformat(m.started_at)
    if start < EARLIEST_START:
        return [_issue("C-TIMELINE", at, f"{m.started_at} is before {EARLIEST_START:%Y-%m-%d}")]
    if start > now + CLOCK_SKEW:
        return [_issue("C-TIMELINE", at, f"{m.started_at} is after the import ({now.isoformat()})")]
    if window is None or m.warmup:
        return []
    first, last = window
    slack = timedelta(seconds=WINDOW_SLACK_S)
    if first > last:
        return [_issue("C-TIMELINE", at, f"the run's stated window ends before it starts ({last})")]
    duration = next(
        (getattr(m, f) for f in ("e2e_s", "last_token_s", "ttft_s") if getattr(m, f)), 0
    )
    end = start + timedelta(seconds=min(duration, MAX_REQUEST_S))
    if start < first - slack or end > last + slack:
        return [
            _issue(
                "C-TIMELINE",
                at,
                f"{m.started_at} (+{duration:g} s) is outside the run's stated window "
                f"{first.isoformat()} to {last.isoformat()}",
            )
        ]
    return []


def _order(where: str, m: ImportedMeasurement) -> list[Issue]:
    """C-LATORDER: every time ≥ 0, and TTFT ≤ last token ≤ end-to-end."""
    times = {f: getattr(m, f) for f in TIME_FIELDS if getattr(m, f) is not None}
    times.update(
        {f"inter_chunk_latencies_s[{k}]": v for k, v in enumerate(m.inter_chunk_latencies_s or [])}
    )
    for field, value in times.items():
        if value < 0:
            return [_issue("C-LATORDER", f"{where} → {field}", f"{value:g} s is negative")]
    chain = [(f, times[f]) for f in ("ttft_s", "last_token_s", "e2e_s") if f in times]
    for (early, a), (late, b) in zip(chain, chain[1:], strict=False):
        if b + ORDER_SLACK_S < a:
            return [
                _issue("C-LATORDER", f"{where} → {late}", f"{b:g} s, shorter than {early} {a:g} s")
            ]
    return []


def _rate(m: ImportedMeasurement) -> tuple[float, str] | None:
    """The measurement's generation rate and what it is, computed as a record's is."""
    from sitegen.records.imported_campaign import derived_rate

    if m.tokens_per_s is not None:
        return m.tokens_per_s, "tokens_per_s"
    _, rate = derived_rate(m)
    return None if rate is None else (rate, "output_tokens")


def _bounds(where: str, m: ImportedMeasurement, bounds: Bounds) -> list[Issue]:
    """C-BOUNDS: token counts, per-request rates and times within physical bounds."""
    for field in ("prompt_tokens", "output_tokens"):
        value = getattr(m, field)
        if value is not None and value > bounds.tokens:
            return [
                _issue(
                    "C-BOUNDS",
                    f"{where} → {field}",
                    f"{value:.4g} tokens in one request (at most {bounds.tokens:,})",
                )
            ]
    for field in TIME_FIELDS:
        value = getattr(m, field)
        if value is not None and value > MAX_REQUEST_S:
            return [
                _issue(
                    "C-BOUNDS",
                    f"{where} → {field}",
                    f"{value:.4g} s for one request (at most {MAX_REQUEST_S:,.0f} s, a day)",
                )
            ]
    found = _rate(m)
    if found is None:
        return []
    rate, field = found
    prompt = m.measure is not None and m.measure.startswith("pp")
    limit = bounds.prompt_tps if prompt else bounds.output_tps
    if rate > limit:
        what = "prompt tokens" if prompt else "output tokens"
        return [
            _issue(
                "C-BOUNDS",
                f"{where} → {field}",
                f"{rate:.4g} {what}/s in one request (at most {limit:,.0f} on the declared "
                "hardware)",
            )
        ]
    return []


def _timed(m: ImportedMeasurement) -> bool:
    return m.status == "ok" and any(
        getattr(m, f) is not None
        for f in (*TIME_FIELDS, "started_at", "started_monotonic_s", "inter_chunk_latencies_s")
    )


def _identical(file: str, measurements: list[ImportedMeasurement]) -> list[Issue]:
    """C-DUPLICATE: two timed measurements identical in every field but their place."""
    seen: dict[str, str] = {}
    issues = []
    for m in measurements:
        if not _timed(m):
            continue
        key = m.model_dump_json(exclude={"location"})
        if key in seen:
            issues.append(
                _issue(
                    "C-DUPLICATE",
                    f"{file} {m.location}",
                    f"identical to {seen[key]} in every field (a row counted twice)",
                )
            )
        else:
            seen[key] = m.location
    return issues


def _proxy_rate(m: ImportedMeasurement) -> tuple[float, str] | None:
    """Without a generation time: output tokens − 1 over end-to-end − TTFT, a rate no
    higher than the generation rate (for the magnitude check only, never published)."""
    if m.output_tokens is None or m.output_tokens < 2 or m.e2e_s is None or m.ttft_s is None:
        return None
    span = m.e2e_s - m.ttft_s
    return ((m.output_tokens - 1) / span, "e2e_s") if span > 0 else None


def _span_field(members: list[ImportedMeasurement]) -> str:
    """The field the generation time comes from."""
    if any(m.inter_chunk_latencies_s for m in members):
        return "inter_chunk_latencies_s"
    return "last_token_s"


def _magnitude(file: str, measurements: list[ImportedMeasurement]) -> list[Issue]:
    """C-MAGNITUDE: each group's median TTFT and generation rate in the range real runs
    have; outside it the times are in another unit than declared."""
    groups: dict[tuple[str | None, str | None], list[ImportedMeasurement]] = defaultdict(list)
    for m in measurements:
        if m.status == "ok" and not m.warmup:
            groups[m.group, m.measure].append(m)
    issues = []
    for (group, _), members in groups.items():
        where = f"{file} {group}" if group else file
        ttfts = [m.ttft_s for m in members if m.ttft_s is not None]
        if ttfts:
            median = statistics.median(ttfts)
            if not MAGNITUDE["ttft_min_s"] <= median <= MAGNITUDE["ttft_max_s"]:
                unit = "milliseconds read as seconds" if median > 1 else "seconds read as ms"
                issues.append(
                    _issue(
                        "C-MAGNITUDE",
                        f"{where} → ttft_s",
                        f"median time to first token {median:.4g} s over {len(ttfts)} "
                        f"requests: the values look like {unit}",
                    )
                )
        rates = [found for m in members if (found := _rate(m) or _proxy_rate(m)) is not None]
        if rates and (median := statistics.median(r for r, _ in rates)) < MAGNITUDE["rate_min_tps"]:
            field = rates[0][1] if rates[0][1] != "output_tokens" else _span_field(members)
            issues.append(
                _issue(
                    "C-MAGNITUDE",
                    f"{where} → {field}",
                    f"median generation rate {median:.4g} tok/s over {len(rates)} requests: "
                    "the times look like milliseconds read as seconds",
                )
            )
    return issues
