"""The engines and import formats that README.md, docs/*.md and the command line's help
name by hand are exactly the registered ones (``sitegen.plan.engine_registry.ENGINES``,
``sitegen.importers.formats.FORMATS``): none missing, none unknown."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from sitegen.cli import main
from sitegen.importers.formats import FORMATS
from sitegen.importers.import_campaign import OWN_DOWNLOADS
from sitegen.plan.engine_registry import ENGINES

ROOT = Path(__file__).resolve().parent.parent
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]

ALL_ENGINES = set(ENGINES)
PUBLISHABLE = {entry.id for entry in ENGINES.values() if entry.publishable}
IMPORTABLE = {*FORMATS, OWN_DOWNLOADS}
"""What ``sitegen import`` takes: the registered formats and a sitegen report's downloads."""

NAME = re.compile(r"`([a-z0-9][a-z0-9.-]*)`")
"""A name in backticks: an engine id or a format (no spaces, no capitals)."""


def paragraph(path: Path, marker: str) -> str:
    """The one paragraph of ``path`` that contains ``marker`` (whitespace collapsed)."""
    found = [
        " ".join(block.split())
        for block in path.read_text(encoding="utf-8").split("\n\n")
        if marker in " ".join(block.split())
    ]
    assert len(found) == 1, f"{path.name}: {len(found)} paragraphs contain {marker!r}"
    return found[0]


def section(path: Path, heading: str) -> str:
    """The text under ``heading`` up to the next heading of its level or above."""
    text = "\n" + path.read_text(encoding="utf-8")
    level = heading.split()[0]
    start = text.index(f"\n{heading}\n")
    end = re.compile(rf"\n#{{1,{len(level)}}} ").search(text, start + 1)
    return text[start : end.start() if end else len(text)]


def test_readme_names_the_publishable_engines():
    listed = paragraph(ROOT / "README.md", "through a real engine (")
    listed = listed[listed.index("through a real engine (") :].split(")", 1)[0]
    assert set(NAME.findall(listed)) == PUBLISHABLE


def test_readme_names_every_import_format():
    listed = paragraph(ROOT / "README.md", "`sitegen import` reads")
    listed = listed[listed.index("`sitegen import` reads") :]
    assert set(NAME.findall(listed)) - {"sitegen import"} == IMPORTABLE


def test_the_engine_table_of_docs_is_the_registry():
    rows = [
        [cell.strip().replace("`", "") for cell in line.strip().strip("|").split("|")]
        for line in section(ROOT / "docs" / "engines.md", "# Engines and GPU hosts").splitlines()
        if line.startswith("| `")
    ]
    assert [row[0] for row in rows] == list(ENGINES), "docs/engines.md: the table's engines"
    for engine_id, runs, prefill, published in rows:
        entry = ENGINES[engine_id]
        assert runs == entry.description, f"docs/engines.md: what {engine_id} runs"
        assert prefill == (entry.prefill_source or "none reported"), f"{engine_id}: prefill"
        assert (published == "yes") is entry.publishable, f"{engine_id}: published"
        assert published == "yes" or published.startswith("never"), published


def test_the_import_docs_give_one_example_per_format():
    examples = section(ROOT / "docs" / "importing.md", "## One example per format")
    shown = re.findall(r"^sitegen import ([a-z0-9-]+) ", examples, re.MULTILINE)
    assert sorted(shown) == sorted(IMPORTABLE), "docs/importing.md: one example per format"


@pytest.mark.parametrize("path", DOCS, ids=lambda p: p.name)
def test_every_engine_and_format_the_docs_name_is_registered(path):
    text = path.read_text(encoding="utf-8")
    engines = set(re.findall(r"\bengine: ([a-z0-9][a-z0-9.-]*)", text))
    assert engines <= ALL_ENGINES, f"{path.name}: unknown engines {engines - ALL_ENGINES}"
    formats = set(re.findall(r"\bsitegen import ([a-z0-9][a-z0-9.-]*)", text))
    assert formats <= IMPORTABLE, f"{path.name}: unknown formats {formats - IMPORTABLE}"


def help_text(capsys, *argv: str) -> str:
    with pytest.raises(SystemExit):
        main([*argv, "--help"])
    return capsys.readouterr().out


def listed_under(text: str, title: str) -> list[str]:
    """The first word of each indented line under the line that starts with ``title``."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(title)) + 1
    names = []
    for line in lines[start:]:
        if not line.startswith("  "):
            break
        if not line.startswith("   "):  # a wrapped line is indented further
            names.append(line.split()[0])
    return names


def test_measure_help_lists_the_engines(capsys):
    assert listed_under(help_text(capsys, "measure"), "engines") == list(ENGINES)


def test_import_help_lists_the_formats(capsys):
    formats = listed_under(help_text(capsys, "import"), "formats:")
    assert sorted(formats) == sorted(IMPORTABLE)
    listed = " ".join(help_text(capsys).split())
    listed = listed[listed.index("import publish results") :].split(")", 1)[0]
    assert set(re.findall(r"[a-z0-9][a-z0-9.-]*", listed.split("(", 1)[1])) == set(FORMATS)


def test_engines_command_lists_the_registry(capsys):
    assert main(["engines"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split()[0] for line in lines if not line.startswith(" ")] == list(ENGINES)
