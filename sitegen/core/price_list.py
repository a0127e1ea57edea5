"""The declared prices of devices (``content/prices.yaml``): what one device costs for one
hour, by the name records give it. The speed page's cost per million output tokens is
computed only from these: a price is never assumed, so a device without one gets no cost.
"""

from __future__ import annotations

import math
from datetime import date
from pathlib import Path
from typing import Annotated, Literal

import yaml
from pydantic import Field, ValidationError, field_validator, model_validator

from sitegen.core.author_fields import AUTHOR_NAME, NotProse
from sitegen.core.errors import DataError, Issue, one_line, pydantic_issues
from sitegen.core.strict_model import StrictModel
from sitegen.core.text import Bilingual, NonBlank
from sitegen.core.yaml_text import read_yaml

PRICES_FILE = Path("content") / "prices.yaml"
"""The price list, relative to the project."""
PRICES_DOWNLOAD = "prices.json"
"""The price list among a report's downloads (when the project declares one): what its
costs were computed from, so ``sitegen audit`` recomputes them."""

CURRENCY_CODE = NotProse("an ISO 4217 currency code, matched by a strict pattern")


class DevicePrice(StrictModel):
    """The price of one device for one hour, with where it comes from."""

    device: Annotated[NonBlank, AUTHOR_NAME]
    """The device's name exactly as records state it (``provenance.host.devices[].name``,
    e.g. ``NVIDIA H200`` or a CPU's model name)."""
    per_hour: float = Field(gt=0)
    """Price of one device for one hour, in the list's currency (finite, above zero)."""
    source: Bilingual
    """Where the price comes from (a provider's price list, an invoice, an amortization),
    in both languages: shown beside every cost computed from it."""
    as_of: date
    """When the price was read or applied."""

    @field_validator("per_hour")
    @classmethod
    def _finite(cls, value: float) -> float:
        if not math.isfinite(value):
            raise ValueError("a price per hour must be a finite number")
        return value


class PriceList(StrictModel):
    """Every device price a project declares, in one currency."""

    schema_version: Literal[1] = 1
    """Version of the price list format."""
    currency: Annotated[str, CURRENCY_CODE] = Field(pattern=r"^[A-Z]{3}$")
    """ISO 4217 code of every price's currency (``USD``, ``JPY``, ``EUR`` …)."""
    prices: list[DevicePrice] = Field(min_length=1)
    """One price per device name."""

    @model_validator(mode="after")
    def _one_price_per_device(self) -> PriceList:
        names = [p.device for p in self.prices]
        repeated = sorted({n for n in names if names.count(n) > 1})
        if repeated:
            raise ValueError(f"devices priced more than once: {repeated}")
        return self

    def per_hour(self, device: str) -> DevicePrice | None:
        """The price declared for ``device`` (``None``: none is)."""
        return next((p for p in self.prices if p.device == device), None)


def read_price_list(project_dir: Path) -> tuple[PriceList | None, list[Issue]]:
    """The project's price list (``None`` without the file) and the problems of a bad one,
    each naming the file, the entry and the field (``content/prices.yaml → prices.1
    .per_hour``); a bad file gives ``None`` with its issues."""
    path = project_dir / PRICES_FILE
    if not path.is_file():
        return None, []
    try:
        return PriceList.model_validate(read_yaml(path) or {}), []
    except yaml.YAMLError as exc:
        return None, [Issue(str(path), f"not valid YAML: {one_line(exc)}", "content")]
    except ValidationError as exc:
        return None, pydantic_issues(exc, str(path))


def price_list_json(prices: PriceList) -> bytes:
    """``prices`` as the report's download: JSON in field order, UTF-8, one final newline
    (the same list makes the same bytes)."""
    return (prices.model_dump_json(indent=2) + "\n").encode("utf-8")


def read_published_prices(data: bytes, where: str) -> PriceList:
    """The price list a report published (``price_list_json``); raises ``DataError``
    naming ``where`` and each bad field."""
    try:
        return PriceList.model_validate_json(data)
    except ValidationError as exc:
        raise DataError(pydantic_issues(exc, where)) from None
