"""Importers registered by format name, and the one call that runs any of them."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from importlib import import_module
from typing import TYPE_CHECKING, Any

from sitegen.core.errors import ConfigError

if TYPE_CHECKING:
    from sitegen.importers.reading import SourceFile
    from sitegen.records.import_declaration import CsvMapping
    from sitegen.records.import_source import ImportedSource


def _parser(module: str) -> Any:
    """An importer's module, imported when a file is read: the CLI lists the formats on
    every start, and an up-to-date build should not pay for building the parsers' models."""
    return import_module(f"sitegen.importers.{module}")


@dataclass(frozen=True)
class ImportFormat:
    """One source format."""

    name: str
    """The name ``sitegen import`` takes, e.g. ``guidellm``."""
    reads: str
    """What file it reads, for help texts."""
    parse: Callable[[SourceFile, CsvMapping | None, SourceFile | None], ImportedSource]
    """File, the declaration's CSV mapping, the run's summary file → what the file yields."""
    takes_summary: bool = False
    """Whether a summary file of the same run may accompany each file (AIPerf)."""
    needs_mapping: bool = False
    """Whether the declaration's ``csv`` column mapping is required."""


FORMATS: dict[str, ImportFormat] = {
    f.name: f
    for f in (
        ImportFormat(
            "guidellm",
            "GuideLLM's benchmark report (guidellm run --output kind=json)",
            lambda file, _mapping, _summary: _parser("guidellm").parse(file),
        ),
        ImportFormat(
            "vllm",
            "vLLM's result file (vllm bench serve --save-result --save-detailed)",
            lambda file, _mapping, _summary: _parser("vllm").parse(file),
        ),
        ImportFormat(
            "aiperf",
            "NVIDIA AIPerf's profile_export.jsonl, with its profile_export_aiperf.json",
            lambda file, _mapping, summary: _parser("aiperf").parse(file, summary),
            takes_summary=True,
        ),
        ImportFormat(
            "llama-bench",
            "llama-bench's output (-o json or -o jsonl)",
            lambda file, _mapping, _summary: _parser("llama_bench").parse(file),
        ),
        ImportFormat(
            "csv",
            "a CSV table, its columns mapped in the declaration (csv.columns)",
            lambda file, mapping, _summary: _parser("csv_columns").parse(file, mapping),
            needs_mapping=True,
        ),
    )
}
"""Format name → importer."""


def import_source(
    format_name: str,
    file: SourceFile,
    *,
    mapping: CsvMapping | None = None,
    summary: SourceFile | None = None,
) -> ImportedSource:
    """What ``file`` yields, read as ``format_name``. Pure: the caller reads the bytes."""
    found = FORMATS.get(format_name)
    if found is None:
        raise ConfigError(f"unknown import format '{format_name}' (known: {', '.join(FORMATS)})")
    if found.needs_mapping and mapping is None:
        raise ConfigError(
            f"{file.name}: the {format_name} format needs the declaration's csv.columns "
            "(which column holds which field, in which unit)"
        )
    if summary is not None and not found.takes_summary:
        raise ConfigError(f"{summary.name}: the {format_name} format takes no summary file")
    return found.parse(file, mapping, summary)
