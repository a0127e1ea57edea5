"""What the report checks (``report_checks``) read of a measured report: the few facts
they hold its rendered pages to. ``statistics.report.Report`` has them; validation sits
below the statistics that compute it, so it names them here instead of importing it."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Protocol

from sitegen.plan.plan_models import Plan
from sitegen.records.campaign import Campaign


class ComparedOnAnInput(Protocol):
    """What the report checks read of one comparison of two conditions on one input: the
    pair, and ``health``, why the treatment's speculation did not run as declared (empty:
    it did)."""

    @property
    def treatment(self) -> str: ...
    @property
    def input_id(self) -> str: ...
    @property
    def health(self) -> Sequence[object]: ...


class CheckedReport(Protocol):
    """What the report checks read of a measured report: its campaign and plan, its
    comparisons, the trials it counts as excluded (C-EXCLUDED) and whether its model could
    not be hashed (C-MODELID)."""

    @property
    def campaign(self) -> Campaign: ...
    @property
    def plan(self) -> Plan: ...
    @property
    def comparisons(self) -> Sequence[ComparedOnAnInput]: ...
    @property
    def excluded(self) -> Mapping[str, int]: ...
    @property
    def unhashed_model(self) -> bool: ...
