"""Which figures a piece of author text writes: the one detector behind C-FIGURE.

Author text (content prose, titles, ids, reasons, catalog strings) may name things but
never state a figure: every figure on a page comes from the data through a directive.
The detector reads text the way a reader sees it: HTML entities decoded, compatibility
forms folded (NFKC: full-width digits, ligatures) and invisible format characters (zero
width spaces, joiners, bidi marks) removed, so ``&#50;``, ``２`` and ``1\\u200b.5`` are
the figures they show. What counts as a figure is listed here; everything else is text.
"""

from __future__ import annotations

import html
import re
import unicodedata

NAME_OR_NUMBER = re.compile(r"[A-Za-z0-9_]+(?:[-.][A-Za-z0-9_]+)*")
"""A word of ASCII letters, digits and underscores, hyphens or dots joining its parts:
``H100``, ``gemma-3-270m``, ``Q4_K_M``, ``ngram8``, ``62.27``, ``x1.22``, ``2x``."""
MULTIPLIER = re.compile(r"[xX]\d+(?:\.\d+)?")
"""A word that is a multiplier: ``x2``, ``x1.22``."""
MEASURED_DECIMAL = re.compile(r"\d\.\d{2,}")
"""A decimal with two or more places inside a word (``MTP62.27``): a measured value, not
a version (``Qwen2.5``, ``GLM-5.3``)."""

EN_NUMBER_WORDS = re.compile(
    r"\b(?:zero|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|"
    r"fourteen|fifteen|sixteen|seventeen|eighteen|nineteen|twenty|thirty|forty|fifty|sixty|"
    r"seventy|eighty|ninety|hundreds?|thousands?|millions?|billions?|trillions?|dozens?|"
    r"half|halves|halved?|halving|quarters?|double[sd]?|doubling|twice|thrice|triple[sd]?|"
    r"tripling|quadruple[sd]?|quadrupling|(?:two|three|four|five|six|seven|eight|nine|ten|twenty|"
    r"hundred|thousand|many|multi|several)-?fold|fold|percent(?:age)?s?|per\s+cent|"
    r"single-digit|double-digit|triple-digit|order\s+of\s+magnitude|orders\s+of\s+magnitude)\b",
    re.IGNORECASE,
)
"""English numbers and ratios written as words."""
KANJI_NUMERALS = "〇零一二三四五六七八九十百千万億兆"
JA_FIGURES = re.compile(
    rf"[{KANJI_NUMERALS}]+(?:倍|分の|割|パーセント|%|桁)"
    r"|分の[" + KANJI_NUMERALS + r"]"
    r"|半分|半減|半数|過半|倍増|倍速|倍に|倍の|倍以上|倍以下|倍程度|倍近く|倍弱|倍強"
    r"|パーセント|割合が[" + KANJI_NUMERALS + r"]|何倍|数倍|桁違い"
)
"""Japanese numbers in a numeric context (kanji numerals before 倍, 分の, 割 …) and ratio
words (半分, 半減, 倍になる …). ``倍率`` (ratio) and ``一つ`` stay words."""
FORMAT_CHARACTERS = "Cf"
"""Unicode category of invisible formatting characters (zero width spaces, bidi marks)."""


def readable(text: str) -> str:
    """``text`` as a reader sees it: entities decoded, NFKC-folded, format characters gone."""
    decoded = html.unescape(str(text))
    visible = "".join(c for c in decoded if unicodedata.category(c) != FORMAT_CHARACTERS)
    return unicodedata.normalize("NFKC", visible)


def _is_cjk_ideograph(character: str) -> bool:
    return unicodedata.name(character, "").startswith("CJK ")


def _other_numerals(text: str) -> list[str]:
    """Every non-ASCII numeral (other scripts' digits, ½, ②, ², Ⅻ, full-width digits);
    kanji are judged in context by ``JA_FIGURES``."""
    return [
        c
        for c in text
        if not c.isascii() and not _is_cjk_ideograph(c) and unicodedata.numeric(c, None) is not None
    ]


def _ascii_figures(text: str) -> list[str]:
    """Words that are numbers: a word starting with a digit (``50``, ``2x``, ``1M``,
    ``62.27``), a multiplier (``x2``) or a word holding a measured decimal (``MTP62.27``);
    digits inside a name (``H100``, ``Qwen2.5``) are not."""
    return [
        word
        for word in NAME_OR_NUMBER.findall(text)
        if word[0].isdigit() or MULTIPLIER.fullmatch(word) or MEASURED_DECIMAL.search(word)
    ]


def find_figures(text: str) -> list[str]:
    """Every figure ``text`` shows, in order of kind (numerals, then words)."""
    decoded = html.unescape(str(text))
    shown = readable(text)
    figures = _other_numerals(decoded) + _ascii_figures(shown)
    figures += [m.group() for m in EN_NUMBER_WORDS.finditer(shown)]
    figures += [m.group() for m in JA_FIGURES.finditer(shown)]
    return figures


def describe(figures: list[str], limit: int = 5) -> str:
    """``'50', 'half' …`` for an error message."""
    shown = ", ".join(repr(f) for f in figures[:limit])
    return shown + (" …" if len(figures) > limit else "")
