"""Caveat metadata added to a campaign after measuring (``annotations.yaml`` in the
campaign directory): who reviewed the answers, which examples are shown and how they
were selected, post-hoc analyses and threshold claims.

The plan is fixed before measuring; these are the report's declarations about it,
validated like records. A missing file means the defaults below.
"""

from __future__ import annotations

import re
from datetime import date, datetime
from typing import Annotated, Literal

from pydantic import BeforeValidator, Field, model_validator

from sitegen.models import StrictModel
from sitegen.text import Bilingual, NonBlank

ANNOTATIONS_FILE = "annotations.yaml"


class CuratedExample(StrictModel):
    """An answer chosen by a person to illustrate something."""

    trial_id: str
    """The record shown."""
    reason: Bilingual
    """Why it was chosen; shown with a 'not a random sample' notice."""


class RandomExamples(StrictModel):
    """Answers drawn at random from the measured, successful trials."""

    count: int = Field(ge=0)
    """How many to draw."""
    seed: int = Field(ge=0)
    """Seed of the draw, shown beside the examples."""


def _date_or_timestamp(value: object) -> object:
    """``YYYY-MM-DD`` stays a date (not midnight); anything else is parsed as a timestamp."""
    if isinstance(value, str) and re.fullmatch(r"\d{4}-\d{2}-\d{2}", value.strip()):
        return date.fromisoformat(value.strip())
    return value


class PostHocAnalysis(StrictModel):
    """A quality analysis added after results were seen."""

    label: str = Field(pattern=r"^[a-z0-9][a-z0-9_.-]*$")
    """Identifier shown with the result."""
    exclude_templates: list[str] = Field(min_length=1)
    """Templates removed before re-running the non-inferiority test."""
    reason: Bilingual
    """Why the analysis was added."""
    added_at: Annotated[datetime | date, BeforeValidator(_date_or_timestamp)]
    """When it was added: a real ISO 8601 date or timestamp (a timestamp without a zone is
    UTC), later than the plan's registration (the campaign's first record); on the
    registration day itself a timestamp is needed."""


class ThresholdClaim(StrictModel):
    """A claim such as 'above 50 tok/s', rendered as observed in k of n trials."""

    condition_id: str
    """Condition the claim is about."""
    input_id: str | None = None
    """Input (``None``: every speed input of the condition)."""
    metric: Literal["gen_tps"] = "gen_tps"
    """Metric compared."""
    above: float = Field(gt=0)
    """The threshold."""


class Annotations(StrictModel):
    """A campaign's caveat metadata."""

    schema_version: Literal[1] = 1
    """Version of this format."""
    publish: bool = True
    """``false`` leaves the campaign out of the site (e.g. a campaign whose every trial
    failed); its records stay on disk."""
    review: Literal["human", "automated", "none"] = "none"
    """Who reviewed the full answers (C-REVIEW)."""
    reviewer: NonBlank | None = None
    """Name of the person or tool, when review is not ``none``."""
    random_examples: RandomExamples = RandomExamples(count=3, seed=0)
    """Randomly drawn examples (C-EXAMPLE)."""
    curated_examples: list[CuratedExample] = []
    """Hand-picked examples, each with its reason (C-EXAMPLE)."""
    post_hoc: list[PostHocAnalysis] = []
    """Analyses added after results were seen (C-POSTHOC)."""
    thresholds: list[ThresholdClaim] = []
    """Threshold claims (C-THRESHOLD)."""

    @model_validator(mode="after")
    def _reviewer_named(self) -> Annotations:
        if self.review != "none" and not self.reviewer:
            raise ValueError(f"review '{self.review}' needs a reviewer (person or tool)")
        return self
