"""The declared latency targets (``slo`` of a plan) as one line of text: the pages print
it on every goodput claim and validation checks it against the plan (C-LOAD)."""

from __future__ import annotations

from sitegen.plan.plan_models import SLOSpec


def slo_key(slo: SLOSpec | None) -> str:
    """The declared targets as a page states them on every goodput claim (C-LOAD checks
    them against the plan): ``ttft_p95_s=1 itl_p99_ms=50 e2e_p95_s=5``, declared ones only;
    empty without targets."""
    if slo is None:
        return ""
    return " ".join(
        f"{name}={value:g}" for name, value in slo.model_dump().items() if value is not None
    )
