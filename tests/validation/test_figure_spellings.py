"""The figure detector built from data (``validation.lexicon``): spellings of a figure in
other scripts, languages, look-alike letters and symbols are caught; names, ordinary words
holding a numeral and everything the project ships are not."""

from __future__ import annotations

import re
import time
from pathlib import Path

import pytest
import yaml

from sitegen.validation import lexicon as lexicon_module
from sitegen.validation.figures import find_figures
from sitegen.validation.lexicon import EXCLUDED, LANGUAGES, LEXICALIZED, lexicon

ROOT = Path(__file__).resolve().parents[2]

SPELLINGS = {
    # English multiplicatives and fractions
    "twelvefold": "It is twelvefold faster.",
    "fifteenfold": "A fifteenfold gain.",
    "treble": "Speculation can treble the rate.",
    "quintuple": "It would quintuple throughput.",
    "centuple": "A centuple gain.",
    "a-fifth": "It takes a fifth of the time.",
    "a-third-faster": "It is a third faster.",
    # look-alike characters (Unicode confusables)
    "capital-i-for-one": "It is I.5x faster.",
    "letters-for-ten": "It is lOx faster.",
    "cyrillic-ze-times": "It is З× faster.",
    "times-sign-alone": "It is ЗО × faster.",
    "cyrillic-es-in-a-word": "It is twi\u0441e as fast.",
    # kanji numbers with a unit or counter, and ratio words
    "per-second-tokens": "毎秒六十二トークンを出す。",
    "seconds": "五秒で終わる。",
    "points": "二十ポイント上がった。",
    "about": "約三秒で終わる。",
    "bai-alone": "速さは倍。",
    "bai-financial-two": "弐倍だ。",
    "bai-twenty": "廿倍だ。",
    "bai-simplified-financial-two": "贰倍快。",
    "bai-liang": "两倍快。",
    "double-katakana": "ダブルの速さ。",
    "half-katakana": "ハーフの時間。",
    "count-of-answers": "十件の回答を除いた。",
    # Korean, French, German, Spanish
    "korean-du-bae": "속도가 두 배입니다.",
    "french-deux-fois": "deux fois plus rapide",
    "french-trois": "trois",
    "french-quatre-fois": "quatre fois plus rapide",
    "french-un-tiers": "un tiers du temps",
    "german-dreimal": "dreimal schneller",
    "german-zwei": "zwei",
    "german-doppelt": "doppelt so schnell",
    "spanish-doble": "doble de rápido",
    "spanish-tres-veces": "tres veces más rápido",
    "spanish-dos-veces": "dos veces más rápido",
    # symbols: keycaps, dice, dominoes, small capitals, circled and parenthesised
    "keycap-ten": "It is 🔟 times faster.",
    "keycap-sequence": "It is 3\ufe0f\u20e3 times faster.",
    "die-face": "It is ⚁ times faster.",
    "domino": "It is 🁅 times faster.",
    "small-capitals": "ᴛᴡɪᴄᴇ as fast.",
    "circled-zero-with-slash": "🄍 errors.",
    "playing-card": "It is 🂣 times faster.",
    "mahjong-tile": "🀉倍だ。",
    "turned-digit": "It is ↊ times faster.",
}


@pytest.mark.parametrize("text", SPELLINGS.values(), ids=SPELLINGS.keys())
def test_a_spelling_of_a_figure_is_caught(text):
    assert find_figures(text), text


def test_the_spellings_are_forty_four():
    assert len(SPELLINGS) == 44


@pytest.mark.parametrize("text", ["It is ⑳ times faster.", "It is ⑶ times faster.", "㈢倍だ。"])
def test_a_circled_or_parenthesised_number_is_caught(text):
    assert find_figures(text)


NAMES_AND_WORDS = {
    "model-names": "gemma-3-270m, Qwen2.5, GLM-5.3-Flash, H100, Q4_K_M, SmolLM2-135M-Instruct",
    "engine-names": "llama.cpp b9745, ExLlamaV3, ngram8, mtp2, ng2-t0.7, SHA-256",
    "letters-like-digits": "I/O, IO-bound, -O3, O2, l2 norm, I2C, l10n, XL, IX, Ox, lx",
    "ordinals": "the third input, the first and second runs, a third-party library",
    "excluded-words": "Once the run ends, the DOS prompt shows a null value of an elf binary.",
    "more-excluded-words": "Sept. and the quince; tiers of storage; un-signed; neuf",
    "words-ending-like-multipliers": "normal, decimal, optimal, manifold, scaffold, unfold, oneself",
    "japanese-words-with-numerals": (
        "一つ、一覧、一部、統一、一般、同一、唯一、一度、十分、万一、一方、二次、一時、"
        "単一、四分位、同一人物、倍率、倍精度、参照、参加"
    ),
    "japanese-unit-label": "基準条件との比（倍）",
    "japanese-single-point": "ブートストラップ区間は一点に縮退しています。",
    "japanese-sentence": "倍率は指令が示します。最初の一つを除き、十分に確かめます。",
}


