"""What a project's ``mkdocs.yml`` may set (``SiteSettings``: where the site lives, its
branding and the labels of redacted values), read and checked once for every stage that
needs it: the build renders with it, redaction labels with it, validation reads its
author texts and palette."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal

import yaml
from pydantic import Field, HttpUrl, ValidationError, field_validator

from sitegen.core.author_fields import ENV_NAME, HASH, HOST_NAME, PATH, AuthorStr, AuthorText
from sitegen.core.errors import DataError, Issue, one_line
from sitegen.core.project import require_project
from sitegen.core.signing import FINGERPRINT_PATTERN
from sitegen.core.strict_model import StrictModel
from sitegen.core.svg_logo import svg_logo_problems
from sitegen.core.text import Bilingual
from sitegen.core.yaml_text import read_yaml


class EnvPolicy(StrictModel):
    """How ``provenance.env`` values are published."""

    keep: list[Annotated[str, ENV_NAME]] = [
        "CUDA_VISIBLE_DEVICES",
        "NCCL_P2P_DISABLE",
        "OMP_NUM_THREADS",
    ]
    """Variables whose values are published as recorded (device selection, thread counts);
    every other variable's value is published as a label. Replaces the default list."""


class RedactPolicy(StrictModel):
    """The ``redact`` section of a project's ``mkdocs.yml``: labels declared for values
    that would locate the measuring machine; anything not declared gets a hash label."""

    hosts: dict[Annotated[str, HOST_NAME], AuthorStr] = {}
    """Host name → label, e.g. ``gpu-node-7: node A``: the provenance host, Ray node hosts
    and the host of a ``base_url``. Labels must differ from one another; a label names a
    machine, never its hardware (``NVIDIA``, ``GPU``, ``H200`` …: the hardware a page shows
    comes from the records) and states no figure (C-FIGURE)."""
    env: EnvPolicy = EnvPolicy()
    """Environment variables published as recorded."""

    @field_validator("hosts")
    @classmethod
    def _labels_distinct(cls, hosts: dict[str, str]) -> dict[str, str]:
        # Two hosts under one label would make different machines look equal.
        seen: dict[str, str] = {}
        for host, label in hosts.items():
            if not label.strip():
                raise ValueError(f"the label of {host!r} is empty")
            if label in seen:
                raise ValueError(f"{seen[label]!r} and {host!r} share the label {label!r}")
            seen[label] = host
        return hosts


class SocialLink(StrictModel):
    """A link in the footer (material's ``extra.social``)."""

    icon: Annotated[str, AuthorText("icon")] = Field(pattern=r"^[a-z0-9/_-]+$")
    """A material icon name, e.g. ``fontawesome/brands/github``."""
    link: HttpUrl
    """Where it goes."""
    name: AuthorStr | None = None
    """Its tooltip."""


class Branding(StrictModel):
    """The ``extra`` settings a project may set."""

    social: list[SocialLink] = []
    """Footer links."""


MaterialColor = Literal[
    "red", "pink", "purple", "deep purple", "indigo", "blue", "light blue", "cyan", "teal",
    "green", "light green", "lime", "yellow", "amber", "orange", "deep orange",
]  # fmt: skip
"""The colours material has for both primary and accent."""


class Palette(StrictModel):
    """The site's colours, by material's names."""

    primary: MaterialColor | Literal["brown", "grey", "blue grey", "black", "white"] | None = None
    """The header's colour."""
    accent: MaterialColor | None = None
    """The colour of links on hover and of controls."""


