"""The installed sitegen's version: printed by ``--version`` and recorded in each import."""

from __future__ import annotations


def installed_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("sitegen")
    except PackageNotFoundError:  # run from a checkout that was never installed
        return "unknown (not installed)"
