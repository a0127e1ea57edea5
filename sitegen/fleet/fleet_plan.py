"""The fleet plan: which campaigns run on which machines of a Ray cluster."""

from __future__ import annotations

from pathlib import Path
from typing import Final, Literal

from pydantic import Field, model_validator

from sitegen.core.strict_model import StrictModel

FLEET_SCHEMA_VERSION: Final = 1


class FleetResources(StrictModel):
    """What one campaign needs of a node; the campaign holds it for its whole run, so no
    other campaign of the fleet is placed on the same accelerators while it measures."""

    accelerator_type: str | None = Field(default=None, min_length=1)
    """Ray accelerator type the node must have (its ``accelerator_type:<name>`` resource,
    e.g. ``H100``, ``B200``); needs ``accelerator_count``."""
    accelerator_count: int | None = Field(default=None, ge=1)
    """GPUs the campaign holds (Ray's ``num_gpus``; Ray sets ``CUDA_VISIBLE_DEVICES``)."""
    custom: dict[str, float] = Field(default_factory=dict)
    """Custom Ray resources the campaign holds, e.g. ``{gpu_b200: 1}`` for a host started
    with ``--resources '{"gpu_b200": 1}'``; ask for the node's whole quantity to hold the
    host alone."""

    @model_validator(mode="after")
    def _names_something(self) -> FleetResources:
        if self.accelerator_type is not None and self.accelerator_count is None:
            raise ValueError("accelerator_type needs accelerator_count (the GPUs to hold)")
        if self.accelerator_count is None and not self.custom:
            raise ValueError(
                "name the accelerators (accelerator_count, optionally accelerator_type) or a "
                "custom resource, so the campaign runs on the node it names and holds it alone"
            )
        for name, amount in self.custom.items():
            if not name or amount <= 0:
                raise ValueError(f"custom resource {name!r}: needs a name and an amount > 0")
            if name in ("CPU", "GPU", "memory") or name.startswith("accelerator_type:"):
                raise ValueError(
                    f"custom resource {name!r}: use accelerator_count and accelerator_type "
                    "for GPUs; custom resources are the ones a node was started with"
                )
        return self

    def ray_resources(self) -> dict[str, float]:
        """The resources in Ray's terms (``GPU``, custom names), as recorded per record."""
        gpus = {"GPU": float(self.accelerator_count)} if self.accelerator_count else {}
        return gpus | self.custom


class FleetCampaign(StrictModel):
    """One campaign of the fleet: an ordinary plan file and the node it needs."""

    plan: Path
    """The campaign's plan file (YAML, TOML or JSON), relative to the fleet file."""
    resources: FleetResources
    """What the campaign holds on its node."""


class FleetPlan(StrictModel):
    """Campaigns measured together on a Ray cluster, each as one actor on a matching node;
    the records of all of them go to one data directory on the driver."""

    schema_version: Literal[1] = FLEET_SCHEMA_VERSION
    """Version of this file's format."""
    name: str = Field(min_length=1)
    """Name of the fleet, shown in progress and errors."""
    campaigns: list[FleetCampaign] = Field(min_length=1)
    """The campaigns, each run on a node that has its resources."""
