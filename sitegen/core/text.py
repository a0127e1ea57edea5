"""The one bilingual text type: every sentence the site shows exists in both languages.

Catalog strings, rule titles and fixes, statistics notes, annotation reasons, suite
labels and report titles are all ``Bilingual``; a page picks its language with
``text[lang]``.
"""

from __future__ import annotations

import re
from typing import Annotated, Literal

from pydantic import AfterValidator, StringConstraints

from sitegen.core.author_fields import AUTHOR_TEXT
from sitegen.core.strict_model import StrictModel

Language = Literal["ja", "en"]
LANGUAGES: tuple[Language, ...] = ("ja", "en")
"""Site languages; the first is the default."""

CONTROL_CHARACTERS = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")
"""C0 and C1 control characters other than tab, line feed and carriage return."""


def refuse_control_characters(text: str) -> str:
    found = CONTROL_CHARACTERS.search(text)
    if found:
        raise ValueError(
            f"control character U+{ord(found.group()):04X} at position {found.start()}"
        )
    return text


NonBlank = Annotated[
    str,
    StringConstraints(min_length=1, pattern=r"\S"),
    AfterValidator(refuse_control_characters),
]
"""Text holding at least one visible character and no control character."""


class Bilingual(StrictModel):
    """A text in both site languages, neither of them blank."""

    ja: Annotated[NonBlank, AUTHOR_TEXT]
    """Japanese text."""
    en: Annotated[NonBlank, AUTHOR_TEXT]
    """English text."""

    def __getitem__(self, lang: str) -> str:
        if lang not in LANGUAGES:
            raise KeyError(lang)
        return getattr(self, lang)