class SiteSettings(StrictModel):
    """What a project's ``mkdocs.yml`` may set: where the site lives, its branding and the
    labels of redacted values. Everything else is the build's."""

    title: Bilingual | None = None
    """The site's name per language (``{ja: …, en: …}``; author text: C-FIGURE applies);
    without it the catalog's ``site.name``."""
    site_url: HttpUrl | None = None
    """The address the site is published at (each version gets ``v/<label>/`` appended)."""
    site_description: AuthorStr | None = None
    """The site's description (a meta tag)."""
    site_author: AuthorStr | None = None
    """The site's author (a meta tag)."""
    copyright: Annotated[str, AuthorText("copyright")] | None = None
    """The footer line (author text: C-FIGURE applies)."""
    repo_url: HttpUrl | None = None
    """The project's repository, linked from the header."""
    repo_name: AuthorStr | None = None
    """The repository's name as shown."""
    logo: Annotated[str, PATH] | None = None
    """The header's logo: a file under the project's ``theme/assets/`` (e.g. ``logo.svg``);
    an SVG one may only draw (``core.svg_logo``: no text, scripts or outside references)."""
    palette: Palette | None = None
    """The site's colours (material's ``palette.primary`` and ``palette.accent`` names)."""
    indexing: Literal["allow", "noindex"] | None = None
    """Whether search engines may index the pages (``noindex`` puts a robots meta tag on
    every page); default ``allow`` once ``site_url`` is set, else ``noindex``."""
    extra: Branding = Branding()
    """Footer links."""
    redact: RedactPolicy = RedactPolicy()
    """Labels for host names, server addresses, paths and environment values of the
    measuring machine (published records and pages show labels, never the values)."""
    signing_key: Annotated[str, HASH] | None = Field(default=None, pattern=FINGERPRINT_PATTERN)
    """The fingerprint of the project's key (``sha256:<hex>``, which ``sitegen keys init``
    writes): with it, build, check and verify refuse to run when ``keys/signing.pub`` is
    missing or holds another key, and the method pages give it to customers to pin."""

    @field_validator("logo")
    @classmethod
    def _inside_assets(cls, logo: str | None) -> str | None:
        if logo is not None and (
            Path(logo).is_absolute() or ".." in Path(logo).parts or "\\" in logo
        ):
            raise ValueError("a path under the project's theme/assets/, e.g. logo.svg")
        return logo

    @property
    def noindex(self) -> bool:
        """Whether the pages ask search engines not to index them."""
        return (self.indexing or ("allow" if self.site_url else "noindex")) == "noindex"


def read_site_settings(project_dir: Path) -> SiteSettings:
    """The project's ``mkdocs.yml``; raises ``ConfigError`` when there is none and
    ``DataError`` naming the file and the key of every setting outside ``SiteSettings``
    (the build owns the rest), a logo that is not a file of ``theme/assets/`` or an SVG
    logo that writes text, runs code or refers to other files (``core.svg_logo``)."""
    path = require_project(project_dir)
    try:
        loaded = read_yaml(path) or {}
        settings = SiteSettings.model_validate(loaded)
    except yaml.YAMLError as exc:
        raise DataError([Issue(str(path), f"not valid YAML: {one_line(exc)}", "config")]) from None
    except ValidationError as exc:
        allowed = ", ".join(SiteSettings.model_fields)
        raise DataError(
            [
                Issue(
                    f"{path} → {'.'.join(str(p) for p in error['loc'])}",
                    f"{error['msg']}; a project may set only {allowed} (extra.social); "
                    "the build owns the rest",
                    "config",
                )
                for error in exc.errors()
            ]
        ) from None
    if settings.logo and not (project_dir / "theme" / "assets" / settings.logo).is_file():
        where = project_dir / "theme" / "assets" / settings.logo
        raise DataError([Issue(f"{path} → logo", f"no file {where}", "config")])
    logo = project_dir / "theme" / "assets" / settings.logo if settings.logo else None
    if logo is not None and (found := svg_logo_problems(logo)):
        problem = (
            f"{logo} holds {', '.join(found[:4])}{' …' if len(found) > 4 else ''}: an SVG logo "
            "only draws (no text, scripts, embedded documents, event attributes or references "
            "to other files); draw words as paths, or use a raster logo"
        )
        raise DataError([Issue(f"{path} → logo", problem, "config")])
    return settings
