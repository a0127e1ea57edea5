"""The base of every part of a plan, shared by ``plan_models`` and the parts kept in
modules of their own (``series_spec``)."""

from __future__ import annotations

from pydantic import ConfigDict

from sitegen.core.strict_model import StrictModel


class PlanModel(StrictModel):
    """A part of a plan: finite numbers only (``.inf`` or ``.nan`` reach no engine)."""

    model_config = ConfigDict(**StrictModel.model_config, allow_inf_nan=False)
