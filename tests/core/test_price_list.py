"""The declared device prices (``content/prices.yaml``): the model, and a bad file refused
with its file, entry and field named."""

from __future__ import annotations

from pathlib import Path

import pytest

from sitegen.core.errors import DataError
from sitegen.core.price_list import (
    PRICES_FILE,
    PriceList,
    price_list_json,
    read_price_list,
    read_published_prices,
)

GOOD = """\
schema_version: 1
currency: USD
prices:
  - device: NVIDIA H200
    per_hour: 3.5
    source: {ja: クラウドの価格表, en: the cloud's price list}
    as_of: 2026-01-15
  - device: AMD EPYC 9654 96-Core Processor
    per_hour: 0.8
    source: {ja: 減価償却, en: amortization}
    as_of: 2026-01-15
"""


def write(project: Path, text: str) -> Path:
    path = project / PRICES_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_a_declared_list(tmp_path):
    write(tmp_path, GOOD)
    prices, issues = read_price_list(tmp_path)
    assert issues == [] and prices is not None
    assert prices.currency == "USD"
    h200 = prices.per_hour("NVIDIA H200")
    assert h200 is not None and h200.per_hour == 3.5 and h200.source.en == "the cloud's price list"
    assert prices.per_hour("NVIDIA H100") is None  # never assumed
    # The report's download reads back as the same list.
    assert read_published_prices(price_list_json(prices), "prices.json") == prices


def test_no_file_is_no_list(tmp_path):
    assert read_price_list(tmp_path) == (None, [])


@pytest.mark.parametrize(
    ("old", "new", "field"),
    [
        ("per_hour: 0.8", "per_hour: 0", "prices.1.per_hour"),
        ("per_hour: 0.8", "per_hour: .nan", "prices.1.per_hour"),
        ("per_hour: 0.8", "per_hour: .inf", "prices.1.per_hour"),
        ("currency: USD", "currency: dollars", "currency"),
        ("    source: {ja: 減価償却, en: amortization}\n", "", "prices.1.source"),
        ("    as_of: 2026-01-15\n  - device", "    as_of: soon\n  - device", "prices.0.as_of"),
        ("AMD EPYC 9654 96-Core Processor", "NVIDIA H200", "(the whole file)"),
        ("schema_version: 1", "schema_version: 2", "schema_version"),
        ("currency: USD", "currency: USD\nregion: tokyo", "region"),
    ],
)
def test_a_bad_entry_is_named(tmp_path, old, new, field):
    path = write(tmp_path, GOOD.replace(old, new, 1))
    prices, issues = read_price_list(tmp_path)
    assert prices is None and issues
    assert any(issue.location == f"{path} → {field}" for issue in issues), issues


def test_not_yaml_is_named(tmp_path):
    path = write(tmp_path, "currency: [USD\n")
    prices, issues = read_price_list(tmp_path)
    assert prices is None and [i.location for i in issues] == [str(path)]


def test_a_bad_download_is_refused():
    with pytest.raises(DataError) as caught:
        read_published_prices(b'{"currency": "USD", "prices": []}', "prices.json")
    assert "prices.json → prices" in str(caught.value)


def test_a_price_list_is_strict():
    assert PriceList.model_config["extra"] == "forbid"
    assert list(PriceList.model_fields)[0] == "schema_version"
