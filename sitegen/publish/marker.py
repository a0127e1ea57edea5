"""The build marker (``.sitegen-build.json`` at the site root): what the last build was
made from, so a build whose inputs have not changed does nothing."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field, ValidationError

from sitegen.core.site_layout import BUILD_MARKER, VERSION_MANIFEST, VERSIONS_DIR
from sitegen.core.strict_model import StrictModel


class BuildMarker(StrictModel):
    """The last successful build of a site."""

    schema_version: Literal[1] = 1
    """Version of this format."""
    inputs_sha256: str = Field(pattern=r"^[0-9a-f]{64}$")
    """Digest of everything the site was made from (see ``publish.inputs.input_digest``)."""
    version: str
    """Label of the version the build published (or found already published)."""
    campaigns: int = Field(ge=0)
    """Campaigns in that version."""
    records: int = Field(ge=0)
    """Records in that version."""


def write_build_marker(site: Path, marker: BuildMarker) -> None:
    from sitegen.records.layout import write_atomic

    write_atomic(site / BUILD_MARKER, (marker.model_dump_json() + "\n").encode())


def read_build_marker(site_dir: Path) -> BuildMarker | None:
    """The last build's marker, if it is whole and the version it names is in place."""
    try:
        marker = BuildMarker.model_validate_json((site_dir / BUILD_MARKER).read_bytes())
    except (OSError, ValidationError):
        return None
    if not (site_dir / VERSIONS_DIR / marker.version / VERSION_MANIFEST).is_file():
        return None
    return marker
