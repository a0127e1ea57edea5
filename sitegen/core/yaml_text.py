"""YAML read with libyaml's parser when PyYAML has it: the pure-Python parser is far
slower on the catalogs and rules every build loads.

Also the bounds on the text files a user gives (plans, declarations, ``mkdocs.yml``,
content pages, catalogs): each excess is one line naming the file, never a traceback or an
exhausted machine (issue 38).
"""

from __future__ import annotations

from pathlib import Path

import yaml

from sitegen.core.errors import ConfigError, one_line

SafeLoader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
"""``yaml.SafeLoader``'s rules (plain data only), parsed in C where available."""

MAX_TEXT_BYTES = 16 << 20
"""The largest text file a user gives sitegen (16 MiB): a plan with long prompts, a content
page, a configuration file. Nothing real comes near it; a larger one is refused before it is
parsed or rendered."""

MAX_LINE_CHARS = 1 << 20
"""The longest line a content page may hold (1 Mi characters): a page's Markdown, HTML and
templates are scanned line by line, some of them with quadratic cost in a line's length (a
configuration file's long value is refused by its field's own bound, naming the field)."""

MAX_DEPTH = 64
"""The deepest nesting of mappings and lists in a configuration file (a plan nests about six
levels): deeper input would exhaust the parsers' and validators' stacks."""

MAX_NODES = 1_000_000
"""The most values a configuration file may expand to, an alias counted each time it is
used: a few lines of anchors and aliases ("billion laughs") expand to billions."""


def load_yaml(text: str) -> object:
    """``yaml.safe_load`` of ``text``; raises ``yaml.YAMLError`` like it."""
    return yaml.load(text, Loader=SafeLoader)  # noqa: S506 (a safe loader)


def decode_text(data: bytes, where: object, max_line: int | None = None) -> str:
    """``data`` as UTF-8 text (a leading BOM dropped), within ``MAX_TEXT_BYTES`` (and lines of
    at most ``max_line`` characters: ``MAX_LINE_CHARS`` for pages); otherwise a
    ``ConfigError`` naming ``where``."""
    if len(data) > MAX_TEXT_BYTES:
        raise ConfigError(
            f"{where}: {len(data) >> 20} MiB, larger than sitegen reads "
            f"({MAX_TEXT_BYTES >> 20} MiB): not a file written by hand"
        )
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ConfigError(
            f"{where}: not UTF-8 text (byte {exc.start}: {data[exc.start : exc.start + 1]!r}); "
            "save it as UTF-8"
        ) from None
    if "\x00" in text:
        raise ConfigError(f"{where}: holds a NUL character (byte {text.index(chr(0))}): not text")
    longest = max(map(len, text.splitlines()), default=0) if max_line is not None else 0
    if max_line is not None and longest > max_line:
        raise ConfigError(
            f"{where}: a line of {longest} characters, longer than sitegen reads "
            f"({max_line}): break it up"
        )
    return text


def read_text(path: Path, what: str = "") -> str:
    """The file at ``path`` as bounded UTF-8 text (``decode_text``); a file that cannot be
    read is a ``ConfigError`` naming it (``what`` says what the file is)."""
    where = f"{what} {path}" if what else str(path)
    try:
        with path.open("rb") as handle:
            data = handle.read(MAX_TEXT_BYTES + 1)
    except OSError as exc:
        raise ConfigError(f"cannot read {where}: {exc.strerror or one_line(exc)}") from exc
    return decode_text(data, where)


def check_shape(value: object, where: object) -> object:
    """``value`` (parsed YAML, JSON or TOML) when it nests at most ``MAX_DEPTH`` deep and
    expands to at most ``MAX_NODES`` values; otherwise a ``ConfigError`` naming ``where``.
    Walked without recursion, a shared (aliased) value counted at each use."""
    stack = [(value, 1)]
    nodes = 0
    while stack:
        node, level = stack.pop()
        nodes += 1
        if nodes > MAX_NODES:
            raise ConfigError(
                f"{where}: expands to more than {MAX_NODES} values (YAML aliases repeating "
                "a large value?): not a file written by hand"
            )
        children: list[object] | tuple[object, ...]
        if isinstance(node, dict):
            children = [*node.keys(), *node.values()]
        elif isinstance(node, list | tuple):
            children = node
        else:
            continue
        if level > MAX_DEPTH:
            raise ConfigError(
                f"{where}: nested more than {MAX_DEPTH} levels deep (sitegen's limit; a plan "
                "nests a few)"
            )
        stack.extend((child, level + 1) for child in children)
    return value


def read_yaml(path: Path) -> object:
    """The YAML file at ``path``, bounded: text that is not UTF-8, too large, too deep or
    expanding to too many values is a ``ConfigError`` naming the file; invalid YAML raises
    ``yaml.YAMLError`` and an unreadable file ``OSError``, as ``load_yaml(path.read_text())``
    would (the callers name those in their own words)."""
    with path.open("rb") as handle:
        data = handle.read(MAX_TEXT_BYTES + 1)
    text = decode_text(data, path)
    try:
        loaded = load_yaml(text)
    except RecursionError:
        raise ConfigError(
            f"{path}: nested too deep to read (sitegen's limit: {MAX_DEPTH} levels)"
        ) from None
    return check_shape(loaded, path)
