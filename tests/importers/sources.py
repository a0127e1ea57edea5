"""The importer tests' shared helpers: the real fixture files, and the one problem an
importer reports."""

from __future__ import annotations

import gzip
import json
from collections.abc import Callable
from pathlib import Path

import pytest

from sitegen.errors import DataError
from sitegen.importers.base import SourceFile

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
