"""The campaign checks of every rule (the catalog is ``rules.yaml``): they see a campaign's
records and annotations before any page is rendered. Adding a rule: one catalog entry,
plus a function here if it checks records or annotations.

A campaign's records are columns (``Campaign.rows``): a check selects the rows that may be
at fault there, then reads those records back whole to word each problem (usually none).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import UTC, date, datetime

import numpy as np
import pandas as pd

from sitegen.core.errors import ConfigError, DataError, Issue
from sitegen.plan.engine_registry import is_publishable
from sitegen.plan.items import make_suite, plan_items
from sitegen.records.campaign import Campaign, utc_time
from sitegen.records.layout import RECORDS_FILE
from sitegen.records.record_models import UNKNOWN_REMOTE_SHA256, Provenance, TrialRecord
from sitegen.records.series_factor import factor_fields, factor_value
from sitegen.records.verify import verify_campaign
from sitegen.validation.rules import check, violation


def _suspects(
    campaign: Campaign, mask: pd.Series | np.ndarray
) -> Iterator[tuple[int, TrialRecord]]:
    """Each record whose row ``mask`` selects, with its index, read back whole."""
    indices = np.flatnonzero(np.asarray(mask, dtype=bool)).tolist()
    return zip(indices, campaign.iter_full_records(indices), strict=True)


def _provenance_flags(campaign: Campaign, flag: Callable[[Provenance], bool]) -> np.ndarray:
    """``flag`` of each record's provenance (computed once per distinct provenance)."""
    flags = np.array([flag(p) for p in campaign.table.provenances], dtype=bool)
    return flags[campaign.rows["provenance"].to_numpy()]


def _per_provenance(campaign: Campaign, value: Callable[[Provenance], object]) -> pd.Series:
    """``value`` of each record's provenance (computed once per distinct provenance)."""
    values = [value(p) for p in campaign.table.provenances]
    return campaign.rows["provenance"].map(lambda i: values[i])


@check("C-ENGINE", "campaign")
def _engine_publishable(campaign: Campaign) -> list[Issue]:
    issues = []
    planned = campaign.plan.engine
    refused = _provenance_flags(
        campaign, lambda p: p.engine.id != planned or not is_publishable(p.engine.id)
    )
    for i, r in _suspects(campaign, refused):
        where = f"{campaign.record_location(i)} → provenance.engine.id"
        engine = r.provenance.engine.id
        if not is_publishable(engine):
            issues.append(
                violation(
                    "C-ENGINE",
                    where,
                    f"engine '{engine}' is a test engine (or unknown) and can never be published",
                )
            )
        elif engine != planned:
            issues.append(
                violation(
                    "C-ENGINE",
                    where,
                    f"engine '{engine}', but the plan runs condition '{r.condition_id}' on "
                    f"'{planned}' (plan.json → engine)",
                )
            )
    return issues


@check("C-PLANNED", "campaign")
def _records_in_plan(campaign: Campaign) -> list[Issue]:
    try:
        inputs = set(plan_items(campaign.plan))
    except ConfigError as exc:
        return [violation("C-PLANNED", str(campaign.directory / "plan.json"), str(exc))]
    conditions = {c.id for c in campaign.plan.conditions}
    rows = campaign.rows
    other_plan = (rows["plan_sha256"] != campaign.plan_sha256).to_numpy()
    unplanned_condition = _not_in(rows["condition_id"], conditions)
    unplanned_input = _not_in(rows["input_id"], inputs)
    issues = []
    for i in np.flatnonzero(other_plan | unplanned_condition | unplanned_input).tolist():
        where = campaign.record_location(i)
        if other_plan[i]:
            issues.append(
                violation("C-PLANNED", f"{where} → plan_sha256", "not the campaign's plan.json")
            )
        if unplanned_condition[i]:
            issues.append(
                violation("C-PLANNED", f"{where} → condition_id", "not a condition of the plan")
            )
        if unplanned_input[i]:
            issues.append(violation("C-PLANNED", f"{where} → input_id", "not an input of the plan"))
    return issues


def _not_in(column: pd.Series, allowed: set[str]) -> np.ndarray:
    """Per row, whether its value is not in ``allowed`` (each distinct value looked up
    once)."""
    codes, values = pd.factorize(column)
    return ~np.array([value in allowed for value in values], dtype=bool)[codes]


