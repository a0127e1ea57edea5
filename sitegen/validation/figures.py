"""Which figures a piece of author text writes: the one detector behind C-FIGURE.

Author text (content prose, titles, ids, reasons, catalog strings) may name things but
never state a figure: every figure on a page comes from the data through a directive.
The detector reads text the way a reader sees it: HTML entities decoded, compatibility
forms folded (NFKC: full-width digits, ligatures) and invisible format characters (zero
width spaces, joiners, bidi marks) removed, so ``&#50;``, ``２`` and ``1\\u200b.5`` are
the figures they show; letters that look like others are read as those (Unicode's
confusables: Cyrillic ``с`` is ``c``, ``lOx`` is ``10x``, ``З×`` is ``3×``). What counts
as a figure comes from data (``validation.lexicon``): Unicode's numeric values and
character names, number words of ja, en, zh, ko, fr, de and es, and CLDR's units.
"""

from __future__ import annotations

import html
import re
import unicodedata
from functools import cache

from sitegen.validation.lexicon import (
    CJK_PREFIXES,
    EXCLUDED,
    LEXICALIZED,
    MULTIPLICATIVES,
    ONE_AFTER_HAN,
    lexicon,
)

NAME_OR_NUMBER = re.compile(r"[A-Za-z0-9_]+(?:[-.][A-Za-z0-9_]+)*")
"""A word of ASCII letters, digits and underscores, hyphens or dots joining its parts:
``H100``, ``gemma-3-270m``, ``Q4_K_M``, ``ngram8``, ``62.27``, ``x1.22``, ``2x``."""
MULTIPLIER = re.compile(r"[xX]\d+(?:\.\d+)?")
"""A word that is a multiplier: ``x2``, ``x1.22``."""
MEASURED_DECIMAL = re.compile(r"\d\.\d{2,}")
"""A decimal with two or more places inside a word (``MTP62.27``): a measured value, not
a version (``Qwen2.5``, ``GLM-5.3``)."""
WORD = re.compile(r"[^\W\d_]+(?:['’-][^\W\d_]+)*")
"""A word of letters (any script), hyphens or apostrophes joining its parts."""
PARTS = re.compile(r"['’-]")
"""What joins the parts of a word (``many-fold``, ``sixty-two``)."""
NUMBER_SHAPE = re.compile(r"([xX]?)(\d+(?:\.\d+)?)([xX%]?)")
"""What a word of digit look-alikes spells when it is a number: ``1.5x``, ``10x``, ``3``."""
BAI_COMPOUNDS = "倍増|倍速|倍に|倍の|倍以上|倍以下|倍程度|倍近く|倍弱|倍強|何倍|数倍"
"""倍 with what makes it a ratio, named whole (倍に, 倍速); 倍 alone is a figure too, but
as a unit label in brackets (比（倍）) or after a space (a catalog's ``{value} 倍``, its
placeholder left out), in 倍率 (ratio) and in 倍精度 (double precision)."""
TIMES = re.compile(r"\s*×")
"""A multiplication sign after a word."""
FORMAT_CHARACTERS = "Cf"
"""Unicode category of invisible formatting characters (zero width spaces, bidi marks)."""


@cache
def _patterns() -> dict[str, re.Pattern[str]]:
    """The detector's expressions, built from the lexicon once per process."""
    lex = lexicon()
    num = "[" + re.escape(lex.han_numerals) + "]"
    counters = "|".join(map(re.escape, lex.cjk_counters))
    prefixes = "|".join(map(re.escape, sorted(CJK_PREFIXES, key=len, reverse=True)))
    lookalikes = "".join(sorted(c for c in lex.digit_lookalikes if c not in "xX"))
    digitish = "[0-9" + re.escape(lookalikes) + "]"
    korean = "|".join(map(re.escape, lex.korean_numerals))
    ko_counters = "|".join(
        map(
            re.escape,
            sorted((c for c in lex.cjk_counters if re.search("[가-힣]", c)), key=len, reverse=True),
        )
    )
    fractions = "|".join(sorted(lex.fractions, key=len, reverse=True))
    ratio_words = "|".join(
        sorted(
            {w for lang in ("ja", "zh") for w in MULTIPLICATIVES[lang] if len(w) > 1},
            key=len,
            reverse=True,
        )
    )
    excluded = "|".join(
        sorted(w for w in EXCLUDED if any(w in lex.words[lang] for lang in ("fr", "de", "es")))
    )
    return {
        "hangul": re.compile("[가-힣]"),
        "cjk": re.compile(
            rf"(?:{prefixes})?{num}+(?:{counters})|(?:{prefixes}){num}+|分の{num}"
            rf"|{BAI_COMPOUNDS}|(?<![（(\s])倍(?![）)率]|精度)|割合が{num}|桁違い|{ratio_words}"
        ),
        "korean": re.compile(
            rf"(?<![가-힣])(?:{korean}|[{lex.sino_korean}]+)\s?(?:{ko_counters})|절반"
        ),
        "lookalike": re.compile(rf"(?<![^\W_])[xX]?{digitish}+(?:\.{digitish}+)?[xX%]?(?![^\W_])"),
        "fraction": re.compile(
            rf"\b(?:an?|one|per)\s+(?:{fractions})\b(?![-\s]part(?:y|ies))"
            r"|\b(?:un|deux|trois|dos|tres)\s+(?:tiers|quarts?|cuartos?)\b",
            re.IGNORECASE,
        ),
        "phrase": re.compile(
            r"\b(?:per\s+cent|per\s+mille|pour\s+cent|por\s+ciento|orders?\s+of\s+magnitude"
            r"|(?:single|double|triple)-digit"
            rf"|(?:{excluded})\s+(?:veces|vez|fois|mal|times|por\s+ciento|pour\s+cent|prozent))\b",
            re.IGNORECASE,
        ),
        "keycap": re.compile(r"[0-9#*]\ufe0f?" + "\u20e3"),
    }


