"""``frame_records`` gives a frame's rows as ``to_dict("records")`` does: the same values
of the same types, missing values included, whichever way it takes."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from sitegen.pages.directives.common import frame_records


@pytest.mark.parametrize(
    "columns",
    [
        {"condition_id": pd.Series(["a", None], dtype="str"), "n": [1, 2], "x": [np.nan, 1.5]},
        {"ok": [True, False], "at": pd.to_datetime(["2024-01-01", None])},
        {"wait": pd.to_timedelta([1, None], unit="s"), "u": np.array([1, 2], dtype="uint8")},
        {"n": pd.array([1, None], dtype="Int64"), "s": pd.Series(["x", None], dtype="string")},
        {"o": [np.float64(1.0), None], "x": [1.0, 2.0]},
    ],
)
def test_rows_are_those_of_to_dict(columns):
    frame = pd.DataFrame(columns)
    ours, theirs = frame_records(frame), frame.to_dict("records")
    assert repr(ours) == repr(theirs)
    assert [[type(v) for v in row.values()] for row in ours] == [
        [type(v) for v in row.values()] for row in theirs
    ]
