"""Every factor a plan may give its series is one the records can be read for: a factor
the plan accepted but no reader knew would leave the resume guard and C-SERIES with
nothing to compare."""

from __future__ import annotations

from sitegen.plan.series_spec import SERIES_FACTORS
from sitegen.records.series_factor import factor_fields


def test_each_series_factor_is_read_from_named_record_fields():
    assert {factor: bool(factor_fields(factor)) for factor in SERIES_FACTORS} == dict.fromkeys(
        SERIES_FACTORS, True
    )
    assert factor_fields("sampling") == ""  # fixed by the plan, so no series varies it
