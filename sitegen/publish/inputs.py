"""What a build is made from, hashed: an unchanged build stops here, before anything
imports the renderer (pandas, plotly and mkdocs are slow to import)."""

from __future__ import annotations

import hashlib
from collections.abc import Collection, Mapping
from importlib import metadata
from pathlib import Path

from sitegen.core.signing import PUBLIC_KEY_FILE
from sitegen.publish.marker import BuildMarker, read_build_marker
from sitegen.records.layout import CAMPAIGNS_DIR, LOCK_FILE, REGISTRY_FILE, check_skipped

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

SITEGEN_CODE = Path(__file__).parent.parent
"""sitegen's own code (the package folder above ``publish/``), which the digest covers."""


def input_digest(
    data_dir: Path,
    project_dir: Path,
    version: str | None,
    skip: Collection[str] | Mapping[str, str] = (),
) -> str:
    """SHA-256 over everything the site is made from: the files a build reads, sitegen's
    own code and the renderer versions (cheap next to rendering: hashing, no parsing).

    ``skip``: the campaign directories left out (``--skip``): the list and its reasons
    count, their files do not. The registry of campaigns (``registry.jsonl``) counts: the
    site lists the discarded campaigns it names.

    Campaign files count by size and modification time, not by their bytes: records files
    grow to gigabytes, and a build reads them once, hashing them against their manifest as
    it parses them. A campaign changed in place with its size and time kept is therefore
    not noticed here; it would be at the next build that renders, and ``sitegen verify``
    finds it at any time. The site in place stays the one built from the signed bytes."""
    digest = hashlib.sha256()

    def add(name: str, data: bytes) -> None:
        digest.update(f"{name}\0{len(data)}\0".encode())
        digest.update(data)

    add("label", (version or "").encode())
    reasons = skip if isinstance(skip, Mapping) else dict.fromkeys(skip, "")
    add("skip", "\0".join(f"{name}\0{reasons[name]}" for name in sorted(reasons)).encode())
    roots = {
        "project": project_dir,
        "sitegen": SITEGEN_CODE,
        "campaigns": data_dir / CAMPAIGNS_DIR,
        "data": data_dir,
    }
    # The key file too: a build refuses one missing or replaced (signing.project_key).
    sources = [("project", project_dir / "mkdocs.yml"), ("project", project_dir / PUBLIC_KEY_FILE)]
    sources += [("project", p) for f in ("content", "theme") for p in (project_dir / f).rglob("*")]
    sources += [("sitegen", p) for p in roots["sitegen"].rglob("*")]
    sources += [("campaigns", p) for p in roots["campaigns"].rglob("*")]
    sources += [("data", data_dir / REGISTRY_FILE)]
    for root, path in sorted(sources):
        relative = path.relative_to(roots[root])
        # Every campaign file but the engine logs and the lock a measure takes (plans,
        # records, annotations), and none of a campaign left out with --skip.
        ignored = "__pycache__" in relative.parts or (
            root == "campaigns"
            and (
                "logs" in relative.parts or relative.name == LOCK_FILE or relative.parts[0] in skip
            )
        )
        if not path.is_file() or ignored:
            continue
        if root == "campaigns":
            stat = path.stat()
            add(f"{root}/{relative.as_posix()}", f"{stat.st_size}:{stat.st_mtime_ns}".encode())
        else:
            add(f"{root}/{relative.as_posix()}", path.read_bytes())
    for package in RENDERING_PACKAGES:
        add(package, metadata.version(package).encode())
    return digest.hexdigest()


def unchanged_build(
    data_dir: Path,
    site_dir: Path,
    project_dir: Path,
    version: str | None,
    skip: Collection[str] | Mapping[str, str] = (),
) -> tuple[str, BuildMarker | None]:
    """The inputs' digest, and the site's build marker when the site was built from
    exactly these inputs (``None``: something changed). Raises ``UsageError`` when
    ``skip`` names no campaign."""
    check_skipped(data_dir, skip)
    inputs_sha256 = input_digest(data_dir, project_dir, version, skip)
    marker = read_build_marker(site_dir)
    if marker is not None and marker.inputs_sha256 == inputs_sha256:
        return inputs_sha256, marker
    return inputs_sha256, None
