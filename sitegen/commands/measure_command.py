"""``sitegen measure``: preflight every plan, then run each campaign's missing trials (or,
with ``--fleet``, a fleet's campaigns on the nodes of a Ray cluster).

The campaign runner, the engines and Ray are imported inside the functions: the command
line imports this module for every command.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from sitegen.commands.exit_status import EXIT_MEASURE_INCOMPLETE, EXIT_MEASURE_REFUSED, EXIT_OK
from sitegen.core.errors import ConfigError


def measure(args: argparse.Namespace) -> int:
    """Preflight every plan (``--plan``, the project's ``plans/``, else the demo), then
    run each; ``EXIT_MEASURE_INCOMPLETE`` when a planned trial is left without an ok record."""
    if args.fleet:
        if args.dry_run:
            raise ConfigError("--dry-run checks a --plan or the demo; a fleet has no preflight")
        if args.new_campaign:
            raise ConfigError(
                "--new-campaign starts the next campaign of a series plan given with --plan; "
                "a fleet resumes its campaigns"
            )
        return measure_fleet(args)
    from sitegen.core.project import project_plans
    from sitegen.plan.demo import DEMO_PLANS
    from sitegen.plan.plan_file import load_plan

    if args.address:
        raise ConfigError("--address names the Ray cluster of a fleet; it needs --fleet")
    # In a project: its plans/; elsewhere (or with none) the built-in demo.
    files = [args.plan] if args.plan else project_plans(Path("."))
    plans = [load_plan(path) for path in files] or DEMO_PLANS
    if args.new_campaign:
        _refuse_without_series(files, plans)
    # Only now the measuring machinery (pandas, the engines): a bad plan is refused at once.
    from sitegen.core.signing import load_signer
    from sitegen.measure.preflight import preflight, trial_summary
    from sitegen.measure.progress import MeasureDisplay

    display = MeasureDisplay()
    # The user's key signs every manifest update (and must be the project's key).
    signer = load_signer(Path("."))
    checks = []
    try:
        # Every plan is checked before any campaign directory is created.
        for plan in plans:
            if args.dry_run:
                print("\n".join(trial_summary(plan)))
                print(_campaign_to_open(plan, args.data, args.new_campaign))
            with display.preflight(plan.name) as waiting:
                checks.append(preflight(plan, on_wait=waiting))
        refused = _print_preflight(checks, args.dry_run)
        if refused or args.dry_run:
            return EXIT_MEASURE_REFUSED if refused else EXIT_OK
        return _run_campaigns(checks, args.data, display, signer, args.new_campaign)
    finally:
        for check in checks:
            check.close()


def _refuse_without_series(files: list[Path], plans) -> None:
    """``--new-campaign`` only for plans that declare a series: a plan without one has one
    campaign, and a second would leave ``measure`` unable to tell which to resume."""
    sources = [f"plan {path}" for path in files] or [f"demo plan {p.name}" for p in plans]
    for plan, where in zip(plans, sources, strict=True):
        if plan.series is None:
            raise ConfigError(
                f"{where} declares no series, so --new-campaign cannot start another campaign "
                "of it: add `series: {factor: engine_build}` (or another factor) to the plan, "
                "which makes it a new plan, or run without --new-campaign to resume its campaign"
            )


def _campaign_to_open(plan, data: Path, new_campaign: bool) -> str:
    """What a measure would open for ``plan``: the campaign it resumes, or a new one."""
    from sitegen.plan.plan_file import campaign_id
    from sitegen.records.layout import CAMPAIGNS_DIR
    from sitegen.records.registrations import find_campaign

    found = find_campaign(data / CAMPAIGNS_DIR, plan, new_campaign)
    if found is not None:
        return f"campaign: would resume {found}"
    series = " (the next of its series)" if plan.series is not None else ""
    return (
        f"campaign: would register a new campaign{series}, "
        f"{data / CAMPAIGNS_DIR / campaign_id(plan, '<nonce>')}"
    )


def _run_campaigns(checks, data: Path, display, signer, new_campaign: bool) -> int:
    """Run the campaign of each plan that passed preflight, on the engines preflight
    opened; ``EXIT_MEASURE_INCOMPLETE`` when any leaves a planned trial without an ok
    record. ``new_campaign``: each plan's next campaign of its series."""
    from sitegen.measure import run_campaign
    from sitegen.records.layout import CAMPAIGNS_DIR
    from sitegen.records.registrations import find_campaign

    code = EXIT_OK
    for check in checks:
        plan = check.plan
        earlier = find_campaign(data / CAMPAIGNS_DIR, plan, new_campaign)
        if earlier is not None:
            _note_engine_death(earlier)
        started = time.monotonic()
        with display.campaign(plan.name) as shown:
            result = run_campaign(
                plan,
                data,
                progress=shown.trial,
                phase=shown.phase,
                engines=check.engines,
                signer=signer,
                new_campaign=new_campaign,
            )
        _print_result(result, time.monotonic() - started)
        if result.incomplete:
            print(
                f"{result.incomplete} planned trial(s) of {result.directory.name} have no "
                "ok record (failed or pending); run the same command again to retry them",
                file=sys.stderr,
            )
            code = EXIT_MEASURE_INCOMPLETE
    return code


def _note_engine_death(directory: Path) -> None:
    """One line when the last measure of the campaign died inside the engine: native code
    that aborts ends the process at once, its reason only in ``logs/engine.log``."""
    from sitegen.engine.native_output import error_line
    from sitegen.records.layout import ENGINE_LOG
    from sitegen.records.verify import unsigned_engine_output

    cause = error_line(unsigned_engine_output(directory), last_resort=False)
    if cause:
        print(
            f"note: the last measure of {directory.name} died in the engine, whose log "
            f"({directory / ENGINE_LOG}) says: {cause}",
            file=sys.stderr,
        )


def _print_preflight(checks, dry_run: bool) -> bool:
    """Each check's warnings and problems, one line each on stderr; whether any failed."""
    refused = False
    for check in checks:
        name = check.plan.name
        for warning in check.warnings:
            print(f"warning: plan {name}: {warning}", file=sys.stderr)
        for problem in check.problems:
            print(f"error: plan {name}: {problem}", file=sys.stderr)
        refused = refused or bool(check.problems)
        if dry_run:
            verdict = f"refused ({len(check.problems)} problem(s))" if check.problems else "passed"
            print(f"preflight of plan {name}: {verdict}")
    if refused:
        print(
            "error: preflight refused the measurement; nothing was created. Fix the lines "
            "above and run again (--dry-run checks without measuring)",
            file=sys.stderr,
        )
    return refused


def _print_result(result, elapsed_s: float | None) -> None:
    """A campaign runner's summary, and its conditions stopped after engine failures."""
    from sitegen.measure import MAX_CONSECUTIVE_ENGINE_FAILURES

    print(
        f"campaign {result.directory}: {result.written} trial(s) run, {result.skipped} "
        f"already recorded, {result.failed} failed"
        + (f", {result.retried} retried" if result.retried else "")
        + (f", {result.resume_warmups} resume warm-up(s)" if result.resume_warmups else "")
        + (f", {elapsed_s:.1f} s" if elapsed_s is not None else "")
    )
    for stop in result.stopped:
        print(
            f"condition {stop.condition_id} stopped after {MAX_CONSECUTIVE_ENGINE_FAILURES} "
            f"engine failures in a row ({stop.reason}); {stop.left_pending} of its "
            "trial(s) left pending",
            file=sys.stderr,
        )


def measure_fleet(args: argparse.Namespace) -> int:
    """Run a fleet's campaigns on the nodes of a Ray cluster, each record appended here;
    ``EXIT_MEASURE_INCOMPLETE`` when a campaign is left with planned trials not ok."""
    from sitegen.core.signing import load_signer
    from sitegen.fleet.fleet_file import load_fleet
    from sitegen.fleet.fleet_runner import run_fleet

    if args.plan:
        raise ConfigError("--fleet names the plans of its campaigns; give --plan or --fleet")
    fleet = load_fleet(args.fleet)
    width = max(len(entry.plan.name) for entry in fleet.entries)
    started = time.monotonic()

    def progress(entry, index: int, total: int, record) -> None:
        # Campaigns interleave: one line per record, prefixed with its campaign.
        _progress_line(index, total, record, prefix=f"{entry.plan.name:<{width}} ")

    outcomes = run_fleet(
        fleet, args.data, address=args.address, progress=progress, signer=load_signer(Path("."))
    )
    code = EXIT_OK
    for outcome in outcomes:
        if outcome.result is not None:
            _print_result(outcome.result, None)
        else:
            print(
                f"campaign {outcome.directory}: {outcome.appended} record(s) appended, "
                f"then it ended early: {outcome.ended_early}"
            )
        if outcome.incomplete:
            print(
                f"{outcome.incomplete} planned trial(s) of {outcome.directory.name} have no "
                "ok record (failed or pending); run the same command again to retry them "
                "(on any node with the campaign's resources)",
                file=sys.stderr,
            )
            code = EXIT_MEASURE_INCOMPLETE
    print(
        f"fleet {fleet.plan.name}: {len(outcomes)} campaign(s), {time.monotonic() - started:.1f} s"
    )
    return code


def _progress_line(index: int, total: int, record, prefix: str = "") -> None:
    """One finished trial of a fleet run on stderr (campaigns interleave, one line each)."""
    metrics = record.metrics
    rate = f"{metrics.gen_tps:.1f} tok/s" if metrics and metrics.gen_tps else "-"
    status = "FAILED " + (record.failure_reason or "") if record.status == "failed" else rate
    percent = 100 * index // max(total, 1)
    print(f"{prefix}{index}/{total} {percent}% {record.trial_id} {status}", file=sys.stderr)
