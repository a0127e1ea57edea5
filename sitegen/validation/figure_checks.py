"""C-FIGURE over every text an author writes that reaches a page: content prose as the
page renders it; every author field of every model a build or an import reads (plan,
annotations, import declaration and registration, ``mkdocs.yml`` with its redaction
labels, ``content/sources.yaml``, ``content/prices.yaml``, comparisons), as the registry
of author fields declares them (``sitegen.core.author_fields``: one walker, no list of
fields here); catalog strings; and the side channels a reader sees without reading the
page: link and image titles and image alt texts of content Markdown (tooltips).

One detector (``validation.figures``) reads them all; each issue names the file, the
field (dotted path) and the figures found.
"""

from __future__ import annotations

import re
import string
from collections.abc import Iterable, Iterator
from functools import lru_cache
from pathlib import Path
from typing import TypeVar

import yaml
from pydantic import BaseModel, ValidationError

from sitegen.core.author_fields import AuthorField, author_texts
from sitegen.core.comparison_spec import ComparisonSpec
from sitegen.core.errors import ConfigError, Issue
from sitegen.core.price_list import PRICES_FILE, PriceList
from sitegen.core.project import packaged_theme
from sitegen.core.site_settings import RedactPolicy, SiteSettings
from sitegen.core.source_list import SourceList
from sitegen.core.text import LANGUAGES
from sitegen.core.yaml_text import check_shape, load_yaml, read_text, read_yaml
from sitegen.plan.plan_models import Plan
from sitegen.records.annotations import ANNOTATIONS_FILE, Annotations
from sitegen.records.campaign import Campaign
from sitegen.records.import_declaration import ImportDeclaration
from sitegen.records.imported_campaign import ImportedCampaign, ImportRegistration
from sitegen.records.layout import IMPORT_FILE
from sitegen.records.left_out import LeftOut
from sitegen.validation.catalog_overrides import catalog_override_issues
from sitegen.validation.figures import (
    NAME_OR_NUMBER,
    describe,
    find_figures,
    readable,
)
from sitegen.validation.rules import check, violation

M = TypeVar("M", bound=BaseModel)

COMPARISONS_DIR = Path("content") / "comparisons"
"""Declared comparisons of several campaigns, relative to the project."""


def _figure_issues(fields: Iterator[tuple[str, object]]) -> list[Issue]:
    """One issue per ``(location → field, text)`` that shows a figure."""
    return [
        violation("C-FIGURE", where, f"figure(s) {describe(found)} written by hand")
        for where, text in fields
        if text is not None and (found := find_figures(str(text)))
    ]


@check("C-FIGURE", "prose")
def _no_figures_in_prose(template: str, prose: str) -> list[Issue]:
    return _figure_issues(iter([(f"content/{template} → prose", prose)]))


def _bilingual(where: str, value: object) -> Iterator[tuple[str, object]]:
    for lang in LANGUAGES:
        yield f"{where}.{lang}", getattr(value, lang)


def author_roots() -> dict[str, type[BaseModel]]:
    """The models a build (or an import) reads whose author fields C-FIGURE checks, by the
    file they come from. Every string field reachable from them is registered as author
    text or declared safe (``sitegen.core.author_fields``; the enumeration test keeps it so)."""
    return {
        "plan.json": Plan,
        "annotations.yaml": Annotations,
        "import declaration (DECL.yaml)": ImportDeclaration,
        "import.json": ImportRegistration,
        "mkdocs.yml": SiteSettings,
        "mkdocs.yml → redact": RedactPolicy,
        "content/sources.yaml": SourceList,
        "content/prices.yaml": PriceList,
        "content/comparisons/<id>.yaml": ComparisonSpec,
    }


def author_figure_issues(model: BaseModel, where: str) -> list[Issue]:
    """C-FIGURE over every author field of ``model`` (``sitegen.core.author_fields``), each
    issue naming ``where`` (the file) and the field's dotted path."""
    return [
        violation(
            "C-FIGURE", f"{where} → {field.path}", f"figure(s) {describe(found)} written by hand"
        )
        for field in author_texts(model)
        if (found := figures_in(field))
    ]


def figures_in(field: AuthorField) -> list[str]:
    """The figures an author field shows, read as its marker says (``AuthorText.reads``)."""
    text = field.text
    if field.marker.reads == "copyright":
        text = COPYRIGHT_YEARS.sub(" ", text)
    elif field.marker.reads == "icon":  # a picture: "material/numeric-3-box" shows a figure
        text = ICON_WORDS.sub(" ", text)
    elif field.marker.reads == "name":
        text = names_out(text)
    return find_figures(text)


