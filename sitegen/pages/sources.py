"""The declared sources of figures that are not measurements (``content/sources.yaml``).

A content page may quote such a figure (a model card's context length, say) only with
``literal(value, source="<id>")``, citing one entry of this list; the page shows it as a
quotation that this report did not measure, and the method page lists every one used.
"""

from __future__ import annotations

from datetime import date
from pathlib import Path
from typing import Annotated

import yaml
from pydantic import Field, HttpUrl, ValidationError, model_validator

from sitegen.core.author_fields import AUTHOR_TEXT, AuthorStr
from sitegen.core.errors import DataError, Issue, one_line, pydantic_issues
from sitegen.core.strict_model import StrictModel
from sitegen.core.text import NonBlank
from sitegen.core.yaml_text import read_yaml

SOURCES_FILE = "sources.yaml"
"""The source list, in the project's ``content/`` directory."""


class Source(StrictModel):
    """A published document a quoted figure comes from."""

    id: AuthorStr = Field(pattern=r"^[a-z0-9][a-z0-9_.-]*$")
    """What ``literal(…, source=…)`` cites."""
    title: Annotated[NonBlank, AUTHOR_TEXT]
    """Title of the document."""
    publisher: Annotated[NonBlank, AUTHOR_TEXT] | None = None
    """Who published it (a publisher, a URL or both are required)."""
    url: HttpUrl | None = None
    """Where it is published."""
    date: date
    """When it was published or read."""

    @model_validator(mode="after")
    def _locatable(self) -> Source:
        if self.publisher is None and self.url is None:
            raise ValueError("a source needs a publisher or a URL")
        return self


class SourceList(StrictModel):
    """Every source content pages may cite."""

    sources: list[Source] = []
    """The sources, each with a distinct id."""

    @model_validator(mode="after")
    def _distinct_ids(self) -> SourceList:
        ids = [s.id for s in self.sources]
        repeated = sorted({i for i in ids if ids.count(i) > 1})
        if repeated:
            raise ValueError(f"source ids used more than once: {repeated}")
        return self


def load_sources(content_dir: Path) -> dict[str, Source]:
    """The declared sources by id (none without the file); raises ``DataError`` naming the
    file and field of a bad entry."""
    path = content_dir / SOURCES_FILE
    if not path.is_file():
        return {}
    try:
        declared = SourceList.model_validate(read_yaml(path) or {})
    except yaml.YAMLError as exc:
        raise DataError([Issue(str(path), f"not valid YAML: {one_line(exc)}", "content")]) from None
    except ValidationError as exc:
        raise DataError(pydantic_issues(exc, str(path))) from None
    return {s.id: s for s in declared.sources}
