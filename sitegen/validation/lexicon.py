"""The data behind the figure detector (``validation.figures``), generated once per process.

Nothing here is a hand list of figures. The lexicon is built from:

- **num2words** (cardinals 0–100 and the powers of a thousand, ordinals 1–100) for ja, en,
  ko, fr, de and es, and for zh the Han numerals Unicode gives a numeric value (num2words
  has no zh);
- **Unicode's character database** (``unicodedata``): every Han ideograph with a numeric
  value (一, 弐, 廿, 贰 …), and the symbols whose *name* states a number but which have no
  numeric value (``DIE FACE-2``, ``KEYCAP TEN``, ``DOMINO TILE …-03-05``, ``TURNED DIGIT
  TWO`` …), and the small capitals and other letters named ``LATIN LETTER SMALL CAPITAL T``;
- **Unicode's confusables** (``confusables.txt``, as the package ``confusable-homoglyphs``
  ships it): which characters look like an ASCII digit (``l``, ``I``, ``O``, Cyrillic
  ``З``) or an ASCII letter (Cyrillic ``с``, Greek ``ν``);
- **CLDR** (as Babel ships it): the unit names of ja, zh and ko (秒, 時間, パーセント, 分钟,
  초 …), the counters a kanji or hangul number is read before;

and, per language, the words that multiply or divide (``-fold``, double, treble, 倍, 배,
fois, mal, veces, half, ハーフ) and the counters CLDR has no unit for (件, 回, 個, 枚 …),
which are listed below: they are grammar, not figures.

A word that is also an ordinary English, Japanese or technical word (German ``null`` and
``elf``, French ``neuf``, Spanish ``dos``, ``once`` and ``un`` …) is left out on purpose:
``EXCLUDED`` says which and why.
"""

from __future__ import annotations

import json
import re
import sys
import unicodedata
from dataclasses import asdict, dataclass
from functools import cache
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

LANGUAGES = ("ja", "en", "zh", "ko", "fr", "de", "es")
"""The languages whose number words the detector knows."""
NUM2WORDS_LANGUAGES = ("ja", "en", "ko", "fr", "de", "es")
"""Those num2words spells (it has no zh: the zh numerals come from Unicode)."""
CARDINALS = (*range(101), 1000, 10**6, 10**9, 10**12, 10**15)
ORDINALS = range(1, 101)

MULTIPLICATIVES = {
    "en": (
        "twice",
        "thrice",
        "double",
        "treble",
        "triple",
        "quadruple",
        "quintuple",
        "sextuple",
        "septuple",
        "octuple",
        "nonuple",
        "decuple",
        "centuple",
        "halve",
        "half",
        "halves",
        "quarter",
        "quarters",
        "dozen",
        "dozens",
        "percent",
        "percents",
        "percentage",
        "percentages",
        "fold",
        "manyfold",
        "multifold",
        "severalfold",
    ),
    "fr": (
        "double",
        "triple",
        "quadruple",
        "quintuple",
        "sextuple",
        "septuple",
        "octuple",
        "décuple",
        "centuple",
        "doublé",
        "doublée",
        "triplé",
        "triplée",
        "doubler",
        "tripler",
        "moitié",
        "demi",
        "demie",
        "tiers",
        "quart",
        "quarts",
        "pourcent",
        "douzaine",
    ),
    "de": (
        "doppelt",
        "doppelte",
        "doppelten",
        "doppelter",
        "verdoppelt",
        "verdoppeln",
        "verdreifacht",
        "verdreifachen",
        "halb",
        "halbe",
        "halben",
        "halber",
        "halbiert",
        "halbieren",
        "hälfte",
        "prozent",
        "dutzend",
        "zweimal",
    ),
    "es": (
        "doble",
        "triple",
        "cuádruple",
        "quíntuple",
        "séxtuple",
        "céntuplo",
        "duplicar",
        "duplicado",
        "duplica",
        "triplicar",
        "triplicado",
        "triplica",
        "mitad",
        "tercio",
        "tercios",
        "cuarto",
        "cuartos",
        "docena",
    ),
    "ja": ("倍", "半分", "半減", "半数", "過半", "ダブル", "トリプル", "ハーフ", "パーセント"),
    "zh": ("倍", "两", "倆", "翻倍", "加倍", "一半", "百分之"),
    "ko": ("배", "절반", "퍼센트"),
}
"""Words that multiply or divide, per language (the -fold words and German -mal/-fach are
made from each cardinal by ``SUFFIXES``)."""

