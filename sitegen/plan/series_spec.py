"""A series: one plan measured again and again, one campaign per value of a factor the
plan itself does not fix (an engine build, a model revision, a driver)."""

from __future__ import annotations

from typing import Final

from pydantic import model_validator

from sitegen.core.comparison_spec import SetupField
from sitegen.plan.plan_part import PlanModel

SERIES_FACTORS: Final[tuple[SetupField, ...]] = (
    "engine_build",
    "model_file",
    "devices",
    "device_count",
    "driver",
    "gpu_runtime",
    "interconnect",
    "environment",
    "platform",
    "cpu",
)
"""The setup fields a series may vary: what the engine and the host report about
themselves (``records.series_factor`` reads each from a record). Every other setup field
is fixed by the plan, so every campaign of one plan holds the same value of it."""


class SeriesSpec(PlanModel):
    """This plan is measured once per value of ``factor``, each time as a campaign of its
    own (``sitegen measure --new-campaign``), and its campaigns are shown as one series.
    Within a campaign the factor must not change: resuming with an engine or host that
    reports another value is refused (C-SERIES)."""

    factor: SetupField
    """The setup field the campaigns vary in, e.g. ``engine_build`` (the engine's version
    and build as it reports them), ``model_file`` (the model file's SHA-256) or
    ``driver``; one of the fields that the engine or the host reports, not one the plan
    fixes."""

    @model_validator(mode="after")
    def _varies_what_the_plan_does_not_fix(self) -> SeriesSpec:
        if self.factor not in SERIES_FACTORS:
            raise ValueError(
                f"series.factor: {self.factor} is fixed by the plan, so it cannot vary "
                f"between its campaigns; a series varies one of {', '.join(SERIES_FACTORS)}"
            )
        return self
