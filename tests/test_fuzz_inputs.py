"""No traceback for any file a user gives (issue 38): a seeded fuzz of every file sitegen
reads from its user, each mutated input driven through the command a user would run.

A mutator of this module's own (``Mutator``, a fixed seed: the same inputs every run)
bends the real files: plans (YAML, JSON and TOML), an import declaration, every import
format's fixture, a project's ``mkdocs.yml``, a content page, a catalog override and
``content/sources.yaml``. It flips bits, truncates, re-encodes (latin-1, UTF-16, random
bytes, BOMs), nests ``[[[[…]]]]`` and ``{a: {a: …}}`` thousands deep, writes numbers past
a float's range (``1e400``, ``10**400``), NaN and Infinity, very long lines and NUL bytes,
swaps a value for one of another type, adds YAML alias bombs ("billion laughs") and
duplicate keys. Each input runs through ``sitegen.cli.main`` in this process (``import``,
``measure --dry-run``, ``check``) and must end with an exit status (0, or non-zero with
its message): an exception that escapes ``main`` (``SystemExit`` aside), a traceback in
the output, more than ``TIME_LIMIT_S`` for one input or more than ``MEMORY_LIMIT_MB`` of
peak memory growth is a failure, listed with its input.

``python -m tests.test_fuzz_inputs`` runs every input and prints the counts (tracebacks
by exception type, the slowest input).
"""

from __future__ import annotations

import contextlib
import gzip
import io
import json
import random
import resource
import shutil
import signal
import sys
import time
import traceback
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import yaml

from sitegen.cli import main
from tests.importers.sources import DECLARED, FIXTURES

SEED = 38
"""The one seed: every run fuzzes the same inputs."""
TIME_LIMIT_S = 10.0
"""The longest one input may take (a watchdog interrupts it)."""
MEMORY_LIMIT_MB = 1024
"""The most the process's peak memory may grow while one input runs: no runaway (an alias
bomb or an unbounded read takes gigabytes). The worst seen: 725 MB importing a llama-bench
JSON file with one 20-million-character value (60 MB), about 12 times the file."""
REPOSITORY = Path(__file__).resolve().parents[1]
PACKAGED = REPOSITORY / "sitegen" / "defaults"

# Inputs per target (at least 2,000 in all: ``test_at_least_two_thousand_inputs``).
IMPORT_INPUTS = 150
"""Per import source file (7 files of 5 formats)."""
DECLARATION_INPUTS = 250
PLAN_INPUTS = 200
"""Per plan syntax (YAML, JSON, TOML)."""
PROJECT_INPUTS = {"mkdocs.yml": 40, "content": 25, "catalog": 25, "sources": 15}
"""``sitegen check`` renders every page when the mutated file still passes: ~1 s each."""


class Hang(BaseException):
    """Raised by the watchdog in an input that ran past ``TIME_LIMIT_S``."""


# The mutator ------------------------------------------------------------------------------