SUFFIXES = {
    "en": ("fold",),
    "de": ("mal", "fach", "fache", "fachen", "facher", "faches", "fachem"),
}
"""A cardinal with one of these joined to it is a multiplier (twelvefold, dreimal)."""

EN_VERB_FORMS = ("double", "treble", "triple", "quadruple", "quintuple", "centuple", "halve")
"""English multiplicatives also spelled as verbs: doubles, doubled, doubling."""

EXCLUDED = {
    # German
    "null": "de 0; in English and in code the empty value (null, NULL)",
    "elf": "de 11; the ELF binary format, and an English word",
    "ein": "de 1; the indefinite article, as English 'a'",
    "eine": "de 1; the indefinite article, as English 'a'",
    "einmal": "de once; also 'noch einmal' (again), 'nicht einmal' (not even)",
    # French
    "neuf": "fr 9; also 'new' (neuf, as in 'tout neuf')",
    "un": "fr/es 1; the indefinite article, the prefix un- and the UN",
    "une": "fr 1; the indefinite article",
    "sept": "fr 7; the English 'sept' (a clan) and the abbreviation Sept.",
    "seize": "fr 16; the English verb",
    "cent": "fr 100; the English coin (per cent is caught as a phrase)",
    "mille": "fr 1000; the English 'mille' (per mille is caught as a phrase)",
    "billiard": "fr 10^15; the English game",
    "tiers": "fr a third; the English 'tiers' (levels)",
    "quart": "fr a quarter; the English unit of volume",
    "quarts": "fr quarters; the English unit of volume",
    "demi": "fr half; the English prefix demi-",
    # Spanish
    "dos": "es 2; DOS, and 'dos and don'ts'",
    "once": "es 11; the English 'once'",
    "uno": "es 1; the card game and a board's name (Arduino Uno)",
    "quince": "es 15; the English fruit",
    "mil": "es 1000; the English unit 'mil'",
    "cuarto": "es a quarter; also 'room'",
    "cuartos": "es quarters; also 'rooms'",
    # English ordinals that are no fractions
    "first": "en 1st: an ordinal, not a figure",
    "second": "en 2nd: an ordinal, and the unit of time",
    "seconds": "the unit of time",
    "firsts": "not a fraction",
}
"""Words of the lexicon the detector does not match, each with its reason: each is also an
ordinary English, Japanese or technical word. Found by checking the lexicon against the
shipped catalogs, the demo content and an English dictionary (GCIDE); one still counts before
a multiplier (dos veces, neuf fois, elf mal), see ``validation.figures``."""

