"""Command line: a thin shell over importable functions.

Every ``SitegenError`` is printed as its message with exit code 1 (``measure``: 2;
``--debug`` shows the traceback); heavy modules are imported inside the commands.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from sitegen.errors import ConfigError, SitegenError

EXIT_OK = 0
EXIT_ERROR = 1
"""Any command but ``measure``: the printed error stopped it."""
EXIT_MEASURE_REFUSED = 2
"""``measure`` refused to run or stopped at the printed error."""
EXIT_MEASURE_INCOMPLETE = 3
"""``measure`` ran, but some planned trials have no ok record (failed or pending)."""
EXIT_INTERRUPTED = 130

MEASURE_EPILOG = f"""\
Every attempt is kept as a record. A planned trial whose latest attempt failed is tried
again by the next run, as a new record (attempt 2, 3 ...); a trial with an ok record is
never run again. A condition whose engine fails several trials in a row (will not load,
or fails as a whole) is stopped: its other trials are left pending for the next run.
Before appending, the campaign is checked against its manifest.json; one measure at a
time holds a campaign.

exit status:
  {EXIT_OK}    every planned trial has an ok record
  {EXIT_MEASURE_INCOMPLETE}    some planned trials failed or are still pending; run the same
       command again to retry them (with --fleet also: a campaign's node was lost)
  {EXIT_MEASURE_REFUSED}    refused or stopped by the printed error: invalid plan or engine
       options, a fleet campaign whose resources no Ray node has (nothing run),
       the campaign held by another measure, files that do not match the
       campaign's manifest.json, a file that cannot be read or written (nothing
       recorded is lost)
  {EXIT_INTERRUPTED}  interrupted; run the same command again to resume
"""


def _progress_line(index: int, total: int, record, prefix: str = "", redraw: bool = False):
    """One trial's progress line on stderr: a bar, the trial and its rate or failure."""
    metrics = record.metrics
    rate = f"{metrics.gen_tps:6.1f} tok/s" if metrics and metrics.gen_tps else "      -"
    status = "FAILED " + (record.failure_reason or "") if record.status == "failed" else ""
    bar = "#" * (20 * index // total)
    redraw = redraw and sys.stderr.isatty() and not status and index < total
    print(
        f"\r{prefix}[{bar:<20}] {index}/{total} {record.trial_id:<28} {rate} {status}",
        end="" if redraw else "\n",
        file=sys.stderr,
        flush=True,
    )


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


def _measure(args: argparse.Namespace) -> int:
    if args.fleet:
        return _measure_fleet(args)
    from sitegen.measure import run_campaign
    from sitegen.plan.demo import DEMO_PLANS
    from sitegen.plan.io import load_plan

    if args.address:
        raise ConfigError("--address names the Ray cluster of a fleet; it needs --fleet")
    plans = [load_plan(args.plan)] if args.plan else DEMO_PLANS

    def progress(index: int, total: int, record) -> None:
        _progress_line(index, total, record, redraw=True)

    code = EXIT_OK
    for plan in plans:
        started = time.monotonic()
        result = run_campaign(plan, args.data, progress=progress)
        _print_result(result, time.monotonic() - started)
        if result.incomplete:
            print(
                f"{result.incomplete} planned trial(s) of {result.directory.name} have no ok "
                "record (failed or pending); run the same command again to retry them",
                file=sys.stderr,
            )
            code = EXIT_MEASURE_INCOMPLETE
    return code


def _measure_fleet(args: argparse.Namespace) -> int:
    from sitegen.fleet.io import load_fleet
    from sitegen.fleet.runner import run_fleet

    if args.plan:
        raise ConfigError("--fleet names the plans of its campaigns; give --plan or --fleet")
    fleet = load_fleet(args.fleet)
    width = max(len(entry.plan.name) for entry in fleet.entries)
    started = time.monotonic()

    def progress(entry, index: int, total: int, record) -> None:
        # Campaigns interleave: one line per record, prefixed with its campaign.
        _progress_line(index, total, record, prefix=f"{entry.plan.name:<{width}} ")

    outcomes = run_fleet(fleet, args.data, address=args.address, progress=progress)
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


def _build(args: argparse.Namespace) -> None:
    from sitegen.build import build_site

    started = time.monotonic()
    result = build_site(
        data_dir=args.data, site_dir=args.site, project_dir=args.project, version=args.version
    )
    what = {
        "published": f"version {result.version} published",
        "unchanged": f"version {result.version} was already published with the same content",
        "up-to-date": f"nothing changed since version {result.version} was built",
    }[result.outcome]
    print(
        f"site {result.site_dir}: {what} ({result.campaigns} campaign(s), "
        f"{result.records} records, {time.monotonic() - started:.1f} s)"
    )


def _check(args: argparse.Namespace) -> None:
    from sitegen.build import render_site

    checked = render_site(args.data, args.project.resolve())
    pages = sum(1 for path in checked.docs if path.endswith(".md"))
    print(
        f"ok: {len(checked.reports)} campaign(s), {checked.records} records, {pages} pages "
        "pass validation and the caveat rules (nothing written)"
    )
    # Warnings only (the exit code is unchanged): a summary without a factor-only comparison
    # publishes medians but no ratio, which is rarely what the plan meant.
    for report in checked.reports:
        if report.headline_warning:
            print(
                f"warning: campaign {report.slug}: the summary carries no comparison "
                f"(no factor-only comparison with both medians): {report.headline_warning}"
            )
        for warning in report.observation_warnings:
            print(f"warning: campaign {report.slug}: {warning}")
    for comparison in checked.comparisons:
        for warning in comparison.warnings:
            print(f"warning: comparison {comparison.spec.id}: {warning}")


def _verify(args: argparse.Namespace) -> None:
    from sitegen.records.campaign import verify_campaign

    for directory in args.campaigns:
        verified = verify_campaign(directory)
        print(
            f"ok: {verified.directory}: {verified.files} file(s) and {verified.records} records "
            f"match manifest.json (plan sha256 {verified.plan_sha256[:12]})"
        )


def _engines(args: argparse.Namespace) -> None:
    from sitegen.engine.registry import ENGINES, is_publishable

    for engine_id, target in ENGINES.items():
        use = "publishable" if is_publishable(engine_id) else "tests only, never published"
        print(f"{engine_id:<18} {target:<52} {use}")


def _schema(args: argparse.Namespace) -> None:
    from sitegen.pages.schema import write_json_schemas

    for path in write_json_schemas(args.out):
        print(path)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="sitegen", description=__doc__.splitlines()[0])
    parser.add_argument("--debug", action="store_true", help="show tracebacks")
    commands = parser.add_subparsers(dest="command", required=True)

    measure = commands.add_parser(
        "measure",
        help="run a campaign (default: the built-in demo)",
        description="Run every planned trial that has no ok record yet, appending one record "
        "per attempt to data/campaigns/<name>-<hash>/records.jsonl.",
        epilog=MEASURE_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    measure.add_argument("--plan", type=Path, help="plan file (YAML, TOML or JSON)")
    measure.add_argument(
        "--fleet",
        type=Path,
        help="fleet plan: campaigns run on the nodes of a Ray cluster (pip install "
        "'sitegen[fleet]'), their records appended here",
    )
    measure.add_argument(
        "--address",
        help="Ray cluster of --fleet: ray://HOST:PORT, HOST:PORT or auto (default: a local "
        "Ray instance on this machine)",
    )
    measure.add_argument("--data", type=Path, default=Path("data"), help="data directory")
    measure.set_defaults(func=_measure)

    build = commands.add_parser("build", help="validate records and render the site")
    build.add_argument("--data", type=Path, default=Path("data"), help="data directory")
    build.add_argument("--site", type=Path, default=Path("site"), help="output directory")
    build.add_argument(
        "--project",
        type=Path,
        default=Path("."),
        help="directory with content/, theme/, mkdocs.yml",
    )
    build.add_argument(
        "--version",
        help="label of the published version (default: date of the latest record, YYYY-MM-DD); "
        "a published version is never changed",
    )
    build.set_defaults(func=_build)

    check = commands.add_parser("check", help="run every validation without writing a site")
    check.add_argument("--data", type=Path, default=Path("data"), help="data directory")
    check.add_argument(
        "--project", type=Path, default=Path("."), help="directory with content/ and theme/"
    )
    check.set_defaults(func=_check)

    verify = commands.add_parser(
        "verify", help="re-hash campaign directories against their manifest.json"
    )
    verify.add_argument("campaigns", type=Path, nargs="+", metavar="DIR", help="campaign directory")
    verify.set_defaults(func=_verify)

    engines = commands.add_parser("engines", help="list the registered engines")
    engines.set_defaults(func=_engines)

    schema = commands.add_parser("schema", help="write the JSON Schemas of plans and records")
    schema.add_argument("--out", type=Path, default=Path("schema"), help="output directory")
    schema.set_defaults(func=_schema)

    args = parser.parse_args(argv)
    try:
        code = args.func(args)
    except SitegenError as exc:
        if args.debug:
            raise
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_MEASURE_REFUSED if args.func is _measure else EXIT_ERROR
    except KeyboardInterrupt:
        print("interrupted; run the same command again to resume", file=sys.stderr)
        return EXIT_INTERRUPTED
    return code or EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
