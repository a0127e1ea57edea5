"""What a run has to do: the pending trials in the order they run, grouped into the units
that run together, with the extra warm-ups a resumed condition needs."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace

from sitegen.plan.expand import RoundKey, TrialSpec
from sitegen.plan.plan_models import Plan
from sitegen.records.store import LatestAttempt

RESUME_WARMUP = "resume-warmup"


def planned_rounds(planned: list[TrialSpec]) -> dict[RoundKey, list[TrialSpec]]:
    """Every concurrent round and load run of the plan with all its requests (rounds of
    one request are not listed)."""
    rounds: dict[RoundKey, list[TrialSpec]] = {}
    for trial in planned:
        if trial.runs_together:
            rounds.setdefault(trial.round_key, []).append(trial)
    return rounds


def group_rounds(queue: list[TrialSpec]) -> Iterator[tuple[int, list[TrialSpec]]]:
    """The queue as units that run together: each trial alone, or the queued users of one
    concurrent round or the queued requests of one load run; with the queue position of
    each unit's first trial."""
    position = 0
    while position < len(queue):
        trial = queue[position]
        unit = [trial]
        if trial.runs_together:
            while (
                position + len(unit) < len(queue)
                and queue[position + len(unit)].round_key == trial.round_key
            ):
                unit.append(queue[position + len(unit)])
        yield position, unit
        position += len(unit)


def needs_attempt(latest: LatestAttempt | None) -> bool:
    """Never recorded, or its latest attempt failed."""
    return latest is None or latest.status == "failed"


def with_resume_warmups(plan: Plan, pending: list[TrialSpec], done: set[str]) -> list[TrialSpec]:
    """On resume, a condition whose planned warm-ups were recorded by an earlier process
    loads its model anew: warm it up again before its first pending trial, so no measured
    trial runs cold. These extra warm-ups are kept as records (role ``warmup``) with ids
    ``<condition>/resume-warmup-<session>-<k>`` and never replace a planned trial."""
    if plan.warmups == 0:
        return pending
    result: list[TrialSpec] = []
    warmed: set[str] = set()
    for trial in pending:
        condition_id = trial.condition_id
        if condition_id not in warmed:
            warmed.add(condition_id)
            if trial.role == "measured" and f"{condition_id}/warmup-0" in done:
                prefix = f"{condition_id}/{RESUME_WARMUP}-"
                session = 1 + len({d.split("-")[-2] for d in done if d.startswith(prefix)})
                result.extend(
                    replace(
                        trial,
                        trial_id=f"{prefix}{session}-{k}",
                        input_id=trial.input_id,
                        role="warmup",
                        repetition=k,
                        seed=plan.sampling.seed_base + k,
                        user=0,
                        concurrency=1,
                        load_rate=None,
                        scheduled_s=None,
                    )
                    for k in range(plan.warmups)
                )
        result.append(trial)
    return result


def last_positions(queue: list[TrialSpec]) -> dict[str, int]:
    """Each condition's last position in ``queue`` (for ``conditions_after``)."""
    return {trial.condition_id: index for index, trial in enumerate(queue)}


def conditions_after(last: dict[str, int], index: int) -> set[str]:
    """The conditions with a trial queued from ``index`` on (their engines stay loaded),
    from ``last_positions``: a few conditions compared, not the rest of the queue scanned
    at every round (that made a 400,000-trial campaign quadratic)."""
    return {condition_id for condition_id, last_index in last.items() if last_index >= index}