CJK_COUNTERS = (
    "倍",
    "件",
    "回",
    "個",
    "割",
    "分の",
    "桁",
    "人",
    "台",
    "枚",
    "トークン",
    "ポイント",
    "語",
    "文字",
    "行",
    "問",
    "題",
    "試行",
    "段",
    "位",
    "番目",
    "パーセント",
    "%",
    # zh
    "个",
    "次",
    "成",
    # ko
    "배",
    "번",
    "개",
    "명",
    "프로",
    "토큰",
)
"""Counters a CJK number is read before that CLDR has no unit for: grammar."""
CLDR_UNIT_KINDS = ("duration-", "digital-", "concentr-", "frequency-", "graphics-", "power-")
"""The CLDR units whose ja/zh/ko names count as counters (time, data, percent, rate)."""
CJK_PREFIXES = ("約", "第", "計", "合計", "平均", "最大", "最小", "およそ", "毎秒", "毎分", "毎時")
"""Words a kanji number after them is a figure (約三, 第一, 毎秒六十二)."""
LEXICALIZED = {
    "十分": "sufficient (じゅうぶん), not ten minutes",
    "一度": "once, at one time",
    "一時": "temporarily",
    "一日": "one day, as in 一日中 (all day)",
    "一分": "a little (いちぶ)",
    "二次": "secondary",
    "一次": "primary",
    "一位": "first place, a rank",
    "一番目": "an ordinal",
    "一段": "further, all the more (一段と)",
    "一行": "a party, a line",
    "四分位": "quartile",
    "一人": "alone (一人で)",
}
"""Kanji numerals with a counter that are ordinary words."""
ONE_AFTER_HAN = "一"
"""一 after another ideograph is part of a word (統一, 同一, 唯一, 単一, 均一, 万一)."""

NUMBER_NAMES: tuple[str, ...] = (
    "ZERO",
    "ONE",
    "TWO",
    "THREE",
    "FOUR",
    "FIVE",
    "SIX",
    "SEVEN",
    "EIGHT",
    "NINE",
)
NUMBER_NAMES += ("TEN", "ELEVEN", "TWELVE")
SYMBOL_NAME = re.compile(
    r"\b(?:DIGIT|NUMBER|KEYCAP|CIRCLED|PARENTHESIZED)\s(" + "|".join(NUMBER_NAMES) + r")\b"
    r"|^DIE FACE-(\d+)$"
    r"|^DOMINO TILE (?:HORIZONTAL|VERTICAL)-(\d+)-(\d+)$"
    r"|^PLAYING CARD (" + "|".join(NUMBER_NAMES[2:11]) + r") OF "
    r"|^MAHJONG TILE (" + "|".join(NUMBER_NAMES[1:10]) + r") OF "
)
"""Names that state a number (dice, keycaps, dominoes, cards, turned and combining digits)."""
KEYCAP = unicodedata.lookup("COMBINING ENCLOSING KEYCAP")
SMALL_LETTER_NAME = re.compile(
    r"^LATIN (?:LETTER SMALL CAPITAL|SMALL LETTER DOTLESS|LETTER) ([A-Z])$"
)
"""Letters named after the ASCII letter they show (ᴛᴡɪᴄᴇ)."""
NO_FOLD_NAMES = ("CJK", "HIRAGANA", "KATAKANA", "HANGUL", "IDEOGRAPHIC", "HALFWIDTH")
"""Scripts the detector reads as themselves: never folded to an ASCII look-alike."""
SYMBOL_PLANES = range(0x20000)
"""The planes whose names are read for symbols (basic and supplementary multilingual)."""
HAN_RANGES = (range(0x3000, 0xA000), range(0xF900, 0xFB00), range(0x20000, 0x32000))


@dataclass(frozen=True)
class Lexicon:
    words: dict[str, frozenset[str]]
    """Every word generated, per language (before ``EXCLUDED``)."""
    alphabetic: frozenset[str]
    """Lowercased words matched as whole words (en, fr, de, es)."""
    fractions: frozenset[str]
    """English ordinals (third …) that are fractions after a, an, one or per."""
    han_numerals: str
    """Han characters that are numerals."""
    cjk_counters: tuple[str, ...]
    """Counters and units, longest first."""
    korean_numerals: tuple[str, ...]
    """Native Korean number words (두, 스물, 서른다섯), longest first."""
    sino_korean: str
    """The syllables of sino-Korean numbers (일, 이, 삼 … 십, 백, 만)."""
    numerals: str
    """Every character with a numeric value but the Han ideographs (digits of any script,
    ½, ②, ², Ⅻ) and every symbol whose name states a number."""
    symbols: dict[str, str]
    """Symbols whose name states a number, with it."""
    letter_fold: dict[int, str]
    """Characters that show an ASCII letter, for ``str.translate``."""
    digit_lookalikes: dict[str, str]
    """Characters that show an ASCII digit (``l``, ``O``, ``З``), with the digit."""

    def size(self) -> dict[str, int]:
        return {lang: len(words) for lang, words in self.words.items()}