@pytest.mark.parametrize("text", NAMES_AND_WORDS.values(), ids=NAMES_AND_WORDS.keys())
def test_a_name_or_an_ordinary_word_is_not_a_figure(text):
    assert find_figures(text) == []


@pytest.mark.parametrize(
    ("text", "figure"),
    [
        ("二十分待つ。", "二十分"),
        ("六十分の一", "六十分の"),
        ("第一に速い。", "第一"),
        ("三回試す。", "三回"),
        ("十件の回答", "十件"),
    ],
)
def test_a_kanji_number_before_a_counter_or_after_a_prefix_is_a_figure(text, figure):
    assert figure in find_figures(text)


def _catalog_strings():
    for lang in ("ja", "en"):
        path = ROOT / "sitegen" / "defaults" / "theme" / "i18n" / f"{lang}.yml"
        for key, value in yaml.safe_load(path.read_text(encoding="utf-8")).items():
            if not re.search(r"\{\w*\}", str(value)):  # C-FIGURE reads those without values
                yield f"{lang}.yml → {key}", str(value)


def _content_lines():
    folders = [ROOT / "sitegen" / "defaults" / "content", ROOT / "content"]
    for path in sorted(p for folder in folders for p in folder.rglob("*.md")):
        text = re.sub(r"\{\{.*?\}\}|\{%.*?%\}|\{#.*?#\}", " ", path.read_text(), flags=re.S)
        yield str(path.relative_to(ROOT)), text


def _plan_titles():
    for path in sorted((ROOT / "examples" / "plans").glob("*.yaml")):
        plan = yaml.safe_load(path.read_text(encoding="utf-8"))
        title = plan.get("title") or {}
        for lang, text in title.items() if isinstance(title, dict) else []:
            yield f"{path.name} → title.{lang}", str(text)
        for i, condition in enumerate(plan.get("conditions") or []):
            yield f"{path.name} → conditions.{i}.id", str(condition.get("id"))


def test_what_the_project_ships_states_no_figure():
    found = {
        where: figures
        for where, text in [*_catalog_strings(), *_content_lines(), *_plan_titles()]
        if (figures := find_figures(text))
    }
    assert found == {}


def test_the_lexicon_has_every_language_named():
    sizes = lexicon().size()
    assert set(LANGUAGES) == {"ja", "en", "zh", "ko", "fr", "de", "es"}
    assert set(sizes) == set(LANGUAGES)
    assert all(size >= 50 for size in sizes.values()), sizes


def test_the_lexicon_holds_generated_words_of_each_language():
    words = lexicon().words
    assert {"sixty", "twelve", "thirds"} <= words["en"]
    assert {"soixante", "trois", "cinquième"} <= words["fr"]
    assert {"zweiundsechzig", "dreimal", "drittel"} <= words["de"]
    assert {"sesenta", "veintidós", "quinto"} <= words["es"]
    assert {"六十二", "倍", "ハーフ"} <= words["ja"]
    assert {"贰", "两", "廿"} <= words["zh"]
    assert {"육십이", "두", "배"} <= words["ko"]


def test_symbols_take_their_number_from_their_unicode_name():
    symbols = lexicon().symbols
    assert symbols["⚁"] == "2" and symbols["🔟"] == "10" and symbols["🄍"] == "0"


def test_look_alikes_come_from_unicode_confusables():
    lex = lexicon()
    assert lex.digit_lookalikes["l"] == "1" and lex.digit_lookalikes["З"] == "3"
    assert lex.letter_fold[ord("с")] == "c" and lex.letter_fold[ord("ᴛ")] == "t"


def test_each_excluded_word_and_lexicalized_word_says_why():
    assert all(reason.strip() for reason in [*EXCLUDED.values(), *LEXICALIZED.values()])
    assert not set(EXCLUDED) & lexicon().alphabetic


def test_the_shipped_lexicon_is_what_its_sources_generate():
    """``python -m sitegen.validation.lexicon`` writes it anew after an upgrade."""
    if lexicon_module.shipped_sources() != lexicon_module.sources():
        pytest.skip(f"generated from {lexicon_module.shipped_sources()}")
    assert lexicon_module.to_json(lexicon_module.generate()) == lexicon_module.DATA.read_text(
        encoding="utf-8"
    )


def test_finding_figures_stays_fast():
    lexicon()
    texts = [text for _, text in _catalog_strings()]
    find_figures("warm")
    start = time.perf_counter()
    for text in texts:
        find_figures(text)
    assert time.perf_counter() - start < 1.0
