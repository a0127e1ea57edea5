"""Compiled templates kept between builds: the theme's and the partials' Jinja templates
take a noticeable part of a build to compile, and they change only with sitegen or the
theme's version (a changed source is compiled again: the cache checks its checksum).

Jinja keeps the cache in a folder of the temporary directory that only this user may
write (``_jinja2-cache-<uid>``, mode 0700, checked before use). The author's content
templates are not cached: they are compiled in the sandbox, and only there.
"""

from __future__ import annotations

import shutil
from functools import cache

import jinja2

from sitegen.core.errors import StorageError


class _FolderCache(jinja2.FileSystemBytecodeCache):
    """Jinja's cache, whose failed write (a full temporary folder) is one line: the cache
    folder is removed (a half-written cache is worth nothing) and the build stops with a
    ``StorageError`` naming it, never a traceback from inside the renderer."""

    def dump_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        try:
            super().dump_bytecode(bucket)
        except OSError as exc:
            shutil.rmtree(self.directory, ignore_errors=True)
            bytecode_cache.cache_clear()  # the next build makes a new folder
            raise StorageError.from_os_error(
                exc, "write the compiled-template cache", self.directory
            ) from None


@cache
def bytecode_cache() -> jinja2.BytecodeCache | None:
    """The cache of compiled templates, or ``None`` where no private folder can be made
    (every build then compiles them)."""
    try:
        return _FolderCache()
    except (OSError, RuntimeError):  # RuntimeError: Jinja refused an unsafe folder
        return None
