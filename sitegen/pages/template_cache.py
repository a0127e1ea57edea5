"""Compiled templates kept between builds: the theme's and the partials' Jinja templates
take a noticeable part of a build to compile, and they change only with sitegen or the
theme's version (a changed source is compiled again: the cache checks its checksum).

Jinja keeps the cache in a folder of the temporary directory that only this user may
write (``_jinja2-cache-<uid>``, mode 0700, checked before use). The author's content
templates are not cached: they are compiled in the sandbox, and only there.
"""

from __future__ import annotations

from functools import cache

import jinja2


@cache
def bytecode_cache() -> jinja2.BytecodeCache | None:
    """The cache of compiled templates, or ``None`` where no private folder can be made
    (every build then compiles them)."""
    try:
        return jinja2.FileSystemBytecodeCache()
    except (OSError, RuntimeError):  # RuntimeError: Jinja refused an unsafe folder
        return None
