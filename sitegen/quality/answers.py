"""The exact answer a problem expects, and how a question asks for it: the JSON key, the
value's type and format, and the closing instruction that states them."""

from __future__ import annotations

import math
from collections.abc import Sequence
from decimal import Decimal
from fractions import Fraction
from typing import Literal, cast

from pydantic import model_validator

from sitegen.core.strict_model import StrictModel

UNKNOWN = "不明"
"""The correct answer when the given material does not decide the question."""
EVIDENCE_CHOICES = ("はい", "いいえ", UNKNOWN)

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


Made = tuple[str, AnswerSpec]
"""What a template makes: the question body and the expected answer."""


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
