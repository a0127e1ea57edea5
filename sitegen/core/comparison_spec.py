"""A declared comparison of several campaigns (``content/comparisons/<id>.yaml``), and the
setup fields it may name as its factor: project configuration, read by the build (which
compares, ``statistics.comparison``) and by validation (C-FIGURE over its title)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from sitegen.core.author_fields import ID_REFERENCE, AuthorStr
from sitegen.core.strict_model import StrictModel
from sitegen.core.text import Bilingual

SetupField = Literal[
    "engine",
    "engine_build",
    "interface",
    "model_file",
    "quantization",
    "devices",
    "device_count",
    "driver",
    "gpu_runtime",
    "interconnect",
    "environment",
    "platform",
    "cpu",
    "sampling",
    "template_kwargs",
    "input_text",
    "context_capacity",
    "output_cap",
    "concurrency",
    "speculative",
    "flags",
]
"""A field of a campaign's setup that two campaigns are compared in (``statistics.setups``
reads each from the records), in display order."""


class ComparisonSpec(StrictModel):
    """A report over several campaigns (``content/comparisons/<id>.yaml``)."""

    schema_version: Literal[1] = 1
    """Version of this format."""
    id: AuthorStr = Field(pattern=r"^[a-z0-9][a-z0-9_.-]*$")
    """Identifier, used in the page address ``compare/<id>/``."""
    title: Bilingual
    """Title in both languages (plain text)."""
    campaigns: list[Annotated[str, ID_REFERENCE]] = Field(min_length=2)
    """The campaigns compared: campaign directory names, or plan names that name one
    published campaign. The first is the baseline of any ratio."""
    factor: SetupField | None = None
    """The one field the campaigns are meant to differ in; a ratio is printed only where
    every other field is recorded in both campaigns and equal (``None``: never a ratio)."""
