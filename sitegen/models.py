"""The base of every published data model.

Field docstrings are the data dictionary: ``use_attribute_docstrings`` turns them
into JSON Schema descriptions, which the site publishes.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class StrictModel(BaseModel):
    """Frozen, unknown fields forbidden, docstrings become field descriptions."""

    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)
