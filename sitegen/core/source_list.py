"""The declared sources of figures that are not measurements (``content/sources.yaml``):
the list a content page cites with ``literal(value, source="<id>")``, whose titles and
publishers validation reads as author text (C-FIGURE)."""

from __future__ import annotations

from datetime import date
from typing import Annotated

from pydantic import Field, HttpUrl, model_validator

from sitegen.core.author_fields import AUTHOR_TEXT, AuthorStr
from sitegen.core.strict_model import StrictModel
from sitegen.core.text import NonBlank


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
