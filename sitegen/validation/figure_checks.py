"""C-FIGURE over every text an author writes that reaches a page: content prose as the
page renders it, plan titles and condition ids, annotation reasons and reviewer names,
comparison titles, catalog strings and the texts of ``mkdocs.yml`` (``copyright`` …),
and the side channels a reader sees without reading the page: link and image titles and
image alt texts of content Markdown (tooltips), the names of ``extra.social`` links and
the titles and publishers of ``content/sources.yaml``.

One detector (``validation.figures``) reads them all; each issue names the file, the
field (dotted path) and the figures found.
"""

from __future__ import annotations

import re
import string
from collections.abc import Iterable, Iterator
from functools import lru_cache
from pathlib import Path

import yaml

from sitegen.errors import Issue
from sitegen.project import packaged_theme
from sitegen.records.campaign import Campaign
from sitegen.records.left_out import LeftOut
from sitegen.text import LANGUAGES
from sitegen.validation.figures import describe, find_figures
from sitegen.validation.rules import check, violation
from sitegen.yaml_text import load_yaml

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


@check("C-FIGURE", "campaign")
def _no_figures_in_plan_or_annotations(campaign: Campaign) -> list[Issue]:
    def fields() -> Iterator[tuple[str, object]]:
        plan = campaign.plan
        where = f"{campaign.directory / 'plan.json'} →"
        yield f"{where} name", plan.name
        yield from _bilingual(f"{where} title", plan.title)
        for i, condition in enumerate(plan.conditions):
            yield f"{where} conditions.{i}.id", condition.id
        for i, spec in enumerate(plan.inputs):
            yield f"{where} inputs.{i}.id", spec.id
        for i, document in enumerate(plan.quality.documents if plan.quality else ()):
            yield f"{where} quality.documents.{i}.task_id", document.task_id
        notes = campaign.annotations
        where = f"{campaign.annotations_path} →"
        yield f"{where} reviewer", notes.reviewer
        for i, example in enumerate(notes.curated_examples):
            yield from _bilingual(f"{where} curated_examples.{i}.reason", example.reason)
        for i, analysis in enumerate(notes.post_hoc):
            yield f"{where} post_hoc.{i}.label", analysis.label
            yield from _bilingual(f"{where} post_hoc.{i}.reason", analysis.reason)

    return _figure_issues(fields())


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
def _no_figures_in_comparison_titles(project_dir: Path) -> list[Issue]:
    directory = project_dir / COMPARISONS_DIR

    def fields() -> Iterator[tuple[str, object]]:
        for path in sorted(directory.glob("*.yaml")) if directory.is_dir() else []:
            declared = _yaml_mapping(path)
            title = declared.get("title")
            for lang in LANGUAGES:
                if isinstance(title, dict):
                    yield f"{path} → title.{lang}", title.get(lang)

    return _figure_issues(fields())


@check("C-FIGURE", "project")
def _no_figures_in_catalog_strings(project_dir: Path) -> list[Issue]:
    """The packaged catalog's strings the code shows as they are (no ``{value}`` filled
    in), and every string the project replaces, its placeholders left out."""
    issues: list[Issue] = []
    for theme, own in ((packaged_theme(), False), (project_dir / "theme", True)):
        for lang in LANGUAGES:
            path = theme / "i18n" / f"{lang}.yml"
            try:
                text = path.read_text(encoding="utf-8")
            except OSError:
                continue  # missing: the catalog loader reports it
            issues += _catalog_file_issues(str(path), text, own)
    return issues


@check("C-FIGURE", "project")
def _catalog_overrides_only_relabel(project_dir: Path) -> list[Issue]:
    """A project's catalog replaces interface labels only, keeping their placeholders
    (``pages.i18n.catalog_override_issues``): caveats and disclaimers are sitegen's."""
    from sitegen.pages.i18n import catalog_override_issues  # it reads figures.readable

    return catalog_override_issues(project_dir)


@lru_cache(maxsize=16)
def _catalog_file_issues(path: str, text: str, every: bool = False) -> tuple[Issue, ...]:
    """The issues of one catalog file with this text: a pure function of both, kept, as the
    packaged catalog (hundreds of strings) is the same at every build of a process.
    ``every``: strings with placeholders too (a project's), read without them."""
    try:
        loaded = load_yaml(text)
    except yaml.YAMLError:
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
    sources = _yaml_mapping(path).get("sources")

    def fields() -> Iterator[tuple[str, object]]:
        for i, source in enumerate(sources if isinstance(sources, list) else []):
            if isinstance(source, dict):
                for field in ("title", "publisher"):
                    yield f"{path} → sources.{i}.{field}", source.get(field)

    return _figure_issues(fields())


def markup_text_issues(template: str, fields: Iterable[tuple[str, str]]) -> list[Issue]:
    """C-FIGURE over the texts of a content page that are not its prose: tooltips (link,
    image and reference-definition titles) and image alt texts (``Prose.attributes``), each
    named by its field."""
    return _figure_issues((f"content/{template} → {field}", text) for field, text in fields)


SITE_TEXT_SETTINGS = ("copyright", "site_description", "site_author", "repo_name")
"""Settings of ``mkdocs.yml`` whose text every page shows (footer, header, meta tags)."""


COPYRIGHT_YEARS = re.compile(
    r"^\s*(?:©|\(c\)|copyright)\s*(?:19|20)\d\d(?:\s*[-–]\s*(?:19|20)\d\d)?\b", re.IGNORECASE
)
"""The years a copyright line opens with ("© 2025–2026 …"): a date, not a figure."""


@check("C-FIGURE", "project")
def _no_figures_in_site_settings(project_dir: Path) -> list[Issue]:
    path = project_dir / "mkdocs.yml"
    settings = _yaml_mapping(path)

    def fields() -> Iterator[tuple[str, object]]:
        for key in SITE_TEXT_SETTINGS:
            text = settings.get(key)
            if key == "copyright" and isinstance(text, str):
                text = COPYRIGHT_YEARS.sub(" ", text)
            yield f"{path} → {key}", text
        title = settings.get("title")
        for lang in LANGUAGES:
            if isinstance(title, dict):
                yield f"{path} → title.{lang}", title.get(lang)
        extra = settings.get("extra")
        social = extra.get("social") if isinstance(extra, dict) else None
        for i, link in enumerate(social if isinstance(social, list) else []):
            if isinstance(link, dict):
                yield f"{path} → extra.social.{i}.name", link.get("name")
                # An icon is a picture: "material/numeric-3-box" shows a figure.
                icon = link.get("icon")
                yield f"{path} → extra.social.{i}.icon", ICON_WORDS.sub(" ", str(icon or ""))

    return _figure_issues(fields())


ICON_WORDS = re.compile(r"[/_-]")
"""What separates the words of an icon's name (``fontawesome/brands/github``)."""


def has_placeholders(template: str) -> bool:
    """Whether a catalog string takes values (``{name}``)."""
    try:
        return any(name is not None for _, name, _, _ in string.Formatter().parse(template))
    except ValueError:  # an unpaired brace: the string is shown as it is
        return False


def _yaml_mapping(path: Path) -> dict:
    """The mapping a YAML file holds; ``{}`` when it is missing or not a mapping (the
    loaders that own the file report those)."""
    try:
        loaded = load_yaml(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError):
        return {}
    return loaded if isinstance(loaded, dict) else {}
