"""JSON that is safe inside ``<script type="application/json">``."""

from __future__ import annotations

import json

_ESCAPES = {
    ord("<"): "\\u003c",
    ord(">"): "\\u003e",
    ord("&"): "\\u0026",
    ord("\u2028"): "\\u2028",
    ord("\u2029"): "\\u2029",
}


def script_json(value: object) -> str:
    """Compact, key-sorted JSON where ``</script>``, ``<!--`` and line separators cannot
    end or confuse the script element (escapes are valid JSON)."""
    text = json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    return text.translate(_ESCAPES)
