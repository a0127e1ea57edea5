"""The string catalog (``theme/i18n/<lang>.yml``): one ``Bilingual`` per key. A key
missing or blank in any language fails the build: every generated string exists in both
languages. A project's own ``theme/i18n/<lang>.yml`` replaces strings of the packaged
catalog (only keys it has)."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from pathlib import Path

import yaml
from markupsafe import Markup, escape

from sitegen.errors import DataError, Issue, one_line
from sitegen.project import packaged_theme
from sitegen.text import LANGUAGES, Bilingual
from sitegen.yaml_text import load_yaml

__all__ = ["LANGUAGES", "Catalog", "load_catalogs", "load_strings", "shipped_keys"]


@dataclass(frozen=True)
class Catalog:
    """The catalog seen from one language."""

    lang: str
    strings: dict[str, Bilingual]

    def t(self, key: str, **values: object) -> str:
        """The string for ``key``, with ``{name}`` placeholders filled from ``values``. With
        a markup value (a figure marked for the audit) it is markup: the string escaped, the
        markup kept as it is."""
        try:
            template = self.strings[key][self.lang]
        except KeyError:
            raise DataError(
                [Issue(f"theme/i18n/{self.lang}.yml", f"missing key '{key}'", "i18n")]
            ) from None
        if any(isinstance(value, Markup) for value in values.values()):
            return escape(template).format(**values)
        return template.format(**values) if values else template


def load_strings(theme_dir: Path) -> dict[str, Bilingual]:
    """Every key of both catalog files; raises ``DataError`` if a file is missing or a key
    is missing or blank in one language."""
    issues: list[Issue] = []
    by_lang: dict[str, dict[str, str]] = {}
    for lang in LANGUAGES:
        path = theme_dir / "i18n" / f"{lang}.yml"
        try:
            loaded = load_yaml(path.read_text(encoding="utf-8")) or {}
        except FileNotFoundError:
            issues.append(Issue(str(path), "missing catalog", "i18n"))
            continue
        except yaml.YAMLError as exc:
            issues.append(Issue(str(path), f"not valid YAML: {one_line(exc)}", "i18n"))
            continue
        by_lang[lang] = {str(k): str(v) for k, v in loaded.items()}
    if issues:
        raise DataError(issues)
    strings: dict[str, Bilingual] = {}
    for key in sorted(set().union(*(s.keys() for s in by_lang.values()))):
        missing = [lang for lang in LANGUAGES if not by_lang[lang].get(key, "").strip()]
        for lang in missing:
            where = theme_dir / "i18n" / f"{lang}.yml"
            issues.append(Issue(str(where), f"missing key '{key}'", "i18n"))
        if not missing:
            strings[key] = Bilingual(**{lang: by_lang[lang][key] for lang in LANGUAGES})
    if issues:
        raise DataError(issues)
    return strings


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
    """The strings a project's catalog files replace; raises ``DataError`` naming the file
    and key of a key the packaged catalog lacks (no page would show it) or a blank one."""
    issues: list[Issue] = []
    replaced: dict[str, dict[str, str]] = {}
    for lang in LANGUAGES:
        path = project_dir / "theme" / "i18n" / f"{lang}.yml"
        if not path.is_file():
            continue
        try:
            loaded = load_yaml(path.read_text(encoding="utf-8")) or {}
        except yaml.YAMLError as exc:
            issues.append(Issue(str(path), f"not valid YAML: {one_line(exc)}", "i18n"))
            continue
        if not isinstance(loaded, dict):
            issues.append(Issue(str(path), "not a mapping of catalog keys to strings", "i18n"))
            continue
        for key, text in loaded.items():
            if str(key) not in packaged:
                issues.append(Issue(f"{path} → {key}", "not a key of sitegen's catalog", "i18n"))
            elif not str(text or "").strip():
                issues.append(Issue(f"{path} → {key}", "blank", "i18n"))
            else:
                replaced.setdefault(str(key), {})[lang] = str(text)
    if issues:
        raise DataError(issues)
    return {
        key: Bilingual(**{lang: texts.get(lang, packaged[key][lang]) for lang in LANGUAGES})
        for key, texts in replaced.items()
    }


@cache
def packaged_strings() -> dict[str, Bilingual]:
    """The shipped catalog (read once a process: it is part of the installed package)."""
    return load_strings(packaged_theme())


@cache
def shipped_keys() -> frozenset[str]:
    """The keys of the shipped catalog: the only ones content may show with ``t(key)``
    (a key a project adds is not part of what the build checks and translates)."""
    return frozenset(packaged_strings())
