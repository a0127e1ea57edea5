"""Where an engine's server runs, as far as this machine can tell from its address."""

from __future__ import annotations

from urllib.parse import urlsplit


def is_local(base_url: str) -> bool:
    """Whether a server runs on this machine (its GPUs and processes are visible here)."""
    host = urlsplit(base_url).hostname or ""
    return host == "localhost" or host == "::1" or host.startswith("127.")