NAME_RATE_AFTER = re.compile(
    r"\s*(?:[×%倍秒]|x\b|tok|tokens?\b|t/s|/s|ms\b|s\b|sec)", re.IGNORECASE
)
"""What makes a number in a name a measurement: a multiplier, a percentage or a unit of
speed or time after it (``3× faster``, ``62 tok/s``)."""
NAME_NOT_A_NAME = re.compile(
    r"\d(?:\.\d+)?[xX]$|^[xX]\d|\d(?:tok|tps|ms|s|sec|secs|min|h)$", re.IGNORECASE
)
"""A word of a name that is a measurement all the same: ``1.5x``, ``x2``, ``62tok``, ``5s``."""
NAME_VERSION = re.compile(
    r"v?\d+(?:\.\d+){2,}(?:[-+][0-9A-Za-z.]+)?|v\d+(?:\.\d+)*(?:[-+][0-9A-Za-z.]+)?"
    r"|(?=[0-9a-f]*[a-f])[0-9a-f]{7,64}"
)
"""A version (``0.11.0``, ``2026.10.11549``, ``v1.2-rc1``) or a commit or digest."""
NAME_NUMBER = re.compile(r"\d+(?:\.\d)?")
"""A model number or short version after a word: ``EPYC 9654``, ``Llama 3.1``, ``NVLink 4``."""
AFTER_A_WORD = re.compile(r"[A-Za-z][\w.+-]*\s+$")


def names_out(text: str) -> str:
    """A name with the digit words that belong to it taken out (``AMD EPYC 9654``,
    ``NVIDIA H100 80GB``, ``EXL3 sc_3.10bpw``, ``xllamacpp 2026.10.11549``): a version, a
    word holding a letter, a model number after a word. A number with a multiplier or a
    unit of speed or time (``3×``, ``62.27``, ``62 tok/s``, ``5s``), a number word, a
    look-alike or a kanji number stays a figure."""
    shown = readable(text)
    kept, end = [], 0
    for m in NAME_OR_NUMBER.finditer(shown):
        word = m.group()
        if not any(c.isdigit() for c in word) or not find_figures(word):
            continue  # H100, Qwen2.5: the detector reads them as names already
        rate_after = NAME_RATE_AFTER.match(shown, m.end())
        if rate_after or NAME_NOT_A_NAME.search(word):
            continue
        if (
            NAME_VERSION.fullmatch(word)
            or any(c.isalpha() for c in word)
            or (NAME_NUMBER.fullmatch(word) and AFTER_A_WORD.search(shown[: m.start()]))
        ):
            kept += [shown[end : m.start()], "name"]
            end = m.end()
    return "".join([*kept, shown[end:]])


@check("C-FIGURE", "campaign")
def _no_figures_in_plan_or_annotations(campaign: Campaign) -> list[Issue]:
    return author_figure_issues(
        campaign.plan, str(campaign.directory / "plan.json")
    ) + author_figure_issues(campaign.annotations, str(campaign.annotations_path))


@check("C-FIGURE", "campaign", imported=True)
def _no_figures_in_declaration_or_annotations(campaign: ImportedCampaign) -> list[Issue]:
    """What an imported campaign declares (``import.json``: the title, the conditions' ids
    and labels, the names of the device, engine, model and quantization) and its
    annotations."""
    return author_figure_issues(
        campaign.registration, str(campaign.directory / IMPORT_FILE)
    ) + author_figure_issues(campaign.annotations, str(campaign.directory / ANNOTATIONS_FILE))


def left_out_figure_issues(entries: Iterable[LeftOut]) -> list[Issue]:
    """C-FIGURE over the reasons of the campaigns a version leaves out, which its changelog
    and method pages show (the reasons of the campaigns it publishes are checked with them)."""

    def fields() -> Iterator[tuple[str, object]]:
        for entry in entries:
            if entry.reason is None:
                continue
            if entry.cause == "annotations":
                yield from _bilingual(entry.where, entry.reason)
            else:  # one text, shown in both languages
                yield entry.where, entry.reason.en

    return _figure_issues(fields())


@check("C-FIGURE", "project")
def _no_figures_in_comparisons(project_dir: Path) -> list[Issue]:
    directory = project_dir / COMPARISONS_DIR
    return [
        issue
        for path in (sorted(directory.glob("*.yaml")) if directory.is_dir() else [])
        if (spec := _validated(ComparisonSpec, path)) is not None
        for issue in author_figure_issues(spec, str(path))
    ]


