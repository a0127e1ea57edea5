"""The packaged string catalog (``theme/i18n/<lang>.yml``): one ``Bilingual`` per key,
read here for the pages that show it and for validation, which checks what a project's
own catalog replaces in it (``validation.catalog_overrides``)."""

from __future__ import annotations

from functools import cache
from pathlib import Path

import yaml

from sitegen.core.errors import DataError, Issue, one_line
from sitegen.core.project import packaged_theme
from sitegen.core.text import LANGUAGES, Bilingual
from sitegen.core.yaml_text import read_yaml


def load_strings(theme_dir: Path) -> dict[str, Bilingual]:
    """Every key of both catalog files; raises ``DataError`` if a file is missing or a key
    is missing or blank in one language."""
    issues: list[Issue] = []
    by_lang: dict[str, dict[str, str]] = {}
    for lang in LANGUAGES:
        path = theme_dir / "i18n" / f"{lang}.yml"
        try:
            loaded = read_yaml(path) or {}
        except FileNotFoundError:
            issues.append(Issue(str(path), "missing catalog", "i18n"))
            continue
        except yaml.YAMLError as exc:
            issues.append(Issue(str(path), f"not valid YAML: {one_line(exc)}", "i18n"))
            continue
        if not isinstance(loaded, dict):
            issues.append(Issue(str(path), "not a mapping of catalog keys to strings", "i18n"))
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


@cache
def packaged_strings() -> dict[str, Bilingual]:
    """The shipped catalog (read once a process: it is part of the installed package)."""
    return load_strings(packaged_theme())
