"""The importers by format name: what each needs is asked for, never assumed."""

from __future__ import annotations

import pytest

from sitegen.core.errors import ConfigError
from sitegen.core.strict_model import StrictModel, field_docstrings
from sitegen.importers.formats import FORMATS, import_source
from sitegen.records import import_declaration as declaration
from sitegen.records import import_source as stored_source
from tests.importers.sources import fixture


def test_every_issue_format_is_registered():
    assert list(FORMATS) == ["guidellm", "vllm", "aiperf", "llama-bench", "csv"]


def test_a_format_is_run_by_its_name():
    imported = import_source("aiperf", fixture("aiperf/profile_export.jsonl"))
    assert imported.source.format == "aiperf" and len(imported.measurements) == 3


def test_an_unknown_format_is_refused_with_the_known_ones():
    with pytest.raises(ConfigError, match=r"unknown import format 'genai-perf' \(known: guidellm"):
        import_source("genai-perf", fixture("aiperf/profile_export.jsonl"))


def test_csv_needs_the_declared_column_mapping():
    with pytest.raises(ConfigError, match="needs the declaration's csv.columns"):
        import_source("csv", fixture("csv/requests.csv"))


def test_only_aiperf_takes_a_summary():
    with pytest.raises(ConfigError, match="the guidellm format takes no summary file"):
        import_source(
            "guidellm",
            fixture("guidellm/benchmarks.json.gz"),
            summary=fixture("aiperf/profile_export_aiperf.json"),
        )


@pytest.mark.parametrize(
    "model",
    [
        stored_source.ImportedSource,
        stored_source.ImportedMeasurement,
        stored_source.SourceInfo,
        stored_source.SpeculativeTotals,
        *(
            getattr(declaration, name)
            for name in dir(declaration)
            if name.endswith(("Decl", "Declaration", "Ref", "Mapping", "Field"))
            and isinstance(getattr(declaration, name), type)
            and issubclass(getattr(declaration, name), StrictModel)
        ),
    ],
)
def test_every_field_is_documented(model):
    # Field docstrings are the data dictionary the site publishes.
    assert [name for name in model.model_fields if name not in field_docstrings(model)] == []
