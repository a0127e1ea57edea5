"""``sitegen build``: records → validation → statistics → pages → a new archived version.

Everything is read and checked first, every page is rendered in memory, and only
then is the site written (to a staging directory swapped in when complete), so a
failed build leaves the previous site as it was. A build whose inputs (records,
plans, content, theme, sitegen and renderer versions, label) are those of the site
already in place does nothing.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path
from typing import Literal

import sitegen
from sitegen.check import check_site
from sitegen.pages.archive import (
    changelog_docs,
    check_label,
    compare,
    headline_figures,
    predecessor,
    read_archive,
    read_build_marker,
)
from sitegen.pages.site import VersionBuild, publish_version

RENDERING_PACKAGES = (
    "mkdocs",
    "mkdocs-material",
    "mkdocs-static-i18n",
    "markdown",
    "pymdown-extensions",
    "jinja2",
    "plotly",
    "pandas",
    "pyarrow",
    "pydantic",
)
"""Packages whose version can change the bytes of the site."""


@dataclass(frozen=True)
class BuildResult:
    site_dir: Path
    version: str
    outcome: Literal["published", "unchanged", "up-to-date"]
    """``published``: a new version was added; ``unchanged``: the label was already
    published with the same bytes; ``up-to-date``: the inputs had not changed, nothing
    was rendered."""
    campaigns: int
    records: int


def build_site(
    data_dir: Path, site_dir: Path, project_dir: Path, version: str | None = None
) -> BuildResult:
    """Publish the records of ``data_dir`` as version ``version`` (default: the date of
    the latest record, ``YYYY-MM-DD`` in UTC) of the site in ``site_dir``."""
    project_dir = project_dir.resolve()
    if version is not None:
        check_label(version)
    inputs_sha256 = input_digest(data_dir, project_dir, version)
    marker = read_build_marker(site_dir)
    if marker is not None and marker["inputs_sha256"] == inputs_sha256:
        return BuildResult(
            site_dir, marker["version"], "up-to-date", marker["campaigns"], marker["records"]
        )

    checked = check_site(data_dir, project_dir)
    records = [r for report in checked.reports for r in report.campaign.records]
    latest = max((datetime.fromisoformat(r.started_at) for r in records), default=None)
    data_epoch = int(latest.timestamp()) if latest else 0
    label = version or check_label(
        (latest or datetime.fromtimestamp(0, UTC)).astimezone(UTC).date().isoformat()
    )
    published = read_archive(site_dir)
    reports, catalogs, docs = checked.reports, checked.catalogs, dict(checked.docs)
    figures = headline_figures(reports)
    changes = compare(predecessor(published, label, data_epoch), figures)
    docs.update(changelog_docs(changes, label, catalogs, project_dir))
    counts = {"campaigns": len(reports), "records": len(records)}
    outcome = publish_version(
        VersionBuild(label, data_epoch, docs, reports, catalogs, figures),
        project_dir,
        site_dir,
        published,
        inputs_sha256,
        counts,
    )
    return BuildResult(site_dir, label, outcome, counts["campaigns"], counts["records"])


def input_digest(data_dir: Path, project_dir: Path, version: str | None) -> str:
    """SHA-256 over everything the site is made from: the files a build reads, sitegen's
    own code and the renderer versions (cheap next to rendering: hashing, no parsing)."""
    digest = hashlib.sha256()

    def add(name: str, data: bytes) -> None:
        digest.update(f"{name}\0{len(data)}\0".encode())
        digest.update(data)

    add("label", (version or "").encode())
    roots = {
        "project": project_dir,
        "sitegen": Path(sitegen.__file__).parent,
        "campaigns": data_dir / "campaigns",
    }
    sources = [("project", project_dir / "mkdocs.yml")]
    sources += [("project", p) for f in ("content", "theme") for p in (project_dir / f).rglob("*")]
    sources += [("sitegen", p) for p in roots["sitegen"].rglob("*")]
    sources += [("campaigns", p) for p in roots["campaigns"].rglob("*")]
    for root, path in sorted(sources):
        relative = path.relative_to(roots[root])
        # Every campaign file but the engine logs (plans, records, annotations).
        skipped = "__pycache__" in relative.parts or (
            root == "campaigns" and "logs" in relative.parts
        )
        if path.is_file() and not skipped:
            add(f"{root}/{relative.as_posix()}", path.read_bytes())
    for package in RENDERING_PACKAGES:
        add(package, metadata.version(package).encode())
    return digest.hexdigest()
