"""Which records the statistics use, and how many values a percentile needs: definitions
both the statistics (which apply them) and validation (which checks the pages against
them, C-USABLE, C-EXAMPLE, C-TAIL) read, so they live below both."""

from __future__ import annotations

import pandas as pd

USABLE_ROLE = "measured"
USABLE_STATUS = "ok"

MIN_VALUES = {50: 1, 90: 10, 95: 20, 99: 100}
"""Values a percentile needs (C-TAIL): at least 1 ÷ (1 − p), so that at least one value
lies above it; below, the observed maximum is shown instead."""


def enters_statistics(rows: pd.DataFrame) -> pd.Series:
    """The one definition of a trial that enters the statistics, per row of a records or
    trials table: a measured trial whose request succeeded, sent alone or in a closed
    round. Warm-ups and failed attempts are kept as records and counted on the pages
    (C-EXCLUDED), never summarized; requests of open-loop load runs compete with a varying
    number of others, so they are summarized per offered rate only (``statistics.load``)."""
    entering = (rows["role"] == USABLE_ROLE) & (rows["status"] == USABLE_STATUS)
    return entering & closed_loop(rows)


def closed_loop(rows: pd.DataFrame) -> pd.Series:
    """Per row: not a request of an open-loop load run."""
    if "load_profile" not in rows:
        return pd.Series(True, index=rows.index)
    return rows["load_profile"].isna()
