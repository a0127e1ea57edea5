"""Command line: a thin shell over importable functions.

This module parses the arguments and hands them to the subcommand's function, one module
per subcommand in ``sitegen.commands`` (``measure_command``, ``build_command`` …). Every
``SitegenError`` is printed here as its message with exit code 1 (``measure``, and an
argument naming what is not there: 2; ``--debug`` shows the traceback); heavy modules are
imported inside the commands.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import NoReturn

from sitegen.commands.audit_command import audit
from sitegen.commands.build_command import build
from sitegen.commands.check_command import check
from sitegen.commands.engines_command import list_engines
from sitegen.commands.exit_status import (
    EXIT_AUDIT_MISMATCH,
    EXIT_ERROR,
    EXIT_INTERRUPTED,
    EXIT_MEASURE_INCOMPLETE,
    EXIT_MEASURE_REFUSED,
    EXIT_OK,
    EXIT_USAGE,
)
from sitegen.commands.import_command import import_files
from sitegen.commands.init_command import init
from sitegen.commands.keys_command import keys_init, keys_sign
from sitegen.commands.measure_command import measure
from sitegen.commands.package_version import installed_version
from sitegen.commands.schema_command import write_schemas
from sitegen.commands.serve_command import serve
from sitegen.commands.verify_command import verify
from sitegen.core.errors import SitegenError, UsageError

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


def make_parser() -> argparse.ArgumentParser:
    """``sitegen``'s arguments: one ``_add_<command>`` per subcommand, in the order its
    help lists them, each naming the function that runs it (``func``)."""
    parser = argparse.ArgumentParser(prog="sitegen", description=__doc__.splitlines()[0])
    parser.add_argument("--debug", action="store_true", help="show tracebacks")
    parser.add_argument(
        "--version", action=_PrintVersion, nargs=0, help="print the installed version and exit"
    )
    commands = parser.add_subparsers(dest="command", required=True)
    for add in (
        _add_init,
        _add_measure,
        _add_build,
        _add_check,
        _add_verify,
        _add_import,
        _add_audit,
        _add_keys,
        _add_engines,
        _add_schema,
        _add_serve,
    ):
        add(commands)
    return parser


def _add_init(commands) -> None:
    init_parser = commands.add_parser(
        "init", help="create a project: mkdocs.yml, an example plan, a Pages workflow"
    )
    init_parser.add_argument("directory", type=Path, metavar="DIR", help="new (or empty) directory")
    init_parser.set_defaults(func=init)


def _add_measure(commands) -> None:
    measure_parser = commands.add_parser(
        "measure",
        help="run campaigns: every plan in the project's plans/ (default: the built-in demo)",
        description="Run every planned trial that has no ok record yet, appending one record "
        "per attempt to data/campaigns/<name>-<hash>/records.jsonl.",
        epilog=f"{_engines_epilog()}\n{MEASURE_EPILOG}",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    measure_parser.add_argument("--plan", type=Path, help="plan file (YAML, TOML or JSON)")
    measure_parser.add_argument(
        "--fleet",
        type=Path,
        help="fleet plan: campaigns run on the nodes of a Ray cluster (pip install "
        "'sitegen[fleet]'), their records appended here; without preflight (each node's "
        "engine failures are records)",
    )
    measure_parser.add_argument(
        "--address",
        help="Ray cluster of --fleet: ray://HOST:PORT, HOST:PORT or auto (default: a local "
        "Ray instance on this machine)",
    )
    measure_parser.add_argument("--data", type=Path, default=Path("data"), help="data directory")
    measure_parser.add_argument(
        "--new-campaign",
        action="store_true",
        help="register a new campaign of each plan even though one exists: the next "
        "campaign of a series (plans that declare series: {factor: ...}; without it, "
        "measure resumes the series' latest campaign)",
    )
    measure_parser.add_argument(
        "--dry-run",
        action="store_true",
        help="print the planned trials (per condition and input, run order, seeds) and the "
        "preflight result, then stop: nothing is measured or created (exit 0 when preflight "
        "passes, else 2)",
    )
    measure_parser.set_defaults(func=measure)


def _add_build(commands) -> None:
    build_parser = commands.add_parser("build", help="validate records and render the site")
    build_parser.add_argument("--data", type=Path, default=Path("data"), help="data directory")
    build_parser.add_argument("--site", type=Path, default=Path("site"), help="output directory")
    build_parser.add_argument(
        "--project",
        type=Path,
        default=Path("."),
        help="project directory (its mkdocs.yml, content/, theme/; `sitegen init` makes one)",
    )
    build_parser.add_argument(
        "--version",
        help="label of the published version (default: date of the latest record, YYYY-MM-DD); "
        "a published version is never changed",
    )
    _add_skip(build_parser)
    build_parser.set_defaults(func=build)


def _add_check(commands) -> None:
    check_parser = commands.add_parser("check", help="run every validation without writing a site")
    check_parser.add_argument("--data", type=Path, default=Path("data"), help="data directory")
    check_parser.add_argument(
        "--project", type=Path, default=Path("."), help="project directory (with mkdocs.yml)"
    )
    check_parser.add_argument(
        "--strict",
        action="store_true",
        help="fail (exit code 1) on warnings too, as a CI gate before publishing",
    )
    _add_skip(check_parser)
    check_parser.set_defaults(func=check)


def _add_verify(commands) -> None:
    verify_parser = commands.add_parser(
        "verify", help="re-hash campaign directories against their manifest.json"
    )
    verify_parser.add_argument(
        "campaigns", type=Path, nargs="+", metavar="DIR", help="campaign directory"
    )
    verify_parser.add_argument(
        "--project",
        type=Path,
        default=Path("."),
        help="project whose keys/signing.pub every manifest must be signed with (if it has one)",
    )
    verify_parser.set_defaults(func=verify)


def _add_import(commands) -> None:
    import_parser = commands.add_parser(
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
    import_parser.add_argument(
        "format", choices=[*_import_formats(), "sitegen"], metavar="FORMAT", help="see below"
    )
    import_parser.add_argument(
        "files", type=Path, nargs="+", metavar="FILE", help="the tool's output"
    )
    import_parser.add_argument(
        "--declare", type=Path, metavar="DECL.yaml", help="what the files do not say"
    )
    import_parser.add_argument(
        "--campaign", required=True, metavar="NAME", help="the new campaign's name (its address)"
    )
    import_parser.add_argument("--data", type=Path, default=Path("data"), help="data directory")
    import_parser.set_defaults(func=import_files)


def _add_audit(commands) -> None:
    audit_parser = commands.add_parser(
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
    audit_parser.add_argument(
        "site", metavar="SITE_DIR_OR_URL", help="a site directory or its http(s):// address"
    )
    audit_parser.add_argument("--version", help="version label (default: the one aliased latest)")
    audit_parser.add_argument(
        "--key",
        metavar="FINGERPRINT",
        help="the publisher's key fingerprint (sha256:…, from the publisher, not the site): "
        "a site signed by any other key, or by none, fails",
    )
    audit_parser.add_argument(
        "--deadline",
        type=float,
        metavar="SECONDS",
        help="all reads of the audit end within this (default: half an hour)",
    )
    audit_parser.set_defaults(func=audit)


def _add_keys(commands) -> None:
    keys = commands.add_parser("keys", help="signing keys: create a key pair, sign campaigns")
    key_commands = keys.add_subparsers(dest="keys_command", required=True)
    init_parser = key_commands.add_parser(
        "init",
        help="create an Ed25519 key pair: the private key in your config directory, the "
        "public key in the project's keys/signing.pub (its fingerprint declared in mkdocs.yml); "
        "sign the campaigns under --data",
    )
    init_parser.add_argument("--project", type=Path, default=Path("."), help="project directory")
    init_parser.add_argument(
        "--key-dir", type=Path, help="where the private key goes (default: ~/.config/sitegen/keys)"
    )
    init_parser.add_argument(
        "--data",
        type=Path,
        default=Path("data"),
        help="data directory whose campaigns are signed with the new key",
    )
    init_parser.set_defaults(func=keys_init)
    sign_parser = key_commands.add_parser(
        "sign",
        help="sign campaigns measured before the project had a key (once; the date is kept)",
    )
    sign_parser.add_argument("campaigns", type=Path, nargs="+", metavar="DIR")
    sign_parser.add_argument("--project", type=Path, default=Path("."), help="project directory")
    sign_parser.set_defaults(func=keys_sign)


def _add_engines(commands) -> None:
    engines_parser = commands.add_parser("engines", help="list the registered engines")
    engines_parser.set_defaults(func=list_engines)


def _add_schema(commands) -> None:
    schema_parser = commands.add_parser(
        "schema", help="write the JSON Schemas of plans and records"
    )
    schema_parser.add_argument("--out", type=Path, default=Path("schema"), help="output directory")
    schema_parser.set_defaults(func=write_schemas)


def _add_serve(commands) -> None:
    serve_parser = commands.add_parser(
        "serve", help="serve the built site on 127.0.0.1 for a preview"
    )
    serve_parser.add_argument(
        "--site", type=Path, default=Path("site"), help="built site directory"
    )
    serve_parser.add_argument("--port", type=int, default=8000, help="port (0: any free port)")
    serve_parser.set_defaults(func=serve)


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
    """``--version``, looked up only when asked (reading the package metadata would slow
    the start of every other command)."""

    def __call__(self, parser, namespace, values, option_string=None) -> None:
        print(f"sitegen {installed_version()}")
        parser.exit()


def _import_formats():
    from sitegen.importers.formats import FORMATS

    return FORMATS


def _engines_epilog() -> str:
    """The registered engines, for ``measure --help`` (the registry imports no engine)."""
    from sitegen.plan.engine_registry import ENGINES

    return "engines (a plan's engine; `sitegen engines` says more):\n" + "".join(
        f"  {entry.id:<18} {entry.description}"
        + ("" if entry.publishable else " (never published)")
        + "\n"
        for entry in ENGINES.values()
    )


def main(argv: list[str] | None = None, exit_at_once: bool = False) -> int:
    """Run one command; its exit status. ``exit_at_once`` (the console command): after a
    build or check, end the process at once (``exit_without_teardown``)."""
    args = make_parser().parse_args(argv)
    try:
        code = args.func(args)
    except SitegenError as exc:
        if args.debug:
            raise
        print(f"error: {exc}", file=sys.stderr)
        if isinstance(exc, UsageError):
            return EXIT_USAGE
        return EXIT_MEASURE_REFUSED if args.func is measure else EXIT_ERROR
    except KeyboardInterrupt:
        print("interrupted; run the same command again to resume", file=sys.stderr)
        return EXIT_INTERRUPTED
    if exit_at_once and args.func in (build, check):
        exit_without_teardown(code or EXIT_OK)
    return code or EXIT_OK


def exit_without_teardown(code: int) -> NoReturn:
    """End the process once its output is flushed, without Python freeing each of its
    objects: after a build, tearing down pandas', mkdocs' and pydantic's objects one by one
    is time no one waits for (mypy's fast exit does the same). Only after
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
