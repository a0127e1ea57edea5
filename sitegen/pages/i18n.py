"""Per-language string catalogs (``theme/i18n/<lang>.yml``). A key missing in any
language fails the build: every generated string exists in both languages."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import yaml

from sitegen.errors import DataError, Issue

LANGUAGES = ("ja", "en")
"""Site languages; the first is the default."""


@dataclass(frozen=True)
class Catalog:
    """The strings of one language."""

    lang: str
    strings: dict[str, str]

    def t(self, key: str, **values: object) -> str:
        """The string for ``key``, with ``{name}`` placeholders filled from ``values``."""
        try:
            template = self.strings[key]
        except KeyError:
            raise DataError(
                [Issue(f"theme/i18n/{self.lang}.yml", f"missing key '{key}'", "i18n")]
            ) from None
        return template.format(**values) if values else template


def load_catalogs(theme_dir: Path) -> dict[str, Catalog]:
    """Both catalogs; raises ``DataError`` if their keys differ or a file is missing."""
    issues: list[Issue] = []
    strings: dict[str, dict[str, str]] = {}
    for lang in LANGUAGES:
        path = theme_dir / "i18n" / f"{lang}.yml"
        try:
            loaded = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        except FileNotFoundError:
            issues.append(Issue(str(path), "missing catalog", "i18n"))
            continue
        strings[lang] = {str(k): str(v) for k, v in loaded.items()}
    if not issues:
        all_keys = set().union(*(s.keys() for s in strings.values()))
        for lang, catalog in strings.items():
            for key in sorted(all_keys - catalog.keys()):
                issues.append(
                    Issue(f"{theme_dir / 'i18n' / f'{lang}.yml'}", f"missing key '{key}'", "i18n")
                )
    if issues:
        raise DataError(issues)
    return {lang: Catalog(lang, strings[lang]) for lang in LANGUAGES}
