"""Problem suites: deterministic generators of short Japanese problems with exact answers.

Six domains × five templates, and an opt-in easy set (``EASY_DOMAIN``: one-step English
problems for very small models) that a plan gets only by naming its templates. Every template draws its parameters from
``random.Random(f"{seed}/{template_id}")`` and computes the expected answer from those
parameters with Python arithmetic; the question text is only ever *written* from them,
never parsed. Seeding each template separately keeps templates independent (editing one
does not shift the others) and makes a suite prefix-stable: the first ``k`` problems of a
template are the same for every ``per_template >= k``. Any change to a template's output
must bump ``GENERATOR_VERSION``.
"""

from __future__ import annotations

import hashlib
import json
import math
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from decimal import Decimal
from fractions import Fraction
from itertools import permutations
from typing import Any, Literal, cast

from pydantic import model_validator

from sitegen.core.strict_model import StrictModel
from sitegen.core.text import Bilingual

GENERATOR_VERSION = "1"
UNKNOWN = "不明"
"""The correct answer when the given material does not decide the question."""
EVIDENCE_CHOICES = ("はい", "いいえ", UNKNOWN)

DomainId = Literal["arithmetic", "units", "records", "code", "logic", "evidence", "easy"]
AnswerKind = Literal["integer", "decimal", "choice", "boolean"]


class AnswerSpec(StrictModel):
    """The exact answer a problem (or one item of a document task) expects, and its format."""

    key: str = "answer"
    """Key of the answer in the JSON object the model must return."""
    kind: AnswerKind
    """Required JSON type: ``integer`` (a JSON number equal to an integer), ``decimal`` (a
    JSON number with at most ``decimals`` decimal places), ``choice`` (a JSON string from
    ``choices``) or ``boolean`` (JSON ``true``/``false``)."""
    value: bool | int | float | str
    """The correct value, computed from the generated parameters, never by a model."""
    decimals: int | None = None
    """For ``decimal``: the number of decimal places requested (half-up rounding); else null."""
    choices: tuple[str, ...] | None = None
    """For ``choice``: the allowed strings, in the order the question lists them; else null."""

    @model_validator(mode="after")
    def _value_matches_kind(self) -> AnswerSpec:
        value = self.value
        if self.kind == "integer":
            ok = type(value) is int
        elif self.kind == "decimal":
            ok = (
                type(value) in (int, float)
                and self.decimals is not None
                and self.decimals >= 0
                # a finite number's exponent is an int ('n', 'N', 'F' are NaN's and inf's)
                and -cast(int, Decimal(repr(value)).normalize().as_tuple().exponent)
                <= self.decimals
            )
        elif self.kind == "choice":
            ok = (
                type(value) is str
                and self.choices is not None
                and bool(self.choices)
                and value in self.choices
            )
        else:
            ok = type(value) is bool
        if not ok:
            raise ValueError(f"value {value!r} does not fit an answer of kind {self.kind!r}")
        if (self.decimals is not None) != (self.kind == "decimal"):
            raise ValueError("decimals is set exactly for kind 'decimal'")
        if (self.choices is not None) != (self.kind == "choice"):
            raise ValueError("choices is set exactly for kind 'choice'")
        return self


class Problem(StrictModel):
    """One generated problem with its expected answer."""

    problem_id: str
    """Stable id within the suite: ``<domain>-<number>``, numbered from 001 per domain."""
    suite_id: str
    """Id of the suite the problem belongs to."""
    domain: DomainId
    """Domain the template belongs to (see the domain list)."""
    template_id: str
    """Template that generated the problem; the stratum of the bootstrap."""
    question: str
    """Full question text with the required JSON answer format: Japanese, ending with the
    format, in the standard suite; English, opening with it, in the easy set."""
    answer: AnswerSpec
    """Expected answer and its exact format."""


class Suite(StrictModel):
    """A generated problem suite: fixed before any run, identified by its content hash."""

    suite_id: str
    """Id given by the plan."""
    generator_version: str
    """Version of the generator code; the same version, seed and size give the same suite."""
    seed: int
    """Seed of the generator."""
    per_template: int
    """Problems generated per template (reference: 20, giving 600 problems)."""
    content_sha256: str
    """SHA-256 of the canonical JSON of ``problems`` (sorted keys, UTF-8, no spaces)."""
    problems: tuple[Problem, ...]
    """The problems, ordered by domain, then template, then draw."""


class TemplateInfo(StrictModel):
    """What a template asks, for per-template tables."""

    template_id: str
    """Template id, ``<domain>.<name>``."""
    domain: DomainId
    """Domain of the template."""
    label: Bilingual
    """Short name in both languages."""
    answer_kind: AnswerKind
    """JSON type of the answer the template asks for."""