def _spell(number: int, lang: str, to: str) -> str | None:
    from num2words import num2words

    try:
        return str(num2words(number, lang=lang, to=to))
    except (NotImplementedError, OverflowError, ValueError, TypeError, IndexError, KeyError):
        return None


def _tokens(phrase: str) -> list[str]:
    return [t for t in re.split(r"[\s\-]+", phrase.lower()) if t]


def _number_words(lang: str) -> tuple[set[str], set[str], list[str]]:
    """(cardinal words, ordinal words, ordinals as spelled) of one num2words language."""
    cardinals: set[str] = set()
    for n in CARDINALS:
        spelled = _spell(n, lang, "cardinal")
        if spelled:
            cardinals.update(_tokens(spelled) if lang not in ("ja", "ko") else [spelled])
    ordinals: set[str] = set()
    spelled_ordinals = []
    for n in ORDINALS:
        spelled = _spell(n, lang, "ordinal")
        if spelled:
            spelled_ordinals.append(spelled)
            ordinals.update(_tokens(spelled) if lang not in ("ja",) else [spelled])
    # joining words of compound numbers are no numbers: "et", "y", "and"
    joiners = {"et", "y", "and", "und"}
    return cardinals - joiners, ordinals - joiners, spelled_ordinals


def _inflect_en(word: str) -> set[str]:
    stem = word[:-1] if word.endswith("e") else word
    return {word, word + "s", stem + "ed", stem + "ing"}


def _cldr_units(lang: str) -> set[str]:
    """The names of CLDR's units of ``CLDR_UNIT_KINDS`` in ``lang``; of zh and ko only those
    longer than one Han character (zh 点, 天 are ordinary words in Japanese: 一点, 一天)."""
    from babel import Locale

    names: set[str] = set()
    for unit, forms in Locale(lang)._data["unit_display_names"].items():
        if not unit.startswith(CLDR_UNIT_KINDS):
            continue
        for name in forms.values():
            if (
                isinstance(name, str)
                and not name.isascii()
                and re.fullmatch(r"\w+", name)
                and (lang == "ja" or len(name) > 1 or not _is_han(name))
            ):
                names.add(name)
    return names


def _is_han(text: str) -> bool:
    return all(unicodedata.name(c, "").startswith("CJK ") for c in text)


def _han_numerals() -> str:
    found = []
    for block in HAN_RANGES:
        for cp in block:
            c = chr(cp)
            if unicodedata.numeric(c, None) is not None and unicodedata.category(c) == "Lo":
                found.append(c)
    return "".join(found)


def _numerals() -> str:
    return "".join(
        c
        for c in map(chr, range(0x80, sys.maxunicode + 1))
        if unicodedata.numeric(c, None) is not None and not _is_han(c)
    )


def _symbols() -> dict[str, str]:
    symbols: dict[str, str] = {}
    for cp in SYMBOL_PLANES:
        c = chr(cp)
        if unicodedata.numeric(c, None) is not None or unicodedata.category(c)[0] in "LC":
            continue
        name = unicodedata.name(c, "")
        if name and (m := SYMBOL_NAME.search(name)):
            word = next(g for g in m.groups() if g)
            symbols[c] = str(NUMBER_NAMES.index(word)) if word in NUMBER_NAMES else word
    return symbols