@check("C-PLANNED", "campaign")
def _started_after_registration(campaign: Campaign) -> list[Issue]:
    # A campaign from before the manifest recorded its registration has none to compare
    # with: its registration is the first record's start.
    registered = campaign.manifest_registered_at
    problems: dict[str, str | None] = {}
    for started_at in set(campaign.rows["started_at"]):
        try:
            started = utc_time(started_at)
        except ValueError:
            problems[started_at] = f"'{started_at}' is not an ISO 8601 timestamp"
            continue
        problems[started_at] = (
            None
            if registered is None or started >= registered
            else (
                f"started {started_at}, before the plan's registration "
                f"({registered.isoformat()}, manifest.json → registered_at); a plan registered "
                "after measuring is not a pre-registration"
            )
        )
    starts = campaign.rows["started_at"]
    return [
        violation("C-PLANNED", f"{campaign.record_location(i)} → started_at", problem)
        for i, started_at in zip(starts.index, starts, strict=True)
        if (problem := problems[started_at]) is not None
    ]


@check("C-PLANNED", "campaign")
def _settings_as_planned(campaign: Campaign) -> list[Issue]:
    conditions = {c.id: c for c in campaign.plan.conditions}
    speculatives = campaign.table.speculatives
    codes, condition_ids = pd.factorize(campaign.rows["condition_id"])
    # One key per (condition, speculative setting) pair, each pair compared once.
    pair = codes * len(speculatives) + campaign.rows["speculative"].to_numpy()
    unlike = [
        key
        for key in np.unique(pair).tolist()
        if (condition_id := condition_ids[key // len(speculatives)]) in conditions
        and speculatives[key % len(speculatives)] != conditions[condition_id].speculative
    ]
    if not unlike:
        return []
    mask = np.isin(pair, unlike)
    issues = []
    for i, r in _suspects(campaign, mask):
        condition = conditions[r.condition_id]
        issues.append(
            violation(
                "C-PLANNED",
                f"{campaign.record_location(i)} → speculative",
                f"{r.speculative.label} is not condition '{r.condition_id}''s "
                f"{condition.speculative.label}",
            )
        )
    return issues


GEN_TPS_TOLERANCE = 0.01
"""A recorded generation rate must agree with its own counts and span within 1 %."""


def _metric_problems(r: TrialRecord) -> list[tuple[str, str]]:
    """(field, problem) for every impossible value of one record's metrics."""
    m = r.metrics
    if m is None:
        return [("metrics", "an ok record needs metrics")] if r.status == "ok" else []
    problems = []
    for name in ("generated_tokens", "draft_proposed", "draft_accepted", "chunks"):
        value = getattr(m, name)
        if value is not None and value < 0:
            problems.append((f"metrics.{name}", f"{value} is negative"))
    for name in ("ttft_s", "t_first_visible_s", "t_first_answer_s", "e2e_s", "gen_tps"):
        value = getattr(m, name)
        if value is not None and value < 0:
            problems.append((f"metrics.{name}", f"{value} is negative"))
    if r.prompt_tokens is not None and r.prompt_tokens < 0:
        problems.append(("prompt_tokens", f"{r.prompt_tokens} is negative"))
    if (
        m.draft_accepted is not None
        and m.draft_proposed is not None
        and m.draft_accepted > m.draft_proposed
    ):
        problems.append(
            (
                "metrics.draft_accepted",
                f"{m.draft_accepted} accepted of {m.draft_proposed} proposed",
            )
        )
    if m.ttft_s is not None and m.ttft_s > m.e2e_s:
        problems.append(("metrics.ttft_s", f"{m.ttft_s} s after the end ({m.e2e_s} s)"))
    generation_s = getattr(m, "generation_s", None)
    if m.gen_tps is not None and generation_s and m.generated_tokens:
        expected = (m.generated_tokens - 1) / generation_s
        if abs(m.gen_tps - expected) > GEN_TPS_TOLERANCE * expected:
            problems.append(
                (
                    "metrics.gen_tps",
                    f"{m.gen_tps:.4g} tok/s, but ({m.generated_tokens} − 1) tokens in "
                    f"{generation_s:.4g} s is {expected:.4g} tok/s",
                )
            )
    return problems


_NOT_NEGATIVE = (
    "generated_tokens",
    "draft_proposed",
    "draft_accepted",
    "chunks",
    "ttft_s",
    "t_first_visible_s",
    "t_first_answer_s",
    "e2e_s",
    "gen_tps",
    "prompt_tokens",
)
"""The columns ``_metric_problems`` finds fault with where negative."""


def _numbers(rows: pd.DataFrame, name: str) -> np.ndarray:
    """A numeric column as a numpy array: integers exact, a missing integer as 0 (never
    negative), a missing float as NaN (no comparison holds)."""
    column = rows[name]
    if pd.api.types.is_integer_dtype(column.dtype):
        return column.to_numpy(dtype=np.int64, na_value=0)
    return column.to_numpy(dtype=float)


def _maybe_metric_problems(rows: pd.DataFrame) -> np.ndarray:
    """The rows ``_metric_problems`` may find fault with (a superset: it decides)."""
    # On numpy arrays: a pandas operation costs more than the comparison of a small
    # campaign's every row.
    suspect = ~rows["has_metrics"].to_numpy(dtype=bool) & (rows["status"] == "ok").to_numpy()
    for name in _NOT_NEGATIVE:
        suspect |= _numbers(rows, name) < 0
    both_drafts = (rows["draft_accepted"].notna() & rows["draft_proposed"].notna()).to_numpy()
    suspect |= both_drafts & (_numbers(rows, "draft_accepted") > _numbers(rows, "draft_proposed"))
    suspect |= _numbers(rows, "ttft_s") > _numbers(rows, "e2e_s")
    generated = rows["generated_tokens"].to_numpy(dtype=float, na_value=np.nan)
    with np.errstate(divide="ignore", invalid="ignore"):
        expected = (generated - 1) / _numbers(rows, "generation_s")
        off = np.abs(_numbers(rows, "gen_tps") - expected) > GEN_TPS_TOLERANCE * np.abs(expected)
    return suspect | off


@check("C-RECORD", "campaign")
def _records_consistent(campaign: Campaign) -> list[Issue]:
    rows = campaign.rows
    reason = rows["failure_reason"]
    unexplained = ((rows["status"] == "failed") & (reason.isna() | (reason == ""))).to_numpy()
    issues = []
    for i, r in _suspects(campaign, _maybe_metric_problems(rows) | unexplained):
        where = campaign.record_location(i)
        for field, problem in _metric_problems(r):
            issues.append(violation("C-RECORD", f"{where} → {field}", problem))
        if r.status == "failed" and not r.failure_reason:
            issues.append(
                violation("C-RECORD", f"{where} → failure_reason", "a failed record needs a reason")
            )
    return issues


@check("C-SIGNED", "campaign")
def _files_as_signed(campaign: Campaign) -> list[Issue]:
    try:
        # The records file was hashed as the campaign was read: it is not read again.
        read = {RECORDS_FILE: campaign.records_file} if campaign.records_file else {}
        verify_campaign(campaign.directory, already_read=read)
    except DataError as exc:
        return [violation("C-SIGNED", i.location, i.message) for i in exc.issues]
    return []


@check("C-USABLE", "campaign")
def _has_usable_trials(campaign: Campaign) -> list[Issue]:
    rows = campaign.rows
    if campaign.table.usable.any():
        return []
    measured = rows[rows["role"] == "measured"]
    if measured.empty:
        problem = "no measured trial recorded (the campaign was never run to the end)"
    else:
        # A record without a reason reads as a missing value (NaN), not an empty text.
        reasons = list(
            dict.fromkeys(
                reason if isinstance(reason, str) and reason else "?"
                for reason in measured["failure_reason"]
            )
        )
        shown = "; ".join(reasons[:3]) + (
            f" (+{len(reasons) - 3} more)" if len(reasons) > 3 else ""
        )
        trials = measured["trial_id"].nunique()
        tries = f" ({len(measured)} attempts)" if len(measured) != trials else ""
        problem = f"all {trials} measured trial(s) failed{tries}: {shown}"
    return [
        violation("C-USABLE", f"{campaign.directory} (campaign {campaign.campaign_id})", problem)
    ]


@check("C-MODELID", "campaign")
def _unhashed_model_declared(campaign: Campaign) -> list[Issue]:
    conditions = {c.id: c for c in campaign.plan.conditions}
    rows = campaign.rows
    unhashed = _provenance_flags(campaign, lambda p: p.model.sha256 == UNKNOWN_REMOTE_SHA256)
    if not unhashed.any():
        return []
    condition, condition_ids = pd.factorize(rows["condition_id"])
    undeclared = np.array(
        [
            c in conditions and not campaign.plan.model_for(conditions[c]).remote_unhashable
            for c in condition_ids
        ],
        dtype=bool,
    )[condition]
    found = np.flatnonzero((rows["status"] == "ok").to_numpy() & unhashed & undeclared)
    return [
        violation(
            "C-MODELID",
            f"{campaign.record_location(i)} → provenance.model.sha256",
            "the model was not hashed and the plan does not declare remote_unhashable",
        )
        for i in found[:1]
    ]


@check("C-SERIES", "campaign")
def _one_factor_value(campaign: Campaign) -> list[Issue]:
    """A campaign of a series measures one value of its factor: the first record with a
    value sets it, and every record holding another is named (records whose engine never
    loaded hold none)."""
    series = campaign.plan.series
    if series is None:
        return []
    values = _per_provenance(campaign, lambda p: factor_value(p, series.factor)).dropna()
    if values.nunique() <= 1:
        return []
    first = values.index[0]
    campaign_value, first_trial = values[first], campaign.rows["trial_id"].iat[first]
    return [
        violation(
            "C-SERIES",
            f"{campaign.record_location(i)} → {factor_fields(series.factor)}",
            f"{series.factor} {values[i]!r}, but campaign {campaign.campaign_id} of plan "
            f"{campaign.plan.name}'s series by {series.factor} was measured with "
            f"{campaign_value!r} (from trial {first_trial} on)",
        )
        for i in values.index[values != campaign_value]
    ]


@check("C-EXAMPLE", "campaign")
def _examples_declared(campaign: Campaign) -> list[Issue]:
    if not campaign.annotations.curated_examples:
        return []
    rows = campaign.rows
    usable = set(rows.loc[campaign.table.usable, "trial_id"])
    return [
        violation(
            "C-EXAMPLE",
            f"{campaign.annotations_path} → curated_examples.{i}.trial_id",
            f"'{e.trial_id}' is not a measured, successful trial",
        )
        for i, e in enumerate(campaign.annotations.curated_examples)
        if e.trial_id not in usable
    ]


@check("C-REVIEW", "campaign")
def _review_declared(campaign: Campaign) -> list[Issue]:
    # The page's review statement is the declaration alone: a named reviewer under
    # "none" would publish "not reviewed" over answers someone did review.
    annotations = campaign.annotations
    if annotations.review == "none" and annotations.reviewer:
        return [
            violation(
                "C-REVIEW",
                f"{campaign.annotations_path} → review",
                f"the full answers were reviewed by '{annotations.reviewer}' (reviewer), but "
                "review is 'none'; declare review: human or automated",
            )
        ]
    return []


@check("C-CAPACITY", "campaign")
def _capacity_as_the_engine_allocated(campaign: Campaign) -> list[Issue]:
    # The first record of each condition: every request of an engine load shares it.
    rows = campaign.rows
    allocated = rows["engine_context_per_slot"]
    differs = allocated.notna().to_numpy() & (
        _numbers(rows, "engine_context_per_slot") != rows["context_capacity"].to_numpy()
    )
    if not differs.any():
        return []
    at = np.flatnonzero(differs)
    condition, _ = pd.factorize(rows["condition_id"].take(at))
    _, first_of_condition = np.unique(condition, return_index=True)
    issues = []
    for i in at[np.sort(first_of_condition)].tolist():
        issues.append(
            violation(
                "C-CAPACITY",
                f"{campaign.record_location(i)} → engine_context_per_slot",
                f"the engine allocated {allocated.iat[i]} tokens per slot, condition "
                f"'{rows['condition_id'].iat[i]}' declares context_capacity "
                f"{rows['context_capacity'].iat[i]}",
            )
        )
    return issues


_INPUT_LENGTHS = ("target_prompt_tokens", "prompt_tokens")
"""A record's input lengths, planned then actual."""


@check("C-CAPACITY", "campaign")
def _input_and_output_fit(campaign: Campaign) -> list[Issue]:
    # One issue per condition and input: the longest input of its records, planned or
    # actual (the first record with it; a record's planned length before its actual one).
    rows = campaign.rows
    # Record by record, planned then actual: a candidate's position is that tie-break.
    tokens = np.column_stack([_numbers(rows, field) for field in _INPUT_LENGTHS]).ravel()
    known = np.column_stack([rows[field].notna().to_numpy() for field in _INPUT_LENGTHS])
    candidates = np.flatnonzero(known.ravel())
    condition, _ = pd.factorize(rows["condition_id"])
    input_, inputs = pd.factorize(rows["input_id"])
    group = (condition * len(inputs) + input_)[candidates // 2]
    # By group, the longest first (~ reverses the order, without overflow), then the first.
    ranked = np.lexsort((candidates, ~tokens[candidates], group))
    first_of_group = np.ones(len(ranked), dtype=bool)
    first_of_group[1:] = group[ranked[1:]] != group[ranked[:-1]]
    output_caps = rows["max_output_tokens"].to_numpy()
    allocated = rows["engine_context_per_slot"].to_numpy()
    declared = rows["context_capacity"].to_numpy()
    issues = []
    for position in np.sort(candidates[ranked[first_of_group]]).tolist():
        i, field = divmod(position, 2)
        input_tokens = tokens[position]
        output_cap = int(output_caps[i])
        capacity = int(declared[i]) if pd.isna(allocated[i]) else int(allocated[i])
        if input_tokens + output_cap > capacity:
            issues.append(
                violation(
                    "C-CAPACITY",
                    f"{campaign.record_location(i)} → {_INPUT_LENGTHS[field]}",
                    f"{input_tokens} input tokens + output cap {output_cap} = "
                    f"{input_tokens + output_cap} do not fit in the {capacity}-token context "
                    f"of condition '{rows['condition_id'].iat[i]}'",
                )
            )
    return issues


@check("C-CAPACITY", "campaign")
def _input_length_recorded(campaign: Campaign) -> list[Issue]:
    rows = campaign.rows
    return [
        violation(
            "C-CAPACITY",
            f"{campaign.record_location(i)} → prompt_tokens",
            "an ok record without its input length",
        )
        for i in rows.index[(rows["status"] == "ok") & rows["prompt_tokens"].isna()]
    ]


@check("C-POSTHOC", "campaign")
def _post_hoc_declared(campaign: Campaign) -> list[Issue]:
    issues = []
    where = campaign.annotations_path
    quality = campaign.plan.quality
    registered = campaign.registered_at
    for i, analysis in enumerate(campaign.annotations.post_hoc):
        if quality is None:
            issues.append(
                violation(
                    "C-POSTHOC",
                    f"{where} → post_hoc.{i}",
                    "a post-hoc quality analysis needs a plan with a quality evaluation",
                )
            )
            continue
        problem = _added_before_registration(analysis.added_at, registered)
        if problem:
            issues.append(violation("C-POSTHOC", f"{where} → post_hoc.{i}.added_at", problem))
        templates = {p.template_id for p in make_suite(quality).problems}
        unknown = sorted(set(analysis.exclude_templates) - templates)
        if unknown:
            issues.append(
                violation(
                    "C-POSTHOC",
                    f"{where} → post_hoc.{i}.exclude_templates",
                    f"unknown template(s) {unknown}",
                )
            )
    return issues


def _added_before_registration(added: datetime | date, registered: datetime | None) -> str | None:
    """Why ``added`` does not come after the registration, or ``None``."""
    if registered is None:
        return None
    if isinstance(added, datetime):
        added_utc = added if added.tzinfo else added.replace(tzinfo=UTC)
        if added_utc <= registered:
            return f"{added.isoformat()} is not after the plan's registration ({registered.isoformat()})"
        return None
    registered_day = registered.astimezone(UTC).date()
    if added < registered_day:
        return f"{added} precedes the plan's registration ({registered.isoformat()})"
    if added == registered_day:
        return (
            f"{added} is the registration day ({registered.isoformat()}); give a timestamp "
            "after it (YYYY-MM-DDTHH:MM:SSZ)"
        )
    return None


@check("C-HARDWARE", "campaign")
def _devices_recorded(campaign: Campaign) -> list[Issue]:
    no_devices = _provenance_flags(campaign, lambda p: not p.host.devices)
    if not no_devices.any():
        return []
    ok = (campaign.rows["status"] == "ok").to_numpy()
    return [
        violation(
            "C-HARDWARE",
            f"{campaign.record_location(i)} → provenance.host.devices",
            "an ok record without the measured hardware",
        )
        for i in np.flatnonzero(ok & no_devices).tolist()
    ]


@check("C-THRESHOLD", "campaign")
def _thresholds_valid(campaign: Campaign) -> list[Issue]:
    conditions = {c.id for c in campaign.plan.conditions}
    inputs = {i.id for i in campaign.plan.inputs}
    issues = []
    for i, claim in enumerate(campaign.annotations.thresholds):
        where = f"{campaign.annotations_path} → thresholds.{i}"
        if claim.condition_id not in conditions:
            issues.append(
                violation(
                    "C-THRESHOLD",
                    f"{where}.condition_id",
                    f"unknown condition '{claim.condition_id}'",
                )
            )
        if claim.input_id is not None and claim.input_id not in inputs:
            issues.append(
                violation(
                    "C-THRESHOLD", f"{where}.input_id", f"unknown speed input '{claim.input_id}'"
                )
            )
    return issues
