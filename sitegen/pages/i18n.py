"""The string catalog (``theme/i18n/<lang>.yml``) as the pages read it: one ``Bilingual``
per key (``core.string_catalog``). A key missing or blank in any language fails the
build: every generated string exists in both languages.

The catalog's caveats, rules, disclaimers and every statement of who measured a figure
are sitegen's: a project's own ``theme/i18n/<lang>.yml`` may replace only the interface
labels of ``OVERRIDABLE`` (navigation, the site's name, page headings, buttons), each with
exactly the placeholders of sitegen's string, in the same order, and some visible text
(``validation.catalog_overrides``; C-FIGURE reads them too: ``validation/figure_checks.py``)."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from pathlib import Path

from markupsafe import escape

from sitegen.core.errors import DataError, Issue
from sitegen.core.string_catalog import packaged_strings
from sitegen.core.text import LANGUAGES, Bilingual
from sitegen.core.yaml_text import read_yaml
from sitegen.validation.catalog_overrides import (
    catalog_files,
    catalog_override_issues,
)


@dataclass(frozen=True)
class Catalog:
    """The catalog seen from one language."""

    lang: str
    strings: dict[str, Bilingual]

    def t(self, key: str, /, **values: object) -> str:
        """The string for ``key``, with ``{name}`` placeholders filled from ``values``. With
        a markup value (anything with ``__html__``: a figure marked for the audit) it is
        markup: the string escaped, the markup kept as it is."""
        try:
            template = self.strings[key][self.lang]
        except KeyError:
            raise DataError(
                [Issue(f"theme/i18n/{self.lang}.yml", f"missing key '{key}'", "i18n")]
            ) from None
        if any(hasattr(value, "__html__") for value in values.values()):
            return escape(template).format(**values)
        return template.format(**values) if values else template


def load_catalogs(
    project_dir: Path | None = None, site_name: Bilingual | None = None
) -> dict[str, Catalog]:
    """The packaged catalog with the project's strings in place of its own, and
    ``site_name`` (``title`` of ``mkdocs.yml``) as ``site.name``; once per language."""
    strings = dict(packaged_strings())
    if project_dir is not None:
        strings.update(_project_strings(project_dir, strings))
    if site_name is not None:
        strings["site.name"] = site_name
    return {lang: Catalog(lang, strings) for lang in LANGUAGES}


def _project_strings(project_dir: Path, packaged: dict[str, Bilingual]) -> dict[str, Bilingual]:
    """The strings a project's catalog files replace; raises ``DataError`` with every
    ``catalog_override_issues``."""
    issues = catalog_override_issues(project_dir, packaged)
    if issues:
        raise DataError(issues)
    replaced: dict[str, dict[str, str]] = {}
    for lang, path in catalog_files(project_dir):
        for key, text in _loaded(path).items():
            replaced.setdefault(str(key), {})[lang] = str(text)
    return {
        key: Bilingual(**{lang: texts.get(lang, packaged[key][lang]) for lang in LANGUAGES})
        for key, texts in replaced.items()
    }


def _loaded(path: Path) -> dict:
    loaded = read_yaml(path) or {}
    return loaded if isinstance(loaded, dict) else {}


@cache
def shipped_keys() -> frozenset[str]:
    """The keys of the shipped catalog: the only ones content may show with ``t(key)``
    (a key a project adds is not part of what the build checks and translates)."""
    return frozenset(packaged_strings())
