"""Latency percentiles: numpy's on the same values, the minimum count each needs (C-TAIL),
TPOT and ITL as defined, and chunk gaps taken from the records' chunk times."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from sitegen.records.metrics import compute_metrics
from sitegen.records.stream import StreamChunk, StreamEnd
from sitegen.records.table import RecordTable
from sitegen.statistics.latency import (
    CDF_POINTS,
    MIN_VALUES,
    cdf_points,
    latency_percentiles,
    percentile_row,
    tpot,
)
from sitegen.statistics.trials import trials_frame, usable
from tests.recordfixtures import make_record


def test_percentiles_are_numpys_and_need_enough_values():
    rng = np.random.default_rng(7)
    values = rng.lognormal(size=150)
    row = percentile_row(values)
    for p in (50, 90, 95, 99):
        assert row[f"p{p}"] == pytest.approx(np.percentile(values, p))
    assert row["mean"] == pytest.approx(values.mean()) and row["max"] == values.max()
    few = percentile_row(values[:19])
    assert few["p90"] is not None and few["p95"] is None and few["p99"] is None
    assert percentile_row(values[: MIN_VALUES[99]])["p99"] is not None
    assert percentile_row(values[: MIN_VALUES[99] - 1])["p99"] is None
    assert percentile_row(np.array([np.nan, 2.0]))["n"] == 1


def test_chunk_times_are_recorded_and_become_gaps():
    chunks = [
        StreamChunk(1.0, answer="a"),
        StreamChunk(1.25, answer="bcd"),
        StreamChunk(2.0, answer="e"),
    ]
    metrics = compute_metrics(0.5, chunks, StreamEnd(t=2.1, finish="stop", generated_tokens=5))
    assert metrics.chunk_times_s == [0.5, 0.75, 1.5]
    records = []
    for repetition, times in enumerate(([0.5, 0.75, 1.5], [0.4, 0.6], None)):
        record = make_record("off", "short", 10.0, repetition=repetition)
        data = record.model_dump()
        data["metrics"] |= {"chunk_times_s": times, "generation_s": 1.0, "generated_tokens": 5}
        records.append(type(record).model_validate(data))
    table = RecordTable.of(records)
    assert table.chunk_gaps["record"].tolist() == [0, 0, 1]
    assert table.chunk_gaps["gap_s"].tolist() == pytest.approx([0.25, 0.75, 0.2])
    frame = trials_frame(table)
    assert frame["tpot_s"].tolist() == pytest.approx([0.25, 0.25, 0.25])  # 1 s / (5 − 1)
    latency = latency_percentiles(usable(frame), table.chunk_gaps).set_index("metric")
    assert latency.loc["itl_s", "n"] == 3
    assert latency.loc["itl_s", "p50"] == pytest.approx(0.25)
    assert latency.loc["itl_s", "max"] == pytest.approx(0.75)
    assert pd.isna(latency.loc["itl_s", "p90"])  # three gaps: too few for P90
    assert latency.loc["ttft_s", "n"] == 3 and latency.loc["tpot_s", "mean"] == pytest.approx(0.25)


def test_tpot_needs_two_tokens_and_a_generation_time():
    frame = pd.DataFrame(
        {"generated_tokens": pd.array([5, 1, None], "Int64"), "generation_s": [1.0, 1.0, 2.0]}
    )
    assert tpot(frame).tolist()[0] == pytest.approx(0.25)
    assert tpot(frame)[1:].isna().all()


def test_cdf_is_thinned_to_a_few_hundred_points():
    values, fractions = cdf_points(np.arange(1000.0)[::-1])
    assert len(values) <= CDF_POINTS and values[0] == 0.0 and values[-1] == 999.0
    assert fractions[-1] == 1.0 and all(np.diff(fractions) > 0)
    assert cdf_points(np.array([2.0, 1.0])) == ([1.0, 2.0], [0.5, 1.0])