def _confusables() -> tuple[dict[int, str], dict[str, str]]:
    """(letter fold, digit look-alikes) from Unicode's confusables: two characters are
    confusable when confusables.txt maps one to the other (its prototype)."""
    from confusable_homoglyphs.confusables import confusables_data

    fold: dict[int, str] = {}
    digits: dict[str, str] = {}
    for char, entries in confusables_data.items():
        if len(char) != 1:
            continue
        if unicodedata.name(char, "").startswith(NO_FOLD_NAMES):
            continue
        looks = {e["c"] for e in entries if len(e["c"]) == 1 and e["c"].isascii()}
        shown_digits = {c for c in looks if c.isdigit()}
        letters = {c for c in looks if c.isalpha()}
        if len(shown_digits) == 1 and not char.isdigit():
            if char.isascii() and not char.isalpha():
                continue  # '|' and other punctuation: table rules, not digits
            digits[char] = shown_digits.pop()
        if not char.isascii() and unicodedata.category(char).startswith("L") and len(letters) == 1:
            fold[ord(char)] = letters.pop()
    for cp in SYMBOL_PLANES:
        c = chr(cp)
        if not c.isascii() and (m := SMALL_LETTER_NAME.match(unicodedata.name(c, ""))):
            fold.setdefault(cp, m.group(1).lower())
    # what looks like a letter that looks like a digit looks like the digit (I → l → 1)
    for char, entries in confusables_data.items():
        if len(char) == 1 and char.isalpha() and char not in digits:
            shown = [e["c"] for e in entries if e["c"].isascii() and e["c"] in digits]
            if shown:
                digits[char] = digits[shown[0]]
    for cp, letter in fold.items():
        if letter in digits:
            digits.setdefault(chr(cp), digits[letter])
    return fold, digits


def generate() -> Lexicon:
    """The lexicon, from its sources (num2words, Unicode's database and confusables, CLDR)."""
    words: dict[str, set[str]] = {lang: set() for lang in LANGUAGES}
    cardinal_words: dict[str, set[str]] = {}
    fractions: set[str] = set()
    for lang in NUM2WORDS_LANGUAGES:
        cardinals, ordinals, spelled_ordinals = _number_words(lang)
        cardinal_words[lang] = cardinals
        words[lang] |= cardinals
        if lang == "en":  # fractions: a third, two fifths (ordinals from third on)
            fractions = {_tokens(o)[-1] for o in spelled_ordinals[2:]} - {"first", "second"}
            words[lang] |= fractions | {o + "s" for o in fractions if not o.endswith("s")}
        elif lang in ("fr", "es"):  # cinquième, quinto: ordinal and fraction alike
            words[lang] |= {o for o in ordinals if o not in ("premier", "primero", "segundo")}
        elif lang == "de":  # Drittel, Fünftel: the ordinal's stem and -tel
            words[lang] |= {o[:-1] + "el" for o in _tokens(" ".join(spelled_ordinals))[2:]}
        elif lang == "ko":  # native numerals: 두 번째 → 두
            words[lang] |= {o.split(" ")[0] for o in spelled_ordinals}
            words[lang] |= {"하나", "둘", "셋", "넷", "한"}
        elif lang == "ja":
            words[lang] |= set(spelled_ordinals)
    for lang, multiplicatives in MULTIPLICATIVES.items():
        words[lang] |= {m.lower() for m in multiplicatives}
    words["en"] |= {f for w in EN_VERB_FORMS for f in _inflect_en(w)}
    words["en"] |= {w + "s" for w in cardinal_words["en"] if w.endswith(("dred", "sand", "llion"))}
    han = _han_numerals()
    words["zh"] |= set(han) | {"两", "倆"}
    for lang, suffixes in SUFFIXES.items():
        stems = {c for c in cardinal_words[lang] if c.isalpha() and c not in EXCLUDED}
        words[lang] |= {stem + suffix for stem in stems for suffix in suffixes}

    excluded = set(EXCLUDED) | fractions  # "third" alone is an ordinal: "a third" counts
    alphabetic = frozenset(
        w
        for lang in ("en", "fr", "de", "es")
        for w in words[lang]
        if w not in excluded and w.isalpha()
    )
    counters = set(CJK_COUNTERS)
    for lang in ("ja", "zh", "ko"):
        counters |= _cldr_units(lang)
    korean = words["ko"] - cardinal_words["ko"] - set(MULTIPLICATIVES["ko"])
    fold, digits = _confusables()
    symbols = _symbols()
    return Lexicon(
        words={lang: frozenset(ws) for lang, ws in words.items()},
        alphabetic=alphabetic,
        fractions=frozenset(fractions),
        han_numerals="".join(sorted(set(han) | {"两", "倆", "〇"})),
        cjk_counters=tuple(sorted(counters, key=lambda c: (-len(c), c))),
        korean_numerals=tuple(sorted(korean, key=lambda w: (-len(w), w))),
        sino_korean="".join(sorted(set("".join(cardinal_words["ko"])))),
        numerals="".join(sorted(set(_numerals()) | set(symbols))),
        symbols=symbols,
        letter_fold=fold,
        digit_lookalikes=digits,
    )