class Mutator:
    """Seeded mutations of a file's bytes; ``syntax`` (yaml, json, jsonl, toml, csv, md)
    chooses the structured ones."""

    def __init__(self, seed: int) -> None:
        self.random = random.Random(seed)

    def __call__(self, data: bytes, syntax: str) -> tuple[str, bytes]:
        """One mutation of ``data``: its name and the mutated bytes."""
        structured = {
            "yaml": [self.deep_yaml, self.alias_bomb, self.duplicate_key, self.wrong_type],
            "json": [self.deep_json, self.wrong_type, self.duplicate_key],
            "jsonl": [self.deep_json, self.wrong_type_line],
            "toml": [self.deep_toml, self.duplicate_key],
            "csv": [self.wide_field],
            "md": [self.deep_markup, self.alias_bomb],
        }[syntax]
        generic = [
            self.bit_flips,
            self.truncate,
            self.latin1,
            self.utf16,
            self.random_bytes,
            self.bom,
            self.huge_number,
            self.special_float,
            self.long_line,
            self.nul_bytes,
            self.splice,
            self.empty,
        ]
        mutation = self.random.choice(generic * 1 + structured * 2)
        mutated = mutation(data, syntax)
        # A second mutation now and then: a BOM on a deep file, bits flipped in a bomb …
        if self.random.random() < 0.15:
            mutated = self.random.choice(generic)(mutated, syntax)
        return mutation.__name__, mutated

    def _at(self, data: bytes) -> int:
        return self.random.randrange(len(data) + 1)

    def _insert(self, data: bytes, piece: bytes) -> bytes:
        at = self._at(data)
        return data[:at] + piece + data[at:]

    def bit_flips(self, data: bytes, syntax: str) -> bytes:
        flipped = bytearray(data)
        for _ in range(self.random.randint(1, 8)):
            if flipped:
                flipped[self.random.randrange(len(flipped))] ^= 1 << self.random.randrange(8)
        return bytes(flipped)

    def truncate(self, data: bytes, syntax: str) -> bytes:
        return data[: self._at(data)]

    def latin1(self, data: bytes, syntax: str) -> bytes:
        text = data.decode("utf-8", "replace")
        if text.isascii():
            text = self._insert(data, "café größe".encode()).decode("utf-8", "replace")
        return text.encode("latin-1", "replace")

    def utf16(self, data: bytes, syntax: str) -> bytes:
        return data.decode("utf-8", "replace").encode(self.random.choice(["utf-16", "utf-32"]))

    def random_bytes(self, data: bytes, syntax: str) -> bytes:
        piece = self.random.randbytes(self.random.randint(1, 64))
        if self.random.random() < 0.2:
            return piece * self.random.randint(1, 100)
        return self._insert(data, piece)

    def bom(self, data: bytes, syntax: str) -> bytes:
        return self.random.choice([b"\xef\xbb\xbf", b"\xff\xfe", b"\xfe\xff"]) + data

    def huge_number(self, data: bytes, syntax: str) -> bytes:
        number = self.random.choice(
            [
                b"1e400",
                b"-1e400",
                b"1" + b"0" * 400,
                b"-" + b"9" * 5000,
                b"1e-400",
                b"0x" + b"f" * 90,
            ]
        )
        return self._replace_number(data, number)

    def special_float(self, data: bytes, syntax: str) -> bytes:
        value = self.random.choice(
            [b"NaN", b"Infinity", b"-Infinity", b".nan", b".inf", b"nan", b"inf"]
        )
        return self._replace_number(data, value)

    def _replace_number(self, data: bytes, number: bytes) -> bytes:
        import re

        found = list(re.finditer(rb"(?<![\w.])\d+(?:\.\d+)?(?![\w.])", data))
        if not found:
            return self._insert(data, number)
        match = self.random.choice(found)
        return data[: match.start()] + number + data[match.end() :]

    def long_line(self, data: bytes, syntax: str) -> bytes:
        length = self.random.choice([10_000, 200_000, 3_000_000, 20_000_000])
        unit = self.random.choice([b"a", "語".encode(), b"x ", b"*", b"[", b"{{ ", b"|"])
        return self._insert(data, unit * (length // len(unit)))

    def nul_bytes(self, data: bytes, syntax: str) -> bytes:
        return self._insert(data, b"\x00" * self.random.randint(1, 16))

    def splice(self, data: bytes, syntax: str) -> bytes:
        """A piece of the file repeated or moved: lines out of place, a key twice."""
        start = self._at(data)
        piece = data[start : start + self.random.randint(1, 400)]
        return self._insert(data, piece * self.random.randint(1, 50))

    def empty(self, data: bytes, syntax: str) -> bytes:
        return self.random.choice([b"", b"\n", b" ", b"null", b"[]", b"{}", b"0", b"~", b"---"])

    def _depth(self) -> int:
        return self.random.choice([100, 1_000, 10_000, 100_000])

    def deep_json(self, data: bytes, syntax: str) -> bytes:
        depth = self._depth()
        if self.random.random() < 0.5:
            deep = b"[" * depth + b"1" + b"]" * depth
        else:
            deep = b'{"a":' * depth + b"1" + b"}" * depth
        return self._replace_value(data, deep) if self.random.random() < 0.7 else deep

    def deep_yaml(self, data: bytes, syntax: str) -> bytes:
        depth = self._depth()
        kind = self.random.randrange(3)
        if kind == 0:
            deep = b"[" * depth + b"1" + b"]" * depth
        elif kind == 1:
            deep = b"{a: " * depth + b"1" + b"}" * depth
        else:
            depth = min(depth, 3_000)
            deep = b"".join(b"  " * i + b"a:\n" for i in range(depth)) + b"  " * depth + b"1\n"
            return deep
        return self._replace_value(data, deep) if self.random.random() < 0.7 else deep

    def deep_toml(self, data: bytes, syntax: str) -> bytes:
        depth = self._depth()
        if self.random.random() < 0.5:
            deep = b"a = " + b"[" * depth + b"1" + b"]" * depth + b"\n"
        else:
            deep = b"a = " + b"{a = " * depth + b"1" + b"}" * depth + b"\n"
        return deep + data if self.random.random() < 0.5 else data + b"\n" + deep

    def wide_field(self, data: bytes, syntax: str) -> bytes:
        """A CSV row with a huge quoted field, an unclosed quote, or thousands of columns."""
        lines = data.splitlines(keepends=True) or [b"\n"]
        index = self.random.randrange(len(lines))
        kind = self.random.randrange(3)
        if kind == 0:
            row = b'a,"' + b"x" * self.random.choice([200_000, 5_000_000]) + b'",1\n'
        elif kind == 1:
            row = b'a,"unclosed,1,2\n'
        else:
            row = b",".join([b"1"] * 100_000) + b"\n"
        lines.insert(index, row)
        return b"".join(lines)

    def deep_markup(self, data: bytes, syntax: str) -> bytes:
        depth = min(self._depth(), 20_000)
        piece = self.random.choice(
            [b">" * depth, b"- " * depth, b"<div>" * depth, b"{{ (" * depth, b"[" * depth]
        )
        return self._insert(data, b"\n" + piece + b"\n")

    def alias_bomb(self, data: bytes, syntax: str) -> bytes:
        levels = self.random.randint(6, 12)
        lines = [b'a0: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
        for level in range(1, levels):
            refs = b",".join(b"*a%d" % (level - 1) for _ in range(9))
            lines.append(b"a%d: &a%d [%s]" % (level, level, refs))
        bomb = b"\n".join(lines) + b"\n"
        if syntax == "md":
            return b"---\n" + bomb + b"---\n" + data
        if self.random.random() < 0.5:
            return bomb + data
        # The bomb as a value the file's own keys hold.
        refs = b"*a%d" % (levels - 1)
        return bomb + self._replace_value(data, refs)

    def duplicate_key(self, data: bytes, syntax: str) -> bytes:
        lines = data.splitlines(keepends=True)
        if not lines:
            return data
        line = self.random.choice(lines)
        return data + b"\n" + line if syntax != "json" else self._json_duplicate(data)

    def _json_duplicate(self, data: bytes) -> bytes:
        stripped = data.rstrip()
        if stripped.endswith(b"}"):
            return stripped[:-1] + b', "name": 1, "name": [], "conditions": null}'
        return data

    def wrong_type(self, data: bytes, syntax: str) -> bytes:
        """A value of the parsed file swapped for one of another type, written back."""
        try:
            value = (json.loads if syntax == "json" else yaml.safe_load)(data)
        except Exception:
            return self.bit_flips(data, syntax)
        value = self._swap(value, self.random.randint(1, 3))
        if syntax == "json":
            return json.dumps(value, ensure_ascii=False).encode()
        return yaml.safe_dump(value, allow_unicode=True, sort_keys=False).encode()

    def wrong_type_line(self, data: bytes, syntax: str) -> bytes:
        lines = data.splitlines(keepends=True)
        if not lines:
            return data
        index = self.random.randrange(len(lines))
        lines[index] = self.wrong_type(lines[index], "json") + b"\n"
        return b"".join(lines)

    def _swap(self, value: object, times: int) -> object:
        for _ in range(times):
            value = self._swap_one(value)
        return value

    def _swap_one(self, value: object) -> object:
        replacements = [
            None,
            True,
            -1,
            0,
            2**70,
            1e308,
            "",
            "x" * 300,
            "語",
            [],
            [1, "a", None],
            {},
            {"a": {"b": [None]}},
        ]
        if isinstance(value, dict) and value and self.random.random() < 0.8:
            key = self.random.choice(list(value))
            value = dict(value)
            value[key] = self._swap_one(value[key])
            return value
        if isinstance(value, list) and value and self.random.random() < 0.8:
            index = self.random.randrange(len(value))
            value = list(value)
            value[index] = self._swap_one(value[index])
            return value
        return self.random.choice(replacements)

    def _replace_value(self, data: bytes, value: bytes) -> bytes:
        """``value`` in place of whatever follows a random ``key:`` (or a random spot)."""
        import re

        found = list(re.finditer(rb"(:\s*)([^\n,}\]]*)", data))
        if not found:
            return self._insert(data, value)
        match = self.random.choice(found)
        return data[: match.start(2)] + value + data[match.end(2) :]


# Running one input -----------------------------------------------------------------------


@dataclass
class Outcome:
    target: str
    mutation: str
    seconds: float
    failure: str | None = None
    """The exception type (or ``hang``, ``memory``, ``printed traceback``); None: passed."""
    detail: str = ""


@dataclass
class Tally:
    outcomes: list[Outcome] = field(default_factory=list)

    def failures(self) -> list[Outcome]:
        return [o for o in self.outcomes if o.failure]

    def report(self) -> str:
        slowest = max(self.outcomes, key=lambda o: o.seconds)
        kinds = Counter(o.failure for o in self.failures())
        lines = [
            f"{len(self.outcomes)} input(s), {len(self.failures())} failure(s) {dict(kinds)}; "
            f"slowest {slowest.seconds:.2f} s ({slowest.target}, {slowest.mutation})"
        ]
        lines += [f"  {o.target} {o.mutation}: {o.failure}: {o.detail}" for o in self.failures()]
        return "\n".join(lines)


def _alarm(signum, frame) -> None:
    raise Hang(f"ran past {TIME_LIMIT_S} s")


@contextlib.contextmanager
def _watchdog() -> Iterator[None]:
    previous = signal.signal(signal.SIGALRM, _alarm)
    signal.setitimer(signal.ITIMER_REAL, TIME_LIMIT_S)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def run_input(target: str, mutation: str, argv: list[str]) -> Outcome:
    """``sitegen ARGV`` in this process, judged: an exit status and no traceback, in time
    and memory."""
    out, err = io.StringIO(), io.StringIO()
    peak = _peak_mb()
    started = time.monotonic()
    failure, detail = None, ""
    try:
        with _watchdog(), contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                code = main(argv)
            except SystemExit as exc:  # argparse refusing an argument
                code = exc.code
    except Hang:
        failure, detail = "hang", f"past {TIME_LIMIT_S} s"
    except BaseException as exc:  # noqa: BLE001 (what escaped main is the finding)
        failure = type(exc).__name__
        frame = traceback.extract_tb(exc.__traceback__)[-1]
        detail = f"{str(exc)[:200]!r} at {Path(frame.filename).name}:{frame.lineno}"
    else:
        printed = out.getvalue() + err.getvalue()
        if "Traceback (most recent call last)" in printed or "internal error" in printed:
            failure, detail = "printed traceback", printed[-300:]
        elif code not in (0, 1, 2, 3):
            failure, detail = "exit status", repr(code)
        elif code != 0 and not err.getvalue().strip():
            failure, detail = "silent refusal", f"exit {code} with nothing on stderr"
    seconds = time.monotonic() - started
    grown = _peak_mb() - peak
    if failure is None and grown > MEMORY_LIMIT_MB:
        failure, detail = "memory", f"peak grew {grown:.0f} MB"
    return Outcome(target, mutation, seconds, failure, detail)


# The targets -----------------------------------------------------------------------------

IMPORT_SOURCES = [
    # format, the file as given, the fixture, syntax, the declaration's conditions
    (
        "guidellm",
        "benchmarks.json.gz",
        "guidellm/benchmarks.json.gz",
        "json",
        "  - {id: c1, label: {ja: a, en: a}, speculative: {mode: off}, "
        "sources: [{file: benchmarks.json.gz, group: 'benchmarks[0]'}]}\n"
        "  - {id: c2, label: {ja: b, en: b}, speculative: {mode: off}, "
        "sources: [{file: benchmarks.json.gz, group: 'benchmarks[1]'}]}\n",
    ),
    (
        "vllm",
        "vllm-serve.json",
        "vllm/vllm-serve.json",
        "json",
        "  - {id: c1, label: {ja: a, en: a}, speculative: {mode: off}, "
        "sources: [{file: vllm-serve.json}]}\n",
    ),
    (
        "aiperf",
        "profile_export.jsonl",
        "aiperf/profile_export.jsonl",
        "jsonl",
        "  - {id: c1, label: {ja: a, en: a}, speculative: {mode: off}, "
        "sources: [{file: profile_export.jsonl}]}\n",
    ),
    (
        "aiperf",
        "profile_export_aiperf.json",
        "aiperf/profile_export_aiperf.json",
        "json",
        "  - {id: c1, label: {ja: a, en: a}, speculative: {mode: off}, "
        "sources: [{file: profile_export.jsonl}]}\n",
    ),
    (
        "llama-bench",
        "llama-bench.json",
        "llama-bench/llama-bench.json",
        "json",
        "  - {id: t1, label: {ja: a, en: a}, speculative: {mode: off}, "
        "sources: [{file: llama-bench.json, group: n_threads=1}]}\n"
        "  - {id: t2, label: {ja: b, en: b}, speculative: {mode: off}, "
        "sources: [{file: llama-bench.json, group: n_threads=2}]}\n",
    ),
    (
        "llama-bench",
        "llama-bench.jsonl",
        "llama-bench/llama-bench.jsonl",
        "jsonl",
        "  - {id: t1, label: {ja: a, en: a}, speculative: {mode: off}, "
        "sources: [{file: llama-bench.jsonl, group: n_threads=1}]}\n"
        "  - {id: t2, label: {ja: b, en: b}, speculative: {mode: off}, "
        "sources: [{file: llama-bench.jsonl, group: n_threads=2}]}\n",
    ),
    (
        "csv",
        "requests.csv",
        "csv/requests.csv",
        "csv",
        "  - {id: s1, label: {ja: a, en: a}, speculative: {mode: off}, "
        "sources: [{file: requests.csv, group: streams-1}]}\n"
        "  - {id: s2, label: {ja: b, en: b}, speculative: {mode: off}, "
        "sources: [{file: requests.csv, group: streams-2}]}\n"
        "csv:\n  columns:\n    group: {column: config}\n"
        "    ttft_s: {column: first_token_latency, unit: ms}\n"
        "    output_tokens: {column: completion_tokens}\n    error: {column: error}\n",
    ),
]


def _declaration(conditions: str) -> bytes:
    """The fixtures' declaration: ``conditions`` as YAML list items (and what follows)."""
    first = conditions.split("id: ", 1)[1].split(",", 1)[0]
    head, _, tail = conditions.partition("csv:\n")
    return (
        f"{DECLARED}conditions:\n{head}baseline: {first}\n" + (f"csv:\n{tail}" if tail else "")
    ).encode()


def _fixture_bytes(relative: str) -> bytes:
    data = (FIXTURES / relative).read_bytes()
    return gzip.decompress(data) if relative.endswith(".gz") else data


def import_inputs(
    workdir: Path, mutate: Mutator, per_file: int
) -> Iterator[tuple[str, str, list[str]]]:
    """Each import source mutated ``per_file`` times, imported with its real declaration
    (and the other files of a two-file format as they are)."""
    workdir.mkdir(parents=True, exist_ok=True)
    for fmt, name, relative, syntax, conditions in IMPORT_SOURCES:
        declaration = workdir / f"{fmt}-{name}.decl.yaml"
        declaration.write_bytes(_declaration(conditions))
        # AIPerf's two files go together; llama-bench's JSON and JSON Lines are one run.
        files = [n for f, n, *_ in IMPORT_SOURCES if f == fmt] if fmt == "aiperf" else [name]
        for index in range(per_file):
            source = workdir / "in" / name
            source.parent.mkdir(exist_ok=True)
            mutation, data = mutate(_fixture_bytes(relative), syntax)
            if name.endswith(".gz"):
                data = gzip.compress(data) if mutate.random.random() < 0.8 else data
            source.write_bytes(data)
            for other in files:
                if other != name:
                    other_relative = next(r for f, n, r, *_ in IMPORT_SOURCES if n == other)
                    (workdir / "in" / other).write_bytes(_fixture_bytes(other_relative))
            argv = [
                "import",
                fmt,
                *(str(workdir / "in" / n) for n in files),
                "--declare",
                str(declaration),
                "--campaign",
                f"{fmt}-{index}",
                "--data",
                str(workdir / "data"),
            ]
            yield f"import {fmt} {name}", mutation, argv


def declaration_inputs(
    workdir: Path, mutate: Mutator, count: int
) -> Iterator[tuple[str, str, list[str]]]:
    """The vLLM fixture with its declaration mutated ``count`` times."""
    source = workdir / "vllm-serve.json"
    source.write_bytes(_fixture_bytes("vllm/vllm-serve.json"))
    fmt, _, _, _, conditions = IMPORT_SOURCES[1]
    seed = _declaration(conditions.replace("vllm-serve.json", str(source)))
    for index in range(count):
        mutation, data = mutate(seed, "yaml")
        declaration = workdir / "decl.yaml"
        declaration.write_bytes(data)
        argv = ["import", fmt, str(source), "--declare", str(declaration)]
        argv += ["--campaign", f"decl-{index}", "--data", str(workdir / "data")]
        yield "import declaration", mutation, argv


def _plan_seed(syntax: str) -> bytes:
    plan = yaml.safe_load((PACKAGED / "init" / "example.yaml").read_bytes())
    if syntax == "yaml":
        return (PACKAGED / "init" / "example.yaml").read_bytes()
    if syntax == "json":
        return json.dumps(plan, ensure_ascii=False, indent=2).encode()
    return _toml(plan).encode()


def _toml(value: dict, prefix: str = "") -> str:
    """A plan as TOML (the subset the example plan needs: tables, arrays of tables)."""
    scalars, tables, arrays = [], [], []
    for key, item in value.items():
        if isinstance(item, dict):
            tables.append((key, item))
        elif isinstance(item, list) and item and all(isinstance(i, dict) for i in item):
            arrays.append((key, item))
        else:
            scalars.append(f"{key} = {json.dumps(item, ensure_ascii=False)}")
    text = "\n".join(scalars) + "\n"
    for key, item in tables:
        text += f"\n[{prefix}{key}]\n" + _toml(item, f"{prefix}{key}.")
    for key, items in arrays:
        for item in items:
            text += f"\n[[{prefix}{key}]]\n" + _toml(item, f"{prefix}{key}.")
    return text


def plan_inputs(workdir: Path, mutate: Mutator, count: int) -> Iterator[tuple[str, str, list[str]]]:
    """The example plan in each syntax, mutated ``count`` times, checked by
    ``measure --dry-run`` (preflight answers without an engine: ``_no_engines``)."""
    for syntax in ("yaml", "json", "toml"):
        seed = _plan_seed(syntax)
        for _ in range(count):
            mutation, data = mutate(seed, syntax)
            plan = workdir / f"plan.{syntax}"
            plan.write_bytes(data)
            argv = ["measure", "--plan", str(plan), "--dry-run", "--data", str(workdir / "data")]
            yield f"plan .{syntax}", mutation, argv


CATALOG_SEED = """\
# The project's own interface labels (docs/project.md, "Catalog strings").
overview.table: "Every campaign of the demo"
changelog.title: "Changes to the demo"
"""


def project_inputs(
    project: Path, data: Path, mutate: Mutator, counts: dict[str, int]
) -> Iterator[tuple[str, str, list[str]]]:
    """``sitegen check`` of a project with one of its files mutated (the others as they
    were): mkdocs.yml, a content page (the home page, a report page), a catalog override,
    content/sources.yaml."""
    targets = {
        "mkdocs.yml": [(project / "mkdocs.yml", "yaml")],
        "content": [
            (project / "content" / "ja" / "index.md", "md"),
            (project / "content" / "en" / "report" / "speed.md", "md"),
        ],
        "catalog": [
            (project / "theme" / "i18n" / "en.yml", "yaml"),
            (project / "theme" / "i18n" / "ja.yml", "yaml"),
        ],
        "sources": [(project / "content" / "sources.yaml", "yaml")],
    }
    seeds = {
        project / "mkdocs.yml": (REPOSITORY / "mkdocs.yml").read_bytes(),
        project / "content" / "ja" / "index.md": (PACKAGED / "content/ja/index.md").read_bytes(),
        project / "content" / "en" / "report" / "speed.md": (
            PACKAGED / "content/en/report/speed.md"
        ).read_bytes(),
        project / "theme" / "i18n" / "en.yml": CATALOG_SEED.encode(),
        project / "theme" / "i18n" / "ja.yml": CATALOG_SEED.encode(),
        project / "content" / "sources.yaml": (REPOSITORY / "content/sources.yaml").read_bytes(),
    }
    for path, seed in seeds.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(seed)
    argv = ["check", "--data", str(data), "--project", str(project)]
    for target, files in targets.items():
        for index in range(counts[target]):
            path, syntax = files[index % len(files)]
            mutation, mutated = mutate(seeds[path], syntax)
            path.write_bytes(mutated)
            try:
                yield f"check {path.relative_to(project)}", mutation, argv
            finally:
                path.write_bytes(seeds[path])


# The tests -------------------------------------------------------------------------------


class _NoEngines:
    """What preflight finds without an engine: a refusal, so that nothing is created."""

    def __init__(self, plan) -> None:
        self.plan, self.warnings, self.problems = plan, [], ["no engine in the fuzz test"]

    def close(self) -> None:
        pass


def _no_engines(plan, on_wait=None) -> _NoEngines:
    return _NoEngines(plan)


def fuzz(inputs: Iterator[tuple[str, str, list[str]]], tally: Tally) -> Tally:
    for target, mutation, argv in inputs:
        tally.outcomes.append(run_input(target, mutation, argv))
    return tally


def _assert_clean(tally: Tally, expected: int) -> None:
    assert len(tally.outcomes) == expected
    assert not tally.failures(), tally.report()


def test_every_import_source_and_declaration(tmp_path: Path) -> None:
    mutate = Mutator(SEED)
    tally = fuzz(import_inputs(tmp_path, mutate, IMPORT_INPUTS), Tally())
    fuzz(declaration_inputs(tmp_path, mutate, DECLARATION_INPUTS), tally)
    _assert_clean(tally, IMPORT_INPUTS * len(IMPORT_SOURCES) + DECLARATION_INPUTS)


def test_every_plan_syntax(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("sitegen.measure.preflight.preflight", _no_engines)
    tally = fuzz(plan_inputs(tmp_path, Mutator(SEED + 1), PLAN_INPUTS), Tally())
    _assert_clean(tally, PLAN_INPUTS * 3)


def test_every_project_file(tmp_path: Path) -> None:
    from tests.sitefixtures import copy_project, publishable_campaign

    publishable_campaign(tmp_path / "data")
    project = copy_project(tmp_path / "project")
    tally = fuzz(
        project_inputs(project, tmp_path / "data", Mutator(SEED + 2), PROJECT_INPUTS), Tally()
    )
    _assert_clean(tally, sum(PROJECT_INPUTS.values()))


def test_at_least_two_thousand_inputs() -> None:
    total = (
        IMPORT_INPUTS * len(IMPORT_SOURCES)
        + DECLARATION_INPUTS
        + PLAN_INPUTS * 3
        + sum(PROJECT_INPUTS.values())
    )
    assert total >= 2_000


def _main() -> None:
    """Every input, its counts printed (``python -m tests.test_fuzz_inputs [TARGET…]``)."""
    import tempfile

    import sitegen.measure.preflight
    from tests.sitefixtures import copy_project, publishable_campaign

    sitegen.measure.preflight.preflight = _no_engines
    wanted = set(sys.argv[1:]) or {"import", "plan", "project"}
    root = Path(tempfile.mkdtemp(prefix="sitegen-fuzz-"))
    tally = Tally()
    try:
        if "import" in wanted:
            mutate = Mutator(SEED)
            fuzz(import_inputs(root / "import", mutate, IMPORT_INPUTS), tally)
            fuzz(declaration_inputs(root / "import", mutate, DECLARATION_INPUTS), tally)
        if "plan" in wanted:
            (root / "plan").mkdir()
            fuzz(plan_inputs(root / "plan", Mutator(SEED + 1), PLAN_INPUTS), tally)
        if "project" in wanted:
            publishable_campaign(root / "data")
            project = copy_project(root / "project")
            inputs = project_inputs(project, root / "data", Mutator(SEED + 2), PROJECT_INPUTS)
            fuzz(inputs, tally)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    print(tally.report())


if __name__ == "__main__":
    _main()


# The faults beside the fuzz: a full disk in the template cache, a build during a measure,
# a symbolic link out of a served site ----------------------------------------------------


def test_a_full_disk_in_the_template_cache_is_one_line_and_leaves_no_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import errno

    import jinja2

    from sitegen.core.errors import StorageError
    from sitegen.pages.template_cache import _FolderCache

    def full(self, f) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(jinja2.bccache.Bucket, "write_bytecode", full)
    folder = tmp_path / "cache"
    folder.mkdir()
    env = jinja2.Environment(
        loader=jinja2.DictLoader({"page.html": "{{ 1 + 1 }}"}),
        bytecode_cache=_FolderCache(str(folder)),
    )
    with pytest.raises(StorageError) as caught:
        env.get_template("page.html")
    assert str(caught.value) == (
        f"cannot write the compiled-template cache {folder}: No space left on device"
    )
    assert not folder.exists()


def test_a_build_during_a_measure_names_the_measure(tmp_path: Path, capsys) -> None:
    import subprocess

    from sitegen.records.layout import LOCK_FILE
    from tests.sitefixtures import PROJECT, publishable_campaign

    directory = publishable_campaign(tmp_path / "data").parent
    hold = (
        "import sys, time\nfrom pathlib import Path\nfrom sitegen.core.lock import exclusive_lock\n"
        "sys.argv = ['sitegen', 'measure', '--plan', 'plans/x.yaml']\n"
        f"with exclusive_lock(Path({str(directory / LOCK_FILE)!r}), 'campaign'):\n"
        "    print('held', flush=True)\n    time.sleep(60)\n"
    )
    holder = subprocess.Popen(
        [sys.executable, "-c", hold], cwd=REPOSITORY, stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout.readline() == "held\n"
        argv = ["build", "--data", str(tmp_path / "data"), "--site", str(tmp_path / "site")]
        assert main([*argv, "--project", str(PROJECT)]) == 1
    finally:
        holder.kill()
        holder.wait()
    err = capsys.readouterr().err
    assert err.startswith(
        f"error: campaign {directory} is being measured by pid {holder.pid} "
        "(sitegen measure --plan plans/x.yaml, since 20"
    ), err
    assert f"--skip {directory.name}=REASON" in err and "C-SIGNED" not in err
    assert err.count("\n") == 1
    assert not (tmp_path / "site").exists()


def test_serve_never_follows_a_link_out_of_the_site(tmp_path: Path) -> None:
    import threading
    import urllib.error
    import urllib.request
    from http.server import ThreadingHTTPServer

    from sitegen.publish.serve import _SiteHandler

    site, outside = tmp_path / "site", tmp_path / "outside"
    site.mkdir()
    outside.mkdir()
    (site / "index.html").write_text("home")
    (site / "page.html").write_text("page")
    (outside / "secret.txt").write_text("secret")
    (outside / "index.html").write_text("secret index")
    (site / "secret.txt").symlink_to(outside / "secret.txt")
    (site / "folder").symlink_to(outside)
    (site / "inner").mkdir()
    (site / "inner" / "index.html").symlink_to(outside / "index.html")
    (site / "alias.html").symlink_to(site / "page.html")  # inside: served
    import functools

    handler = functools.partial(_SiteHandler, directory=str(site))
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    url = f"http://127.0.0.1:{server.server_address[1]}/"

    def status(path: str) -> tuple[int, bytes]:
        try:
            with urllib.request.urlopen(url + path, timeout=10) as response:
                return response.status, response.read()
        except urllib.error.HTTPError as exc:
            return exc.code, b""

    try:
        assert status("") == (200, b"home")
        assert status("alias.html") == (200, b"page")
        for escaping in (
            "secret.txt",
            "folder/secret.txt",
            "folder/",
            "inner/",
            "inner/index.html",
        ):
            assert status(escaping)[0] == 404, escaping
        assert status("../outside/secret.txt")[0] == 404
    finally:
        server.shutdown()
        server.server_close()
