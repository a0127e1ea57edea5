"""Campaigns of a series of builds (issue 39), made with the fake engine: one plan
measured once per engine build, each campaign with an id of its own and its trials as fast
as the build is."""

from __future__ import annotations

from pathlib import Path

from sitegen.plan.plan_models import Plan
from sitegen.plan.series_spec import SeriesSpec
from tests.conftest import make_plan
from tests.sitefixtures import publishable_campaign

SERIES_PLAN = make_plan(name="builds", repetitions=4, series=SeriesSpec(factor="engine_build"))
"""Two conditions × two inputs, four measured trials each, one campaign per engine build."""

TIMES = (
    "ttft_s",
    "t_first_visible_s",
    "t_first_answer_s",
    "t_natural_finish_s",
    "e2e_s",
    "generation_s",
    "prompt_processing_s",
)
"""The times of a record's metrics, which a slower engine stretches alike."""


def stretch(metrics: dict, factor: float) -> None:
    """Every time of ``metrics`` ``factor`` times as long and every rate as much slower, so
    the record stays consistent (C-RECORD)."""
    for name in TIMES:
        if metrics.get(name) is not None:
            metrics[name] *= factor
    metrics["chunk_times_s"] = [t * factor for t in metrics["chunk_times_s"]]
    for name in ("gen_tps", "native_tps"):
        if metrics.get(name) is not None:
            metrics[name] /= factor


def series_build(
    data_dir: Path, version: str, tag: str, rate: float, plan: Plan = SERIES_PLAN
) -> Path:
    """A campaign of ``plan`` on engine ``version``, each trial ``rate`` ÷ 100 times as fast
    as the fake engine's (within ±0.03 %), with a campaign id of its own, as ``measure
    --new-campaign`` registers: ``<name>-<tag>-<hash>``."""

    def mutate(record: dict) -> None:
        record["provenance"]["engine"].update(version=version, build="b1")
        if record["status"] == "ok":
            stretch(record["metrics"], 100 / rate * (1 + 0.0001 * record["repetition"]))

    directory = publishable_campaign(data_dir, plan, mutate=mutate).parent
    renamed = directory.with_name(directory.name.replace("-", f"-{tag}-", 1))
    directory.rename(renamed)
    return renamed
