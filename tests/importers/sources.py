"""The importer tests' shared helpers: the real fixture files, the one problem an importer
reports, and the imported report of a fixture imported as ``sitegen import`` does."""

from __future__ import annotations

import gzip
import json
from collections.abc import Callable
from pathlib import Path

import pytest

from sitegen.cli import main
from sitegen.core.errors import DataError
from sitegen.importers.reading import SourceFile
from sitegen.records.annotations import Annotations
from sitegen.records.imported_campaign import (
    ImportedCampaign,
    read_imported_records,
    read_registration,
)
from sitegen.records.layout import CAMPAIGNS_DIR
from sitegen.statistics.imported_report import ImportedReport, make_imported_report

FIXTURES = Path(__file__).parent / "fixtures"


def fixture(relative: str) -> SourceFile:
    """A fixture as the import gets it: ``x.json.gz`` is the real ``x.json``, gzipped in the
    repository only to keep it small."""
    data = (FIXTURES / relative).read_bytes()
    if relative.endswith(".gz"):
        return SourceFile(relative.removesuffix(".gz"), gzip.decompress(data))
    return SourceFile(relative, data)


def fixture_json(relative: str) -> object:
    return json.loads(fixture(relative).data)


def as_file(name: str, value: object) -> SourceFile:
    """``value`` written as a JSON file."""
    return SourceFile(name, json.dumps(value).encode())


def problem(call: Callable[[], object]) -> str:
    """The one problem ``call`` is refused with, as ``sitegen`` prints it: one line."""
    with pytest.raises(DataError) as caught:
        call()
    (issue,) = caught.value.issues
    text = str(issue)
    assert "\n" not in text
    return text


DECLARED = """\
hardware:
  devices: [{kind: cpu, name: "Test CPU", count: 1}]
engine: {name: llama.cpp, version: "xllamacpp 2026.10.11549"}
model: {name: SmolLM2-135M-Instruct, quantization: GGUF Q4_1}
"""
"""What the fixtures' author declares: the machine, engine and model of every real run."""


def imported_report(fmt: str, files: list[str], sources: dict[str, str]) -> ImportedReport:
    """``sitegen import FMT FILES`` in the current directory, one condition per entry of
    ``sources`` (its id → its sources in YAML; the first is the baseline), and the report
    of the campaign it wrote, read back from its stored records."""
    conditions = "".join(
        f"  - id: {cid}\n    label: {{ja: '{cid}', en: '{cid}'}}\n"
        f"    sources: {listed}\n    speculative: {{mode: off}}\n"
        for cid, listed in sources.items()
    )
    Path("declared.yaml").write_text(
        f"{DECLARED}conditions:\n{conditions}baseline: {next(iter(sources))}\n"
    )
    argv = ["import", fmt, *files, "--declare", "declared.yaml", "--campaign", "imported"]
    assert main(argv) == 0
    directory = Path("data") / CAMPAIGNS_DIR / "imported"
    registration, import_sha256 = read_registration(directory)
    records, digest = read_imported_records(directory, import_sha256)
    campaign = ImportedCampaign(
        directory, registration, import_sha256, records, Annotations(), digest
    )
    return make_imported_report(campaign)
