"""``row_groups`` groups rows exactly as ``DataFrame.groupby(keys, sort=False)`` iterates
them: the same keys, in order of first appearance, each with its rows in table order, and
rows with a missing key left out."""

from __future__ import annotations

import random

import pandas as pd
import pytest

from sitegen.statistics.row_groups import row_groups

KEY_VALUES = [None, "off", "on", "mtp", "draft"]


def _groupby(frame: pd.DataFrame, keys: list[str]) -> list[tuple[tuple, list[int]]]:
    # The frame's index is its row positions.
    return [(key, list(group.index)) for key, group in frame.groupby(keys, sort=False)]


@pytest.mark.parametrize(
    "keys", [["condition_id"], ["condition_id", "input_id"], ["input_id", "round"]]
)
def test_groups_match_pandas_groupby(keys):
    draw = random.Random(7)
    for _ in range(30):
        rows = [
            (draw.choice(KEY_VALUES), draw.choice(KEY_VALUES), draw.choice([0, 1, 2, None]))
            for _ in range(draw.randrange(41))
        ]
        frame = pd.DataFrame(rows, columns=["condition_id", "input_id", "round"])
        frame["round"] = frame["round"].astype("Int64")
        found = [(key, list(at)) for key, at in row_groups(frame, keys)]
        assert found == _groupby(frame, keys), rows


def test_a_frame_without_rows_or_keys_present_has_no_groups():
    frame = pd.DataFrame({"condition_id": [None, None], "input_id": ["a", "b"]})
    assert row_groups(frame, ["condition_id", "input_id"]) == []
    assert row_groups(frame.iloc[:0], ["input_id"]) == []