@cache
def _numerals() -> frozenset[str]:
    return frozenset(lexicon().numerals)


def readable(text: str) -> str:
    """``text`` as a reader sees it: entities decoded, NFKC-folded, format characters gone."""
    decoded = html.unescape(str(text))
    # Each distinct character looked up once, not each of the text's characters.
    hidden = [c for c in set(decoded) if unicodedata.category(c) == FORMAT_CHARACTERS]
    visible = decoded.translate(dict.fromkeys(map(ord, hidden))) if hidden else decoded
    return unicodedata.normalize("NFKC", visible)


def _is_cjk_ideograph(character: str) -> bool:
    return unicodedata.name(character, "").startswith("CJK ")


def _other_numerals(text: str) -> list[str]:
    """Every non-ASCII numeral (other scripts' digits, ½, ②, ², Ⅻ, full-width digits) and
    every symbol whose name states a number (⚁, 🔟); kanji are judged in context."""
    if text.isascii():
        return []
    numerals = _numerals()
    return [c for c in text if c in numerals]


def _ascii_figures(text: str) -> list[str]:
    """Words that are numbers: a word starting with a digit (``50``, ``2x``, ``1M``,
    ``62.27``), a multiplier (``x2``) or a word holding a measured decimal (``MTP62.27``);
    digits inside a name (``H100``, ``Qwen2.5``) are not."""
    return [
        word
        for word in NAME_OR_NUMBER.findall(text)
        if word[0].isdigit() or MULTIPLIER.fullmatch(word) or MEASURED_DECIMAL.search(word)
    ]


def _lookalike_figures(folded: str, shown: str) -> list[str]:
    """Numbers spelled with characters that look like digits: ``I.5x``, ``lOx``, ``З×``.
    A word of such characters counts when it has a decimal point or a multiplier
    (``x``, ``×``, ``%``) and a real digit, a non-ASCII look-alike or two digits or more;
    ``IO``, ``O3``, ``Ox`` and ``l2`` stay words."""
    lookalikes = lexicon().digit_lookalikes
    found = []
    for m in _patterns()["lookalike"].finditer(folded):
        word = m.group()
        spelled = "".join(lookalikes.get(c, c) for c in word)
        if spelled == word:
            continue  # plain digits: the ASCII rule reads them
        shape = NUMBER_SHAPE.fullmatch(spelled)
        if shape is None:
            continue
        after = TIMES.match(folded, m.end())
        multiplied = bool(shape.group(1) or shape.group(3) or after)
        digits = shape.group(2)
        original = shown[m.start() : m.end()]
        foreign = not original.isascii()
        real = any(c.isdigit() for c in word)
        if (
            ("." in digits or multiplied)
            and (real or foreign or len(digits.replace(".", "")) >= 2)
            or (foreign and len(digits) >= 2)
        ):
            found.append(original + (shown[m.end() : after.end()] if after else ""))
    return found


def _word_figures(folded: str, shown: str) -> list[str]:
    """Number words of the lexicon's languages, multipliers (twelvefold, dreimal) and
    fractions (a third, per cent), as shown."""
    words = lexicon().alphabetic
    found: list[tuple[int, str]] = []
    for m in WORD.finditer(folded):
        word = m.group().lower()
        if word in words or (not word.isalpha() and any(p in words for p in PARTS.split(word))):
            found.append((m.start(), shown[m.start() : m.end()]))
    patterns = _patterns()
    for name in ("fraction", "phrase"):
        found += [(m.start(), shown[m.start() : m.end()]) for m in patterns[name].finditer(folded)]
    return [figure for _, figure in sorted(found, key=lambda f: f[0])]


def _cjk_figures(shown: str) -> list[str]:
    """Kanji, hanzi and hangul numbers before a counter or unit (五秒, 二十ポイント, 두 배)
    or after 約, 第, 毎秒; ratio words (倍, 半分, ハーフ). Ordinary words holding a numeral
    (一つ, 一覧, 統一, 十分) are words."""
    if shown.isascii():
        return []
    found = []
    han = lexicon().han_numerals
    patterns = _patterns()
    for m in patterns["cjk"].finditer(shown):
        figure = m.group()
        if any(w.startswith(figure) and shown.startswith(w, m.start()) for w in LEXICALIZED):
            continue
        before = shown[m.start() - 1] if m.start() else ""
        if (
            figure.startswith(ONE_AFTER_HAN)
            and before
            and _is_cjk_ideograph(before)
            and before not in han
        ):
            continue
        found.append(figure)
    if patterns["hangul"].search(shown):
        found += [m.group() for m in patterns["korean"].finditer(shown)]
    return found


def find_figures(text: str) -> list[str]:
    """Every figure ``text`` shows, in order of kind (numerals, then words)."""
    decoded = html.unescape(str(text))
    shown = readable(text)
    folded = shown.translate(lexicon().letter_fold)
    figures = _other_numerals(decoded) + _ascii_figures(shown)
    figures += [m.group() for m in _patterns()["keycap"].finditer(shown)]
    figures += _lookalike_figures(folded, shown)
    figures += _word_figures(folded, shown)
    figures += _cjk_figures(shown)
    return figures


def describe(figures: list[str], limit: int = 5) -> str:
    """``'50', 'half' …`` for an error message."""
    shown = ", ".join(repr(f) for f in figures[:limit])
    return shown + (" …" if len(figures) > limit else "")
