"""Caveat metadata added to a campaign after measuring (``annotations.yaml`` in the
campaign directory): who reviewed the answers, which curated examples are shown and why,
post-hoc analyses and threshold claims. The random examples are drawn as the plan
registered them (``examples``), never as declared here.

The plan is fixed before measuring; these are the report's declarations about it,
validated like records. A missing file means the defaults below.
"""

from __future__ import annotations

import re
from datetime import date, datetime
from pathlib import Path
from typing import Annotated, Literal

import yaml
from pydantic import (
    BeforeValidator,
    Field,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)

from sitegen.core.author_fields import AUTHOR_TEXT, ID_REFERENCE, TEMPLATE_ID, AuthorStr
from sitegen.core.errors import Issue, one_line, pydantic_issues
from sitegen.core.strict_model import StrictModel
from sitegen.core.text import Bilingual, NonBlank
from sitegen.core.yaml_text import read_yaml

ANNOTATIONS_FILE = "annotations.yaml"


class CuratedExample(StrictModel):
    """An answer chosen by a person to illustrate something."""

    trial_id: Annotated[str, ID_REFERENCE]
    """The record shown."""
    reason: Bilingual
    """Why it was chosen; shown with a 'not a random sample' notice."""


def _date_or_timestamp(value: object) -> object:
    """``YYYY-MM-DD`` stays a date (not midnight); anything else is parsed as a timestamp."""
    if isinstance(value, str) and re.fullmatch(r"\d{4}-\d{2}-\d{2}", value.strip()):
        return date.fromisoformat(value.strip())
    return value


class PostHocAnalysis(StrictModel):
    """A quality analysis added after results were seen."""

    label: AuthorStr = Field(pattern=r"^[a-z0-9][a-z0-9_.-]*$")
    """Identifier shown with the result."""
    exclude_templates: list[Annotated[str, TEMPLATE_ID]] = Field(min_length=1)
    """Templates removed before re-running the non-inferiority test."""
    reason: Bilingual
    """Why the analysis was added."""
    added_at: Annotated[datetime | date, BeforeValidator(_date_or_timestamp)]
    """When it was added: a real ISO 8601 date or timestamp (a timestamp without a zone is
    UTC), later than the plan's registration (the manifest's ``registered_at``); on the
    registration day itself a timestamp is needed."""


class ThresholdClaim(StrictModel):
    """A claim such as 'above 50 tok/s', rendered as observed in k of n trials."""

    condition_id: Annotated[str, ID_REFERENCE]
    """Condition the claim is about."""
    input_id: Annotated[str, ID_REFERENCE] | None = None
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
    failed); its records stay on disk. It needs an ``unpublished_reason``: the site lists
    every campaign it leaves out, with its id, plan name and reason, on the changelog and
    on the method page of its plan's report."""
    unpublished_reason: Bilingual | None = Field(default=None, validate_default=True)
    """Why the campaign is left out (``publish: false``), in both languages: author text
    (emphasis, lists and links, never markup, no figure written by hand), shown where the
    site lists the campaign. Required with ``publish: false``, refused without it."""
    review: Literal["human", "automated", "none"] = "none"
    """Who reviewed the full answers (C-REVIEW); the pages state this declaration and
    nothing else."""
    reviewer: Annotated[NonBlank, AUTHOR_TEXT] | None = None
    """Name of the person or tool, when review is not ``none`` (a reviewer under ``none``
    is refused: answers someone reviewed are not published as unreviewed)."""
    random_examples: None = None
    """Refused: the random draw (count and seed) is the plan's ``examples``, registered
    before measuring; chosen here, after the answers are known, it could pick any answer."""
    curated_examples: list[CuratedExample] = []
    """Hand-picked examples, each with its reason (C-EXAMPLE)."""
    post_hoc: list[PostHocAnalysis] = []
    """Analyses added after results were seen (C-POSTHOC)."""
    thresholds: list[ThresholdClaim] = []
    """Threshold claims (C-THRESHOLD)."""

    @field_validator("random_examples", mode="before")
    @classmethod
    def _draw_registered_in_plan(cls, value: object) -> None:
        if value is not None:
            raise ValueError(
                f"{ANNOTATIONS_FILE} may not choose the random examples (seed, count): they "
                "are the plan's examples.seed and examples.count, registered before "
                "measuring; remove random_examples"
            )
        return None

    @field_validator("unpublished_reason", mode="after")
    @classmethod
    def _reason_for_leaving_out(
        cls, value: Bilingual | None, info: ValidationInfo
    ) -> Bilingual | None:
        publish = info.data.get("publish")  # absent: publish itself was refused
        if publish is False and value is None:
            raise ValueError(
                "publish: false needs a reason, which the site shows where it lists the "
                "campaign as left out: add unpublished_reason: {ja: …, en: …}"
            )
        if publish is True and value is not None:
            raise ValueError(
                "a reason for leaving the campaign out, but publish is not false: remove "
                "unpublished_reason, or set publish: false"
            )
        return value

    @model_validator(mode="after")
    def _reviewer_named(self) -> Annotations:
        if self.review != "none" and not self.reviewer:
            raise ValueError(f"review '{self.review}' needs a reviewer (person or tool)")
        return self


def read_annotations(path: Path, issues: list[Issue]) -> Annotations:
    """The annotations in ``path`` (the defaults when there is none); every problem is
    appended to ``issues``."""
    if not path.exists():
        return Annotations()
    try:
        raw = read_yaml(path) or {}
        return Annotations.model_validate(raw)
    except yaml.YAMLError as exc:
        issues.append(Issue(str(path), f"not valid YAML: {one_line(exc)}", "data"))
    except ValidationError as exc:
        issues.extend(pydantic_issues(exc, str(path)))
    return Annotations()
