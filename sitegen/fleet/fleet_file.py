"""Reading a fleet plan and the campaign plans it names."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from pydantic import ValidationError

from sitegen.core.errors import ConfigError, Issue, pydantic_issues
from sitegen.fleet.fleet_plan import FleetPlan, FleetResources
from sitegen.plan.plan_file import campaign_id, load_plan, read_config_file
from sitegen.plan.plan_models import Plan


@dataclass(frozen=True)
class FleetEntry:
    """One campaign of a loaded fleet."""

    plan_path: Path
    """The plan file as found (resolved against the fleet file)."""
    plan: Plan
    resources: FleetResources
    where: str
    """The entry in the fleet file, for messages: ``fleet.yaml → campaigns.0``."""

    @property
    def campaign_id(self) -> str:
        return campaign_id(self.plan)


@dataclass(frozen=True)
class Fleet:
    """A validated fleet plan with every campaign's plan loaded."""

    path: Path
    plan: FleetPlan
    entries: tuple[FleetEntry, ...]


def load_fleet(path: Path) -> Fleet:
    """Read a fleet plan (YAML, TOML or JSON) and load each campaign's plan with
    ``load_plan``; every problem names the fleet file and the field."""
    raw = read_config_file(path, "fleet plan")
    try:
        fleet = FleetPlan.model_validate(raw)
    except ValidationError as exc:
        raise _invalid_fleet(pydantic_issues(exc, str(path))) from exc
    entries: list[FleetEntry] = []
    issues: list[Issue] = []
    seen: dict[str, str] = {}
    for index, campaign in enumerate(fleet.campaigns):
        where = f"{path} → campaigns.{index}"
        plan_path = path.parent / campaign.plan
        try:
            plan = load_plan(plan_path)
        except ConfigError as exc:
            issues.append(Issue(f"{where}.plan", str(exc)))
            continue
        entry = FleetEntry(plan_path, plan, campaign.resources, where)
        # One store per campaign directory: the same plan twice would lock itself out.
        if entry.campaign_id in seen:
            issues.append(
                Issue(
                    f"{where}.plan",
                    f"campaign {entry.campaign_id} is already listed as {seen[entry.campaign_id]}",
                )
            )
        seen.setdefault(entry.campaign_id, f"campaigns.{index}")
        entries.append(entry)
    if issues:
        raise _invalid_fleet(issues)
    return Fleet(path, fleet, tuple(entries))


def _invalid_fleet(issues: list[Issue]) -> ConfigError:
    problems = "\n  ".join(str(issue) for issue in issues)
    return ConfigError(f"invalid fleet plan:\n  {problems}")
