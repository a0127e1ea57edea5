"""JSON that is safe inside ``<script type="application/json">``."""

from __future__ import annotations

import json

_ESCAPES = (
    ("<", "\\u003c"),
    (">", "\\u003e"),
    ("&", "\\u0026"),
    ("\u2028", "\\u2028"),
    ("\u2029", "\\u2029"),
)


def script_json(value: object) -> str:
    """Compact, key-sorted JSON where ``</script>``, ``<!--`` and line separators cannot
    end or confuse the script element (escapes are valid JSON)."""
    text = json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    # One replace per character (str.translate with a mapping is slower on the answer
    # pages' long non-ASCII text).
    for character, escape in _ESCAPES:
        text = text.replace(character, escape)
    return text
