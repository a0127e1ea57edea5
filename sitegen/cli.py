"""Command line: a thin shell over importable functions.

Every ``SitegenError`` is printed as its message with exit code 1 (``measure``, and an
argument naming what is not there: 2; ``--debug`` shows the traceback); heavy modules are
imported inside the commands.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path
from typing import NoReturn

from sitegen.core.errors import ConfigError, SitegenError, UsageError

EXIT_OK = 0
EXIT_ERROR = 1
"""Any command but ``measure``: the printed error stopped it."""
EXIT_USAGE = 2
"""The command line names something that is not there (as for arguments argparse refuses)."""
EXIT_MEASURE_REFUSED = 2
"""``measure`` refused to run or stopped at the printed error."""
EXIT_MEASURE_INCOMPLETE = 3
"""``measure`` ran, but some planned trials have no ok record (failed or pending)."""
EXIT_AUDIT_MISMATCH = 1
"""``audit``: a figure, table, checksum or signature does not check (one line each)."""
EXIT_INTERRUPTED = 130

MEASURE_EPILOG = f"""\
Preflight comes first: every condition's engine is checked before anything is created
under --data. A server must answer (nothing listening is refused after a few seconds; a
server that answers 503 while its model loads is waited for up to ready_timeout_s), serve
the plan's model with the condition's context capacity and speculative mode, and have its
memory readable (engine_options.memory_unavailable: true declares that it is not); every
input plus its output cap must fit in the context. An in-process model is not loaded for
this: its files and mode are checked, and the run's first load is the one measured. Each
problem is one line naming the plan, the condition and the fix (exit 2). --fleet runs
skip preflight.

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
       options, a failed preflight (nothing created), a fleet campaign whose
       resources no live Ray node has (nothing run), the campaign held by another
       measure, files that do not match the campaign's manifest.json, a file
       that cannot be read or written (nothing recorded is lost)
  {EXIT_INTERRUPTED}  interrupted; run the same command again to resume
"""


def _progress_line(index: int, total: int, record, prefix: str = "") -> None:
    """One finished trial of a fleet run on stderr (campaigns interleave, one line each)."""
    metrics = record.metrics
    rate = f"{metrics.gen_tps:.1f} tok/s" if metrics and metrics.gen_tps else "-"
    status = "FAILED " + (record.failure_reason or "") if record.status == "failed" else rate
    percent = 100 * index // max(total, 1)
    print(f"{prefix}{index}/{total} {percent}% {record.trial_id} {status}", file=sys.stderr)


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
        if args.dry_run:
            raise ConfigError("--dry-run checks a --plan or the demo; a fleet has no preflight")
        return _measure_fleet(args)
    from sitegen.core.project import project_plans
    from sitegen.measure import run_campaign
    from sitegen.measure.preflight import preflight, trial_summary
    from sitegen.plan.demo import DEMO_PLANS
    from sitegen.plan.plan_file import load_plan
    from sitegen.records.layout import CAMPAIGNS_DIR
    from sitegen.records.registrations import find_campaign

    if args.address:
        raise ConfigError("--address names the Ray cluster of a fleet; it needs --fleet")
    from sitegen.core.signing import load_signer
    from sitegen.measure.progress import MeasureDisplay

    # In a project: its plans/; elsewhere (or with none) the built-in demo.
    files = [args.plan] if args.plan else project_plans(Path("."))
    plans = [load_plan(path) for path in files] or DEMO_PLANS
    display = MeasureDisplay()
    # The user's key signs every manifest update (and must be the project's key).
    signer = load_signer(Path("."))
    checks = []
    try:
        # Every plan is checked before any campaign directory is created.
        for plan in plans:
            if args.dry_run:
                print("\n".join(trial_summary(plan)))
            with display.preflight(plan.name) as waiting:
                checks.append(preflight(plan, on_wait=waiting))
        refused = _print_preflight(checks, args.dry_run)
        if refused or args.dry_run:
            return EXIT_MEASURE_REFUSED if refused else EXIT_OK
        code = EXIT_OK
        for check in checks:
            plan = check.plan
            earlier = find_campaign(args.data / CAMPAIGNS_DIR, plan)
            if earlier is not None:
                _note_engine_death(earlier)
            started = time.monotonic()
            with display.campaign(plan.name) as shown:
                result = run_campaign(
                    plan,
                    args.data,
                    progress=shown.trial,
                    phase=shown.phase,
                    engines=check.engines,
                    signer=signer,
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
    finally:
        for check in checks:
            check.close()


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


def _measure_fleet(args: argparse.Namespace) -> int:
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


def _build(args: argparse.Namespace) -> None:
    from sitegen.core.project import require_project
    from sitegen.publish.archive import check_label
    from sitegen.publish.inputs import unchanged_build

    started = time.monotonic()
    project = args.project.resolve()
    require_project(project)
    if args.version is not None:
        try:
            check_label(args.version)
        except SitegenError as exc:  # a refused argument, like --skip's
            raise UsageError(f"--version: {exc}") from None
    # An unchanged site is known before the renderer is imported (most of a second).
    inputs_sha256, marker = unchanged_build(args.data, args.site, project, args.version, args.skip)
    if marker is not None:
        outcome, version, campaigns, records = (
            "up-to-date",
            marker.version,
            marker.campaigns,
            marker.records,
        )
    else:
        from sitegen.commands.build import build_site

        result = build_site(
            args.data, args.site, project, args.version, inputs_sha256, skip=args.skip
        )
        outcome, version, campaigns, records = (
            result.outcome,
            result.version,
            result.campaigns,
            result.records,
        )
    what = {
        "published": f"version {version} published",
        "unchanged": f"version {version} was already published with the same content",
        "up-to-date": f"nothing changed since version {version} was built",
    }[outcome]
    print(
        f"site {args.site}: {what} ({campaigns} campaign(s), {records} records, "
        f"{time.monotonic() - started:.1f} s)"
    )
    if outcome != "up-to-date":  # nothing was rendered: said when it was
        _warn_palette(project)


def _warn_palette(project: Path) -> None:
    """A palette whose text fails WCAG AA contrast: one warning line (nothing refused)."""
    from sitegen.core.site_settings import read_site_settings
    from sitegen.validation.contrast import palette_warning

    palette = read_site_settings(project).palette
    if palette and (warning := palette_warning(palette.primary, palette.accent)):
        print(f"warning: {warning}", file=sys.stderr)


def _check(args: argparse.Namespace) -> int:
    from sitegen.commands.build import render_site
    from sitegen.statistics.summary_warnings import site_warnings

    project = args.project.resolve()
    checked = render_site(args.data, project, args.skip)
    checked.scratch.cleanup()  # nothing is written: the downloads were made to be checked
    pages = sum(1 for path in checked.docs if path.endswith(".md"))
    print(
        f"ok: {len(checked.reports)} campaign(s), {checked.records} records, {pages} pages "
        "pass validation and the caveat rules (nothing written)"
    )
    warnings = site_warnings(project, checked.reports, checked.comparisons)
    for issue in warnings:
        print(f"warning: {issue}")
    # Listed on the changelog and the method pages: said here too.
    for entry in checked.left_out:
        why = entry.reason.en if entry.reason else "no reason recorded"
        print(f"left out: campaign {entry.campaign_id} ({entry.cause}): {why}")
    if warnings and args.strict:
        print(f"error: {len(warnings)} warning(s), and --strict fails on any", file=sys.stderr)
        return 1
    return 0


def _verify(args: argparse.Namespace) -> None:
    from sitegen.core.signing import fingerprint, project_key
    from sitegen.records.verify import verify_campaign

    key = project_key(args.project)
    signed = f", signed by {fingerprint(key)}" if key is not None else ""
    for directory in args.campaigns:
        verified = verify_campaign(directory, public_key=key)
        print(
            f"ok: {verified.directory}: {verified.files} file(s) and {verified.records} records "
            f"match manifest.json (plan sha256 {verified.plan_sha256[:12]}){signed}"
        )


def _audit(args: argparse.Namespace) -> int:
    from sitegen.commands.audit import audit_site

    started = time.monotonic()
    result = audit_site(args.site, args.version, args.key, args.deadline)
    print(f"version {result.version} of {args.site}")
    if result.key_fingerprint and args.key is None:
        print(
            f"signing key {result.key_fingerprint} (the key this site publishes: pin the "
            "fingerprint the publisher gave you with --key)"
        )
    elif result.key_fingerprint is not None:
        print(f"signing key {result.key_fingerprint}: the pinned key")
    for finding in result.findings:
        print(finding)
    for note in result.notes:
        print(f"note: {note}")
    checked = (
        f"{result.figures} figure(s) on {result.pages} page(s), {result.listed} file(s) "
        f"checked against signed lists, {result.files} download(s) hashed, {result.tables} "
        "derived download(s) recomputed, "
        f"{time.monotonic() - started:.1f} s"
    )
    if result.findings:
        print(f"FAILED: {len(result.findings)} mismatch(es); {checked}")
        return EXIT_AUDIT_MISMATCH
    print(f"ok: every figure and file matches its recomputation; {checked}")
    return EXIT_OK


def _keys_init(args: argparse.Namespace) -> int:
    from sitegen.core.signing import SIGNATURE_SUFFIX, init_keys, read_signer
    from sitegen.records.layout import MANIFEST_FILE, campaign_directories
    from sitegen.records.verify import sign_existing

    private, public, print_ = init_keys(args.project, args.key_dir)
    print(f"private key {private} (keep it outside the project; its path is in your config)")
    print(
        f"public key {public}: {print_}, declared in {args.project / 'mkdocs.yml'} "
        "(commit both: the project now requires signed data)"
    )
    # The campaigns already there are signed now, or `sitegen check` would refuse them.
    signer, unsigned = read_signer(private), 0
    for directory in campaign_directories(args.data):
        manifest = directory / MANIFEST_FILE
        if directory.is_symlink() or not manifest.is_file():
            continue  # not a campaign a build reads as one (the check names it)
        if manifest.with_name(MANIFEST_FILE + SIGNATURE_SUFFIX).exists():
            continue  # signed already (by this key or not: the check tells)
        try:
            print(f"signed {sign_existing(directory, signer)}")
        except SitegenError as exc:
            unsigned += 1
            issues = getattr(exc, "issues", None)
            reason = "; ".join(str(i) for i in issues) if issues else str(exc)
            print(
                f"not signed: {directory}: {reason}; once `sitegen verify {directory}` passes, "
                f"run `sitegen keys sign {directory}`",
                file=sys.stderr,
            )
    return EXIT_ERROR if unsigned else EXIT_OK


def _keys_sign(args: argparse.Namespace) -> None:
    from sitegen.core.signing import load_signer
    from sitegen.records.verify import sign_existing

    signer = load_signer(args.project)
    if signer is None:
        raise ConfigError("no signing key configured: run `sitegen keys init` first")
    for directory in args.campaigns:
        print(f"signed {sign_existing(directory, signer)} with {signer.fingerprint}")


def _import(args: argparse.Namespace) -> None:
    from sitegen.core.signing import load_signer
    from sitegen.importers.import_campaign import import_campaign

    result = import_campaign(
        args.format,
        args.files,
        args.declare,
        args.campaign,
        args.data,
        installed_version(),
        load_signer(Path(".")),
    )
    per_condition = ", ".join(f"{c}: {n}" for c, n in result.by_condition.items())
    detail = f" ({per_condition}; {result.failed} failed in the source)" if per_condition else ""
    print(
        f"imported {result.records} record(s) into {result.directory}{detail}; "
        f"`sitegen verify {result.directory}` checks it, `sitegen build` publishes it"
    )


def _engines(args: argparse.Namespace) -> None:
    from sitegen.engine.engines import ENGINES

    for entry in ENGINES.values():
        use = "publishable" if entry.publishable else "tests only, never published"
        prefill = entry.prefill_source or "none reported"
        print(f"{entry.id:<18} {use:<28} {entry.description}")
        print(f"{'':<18} prefill time: {prefill}; class {entry.engine}")


def _schema(args: argparse.Namespace) -> None:
    from sitegen.pages.schema import write_json_schemas

    for path in write_json_schemas(args.out):
        print(path)


def _init(args: argparse.Namespace) -> None:
    from sitegen.commands.init_project import init_project

    for path in init_project(args.directory):
        print(path)
    print(
        f"project {args.directory}: run `sitegen measure` and `sitegen build` in it "
        "(see its README.md)"
    )


def _serve(args: argparse.Namespace) -> None:
    from sitegen.publish.serve import serve_site

    def ready(url: str) -> None:
        print(f"serving {args.site} at {url} (Ctrl+C stops)", flush=True)

    try:
        serve_site(args.site, args.port, ready)
    except KeyboardInterrupt:
        print("stopped")


def _add_skip(command: argparse.ArgumentParser) -> None:
    command.add_argument(
        "--skip",
        action=_SkipWithReason,
        default={},
        metavar="CAMPAIGN=REASON",
        help="leave out the campaign directory of this name under data/campaigns/ (e.g. one "
        "that cannot be read), for the reason given, which the site lists with it on the "
        "changelog and the method page; repeatable. For good: publish: false with an "
        "unpublished_reason in its annotations.yaml",
    )


class _SkipWithReason(argparse.Action):
    """``--skip NAME=REASON``, gathered into ``{name: reason}``: a campaign is never left
    out without its reason."""

    def __call__(self, parser, namespace, values, option_string=None) -> None:
        name, equals, reason = str(values).partition("=")
        name, reason = name.strip(), reason.strip()
        if not equals or not name or not reason:
            parser.error(
                f"--skip {values}: give the reason the campaign is left out, which the site "
                f"lists with it: --skip {name or 'CAMPAIGN'}=REASON"
            )
        skipped = dict(getattr(namespace, self.dest) or {})
        if name in skipped and skipped[name] != reason:
            parser.error(f"--skip {name}: given twice with different reasons")
        skipped[name] = reason
        setattr(namespace, self.dest, skipped)


class _PrintVersion(argparse.Action):
    """``--version``, looked up only when asked (reading the package metadata would cost
    every other command a few tens of milliseconds)."""

    def __call__(self, parser, namespace, values, option_string=None) -> None:
        print(f"sitegen {installed_version()}")
        parser.exit()


def _import_formats():
    from sitegen.importers.formats import FORMATS

    return FORMATS


def _engines_epilog() -> str:
    """The registered engines, for ``measure --help`` (the registry imports no engine)."""
    from sitegen.engine.engines import ENGINES

    return "engines (a plan's engine; `sitegen engines` says more):\n" + "".join(
        f"  {entry.id:<18} {entry.description}"
        + ("" if entry.publishable else " (never published)")
        + "\n"
        for entry in ENGINES.values()
    )


def installed_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("sitegen")
    except PackageNotFoundError:  # run from a checkout that was never installed
        return "unknown (not installed)"


def main(argv: list[str] | None = None, exit_at_once: bool = False) -> int:
    """Run one command; its exit status. ``exit_at_once`` (the console command): after a
    build or check, end the process at once (``exit_without_teardown``)."""
    parser = argparse.ArgumentParser(prog="sitegen", description=__doc__.splitlines()[0])
    parser.add_argument("--debug", action="store_true", help="show tracebacks")
    parser.add_argument(
        "--version", action=_PrintVersion, nargs=0, help="print the installed version and exit"
    )
    commands = parser.add_subparsers(dest="command", required=True)

    init = commands.add_parser(
        "init", help="create a project: mkdocs.yml, an example plan, a Pages workflow"
    )
    init.add_argument("directory", type=Path, metavar="DIR", help="new (or empty) directory")
    init.set_defaults(func=_init)

    measure = commands.add_parser(
        "measure",
        help="run campaigns: every plan in the project's plans/ (default: the built-in demo)",
        description="Run every planned trial that has no ok record yet, appending one record "
        "per attempt to data/campaigns/<name>-<hash>/records.jsonl.",
        epilog=f"{_engines_epilog()}\n{MEASURE_EPILOG}",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    measure.add_argument("--plan", type=Path, help="plan file (YAML, TOML or JSON)")
    measure.add_argument(
        "--fleet",
        type=Path,
        help="fleet plan: campaigns run on the nodes of a Ray cluster (pip install "
        "'sitegen[fleet]'), their records appended here; without preflight (each node's "
        "engine failures are records)",
    )
    measure.add_argument(
        "--address",
        help="Ray cluster of --fleet: ray://HOST:PORT, HOST:PORT or auto (default: a local "
        "Ray instance on this machine)",
    )
    measure.add_argument("--data", type=Path, default=Path("data"), help="data directory")
    measure.add_argument(
        "--dry-run",
        action="store_true",
        help="print the planned trials (per condition and input, run order, seeds) and the "
        "preflight result, then stop: nothing is measured or created (exit 0 when preflight "
        "passes, else 2)",
    )
    measure.set_defaults(func=_measure)

    build = commands.add_parser("build", help="validate records and render the site")
    build.add_argument("--data", type=Path, default=Path("data"), help="data directory")
    build.add_argument("--site", type=Path, default=Path("site"), help="output directory")
    build.add_argument(
        "--project",
        type=Path,
        default=Path("."),
        help="project directory (its mkdocs.yml, content/, theme/; `sitegen init` makes one)",
    )
    build.add_argument(
        "--version",
        help="label of the published version (default: date of the latest record, YYYY-MM-DD); "
        "a published version is never changed",
    )
    _add_skip(build)
    build.set_defaults(func=_build)

    check = commands.add_parser("check", help="run every validation without writing a site")
    check.add_argument("--data", type=Path, default=Path("data"), help="data directory")
    check.add_argument(
        "--project", type=Path, default=Path("."), help="project directory (with mkdocs.yml)"
    )
    check.add_argument(
        "--strict",
        action="store_true",
        help="fail (exit code 1) on warnings too, as a CI gate before publishing",
    )
    _add_skip(check)
    check.set_defaults(func=_check)

    verify = commands.add_parser(
        "verify", help="re-hash campaign directories against their manifest.json"
    )
    verify.add_argument("campaigns", type=Path, nargs="+", metavar="DIR", help="campaign directory")
    verify.add_argument(
        "--project",
        type=Path,
        default=Path("."),
        help="project whose keys/signing.pub every manifest must be signed with (if it has one)",
    )
    verify.set_defaults(func=_verify)

    imports = commands.add_parser(
        "import",
        help="publish results another tool measured ("
        + ", ".join(_import_formats())
        + ") or a published sitegen report",
        description="Import the output files of a benchmark tool as a campaign under "
        "data/campaigns/NAME/, with what DECL.yaml declares about them (hardware, engine, "
        "model, which source group is which condition). Nothing the files lack is filled "
        "in; the pages say what was not recorded.",
        epilog="formats:\n"
        + "\n".join(f"  {name:<12} {fmt.reads}" for name, fmt in _import_formats().items())
        + "\n  sitegen      a published report's downloads records.jsonl.gz, plan.json and "
        "manifest.json\n               (no --declare: the plan is the declaration)",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    imports.add_argument(
        "format", choices=[*_import_formats(), "sitegen"], metavar="FORMAT", help="see below"
    )
    imports.add_argument("files", type=Path, nargs="+", metavar="FILE", help="the tool's output")
    imports.add_argument(
        "--declare", type=Path, metavar="DECL.yaml", help="what the files do not say"
    )
    imports.add_argument(
        "--campaign", required=True, metavar="NAME", help="the new campaign's name (its address)"
    )
    imports.add_argument("--data", type=Path, default=Path("data"), help="data directory")
    imports.set_defaults(func=_import)

    audit = commands.add_parser(
        "audit",
        help="recompute a published version's figures from its own downloads and compare",
        description="Check a published report with nothing but this package: the site's and "
        "the version's signed lists of files (every page, script, style, chart, object and "
        "marked figure), each report's SHA256SUMS and its signature, the campaign rebuilt "
        "from its downloads, every figure a page marks recomputed and compared to the "
        "printed digit, and every derived table (CSV, Parquet) recomputed and compared.",
        epilog="exit status:\n"
        f"  {EXIT_OK}    everything matches\n"
        f"  {EXIT_AUDIT_MISMATCH}    a file, figure, table cell, checksum or signature does "
        "not match, or the key is not the pinned one (one line each)\n"
        f"  {EXIT_USAGE}    no site or version there (nothing checked)",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    audit.add_argument(
        "site", metavar="SITE_DIR_OR_URL", help="a site directory or its http(s):// address"
    )
    audit.add_argument("--version", help="version label (default: the one aliased latest)")
    audit.add_argument(
        "--key",
        metavar="FINGERPRINT",
        help="the publisher's key fingerprint (sha256:…, from the publisher, not the site): "
        "a site signed by any other key, or by none, fails",
    )
    audit.add_argument(
        "--deadline",
        type=float,
        metavar="SECONDS",
        help="all reads of the audit end within this (default: half an hour)",
    )
    audit.set_defaults(func=_audit)

    keys = commands.add_parser("keys", help="signing keys: create a key pair, sign campaigns")
    key_commands = keys.add_subparsers(dest="keys_command", required=True)
    keys_init = key_commands.add_parser(
        "init",
        help="create an Ed25519 key pair: the private key in your config directory, the "
        "public key in the project's keys/signing.pub (its fingerprint declared in mkdocs.yml); "
        "sign the campaigns under --data",
    )
    keys_init.add_argument("--project", type=Path, default=Path("."), help="project directory")
    keys_init.add_argument(
        "--key-dir", type=Path, help="where the private key goes (default: ~/.config/sitegen/keys)"
    )
    keys_init.add_argument(
        "--data",
        type=Path,
        default=Path("data"),
        help="data directory whose campaigns are signed with the new key",
    )
    keys_init.set_defaults(func=_keys_init)
    keys_sign = key_commands.add_parser(
        "sign",
        help="sign campaigns measured before the project had a key (once; the date is kept)",
    )
    keys_sign.add_argument("campaigns", type=Path, nargs="+", metavar="DIR")
    keys_sign.add_argument("--project", type=Path, default=Path("."), help="project directory")
    keys_sign.set_defaults(func=_keys_sign)

    engines = commands.add_parser("engines", help="list the registered engines")
    engines.set_defaults(func=_engines)

    schema = commands.add_parser("schema", help="write the JSON Schemas of plans and records")
    schema.add_argument("--out", type=Path, default=Path("schema"), help="output directory")
    schema.set_defaults(func=_schema)

    serve = commands.add_parser("serve", help="serve the built site on 127.0.0.1 for a preview")
    serve.add_argument("--site", type=Path, default=Path("site"), help="built site directory")
    serve.add_argument("--port", type=int, default=8000, help="port (0: any free port)")
    serve.set_defaults(func=_serve)

    args = parser.parse_args(argv)
    try:
        code = args.func(args)
    except SitegenError as exc:
        if args.debug:
            raise
        print(f"error: {exc}", file=sys.stderr)
        if isinstance(exc, UsageError):
            return EXIT_USAGE
        return EXIT_MEASURE_REFUSED if args.func is _measure else EXIT_ERROR
    except KeyboardInterrupt:
        print("interrupted; run the same command again to resume", file=sys.stderr)
        return EXIT_INTERRUPTED
    if exit_at_once and args.func in (_build, _check):
        exit_without_teardown(code or EXIT_OK)
    return code or EXIT_OK


def exit_without_teardown(code: int) -> NoReturn:
    """End the process once its output is flushed, without Python freeing each of its
    objects: after a build that teardown of pandas', mkdocs' and pydantic's objects takes
    some 0.4 s, a tenth of a small build (mypy's fast exit does the same). Only after
    commands that leave no thread, child process or temporary file behind (the exit
    handlers this skips would have nothing to do)."""
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


def run() -> NoReturn:
    """The ``sitegen`` console command."""
    sys.exit(main(exit_at_once=True))


if __name__ == "__main__":
    run()