@check("C-FIGURE", "project")
def _no_figures_in_catalog_strings(project_dir: Path) -> list[Issue]:
    """The packaged catalog's strings the code shows as they are (no ``{value}`` filled
    in), and every string the project replaces, its placeholders left out."""
    issues: list[Issue] = []
    for theme, own in ((packaged_theme(), False), (project_dir / "theme", True)):
        for lang in LANGUAGES:
            path = theme / "i18n" / f"{lang}.yml"
            try:
                text = read_text(path)
            except ConfigError:
                continue  # missing, not UTF-8, too large: the catalog loader reports it
            issues += _catalog_file_issues(str(path), text, own)
    return issues


@check("C-FIGURE", "project")
def _catalog_overrides_only_relabel(project_dir: Path) -> list[Issue]:
    """A project's catalog replaces interface labels only, keeping their placeholders
    (``catalog_overrides``): caveats and disclaimers are sitegen's."""
    return catalog_override_issues(project_dir)


@lru_cache(maxsize=16)
def _catalog_file_issues(path: str, text: str, every: bool = False) -> tuple[Issue, ...]:
    """The issues of one catalog file with this text: a pure function of both, kept, as the
    packaged catalog (hundreds of strings) is the same at every build of a process.
    ``every``: strings with placeholders too (a project's), read without them."""
    try:
        loaded = check_shape(load_yaml(text), path)
    except (yaml.YAMLError, ConfigError, RecursionError):
        return ()  # the catalog loader reports it
    strings = loaded if isinstance(loaded, dict) else {}
    return tuple(
        _figure_issues(
            (f"{path} → {key}", PLACEHOLDER.sub(" ", str(value)) if every else value)
            for key, value in strings.items()
            if every or not has_placeholders(str(value))
        )
    )


PLACEHOLDER = re.compile(r"\{[^{}]*\}")
"""A ``{name}`` of a catalog string: a value the code fills in, not author text."""


@check("C-FIGURE", "project")
def _no_figures_in_sources(project_dir: Path) -> list[Issue]:
    """The titles and publishers of ``content/sources.yaml``, which every quotation shows
    beside its figure and the method page lists."""
    path = project_dir / "content" / "sources.yaml"
    sources = _validated(SourceList, path) if path.is_file() else None
    return author_figure_issues(sources, str(path)) if sources is not None else []


@check("C-FIGURE", "project")
def _no_figures_in_prices(project_dir: Path) -> list[Issue]:
    """The device names and sources of ``content/prices.yaml``, which the speed page shows
    beside every cost (the prices themselves are numbers the page marks as figures)."""
    path = project_dir / PRICES_FILE
    prices = _validated(PriceList, path) if path.is_file() else None
    return author_figure_issues(prices, str(path)) if prices is not None else []


def markup_text_issues(template: str, fields: Iterable[tuple[str, str]]) -> list[Issue]:
    """C-FIGURE over the texts of a content page that are not its prose: tooltips (link,
    image and reference-definition titles) and image alt texts (``Prose.attributes``), each
    named by its field."""
    return _figure_issues((f"content/{template} → {field}", text) for field, text in fields)


COPYRIGHT_YEARS = re.compile(
    r"^\s*(?:©|\(c\)|copyright)\s*(?:19|20)\d\d(?:\s*[-–]\s*(?:19|20)\d\d)?\b", re.IGNORECASE
)
"""The years a copyright line opens with ("© 2025–2026 …"): a date, not a figure."""


@check("C-FIGURE", "project")
def _no_figures_in_site_settings(project_dir: Path) -> list[Issue]:
    """Every author text of ``mkdocs.yml``: the site's title, description, author,
    copyright line and repository name, the footer's social links (names and icons) and
    the labels of redacted hosts."""
    path = project_dir / "mkdocs.yml"
    settings = _validated(SiteSettings, path)
    return author_figure_issues(settings, str(path)) if settings is not None else []


ICON_WORDS = re.compile(r"[/_-]")
"""What separates the words of an icon's name (``fontawesome/brands/github``)."""


def has_placeholders(template: str) -> bool:
    """Whether a catalog string takes values (``{name}``)."""
    try:
        return any(name is not None for _, name, _, _ in string.Formatter().parse(template))
    except ValueError:  # an unpaired brace: the string is shown as it is
        return False


def _validated(model: type[M], path: Path) -> M | None:
    """The model a YAML file holds; ``None`` when it is missing, not YAML or not valid
    (the loaders that own the file report those: C-FIGURE reads it once it is)."""
    try:
        return model.model_validate(_yaml_mapping(path))
    except ValidationError:
        return None


def _yaml_mapping(path: Path) -> dict:
    """The mapping a YAML file holds; ``{}`` when it is missing or not a mapping (the
    loaders that own the file report those)."""
    try:
        loaded = read_yaml(path)
    except (OSError, yaml.YAMLError, ConfigError):
        return {}
    return loaded if isinstance(loaded, dict) else {}
