"""Reaching an input-length target with filler marked as not to be used for the answer."""

from __future__ import annotations

from collections.abc import Callable

from sitegen.core.errors import ConfigError


def fit_prompt(
    text: str,
    target_tokens: int | None,
    filler: str,
    count_tokens: Callable[[str], int],
) -> str:
    """Filler + material + question, with the longest filler whose prompt stays at or
    under ``target_tokens`` (binary search over the filler's characters).

    The runner checks the engine's own count against the plan's tolerance afterwards
    and fails the trial if it was missed.
    """
    if target_tokens is None:
        return text
    if count_tokens(text) > target_tokens:
        raise ConfigError(
            f"the input text alone is longer than its target of {target_tokens} tokens"
        )
    unit = filler.strip() + "\n"
    repeats = 1
    while count_tokens(_compose(unit * repeats, text)) < target_tokens:
        repeats *= 2
    pool = unit * repeats
    low, high = 0, len(pool)  # invariant: prefix of `low` chars fits
    while high - low > 1:
        middle = (low + high) // 2
        if count_tokens(_compose(pool[:middle], text)) <= target_tokens:
            low = middle
        else:
            high = middle
    return _compose(pool[:low], text)


def _compose(filler: str, text: str) -> str:
    return f"{filler}\n{text}" if filler else text