class Domain(StrictModel):
    """A problem domain and its templates."""

    domain_id: DomainId
    """Domain id, also the prefix of its problem ids."""
    label: Bilingual
    """Short name in both languages."""
    template_ids: tuple[str, ...]
    """Its templates, in generation order."""


def canonical_json(value: Any) -> str:
    """JSON with sorted keys, no spaces and unescaped non-ASCII: the hashed form."""
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def canonical_sha256(value: Any) -> str:
    """SHA-256 hex digest of :func:`canonical_json` encoded as UTF-8."""
    return hashlib.sha256(canonical_json(value).encode("utf-8")).hexdigest()


def round_half_up(value: Fraction, decimals: int) -> float:
    """Round an exact fraction to ``decimals`` places, ties away from zero (四捨五入)."""
    scale = 10**decimals
    magnitude = math.floor(abs(value) * scale + Fraction(1, 2))
    signed = magnitude if value >= 0 else -magnitude
    return float(Decimal(signed).scaleb(-decimals))


def integer_answer(value: int, key: str = "answer") -> AnswerSpec:
    return AnswerSpec(key=key, kind="integer", value=value)


def decimal_answer(value: Fraction, decimals: int, key: str = "answer") -> AnswerSpec:
    return AnswerSpec(
        key=key, kind="decimal", value=round_half_up(value, decimals), decimals=decimals
    )


def choice_answer(value: str, choices: Sequence[str], key: str = "answer") -> AnswerSpec:
    return AnswerSpec(key=key, kind="choice", value=value, choices=tuple(choices))


def boolean_answer(value: bool, key: str = "answer") -> AnswerSpec:
    return AnswerSpec(key=key, kind="boolean", value=value)


def value_type_label(spec: AnswerSpec) -> str:
    """Short Japanese name of the value type a key must hold (used in item lists)."""
    if spec.kind == "integer":
        return "整数"
    if spec.kind == "decimal":
        assert spec.decimals is not None  # AnswerSpec requires it of a decimal
        return f"小数第{spec.decimals}位までの数値（小数第{spec.decimals + 1}位を四捨五入）"
    if spec.kind == "choice":
        return "".join(f"「{choice}」" for choice in spec.choices or ()) + "のいずれかの文字列"
    return "true または false"


_NO_DECORATION = {
    "integer": "引用符や単位は付けません",
    "decimal": "引用符や単位（%など）は付けません",
    "choice": "ほかの言葉は付けません",
    "boolean": "引用符は付けません",
}


def answer_instruction(spec: AnswerSpec) -> str:
    """The closing instruction of a question: the JSON object and the exact value type."""
    if spec.kind == "boolean":
        shape = f'{{"{spec.key}": true}} または {{"{spec.key}": false}}'
    else:
        placeholder = {"integer": "整数", "decimal": "数値", "choice": '"文字列"'}[spec.kind]
        shape = f'{{"{spec.key}": {placeholder}}}'
    return (
        f"回答は {shape} の形のJSONだけで答えてください。"
        f"値は{value_type_label(spec)}で、{_NO_DECORATION[spec.kind]}。"
    )


# --- templates -------------------------------------------------------------------------
# Each returns the question body and the expected answer; the instruction is appended later.

Made = tuple[str, AnswerSpec]
_EVIDENCE_RULE = (
    "資料に書かれていないことは推測せず、資料だけでは判断できない場合は「不明」と答えてください。"
)
_PEOPLE = ("佐藤", "鈴木", "高橋", "田中", "伊藤", "渡辺")
_WEEKDAYS = ("月", "火", "水", "木", "金")


def _bullets(lines: Sequence[str]) -> str:
    return "\n".join(f"- {line}" for line in lines)