DATA = Path(__file__).with_name("figure_lexicon.json")
"""The lexicon as generated, shipped with the package: ``python -m sitegen.validation.lexicon``
writes it anew (after an upgrade of num2words, Babel or confusable-homoglyphs)."""
SOURCES = ("num2words", "babel", "confusable-homoglyphs")


def sources() -> dict[str, str]:
    """The versions the lexicon is generated from: Unicode's (Python's ``unicodedata``) and
    the packages'."""
    found = {"unicode": unicodedata.unidata_version}
    for name in SOURCES:
        try:
            found[name] = version(name)
        except PackageNotFoundError:
            found[name] = "missing"
    return found


def to_json(lex: Lexicon) -> str:
    data = asdict(lex)
    data["words"] = {lang: sorted(words) for lang, words in lex.words.items()}
    data["alphabetic"] = sorted(lex.alphabetic)
    data["fractions"] = sorted(lex.fractions)
    data["letter_fold"] = {chr(cp): letter for cp, letter in sorted(lex.letter_fold.items())}
    data["symbols"] = dict(sorted(lex.symbols.items()))
    data["digit_lookalikes"] = dict(sorted(lex.digit_lookalikes.items()))
    shipped = {"generated_by": "python -m sitegen.validation.lexicon", "sources": sources()}
    return json.dumps(shipped | data, ensure_ascii=False, indent=0, sort_keys=False) + "\n"


def from_json(text: str) -> Lexicon:
    data = json.loads(text)
    return Lexicon(
        words={lang: frozenset(words) for lang, words in data["words"].items()},
        alphabetic=frozenset(data["alphabetic"]),
        fractions=frozenset(data["fractions"]),
        han_numerals=data["han_numerals"],
        cjk_counters=tuple(data["cjk_counters"]),
        korean_numerals=tuple(data["korean_numerals"]),
        sino_korean=data["sino_korean"],
        numerals=data["numerals"],
        symbols=data["symbols"],
        letter_fold={ord(c): letter for c, letter in data["letter_fold"].items()},
        digit_lookalikes=data["digit_lookalikes"],
    )


def shipped_sources() -> dict[str, str]:
    return json.loads(DATA.read_text(encoding="utf-8"))["sources"]


@cache
def lexicon() -> Lexicon:
    """The lexicon, once per process: the shipped one, generated anew where this Python's
    Unicode database is another than the one it was generated with (a character's name or
    numeric value may have come since)."""
    try:
        text = DATA.read_text(encoding="utf-8")
        if json.loads(text)["sources"]["unicode"] == unicodedata.unidata_version:
            return from_json(text)
    except (OSError, ValueError, KeyError):
        pass
    return generate()


def main() -> None:
    lex = generate()
    DATA.write_text(to_json(lex), encoding="utf-8")
    sizes = ", ".join(f"{lang} {n}" for lang, n in lex.size().items())
    print(f"{DATA}: {sizes}", file=sys.stderr)


if __name__ == "__main__":
    main()
