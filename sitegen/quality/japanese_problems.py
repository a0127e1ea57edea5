"""The problems of the Japanese suite, one maker per template (``suites`` lists them):
each draws its parameters from the template's own ``random.Random``, computes the expected
answer from them with Python arithmetic, and only writes the question body from them
(the JSON format instruction is appended by the suite). Any change to a maker's output
must bump ``suites.GENERATOR_VERSION``."""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from fractions import Fraction
from itertools import permutations

from sitegen.quality.answers import (
    EVIDENCE_CHOICES,
    UNKNOWN,
    Made,
    boolean_answer,
    choice_answer,
    decimal_answer,
    integer_answer,
)

_EVIDENCE_RULE = (
    "資料に書かれていないことは推測せず、資料だけでは判断できない場合は「不明」と答えてください。"
)
_PEOPLE = ("佐藤", "鈴木", "高橋", "田中", "伊藤", "渡辺")
_WEEKDAYS = ("月", "火", "水", "木", "金")


def _bullets(lines: Sequence[str]) -> str:
    return "\n".join(f"- {line}" for line in lines)


def arithmetic_change(rng: random.Random) -> Made:
    notebook, notebooks = rng.randrange(120, 990, 10), rng.randint(2, 6)
    pen, pens = rng.randrange(80, 500, 10), rng.randint(1, 5)
    total = notebook * notebooks + pen * pens
    paid = (total // 1000 + 1) * 1000
    question = (
        f"1冊{notebook}円のノートを{notebooks}冊と、1本{pen}円のペンを{pens}本買い、"
        f"{paid:,}円を支払いました。おつりは何円ですか。"
    )
    return question, integer_answer(paid - total)


def arithmetic_budget(rng: random.Random) -> Made:
    budget = rng.randrange(10_000, 30_001, 1000)
    units = rng.randint(2, 3)
    price = rng.randrange(1000, budget // units, 100)
    added = rng.randrange(500, 9001, 100)
    question = (
        f"部署の予算は{budget:,}円です。1台{price:,}円の備品を{units}台購入し、"
        f"その後{added:,}円の追加予算を受け取りました。予算の残高は何円ですか。"
    )
    return question, integer_answer(budget - price * units + added)


def arithmetic_discount(rng: random.Random) -> Made:
    price = rng.randrange(1000, 10_001, 100)
    off = rng.choice((10, 15, 20, 25, 30, 35, 40))
    count = rng.randint(2, 5)
    question = (
        f"定価{price:,}円の商品が{off}%引きで売られています。この商品を{count}個買うと、"
        "合計は何円ですか。消費税は考えません。"
    )
    return question, integer_answer(price * (100 - off) // 100 * count)


def arithmetic_work_days(rng: random.Random) -> Made:
    person_hours = rng.randint(30, 400)
    people, hours = rng.randint(2, 6), rng.randint(4, 8)
    question = (
        f"ある作業は合計{person_hours}人時かかります。{people}人が1日{hours}時間ずつ作業すると、"
        "作業を終えるのに何日必要ですか。途中で終わる日も1日と数えます。"
    )
    return question, integer_answer(math.ceil(Fraction(person_hours, people * hours)))


def arithmetic_average(rng: random.Random) -> Made:
    scores = [rng.randint(40, 100) for _ in range(rng.randint(4, 7))]
    question = (
        f"{len(scores)}人のテストの点数は {', '.join(map(str, scores))} 点でした。"
        "平均点は何点ですか。"
    )
    return question, decimal_answer(Fraction(sum(scores), len(scores)), 1)


def units_achievement(rng: random.Random) -> Made:
    target = rng.randint(200, 5000)
    actual = rng.randint(target * 6 // 10, target * 12 // 10)
    question = f"目標{target:,}件に対して、実績は{actual:,}件でした。達成率は何%ですか。"
    return question, decimal_answer(Fraction(actual * 100, target), 2)


def units_minutes(rng: random.Random) -> Made:
    first = (rng.randint(0, 5), rng.randint(1, 59))
    second = (rng.randint(0, 5), rng.randint(1, 59))
    question = (
        f"作業Aに{first[0]}時間{first[1]}分、作業Bに{second[0]}時間{second[1]}分かかりました。"
        "合計は何分ですか。"
    )
    return question, integer_answer((first[0] + second[0]) * 60 + first[1] + second[1])


def units_storage(rng: random.Random) -> Made:
    size_mb, count = rng.randint(150, 3000), rng.randint(3, 40)
    question = (
        f"1個{size_mb:,}MBのファイルを{count}個保存します。合計は何GBですか。"
        "1GB = 1,024MBとします。"
    )
    return question, decimal_answer(Fraction(size_mb * count, 1024), 2)


def units_tokens_per_second(rng: random.Random) -> Made:
    tokens, centiseconds = rng.randint(200, 4000), rng.randint(300, 9000)
    seconds = f"{centiseconds // 100}.{centiseconds % 100:02d}"
    question = (
        f"{tokens:,}トークンを{seconds}秒で生成しました。1秒あたりの生成トークン数はいくつですか。"
    )
    return question, decimal_answer(Fraction(tokens * 100, centiseconds), 2)


def units_growth(rng: random.Random) -> Made:
    previous = rng.randint(50, 900)
    current = previous
    while current == previous:
        current = rng.randint(previous * 6 // 10, previous * 14 // 10)
    question = (
        f"先月の売上は{previous}万円、今月は{current}万円でした。先月比の増減率は何%ですか。"
        "減少の場合は負の数で答えてください。"
    )
    return question, decimal_answer(Fraction((current - previous) * 100, previous), 1)


def records_net_shipped(rng: random.Random) -> Made:
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


def records_department_sum(rng: random.Random) -> Made:
    departments = ("営業部", "経理部", "物流部", "開発部")
    rows = [
        (rng.choice(departments), rng.randrange(500, 50_001, 100))
        for _ in range(rng.randint(6, 10))
    ]
    target = rng.choice([department for department, _ in rows])
    lines = [f"{department}: {amount:,}円" for department, amount in rows]
    question = f"次の経費記録のうち、{target}の金額の合計は何円ですか。\n{_bullets(lines)}"
    return question, integer_answer(sum(a for d, a in rows if d == target))


def records_count_threshold(rng: random.Random) -> Made:
    waits = [rng.randint(1, 45) for _ in range(rng.randint(8, 14))]
    threshold = rng.randint(10, 30)
    first_id = rng.randint(100, 900)
    lines = [f"問い合わせ{first_id + i}: 待ち時間{wait}分" for i, wait in enumerate(waits)]
    question = (
        f"次の記録のうち、待ち時間が{threshold}分以上（{threshold}分ちょうどを含む）の"
        f"問い合わせは何件ですか。\n{_bullets(lines)}"
    )
    return question, integer_answer(sum(wait >= threshold for wait in waits))


def records_top_store(rng: random.Random) -> Made:
    stores = rng.sample(("札幌店", "仙台店", "東京店", "名古屋店", "大阪店", "広島店", "福岡店"), 5)
    sales = rng.sample(range(120, 990), len(stores))
    lines = [f"{store}: {amount}万円" for store, amount in zip(stores, sales, strict=True)]
    question = f"次の月間売上のうち、売上が最も大きい店舗はどれですか。\n{_bullets(lines)}"
    return question, choice_answer(stores[sales.index(max(sales))], stores)


def records_completed_average(rng: random.Random) -> Made:
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


def code_sorted_set(rng: random.Random) -> Made:
    xs = [rng.randint(-5, 20) for _ in range(rng.randint(6, 9))]
    while len(set(xs)) < 3:
        xs.append(rng.randint(-5, 20))
    index = rng.choice((1, -2))
    source = f"xs = {xs}\nprint(sorted(set(xs))[{index}])"
    return _code_question(source), integer_answer(sorted(set(xs))[index])


def code_slice_sum(rng: random.Random) -> Made:
    xs = [rng.randint(-5, 20) for _ in range(rng.randint(8, 10))]
    start = rng.randint(0, 3)
    stop = rng.randint(start + 2, len(xs))
    step = rng.randint(1, 3)
    source = f"xs = {xs}\nprint(sum(xs[{start}:{stop}:{step}]))"
    return _code_question(source), integer_answer(sum(xs[start:stop:step]))


def code_loop_modulo(rng: random.Random) -> Made:
    limit, divisor = rng.randint(10, 30), rng.randint(2, 5)
    source = (
        f"total = 0\nfor i in range({limit}):\n    if i % {divisor} == 0:\n        total += i\n"
        "print(total)"
    )
    return _code_question(source), integer_answer(sum(range(0, limit, divisor)))


def code_dict_count(rng: random.Random) -> Made:
    vocabulary = ("apple", "banana", "cherry", "grape")
    words = [rng.choice(vocabulary) for _ in range(rng.randint(6, 10))]
    target = rng.choice(vocabulary)
    source = (
        f"words = {words}\ncounts = {{}}\nfor w in words:\n"
        "    counts[w] = counts.get(w, 0) + 1\n"
        f'print(counts.get("{target}", 0))'
    )
    return _code_question(source), integer_answer(words.count(target))


def code_while_loop(rng: random.Random) -> Made:
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


def logic_rooms(rng: random.Random) -> Made:
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


def logic_order(rng: random.Random) -> Made:
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


def logic_rule_check(rng: random.Random) -> Made:
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


def logic_shift_overlap(rng: random.Random) -> Made:
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


def logic_sum_difference(rng: random.Random) -> Made:
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


def evidence_eligibility(rng: random.Random) -> Made:
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


def evidence_delivery(rng: random.Random) -> Made:
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


def evidence_claim(rng: random.Random) -> Made:
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


def evidence_stock(rng: random.Random) -> Made:
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


def evidence_attendance(rng: random.Random) -> Made:
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