def _arithmetic_change(rng: random.Random) -> Made:
    notebook, notebooks = rng.randrange(120, 990, 10), rng.randint(2, 6)
    pen, pens = rng.randrange(80, 500, 10), rng.randint(1, 5)
    total = notebook * notebooks + pen * pens
    paid = (total // 1000 + 1) * 1000
    question = (
        f"1冊{notebook}円のノートを{notebooks}冊と、1本{pen}円のペンを{pens}本買い、"
        f"{paid:,}円を支払いました。おつりは何円ですか。"
    )
    return question, integer_answer(paid - total)


def _arithmetic_budget(rng: random.Random) -> Made:
    budget = rng.randrange(10_000, 30_001, 1000)
    units = rng.randint(2, 3)
    price = rng.randrange(1000, budget // units, 100)
    added = rng.randrange(500, 9001, 100)
    question = (
        f"部署の予算は{budget:,}円です。1台{price:,}円の備品を{units}台購入し、"
        f"その後{added:,}円の追加予算を受け取りました。予算の残高は何円ですか。"
    )
    return question, integer_answer(budget - price * units + added)


def _arithmetic_discount(rng: random.Random) -> Made:
    price = rng.randrange(1000, 10_001, 100)
    off = rng.choice((10, 15, 20, 25, 30, 35, 40))
    count = rng.randint(2, 5)
    question = (
        f"定価{price:,}円の商品が{off}%引きで売られています。この商品を{count}個買うと、"
        "合計は何円ですか。消費税は考えません。"
    )
    return question, integer_answer(price * (100 - off) // 100 * count)


def _arithmetic_work_days(rng: random.Random) -> Made:
    person_hours = rng.randint(30, 400)
    people, hours = rng.randint(2, 6), rng.randint(4, 8)
    question = (
        f"ある作業は合計{person_hours}人時かかります。{people}人が1日{hours}時間ずつ作業すると、"
        "作業を終えるのに何日必要ですか。途中で終わる日も1日と数えます。"
    )
    return question, integer_answer(math.ceil(Fraction(person_hours, people * hours)))


def _arithmetic_average(rng: random.Random) -> Made:
    scores = [rng.randint(40, 100) for _ in range(rng.randint(4, 7))]
    question = (
        f"{len(scores)}人のテストの点数は {', '.join(map(str, scores))} 点でした。"
        "平均点は何点ですか。"
    )
    return question, decimal_answer(Fraction(sum(scores), len(scores)), 1)


def _units_achievement(rng: random.Random) -> Made:
    target = rng.randint(200, 5000)
    actual = rng.randint(target * 6 // 10, target * 12 // 10)
    question = f"目標{target:,}件に対して、実績は{actual:,}件でした。達成率は何%ですか。"
    return question, decimal_answer(Fraction(actual * 100, target), 2)


def _units_minutes(rng: random.Random) -> Made:
    first = (rng.randint(0, 5), rng.randint(1, 59))
    second = (rng.randint(0, 5), rng.randint(1, 59))
    question = (
        f"作業Aに{first[0]}時間{first[1]}分、作業Bに{second[0]}時間{second[1]}分かかりました。"
        "合計は何分ですか。"
    )
    return question, integer_answer((first[0] + second[0]) * 60 + first[1] + second[1])


def _units_storage(rng: random.Random) -> Made:
    size_mb, count = rng.randint(150, 3000), rng.randint(3, 40)
    question = (
        f"1個{size_mb:,}MBのファイルを{count}個保存します。合計は何GBですか。"
        "1GB = 1,024MBとします。"
    )
    return question, decimal_answer(Fraction(size_mb * count, 1024), 2)


def _units_tokens_per_second(rng: random.Random) -> Made:
    tokens, centiseconds = rng.randint(200, 4000), rng.randint(300, 9000)
    seconds = f"{centiseconds // 100}.{centiseconds % 100:02d}"
    question = (
        f"{tokens:,}トークンを{seconds}秒で生成しました。1秒あたりの生成トークン数はいくつですか。"
    )
    return question, decimal_answer(Fraction(tokens * 100, centiseconds), 2)


def _units_growth(rng: random.Random) -> Made:
    previous = rng.randint(50, 900)
    current = previous
    while current == previous:
        current = rng.randint(previous * 6 // 10, previous * 14 // 10)
    question = (
        f"先月の売上は{previous}万円、今月は{current}万円でした。先月比の増減率は何%ですか。"
        "減少の場合は負の数で答えてください。"
    )
    return question, decimal_answer(Fraction((current - previous) * 100, previous), 1)


def _records_net_shipped(rng: random.Random) -> Made:
    rows = []
    for _ in range(rng.randint(5, 12)):
        shipped = rng.randint(10, 60)
        rows.append((f"K-{rng.randint(100, 999)}", shipped, rng.randint(0, min(8, shipped))))
    lines = [f"品目{code}: 出荷{shipped}個、返品{returned}個" for code, shipped, returned in rows]
    question = (
        f"次の{len(rows)}行の出荷記録について、各行の出荷数から返品数を引いた数の合計は"
        f"何個ですか。\n{_bullets(lines)}"
    )
    return question, integer_answer(sum(shipped - returned for _, shipped, returned in rows))


def _records_department_sum(rng: random.Random) -> Made:
    departments = ("営業部", "経理部", "物流部", "開発部")
    rows = [
        (rng.choice(departments), rng.randrange(500, 50_001, 100))
        for _ in range(rng.randint(6, 10))
    ]
    target = rng.choice([department for department, _ in rows])
    lines = [f"{department}: {amount:,}円" for department, amount in rows]
    question = f"次の経費記録のうち、{target}の金額の合計は何円ですか。\n{_bullets(lines)}"
    return question, integer_answer(sum(a for d, a in rows if d == target))


def _records_count_threshold(rng: random.Random) -> Made:
    waits = [rng.randint(1, 45) for _ in range(rng.randint(8, 14))]
    threshold = rng.randint(10, 30)
    first_id = rng.randint(100, 900)
    lines = [f"問い合わせ{first_id + i}: 待ち時間{wait}分" for i, wait in enumerate(waits)]
    question = (
        f"次の記録のうち、待ち時間が{threshold}分以上（{threshold}分ちょうどを含む）の"
        f"問い合わせは何件ですか。\n{_bullets(lines)}"
    )
    return question, integer_answer(sum(wait >= threshold for wait in waits))


def _records_top_store(rng: random.Random) -> Made:
    stores = rng.sample(("札幌店", "仙台店", "東京店", "名古屋店", "大阪店", "広島店", "福岡店"), 5)
    sales = rng.sample(range(120, 990), len(stores))
    lines = [f"{store}: {amount}万円" for store, amount in zip(stores, sales, strict=True)]
    question = f"次の月間売上のうち、売上が最も大きい店舗はどれですか。\n{_bullets(lines)}"
    return question, choice_answer(stores[sales.index(max(sales))], stores)


def _records_completed_average(rng: random.Random) -> Made:
    rows = [(rng.choice(("完了", "対応中")), rng.randint(1, 40)) for _ in range(rng.randint(6, 10))]
    rows[rng.randrange(len(rows))] = ("完了", rng.randint(1, 40))
    first_id = rng.randint(10, 90)
    lines = [
        f"案件{first_id + i}: 状態={state}、処理時間{hours}時間"
        for i, (state, hours) in enumerate(rows)
    ]
    done = [hours for state, hours in rows if state == "完了"]
    question = (
        f"次の案件記録で、状態が「完了」の案件の処理時間の平均は何時間ですか。\n{_bullets(lines)}"
    )
    return question, decimal_answer(Fraction(sum(done), len(done)), 1)


def _code_question(source: str) -> str:
    return (
        "次のPython 3コードのprintが出力する値を答えてください。"
        f"コードは実行せずに読んで答えてください。\n```python\n{source}\n```"
    )


def _code_sorted_set(rng: random.Random) -> Made:
    xs = [rng.randint(-5, 20) for _ in range(rng.randint(6, 9))]
    while len(set(xs)) < 3:
        xs.append(rng.randint(-5, 20))
    index = rng.choice((1, -2))
    source = f"xs = {xs}\nprint(sorted(set(xs))[{index}])"
    return _code_question(source), integer_answer(sorted(set(xs))[index])


def _code_slice_sum(rng: random.Random) -> Made:
    xs = [rng.randint(-5, 20) for _ in range(rng.randint(8, 10))]
    start = rng.randint(0, 3)
    stop = rng.randint(start + 2, len(xs))
    step = rng.randint(1, 3)
    source = f"xs = {xs}\nprint(sum(xs[{start}:{stop}:{step}]))"
    return _code_question(source), integer_answer(sum(xs[start:stop:step]))


def _code_loop_modulo(rng: random.Random) -> Made:
    limit, divisor = rng.randint(10, 30), rng.randint(2, 5)
    source = (
        f"total = 0\nfor i in range({limit}):\n    if i % {divisor} == 0:\n        total += i\n"
        "print(total)"
    )
    return _code_question(source), integer_answer(sum(range(0, limit, divisor)))


def _code_dict_count(rng: random.Random) -> Made:
    vocabulary = ("apple", "banana", "cherry", "grape")
    words = [rng.choice(vocabulary) for _ in range(rng.randint(6, 10))]
    target = rng.choice(vocabulary)
    source = (
        f"words = {words}\ncounts = {{}}\nfor w in words:\n"
        "    counts[w] = counts.get(w, 0) + 1\n"
        f'print(counts.get("{target}", 0))'
    )
    return _code_question(source), integer_answer(words.count(target))


def _code_while_loop(rng: random.Random) -> Made:
    start, increment, limit = rng.randint(1, 9), rng.randint(0, 3), rng.randint(50, 300)
    printed = rng.choice(("x", "n"))
    x, n = start, 0
    while x < limit:
        x, n = x * 2 + increment, n + 1
    source = (
        f"x = {start}\nn = 0\nwhile x < {limit}:\n    x = x * 2 + {increment}\n    n += 1\n"
        f"print({printed})"
    )
    return _code_question(source), integer_answer(x if printed == "x" else n)


def _logic_rooms(rng: random.Random) -> Made:
    capacities = [rng.randint(2, 12) for _ in range(rng.randint(3, 5))]
    attendees = rng.randint(2, sum(capacities))
    rooms_used, seats = 0, 0
    for capacity in sorted(capacities, reverse=True):  # largest first minimises the count
        if seats >= attendees:
            break
        rooms_used, seats = rooms_used + 1, seats + capacity
    rooms = "、".join(f"{chr(ord('A') + i)}室{c}人" for i, c in enumerate(capacities))
    question = (
        f"会議室の定員は {rooms} です。参加者{attendees}人全員が入れるように会議室を選びます"
        "（1室で全員が入れるなら1室）。使う会議室の数は最小で何室ですか。"
    )
    return question, integer_answer(rooms_used)


def _logic_order(rng: random.Random) -> Made:
    order = rng.sample(_PEOPLE, rng.randint(4, 5))
    candidates = [
        ("before", order[i], order[j]) for i in range(len(order)) for j in range(i + 1, len(order))
    ]
    candidates += [("right_after", order[i + 1], order[i]) for i in range(len(order) - 1)]
    rng.shuffle(candidates)

    def solutions(rules: list[tuple[str, str, str]]) -> list[tuple[str, ...]]:
        def holds(rule: tuple[str, str, str], seq: tuple[str, ...]) -> bool:
            relation, a, b = rule
            if relation == "before":
                return seq.index(a) < seq.index(b)
            return seq.index(a) == seq.index(b) + 1

        return [seq for seq in permutations(order) if all(holds(r, seq) for r in rules)]

    rules: list[tuple[str, str, str]] = []
    for rule in candidates:
        rules.append(rule)
        if len(solutions(rules)) == 1:
            break
    for rule in list(rules):  # drop rules the others already imply, to keep the text short
        rest = [r for r in rules if r != rule]
        if len(solutions(rest)) == 1:
            rules = rest
    lines = [
        f"{a}さんは{b}さんより先に発表する。"
        if relation == "before"
        else f"{a}さんは{b}さんの直後に発表する。"
        for relation, a, b in rules
    ]
    listed = sorted(order, key=_PEOPLE.index)
    position = rng.randint(1, len(order))
    question = (
        f"{len(order)}人（{'、'.join(f'{p}さん' for p in listed)}）が1人ずつ順番に発表します。"
        f"次の条件がすべて成り立ちます。\n{_bullets(lines)}\n"
        f"{position}番目に発表するのは誰ですか。名字で答えてください。"
    )
    return question, choice_answer(order[position - 1], listed)


def _logic_rule_check(rng: random.Random) -> Made:
    stock_limit, lead_limit = rng.randint(20, 80), rng.randint(3, 10)
    stock, lead = rng.randint(0, 120), rng.randint(1, 14)
    connective = rng.choice(("かつ", "または"))
    low, slow = stock < stock_limit, lead >= lead_limit
    order = (low and slow) if connective == "かつ" else (low or slow)
    question = (
        f"規則: 在庫が{stock_limit}個未満「{connective}」次回入荷まで{lead_limit}日以上のとき、"
        f"追加発注する。\n現在の在庫は{stock}個、次回入荷までは{lead}日です。"
        "規則に従うと追加発注しますか。"
    )
    return question, boolean_answer(order)


def _logic_shift_overlap(rng: random.Random) -> Made:
    first = sorted(rng.sample(range(5), rng.randint(2, 4)))
    second = sorted(rng.sample(range(5), rng.randint(2, 4)))
    both = rng.choice((True, False))
    days = (set(first) & set(second)) if both else (set(first) | set(second))
    asked = "2人とも出勤する" if both else "少なくとも1人が出勤する"
    question = (
        f"平日（月〜金）の出勤日は、Aさんが{'・'.join(_WEEKDAYS[d] for d in first)}、"
        f"Bさんが{'・'.join(_WEEKDAYS[d] for d in second)}です。"
        f"{asked}曜日は、月〜金のうち何日ありますか。"
    )
    return question, integer_answer(len(days))


def _logic_sum_difference(rng: random.Random) -> Made:
    red, blue = rng.randint(5, 60), rng.randint(1, 40)
    while red <= blue:
        red += rng.randint(1, 20)
    question = (
        f"箱に赤い玉と青い玉が合計{red + blue}個入っています。赤い玉は青い玉より"
        f"{red - blue}個多いです。赤い玉は何個ですか。"
    )
    return question, integer_answer(red)


def _evidence(material: str, ask: str) -> str:
    return f"{material}\n質問: {ask}\n{_EVIDENCE_RULE}"


def _evidence_eligibility(rng: random.Random) -> Made:
    name = rng.choice(_PEOPLE)
    years_required = rng.randint(2, 5)
    tenure, rating = rng.randint(0, 10), rng.choice(("S", "A", "B", "C"))
    show_tenure, show_rating = rng.randrange(10) < 7, rng.randrange(10) < 7
    facts = [f"所属は{rng.choice(('営業部', '経理部', '物流部', '開発部'))}"]
    if show_tenure:
        facts.append(f"勤続{tenure}年")
    if show_rating:
        facts.append(f"直近の評価は{rating}")
    known_failure = (show_tenure and tenure < years_required) or (show_rating and rating == "C")
    # A stated fact that fails the rule decides "no" even when the other fact is missing.
    answer = "いいえ" if known_failure else ("はい" if show_tenure and show_rating else UNKNOWN)
    material = (
        f"規程: 勤続{years_required}年以上で、かつ直近の評価がB以上（S・A・Bのいずれか）の社員が"
        f"研修の対象です。\n人事記録（{name}さん、全文）: {'、'.join(facts)}。"
    )
    return _evidence(material, f"{name}さんは研修の対象ですか。"), choice_answer(
        answer, EVIDENCE_CHOICES
    )


def _evidence_delivery(rng: random.Random) -> Made:
    shipped = rng.randint(1, 20)
    arrived = shipped + rng.randint(1, 5)
    deadline = rng.randint(max(1, shipped - 2), shipped + 7)
    show_arrival = rng.randrange(10) < 6
    if show_arrival:
        answer = "はい" if arrived <= deadline else "いいえ"
        record = f"6月{shipped}日に発送、6月{arrived}日に到着。"
    else:
        answer = "いいえ" if shipped > deadline else UNKNOWN  # cannot arrive before it ships
        record = f"6月{shipped}日に発送。到着日の記録はありません。"
    material = f"配送記録（伝票{rng.randint(1000, 9999)}）: {record}"
    ask = f"この荷物は6月{deadline}日までに（当日を含む）到着しましたか。"
    return _evidence(material, ask), choice_answer(answer, EVIDENCE_CHOICES)


def _evidence_claim(rng: random.Random) -> Made:
    april = rng.randint(80, 400)
    may = april
    while may == april:
        may = rng.randint(80, 400)
    kind = rng.choice(("increase", "decrease", "cause", "future"))
    if kind == "increase":
        claim, answer = "5月の問い合わせ件数は4月より多い", "はい" if may > april else "いいえ"
    elif kind == "decrease":
        claim, answer = "5月の問い合わせ件数は4月より少ない", "はい" if may < april else "いいえ"
    elif kind == "cause":
        cause = rng.choice(("新製品の発売", "料金改定", "システム障害"))
        claim, answer = f"4月から5月への件数の変化は{cause}によるものだ", UNKNOWN
    else:
        claim, answer = "6月の問い合わせ件数は5月より多い", UNKNOWN
    material = f"資料: 4月の問い合わせ件数は{april}件、5月は{may}件でした。"
    ask = f"主張「{claim}」は、資料から正しいと言えますか。誤りと言える場合は「いいえ」です。"
    return _evidence(material, ask), choice_answer(answer, EVIDENCE_CHOICES)


def _evidence_stock(rng: random.Random) -> Made:
    stock_a, ordered = rng.randint(10, 200), rng.randint(10, 300)
    stock_b = rng.randint(0, 200) if rng.randrange(2) else None
    if stock_b is None:
        answer = "はい" if stock_a >= ordered else UNKNOWN
        record_b = "倉庫Bの在庫は未集計です。"
    else:
        answer = "はい" if stock_a + stock_b >= ordered else "いいえ"
        record_b = f"倉庫Bの在庫は{stock_b}個です。"
    material = f"在庫資料: 倉庫Aの在庫は{stock_a}個です。{record_b}"
    ask = f"注文{ordered}個を、倉庫Aと倉庫Bの在庫を合わせて全数出荷できますか。"
    return _evidence(material, ask), choice_answer(answer, EVIDENCE_CHOICES)


def _evidence_attendance(rng: random.Random) -> Made:
    names = rng.sample(_PEOPLE, 4)
    target = rng.choice(names)
    listed = [n for n in names if n != target or rng.randrange(10) >= 4]
    status = {n: rng.choice(("出席", "欠席")) for n in listed}
    attended = status.get(target)
    answer = UNKNOWN if attended is None else ("はい" if attended == "出席" else "いいえ")
    record = "、".join(f"{n}さん {status[n]}" for n in listed)
    material = f"会議の出席記録（全文）: {record}"
    ask = f"{target}さんはこの会議に出席しましたか。"
    return _evidence(material, ask), choice_answer(answer, EVIDENCE_CHOICES)


def _with_answer_instruction(body: str, answer: AnswerSpec) -> str:
    return f"{body}\n{answer_instruction(answer)}"


@dataclass(frozen=True)
class _Template:
    info: TemplateInfo
    make: Callable[[random.Random], Made]
    compose: Callable[[str, AnswerSpec], str] = _with_answer_instruction
    """The full question from the body and the answer (the JSON format instruction)."""


def _template(
    template_id: str,
    kind: AnswerKind,
    ja: str,
    en: str,
    make: Callable[[random.Random], Made],
    compose: Callable[[str, AnswerSpec], str] = _with_answer_instruction,
) -> _Template:
    domain = cast(DomainId, template_id.split(".", 1)[0])  # TemplateInfo validates it
    info = TemplateInfo(
        template_id=template_id, domain=domain, label=Bilingual(ja=ja, en=en), answer_kind=kind
    )
    return _Template(info, make, compose)


_TEMPLATES: tuple[_Template, ...] = (
    _template("arithmetic.change", "integer", "おつり", "Change", _arithmetic_change),
    _template("arithmetic.budget", "integer", "予算残高", "Budget balance", _arithmetic_budget),
    _template(
        "arithmetic.discount", "integer", "割引後の合計", "Discounted total", _arithmetic_discount
    ),
    _template("arithmetic.work_days", "integer", "作業日数", "Work days", _arithmetic_work_days),
    _template("arithmetic.average", "decimal", "平均点", "Average score", _arithmetic_average),
    _template("units.achievement", "decimal", "達成率", "Achievement rate", _units_achievement),
    _template("units.minutes", "integer", "時間の合計（分）", "Total minutes", _units_minutes),
    _template("units.storage", "decimal", "容量換算（GB）", "Storage in GB", _units_storage),
    _template(
        "units.tokens_per_second",
        "decimal",
        "毎秒トークン数",
        "Tokens per second",
        _units_tokens_per_second,
    ),
    _template("units.growth", "decimal", "前月比", "Month-over-month change", _units_growth),
    _template(
        "records.net_shipped", "integer", "出荷−返品の合計", "Net shipped", _records_net_shipped
    ),
    _template(
        "records.department_sum",
        "integer",
        "部署別合計",
        "Department total",
        _records_department_sum,
    ),
    _template(
        "records.count_threshold",
        "integer",
        "条件付き件数",
        "Count above threshold",
        _records_count_threshold,
    ),
    _template("records.top_store", "choice", "最大の店舗", "Top store", _records_top_store),
    _template(
        "records.completed_average",
        "decimal",
        "完了案件の平均",
        "Average of completed",
        _records_completed_average,
    ),
    _template("code.sorted_set", "integer", "重複除去と整列", "Sorted set index", _code_sorted_set),
    _template("code.slice_sum", "integer", "スライスの合計", "Slice sum", _code_slice_sum),
    _template(
        "code.loop_modulo", "integer", "条件付きループ", "Loop with modulo", _code_loop_modulo
    ),
    _template("code.dict_count", "integer", "辞書での集計", "Dictionary count", _code_dict_count),
    _template("code.while_loop", "integer", "whileループ", "While loop", _code_while_loop),
    _template("logic.rooms", "integer", "会議室の最小数", "Minimum rooms", _logic_rooms),
    _template("logic.order", "choice", "発表順", "Presentation order", _logic_order),
    _template("logic.rule_check", "boolean", "発注規則", "Reorder rule", _logic_rule_check),
    _template(
        "logic.shift_overlap", "integer", "出勤日の重なり", "Shift overlap", _logic_shift_overlap
    ),
    _template(
        "logic.sum_difference", "integer", "和と差", "Sum and difference", _logic_sum_difference
    ),
    _template(
        "evidence.eligibility", "choice", "規程の適用", "Policy eligibility", _evidence_eligibility
    ),
    _template(
        "evidence.delivery", "choice", "期限内の到着", "Delivery deadline", _evidence_delivery
    ),
    _template("evidence.claim", "choice", "主張の裏付け", "Claim support", _evidence_claim),
    _template("evidence.stock", "choice", "在庫の充足", "Stock sufficiency", _evidence_stock),
    _template("evidence.attendance", "choice", "出席の確認", "Attendance", _evidence_attendance),
)

_DOMAIN_LABELS: dict[DomainId, tuple[str, str]] = {
    "arithmetic": ("日本語の計算", "Arithmetic (Japanese)"),
    "units": ("単位・指標", "Units and metrics"),
    "records": ("資料集計", "Record aggregation"),
    "code": ("コード読解", "Code reading"),
    "logic": ("論理・制約", "Logic and constraints"),
    "evidence": ("根拠に基づく判断", "Evidence-based judgement"),
}

DOMAINS: tuple[Domain, ...] = tuple(
    Domain(
        domain_id=domain_id,
        label=Bilingual(ja=ja, en=en),
        template_ids=tuple(t.info.template_id for t in _TEMPLATES if t.info.domain == domain_id),
    )
    for domain_id, (ja, en) in _DOMAIN_LABELS.items()
)
TEMPLATES: tuple[TemplateInfo, ...] = tuple(t.info for t in _TEMPLATES)


# --- the easy set ----------------------------------------------------------------------
# Opt-in templates, never part of the default suite (a plan names them in
# ``quality.templates``): one-step English problems that a very small instruct model
# (SmolLM2-135M) answers part of the time, so a CPU demo shows a paired result that is not
# all failures. Same contract as above: parameters from the template's own RNG, the answer
# computed from them, the text only written from them, scored from the JSON answer.

EASY_EXAMPLE_VALUE = 0
"""The value in the easy set's format example; no easy answer equals it, so copying the
example is never correct."""
_EASY_ITEMS = ("apples", "pens", "books", "cups", "coins", "stamps")
_EASY_NAMES = ("Tom", "Ann", "Ken", "Mia", "Sam", "Lea")
_EASY_THINGS = ("pen", "book", "cup", "lamp", "bag", "hat")


def easy_instruction(spec: AnswerSpec) -> str:
    """The easy set's opening instruction: the JSON object, shown with a sample value."""
    if spec.kind != "integer":
        raise ValueError("the easy set asks for integers only")
    return f'Reply with JSON only, like {{"{spec.key}": {EASY_EXAMPLE_VALUE}}}.'


def _easy_compose(body: str, answer: AnswerSpec) -> str:
    return f"{easy_instruction(answer)}\n{body}"


def _easy_count(rng: random.Random) -> Made:
    items, count = rng.choice(_EASY_ITEMS), rng.randint(2, 60)
    return f"The box holds {count} {items}. How many {items} are in the box?", integer_answer(count)


def _easy_age(rng: random.Random) -> Made:
    name, age = rng.choice(_EASY_NAMES), rng.randint(5, 80)
    return f"{name} is {age} years old. How old is {name}?", integer_answer(age)


def _easy_price(rng: random.Random) -> Made:
    thing, price = rng.choice(_EASY_THINGS), rng.randint(2, 90)
    question = f"A {thing} costs {price} dollars. How many dollars does the {thing} cost?"
    return question, integer_answer(price)


def _easy_add(rng: random.Random) -> Made:
    first, second = rng.randint(1, 9), rng.randint(1, 9)
    return f"What is {first} + {second}?", integer_answer(first + second)


_EASY_TEMPLATES: tuple[_Template, ...] = (
    _template(
        "easy.count", "integer", "個数の読み取り", "Read a count", _easy_count, _easy_compose
    ),
    _template("easy.age", "integer", "年齢の読み取り", "Read an age", _easy_age, _easy_compose),
    _template(
        "easy.price", "integer", "値段の読み取り", "Read a price", _easy_price, _easy_compose
    ),
    _template("easy.add", "integer", "一桁の足し算", "One-digit sum", _easy_add, _easy_compose),
)
EASY_DOMAIN = Domain(
    domain_id="easy",
    label=Bilingual(ja="やさしい問題（英語）", en="Easy problems (English)"),
    template_ids=tuple(t.info.template_id for t in _EASY_TEMPLATES),
)
"""The easy set: its own domain, generated only when a plan asks for its templates."""
EASY_TEMPLATES: tuple[TemplateInfo, ...] = tuple(t.info for t in _EASY_TEMPLATES)
ALL_DOMAINS: tuple[Domain, ...] = (*DOMAINS, EASY_DOMAIN)
"""Every domain a problem can belong to (labels for per-domain tables)."""

# Redraws allowed per requested problem before a template is judged too narrow for the size.
_MAX_DRAWS_PER_PROBLEM = 50


def generate_suite(
    suite_id: str, per_template: int, seed: int, domains: Sequence[Domain] = DOMAINS
) -> Suite:
    """Generate ``per_template`` distinct problems from each template of ``domains`` (by
    default the 30 templates of the Japanese suite; ``(EASY_DOMAIN,)`` for the easy set).

    Deterministic: the same ``GENERATOR_VERSION``, ``per_template`` and ``seed`` give the
    same problems and ``content_sha256`` on every run and platform.
    """
    if per_template < 1:
        raise ValueError("per_template must be at least 1")
    by_id = {t.info.template_id: t for t in (*_TEMPLATES, *_EASY_TEMPLATES)}
    problems: list[Problem] = []
    for domain in domains:
        number = 0
        for template_id in domain.template_ids:
            rng = random.Random(f"{seed}/{template_id}")
            seen: set[str] = set()
            for _ in range(per_template * _MAX_DRAWS_PER_PROBLEM):
                if len(seen) == per_template:
                    break
                template = by_id[template_id]
                body, answer = template.make(rng)
                question = template.compose(body, answer)
                if question in seen:
                    continue
                seen.add(question)
                number += 1
                problems.append(
                    Problem(
                        problem_id=f"{domain.domain_id}-{number:03d}",
                        suite_id=suite_id,
                        domain=domain.domain_id,
                        template_id=template_id,
                        question=question,
                        answer=answer,
                    )
                )
            if len(seen) < per_template:
                raise ValueError(f"{template_id} cannot produce {per_template} distinct problems")
    return Suite(
        suite_id=suite_id,
        generator_version=GENERATOR_VERSION,
        seed=seed,
        per_template=per_template,
        content_sha256=canonical_sha256([p.model_dump(mode="json") for p in problems]),
        problems=tuple(problems),
    )
