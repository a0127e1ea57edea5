"""A table's rows grouped as positions: the statistics of a campaign's few dozen rows
cost pandas' per-call overhead (a groupby, a frame per group, a call per column) many
times their work, so they group once and read numpy arrays taken out once."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd


def row_groups(
    frame: pd.DataFrame, keys: Sequence[str]
) -> list[tuple[tuple[Any, ...], np.ndarray]]:
    """Each group of ``frame``'s rows by the ``keys`` columns: its key and its row
    positions (in table order), in order of first appearance, as ``frame.groupby(keys,
    sort=False)`` iterates them; rows with a missing key are left out, as there."""
    combined = np.zeros(len(frame), dtype=np.int64)
    present = np.ones(len(frame), dtype=bool)
    factorized = []
    for key in keys:
        codes, uniques = pd.factorize(frame[key])
        factorized.append((codes, uniques))
        present &= codes >= 0
        # A missing value's code (-1) is shifted to 0, so each combination is one number.
        combined = combined * (len(uniques) + 1) + codes + 1
    positions = np.flatnonzero(present)
    if not len(positions):
        return []
    group_of, _ = pd.factorize(combined[positions])
    order = np.argsort(group_of, kind="stable")
    starts = np.flatnonzero(np.diff(group_of[order])) + 1
    return [
        (tuple(uniques[codes[at[0]]] for codes, uniques in factorized), at)
        for at in np.split(positions[order], starts)
    ]


def highest(values: np.ndarray) -> float:
    """The largest value present, NaN without any (as pandas' ``max``)."""
    present = values[~np.isnan(values)]
    return float(present.max()) if len(present) else np.nan


def median(values: np.ndarray) -> float:
    """The median of the values present, NaN without any (as pandas' ``median``)."""
    present = values[~np.isnan(values)]
    return float(np.median(present)) if len(present) else np.nan
