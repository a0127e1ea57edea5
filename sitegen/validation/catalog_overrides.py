"""What a project's own catalog (``theme/i18n/<lang>.yml``) may replace of sitegen's: the
interface labels of ``OVERRIDABLE`` (navigation, the site's name, page headings,
buttons), each with exactly the placeholders of sitegen's string, in the same order, and
some visible text. The catalog's caveats, rules, disclaimers and every statement of who
measured a figure are sitegen's. The build refuses a catalog that breaks this
(``pages.i18n``), and ``sitegen check`` reports it (C-FIGURE, ``figure_checks``)."""

from __future__ import annotations

import string
import unicodedata
from pathlib import Path

import yaml

from sitegen.core.errors import Issue, one_line
from sitegen.core.string_catalog import packaged_strings
from sitegen.core.text import LANGUAGES, Bilingual
from sitegen.core.yaml_text import read_yaml
from sitegen.validation.figures import readable

OVERRIDABLE: tuple[str, ...] = (
    "site.name",  # the site's name (mkdocs.yml's title replaces it as well)
    "page.*",  # navigation: the report pages' names and titles (Summary, Speed …)
    "compare.title",  # the navigation section and heading of the comparisons
    "changelog.title",  # the changelog's navigation entry and heading
    "history.title",  # a report's history page heading ("History: {title}")
    "overview.table",  # the heading of the home page's table of campaigns
    "see_also.lead",  # "More detail:" before the links to a report's other pages
    "kpi.more.*",  # the links under the summary's cards ("Speed details" …)
    "version.to_latest",  # the button from an older version to the latest
    "answers.first",  # the answer browser's buttons and pager
    "answers.previous",
    "answers.next",
    "answers.last",
    "answers.go",
    "answers.pages",
    "answers.page",
    "table.scroll_hint",  # "(scroll sideways for more columns →)"
)
"""The catalog keys a project's ``theme/i18n/<lang>.yml`` may replace: interface labels
only (a key, or a prefix ending in ``.*``). Every other string is sitegen's and cannot be
replaced: caveats (``caveat.*``), rules, quotations (``literal.*``, ``literals.*``),
imported reports (``imported.*``), signing, method and review statements, glossary
definitions, table headings and column names that say what a figure is, and every label
that says who measured a figure; a project that changed them could turn a caveat into a
false statement with no figure in it."""

INVISIBLE_CATEGORIES = frozenset({"Cc", "Cf"})
"""Control and format characters (zero width spaces, bidi marks): a label has no use for
them, and they make what is read differ from what is shown."""


def overridable(key: str) -> bool:
    """Whether a project may replace catalog string ``key`` (``OVERRIDABLE``)."""
    return any(
        key.startswith(entry[:-1]) if entry.endswith(".*") else key == entry
        for entry in OVERRIDABLE
    )


def catalog_override_issues(
    project_dir: Path, packaged: dict[str, Bilingual] | None = None
) -> list[Issue]:
    """One line per string of the project's ``theme/i18n/<lang>.yml`` that cannot replace
    sitegen's, naming the file and key: a file that is not a mapping, a key sitegen's
    catalog lacks (no page would show it), a key outside ``OVERRIDABLE`` (the package's),
    a text that is blank or invisible, holds control or format characters, or whose
    placeholders differ from sitegen's string (dropped, added or moved)."""
    packaged = packaged_strings() if packaged is None else packaged
    issues: list[Issue] = []
    for lang, path in catalog_files(project_dir):
        try:
            loaded = read_yaml(path) or {}
        except yaml.YAMLError as exc:
            issues.append(Issue(str(path), f"not valid YAML: {one_line(exc)}", "i18n"))
            continue
        if not isinstance(loaded, dict):
            issues.append(Issue(str(path), "not a mapping of catalog keys to strings", "i18n"))
            continue
        for key, text in loaded.items():
            where = f"{path} → {key}"
            problem = _override_problem(str(key), text, packaged, lang)
            if problem:
                issues.append(Issue(where, problem, "i18n"))
    return issues


def _override_problem(
    key: str, text: object, packaged: dict[str, Bilingual], lang: str
) -> str | None:
    if key not in packaged:
        return "not a key of sitegen's catalog"
    if not overridable(key):
        return (
            "the package's string: caveats, rules, disclaimers and who measured a figure "
            "are sitegen's; a project may replace only interface labels (OVERRIDABLE in "
            "sitegen/validation/catalog_overrides.py, docs/project.md)"
        )
    if text is not None and not isinstance(text, str | int | float):
        return "not a text: a catalog string is one line of text"
    if not readable(str(text or "")).strip():
        return "blank: whitespace or invisible characters alone; a label needs visible text"
    text = str(text)
    hidden = sorted({c for c in text if unicodedata.category(c) in INVISIBLE_CATEGORIES})
    if hidden:
        named = ", ".join(f"U+{ord(c):04X}" for c in hidden)
        return f"holds invisible control or format characters ({named}): write the label as shown"
    wanted, have = placeholders(packaged[key][lang]), placeholders(text)
    if have is None:
        return "an unpaired or malformed brace: braces only as sitegen's placeholders"
    if have != wanted:
        return _placeholder_problem(wanted or [], have)
    return None


def _placeholder_problem(wanted: list[str], have: list[str]) -> str:
    shown = ", ".join(wanted) if wanted else "none"
    if sorted(have) == sorted(wanted):
        change = f"moved (this text has {', '.join(have)})"
    elif len(have) < len(wanted) or set(have) < set(wanted):
        change = f"dropped (this text has {', '.join(have) or 'none'})"
    else:
        change = f"added or changed (this text has {', '.join(have)})"
    return (
        f"placeholders {change}: a label keeps exactly sitegen's placeholders ({shown}), "
        "in their order"
    )


def placeholders(template: str) -> list[str] | None:
    """The placeholders of ``template`` in order, each as written (``{n}``,
    ``{value:.1f}``); ``None`` when its braces do not parse."""
    try:
        parsed = list(string.Formatter().parse(template))
    except ValueError:
        return None
    return [
        "{" + name + (f"!{conversion}" if conversion else "") + (f":{spec}" if spec else "") + "}"
        for _, name, spec, conversion in parsed
        if name is not None
    ]


def catalog_files(project_dir: Path) -> list[tuple[str, Path]]:
    """The project's catalog files that exist, with their language."""
    files = [(lang, project_dir / "theme" / "i18n" / f"{lang}.yml") for lang in LANGUAGES]
    return [(lang, path) for lang, path in files if path.is_file()]
