"""The one bilingual text type: every sentence the site shows exists in both languages.

Catalog strings, rule titles and fixes, statistics notes, annotation reasons, suite
labels and report titles are all ``Bilingual``; a page picks its language with
``text[lang]``.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import StringConstraints

from sitegen.models import StrictModel

Language = Literal["ja", "en"]
LANGUAGES: tuple[Language, ...] = ("ja", "en")
"""Site languages; the first is the default."""

NonBlank = Annotated[str, StringConstraints(strip_whitespace=False, min_length=1, pattern=r"\S")]
"""Text holding at least one visible character."""


class Bilingual(StrictModel):
    """A text in both site languages, neither of them blank."""

    ja: NonBlank
    """Japanese text."""
    en: NonBlank
    """English text."""

    def __getitem__(self, lang: str) -> str:
        if lang not in LANGUAGES:
            raise KeyError(lang)
        return getattr(self, lang)
