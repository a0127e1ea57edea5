"""What readers call a plan's conditions: the author's ``label`` in each language, else a
description made from the condition's settings (its speculative decoding, then whatever
sets it apart from the plan's other conditions). Pages show these; the ids stay in the
downloads and on the method page."""

from __future__ import annotations

import re

from sitegen.core.formatting import setting
from sitegen.core.text import CONTROL_CHARACTERS, LANGUAGES
from sitegen.plan.plan_models import ConditionSpec, Plan, SpeculativeSpec

_SEPARATOR = {"ja": "・", "en": " · "}

_MODES = {
    "draft-mtp": {"ja": "MTP", "en": "MTP"},
    "draft": {"ja": "ドラフトモデル", "en": "draft model"},
}


def speculative_description(spec: SpeculativeSpec) -> dict[str, str]:
    """``speculation off``, ``MTP, drafts up to 3 tokens``, ``n-gram lookup (ngram-simple),
    drafts up to 8 tokens`` and their Japanese, from the settings alone."""
    if spec.mode == "off":
        return {"ja": "投機的デコーディングなし", "en": "no speculative decoding"}
    mode = _MODES.get(spec.mode) or {
        "ja": f"n-gram 参照（{spec.mode}）",
        "en": f"n-gram lookup ({spec.mode})",
    }
    return {
        "ja": f"{mode['ja']}、ドラフト最大 {spec.draft_max} トークン",
        "en": f"{mode['en']}, drafts of up to {spec.draft_max} tokens",
    }


def _visible(text: str) -> str:
    """A setting's text with its control characters as their Unicode pictures (␀ …), as
    pages show untrusted text (a NUL in an engine option made the pages invalid HTML)."""

    def picture(match: re.Match[str]) -> str:
        code = ord(match.group())
        return chr(0x2400 + code) if code < 0x20 else "\u2421" if code == 0x7F else "\ufffd"

    return CONTROL_CHARACTERS.sub(picture, text)


def _facts(plan: Plan, condition: ConditionSpec) -> dict[str, dict[str, str]]:
    """Each setting a description may name, by field, in both languages."""
    sampling = plan.sampling_for(condition)
    ngram = condition.speculative.ngram_size
    facts: dict[str, dict[str, str]] = {
        "speculative": speculative_description(condition.speculative),
        "ngram_size": {lang: "" if ngram is None else f"n={ngram}" for lang in LANGUAGES},
        "context_capacity": {
            "ja": f"コンテキスト {condition.context_capacity:,}",
            "en": f"context {condition.context_capacity:,}",
        },
        "threads": {
            "ja": f"{condition.threads or '既定の'} スレッド",
            "en": f"{condition.threads or 'default'} threads",
        },
        "concurrency": {
            "ja": f"同時 {condition.concurrency} リクエスト",
            "en": f"{condition.concurrency} concurrent requests",
        },
        "temperature": {
            "ja": f"温度 {setting(sampling.temperature)}",
            "en": f"temperature {setting(sampling.temperature)}",
        },
        "top_p": {
            "ja": f"top-p {setting(sampling.top_p)}",
            "en": f"top-p {setting(sampling.top_p)}",
        },
        "top_k": {"ja": f"top-k {sampling.top_k}", "en": f"top-k {sampling.top_k}"},
        "model": {lang: _visible(plan.model_for(condition).name) for lang in LANGUAGES},
    }
    options = _visible(", ".join(f"{k}={v}" for k, v in sorted(condition.engine_options.items())))
    facts["engine_options"] = {lang: options for lang in LANGUAGES}
    return facts


def condition_labels(plan: Plan) -> dict[str, dict[str, str]]:
    """Per condition id, in plan order: its label in each language. Without an author's
    label, the speculative decoding, then every other setting that differs between the
    plan's conditions; the id only where two conditions still read the same."""
    facts = {c.id: _facts(plan, c) for c in plan.conditions}
    fields = list(next(iter(facts.values()), {}))
    varying = [
        f for f in fields if f != "speculative" and len({facts[c][f]["en"] for c in facts}) > 1
    ]
    labels: dict[str, dict[str, str]] = {}
    for condition in plan.conditions:
        if condition.label is not None:
            labels[condition.id] = {lang: condition.label[lang] for lang in LANGUAGES}
            continue
        own = facts[condition.id]
        labels[condition.id] = {
            lang: _SEPARATOR[lang].join(
                own[f][lang] for f in ["speculative", *varying] if own[f][lang]
            )
            for lang in LANGUAGES
        }
    described = [labels[c.id]["en"] for c in plan.conditions if c.label is None]
    for condition in plan.conditions:
        if condition.label is None and described.count(labels[condition.id]["en"]) > 1:
            labels[condition.id] = {
                lang: f"{text} ({condition.id})" for lang, text in labels[condition.id].items()
            }
    return labels
