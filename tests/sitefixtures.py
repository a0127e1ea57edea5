"""Publishable campaigns without a model, and a corpus of hostile model outputs.

The fake engine's records are relabelled as a real engine's (the build refuses the
fake engine), so site tests run in seconds and need no model file.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from sitegen.measure import run_campaign
from sitegen.plan.models import ConditionSpec, InputSpec, Plan, SpeculativeSpec
from tests.conftest import make_plan

PROJECT = Path(__file__).resolve().parents[1]
PUBLISHED_ENGINE = "llamacpp-embedded"

HOSTILE_TEXTS: dict[str, str] = {
    "script": "<script>alert('script')</script>",
    "breakout": "</script><script>alert('breakout')</script><!--",
    "json_breakout": '"}]}</script><script>alert("json")</script>\u2028\u2029',
    "event_handlers": (
        '<img src=x onerror=alert("onerror")><svg onload=alert("onload")>'
        '<details open ontoggle=alert("ontoggle")><summary>x</summary></details>'
        "<body onload=alert('body')>"
    ),
    "attribute_breakout": "\" autofocus onfocus=alert('attr') x=\"' onmouseover=alert(1) '",
    "javascript_links": (
        "<a href=\"javascript:alert('link')\">click</a> [md](javascript:alert('md')) "
        "<javascript:alert('autolink')> [data](data:text/html,<script>alert(1)</script>)"
    ),
    "markdown": (
        "# not a heading\n\n* not a list\n\n```\nnot code\n```\n\n"
        '<div markdown="1">**not bold**</div>\n\n| a | b |\n|---|---|\n| 1 | 2 |\n'
    ),
    "markdown_placeholder": "\x02wzxhzdk:0\x03 \x02klzzwxh:0\x03",
    "jinja": "{{ 7 * 7 }} {% raw %}{{ raw }}{% endraw %} {{ ''.__class__.__mro__ }} {# c #}",
    "long_line": "A" * 100_000,
    "bidi": "file\u202etxt.exe\u202c \u2066isolate\u2069 \u200fRTL mark",
    "control": "nul\x00bell\x07esc\x1b[31mred\x1b[0m vt\x0b ff\x0c del\x7f",
}
"""Model outputs that must stay inert text wherever the site shows them."""

HOSTILE_INPUT_TEXT = "\n".join(HOSTILE_TEXTS.values())
"""The plan's input text (prompts are untrusted too)."""


def hostile_plan() -> Plan:
    """The unit plan plus an input whose text is the whole corpus; one condition fails on
    that input so the corpus also lands in ``failure_reason``."""
    plan = make_plan()
    inputs = [*plan.inputs, InputSpec(id="hostile", text=HOSTILE_INPUT_TEXT, max_output_tokens=16)]
    conditions = [
        ConditionSpec(id="off", context_capacity=512),
        ConditionSpec(
            id="on",
            speculative=SpeculativeSpec(mode="ngram-simple", draft_max=4),
            context_capacity=512,
            engine_options={"fail_input": "nul\x00bell"},
        ),
    ]
    return make_plan(inputs=inputs, conditions=conditions)


def publishable_campaign(
    data_dir: Path,
    plan: Plan | None = None,
    hostile: bool = False,
    mutate: Callable[[dict], None] | None = None,
) -> Path:
    """Run ``plan`` (default: the unit plan; ``hostile``: the hostile plan) on the fake
    engine into ``data_dir`` and relabel its records as a real engine's (then ``mutate``
    each record, when given); returns the records file."""
    plan = plan or (hostile_plan() if hostile else make_plan())
    result = run_campaign(plan, data_dir)
    path = result.directory / "records.jsonl"
    records = read_records(path)
    corpus = list(HOSTILE_TEXTS.values())
    for index, record in enumerate(records):
        record["provenance"]["engine"]["id"] = PUBLISHED_ENGINE
        if hostile:
            record["text"] = corpus[index % len(corpus)]
            record["reasoning_text"] = corpus[(index + 1) % len(corpus)]
            if record["status"] == "failed":
                record["failure_reason"] = corpus[(index + 2) % len(corpus)]
        if mutate:
            mutate(record)
    write_records(path, records)
    return path


def write_records(path: Path, records: list[dict]) -> None:
    # ASCII escapes, like the store's own JSON of non-ASCII control characters.
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")


def read_records(path: Path) -> list[dict]:
    lines = path.read_text(encoding="utf-8").split("\n")
    return [json.loads(line) for line in lines if line]


def tree_bytes(root: Path) -> dict[str, bytes]:
    """Every file below ``root`` by relative path."""
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }
