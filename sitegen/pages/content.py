"""Content pages (``content/<lang>/…md``): sandboxed templates of Markdown prose.

Authors write prose in jinja2 templates that run in an immutable sandbox and see only
the directives and ``t(key)`` (catalog strings without values): no attribute of a
directive, report or record is reachable, and no figure can be computed in a template.

Every directive call is replaced by a placeholder while the template renders. The prose
is then Markdown the build renders itself (markdown-it-py: CommonMark and tables, raw
HTML off), so the only markup of a page comes from directives, put in after the prose
is rendered and checked on its own (the ``prose`` checks of the rule catalog, C-FIGURE).
What a reader sees beside the prose is author text too: link, image and
reference-definition titles (tooltips) and image alt texts go through C-FIGURE by field
(``Prose.attributes``), an image needs alt text and no directive goes into a tooltip.
Headings stay Markdown heading lines of escaped text, so mkdocs still takes the page
title and the table of contents from them.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache
from html.parser import HTMLParser
from pathlib import Path
from types import CodeType

import jinja2
from jinja2.loaders import split_template_path
from jinja2.sandbox import ImmutableSandboxedEnvironment
from markdown_it import MarkdownIt
from markdown_it.token import Token
from markupsafe import Markup, escape

from sitegen.core.errors import ConfigError, DataError, Issue
from sitegen.core.yaml_text import MAX_LINE_CHARS, MAX_TEXT_BYTES, decode_text
from sitegen.pages.author_text import LinkCheckedMarkdown, link_allowed
from sitegen.pages.directives import markdown_inline_text
from sitegen.validation.figures import readable

_PLACEHOLDER = "\x02sg{index}\x03"
_PLACEHOLDERS = re.compile("\x02sg(\\d+)\x03")


class _CompiledInMemory(jinja2.BytecodeCache):
    """Compiled content templates kept for the process, by template file and the checksum
    of its source: a page a build has compiled is not compiled again by the next build of
    the same process (tests, ``sitegen serve``), and a changed source is compiled anew.
    Only content environments (all configured alike) share it, and nothing is written to
    disk: an author's template is still compiled in the sandbox, and only there."""

    def __init__(self) -> None:
        self._compiled: dict[str, tuple[str, CodeType | None]] = {}

    def load_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        checksum, code = self._compiled.get(bucket.key, (None, None))
        if checksum == bucket.checksum:
            bucket.code = code

    def dump_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        self._compiled[bucket.key] = (bucket.checksum, bucket.code)


_CONTENT_COMPILED = _CompiledInMemory()


class _BoundedLoader(jinja2.FileSystemLoader):
    """Content templates read as bounded UTF-8 text (``yaml_text.decode_text``): a page that
    is not UTF-8, holds a NUL or is too large or too long a line is a template error naming
    it, never a traceback or a render that runs for minutes."""

    def get_source(self, environment, template):
        for folder in self.searchpath:
            path = os.path.join(folder, *split_template_path(template))
            if os.path.isfile(path):
                with open(path, "rb") as handle:
                    data = handle.read(MAX_TEXT_BYTES + 1)
                try:
                    decode_text(data, "the page", MAX_LINE_CHARS)
                except ConfigError as exc:
                    raise jinja2.TemplateError(str(exc)) from None
                break
        return super().get_source(environment, template)


def content_environment(search_path: list[str]) -> jinja2.Environment:
    """Content templates from the folders of ``search_path``, the first that has a page
    wins: an immutable sandbox with autoescape and no globals."""
    env = ImmutableSandboxedEnvironment(
        loader=_BoundedLoader(search_path),
        bytecode_cache=_CONTENT_COMPILED,
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
    )
    env.globals.clear()  # no range, dict, lipsum, cycler, joiner or namespace
    return env


@dataclass
class DirectiveCalls:
    """Outputs of the directives called while one page renders, by placeholder index."""

    outputs: list[str] = field(default_factory=list)

    def wrap(self, name: str, function: Callable[..., object]) -> Callable[..., object]:
        """A plain function named ``name`` (no ``__self__`` to reach the report through)
        that renders the directive and returns its placeholder. Booleans (``has_speed()``)
        pass as they are, for ``{% if %}``."""

        def call(*args: object, **kwargs: object) -> object:
            output = function(*args, **kwargs)
            if isinstance(output, bool):
                return output
            # Catalog strings (``t``) are text: escaped like every other text of the page.
            self.outputs.append(str(escape(output)))
            return Markup(_PLACEHOLDER.format(index=len(self.outputs) - 1))

        call.__name__ = name
        return call

    def substitute(self, text: str) -> str:
        return _PLACEHOLDERS.sub(lambda m: self.outputs[int(m.group(1))], text)


def refuse_symlinks(content_dir: Path) -> None:
    """Raises ``DataError`` naming every symbolic link under ``content/``: a link would let
    a page include any file of the machine."""
    links = [
        Path(root) / name
        for root, directories, files in os.walk(content_dir)
        for name in [*directories, *files]
        if (Path(root) / name).is_symlink()
    ]
    if links:
        raise DataError(
            [
                Issue(str(link), "a symbolic link; content files must be regular files", "content")
                for link in sorted(links)
            ]
        )


@cache
def _markdown() -> MarkdownIt:
    """The features of content Markdown, owned by the build: CommonMark and tables, without
    images (a picture could show any figure)."""
    return LinkCheckedMarkdown("commonmark", {"html": False}).enable("table").disable("image")


@cache
def _html_finder() -> MarkdownIt:
    """The same Markdown with raw HTML on, only to name the raw HTML an author wrote."""
    return MarkdownIt("commonmark", {"html": True}).enable("table")


@dataclass(frozen=True)
class Prose:
    """One content page's rendered template, as Markdown for mkdocs and as read text."""

    markdown: str
    """Heading lines and blocks of rendered HTML, directive placeholders still in."""
    text: str
    """Every visible text of the prose (directive outputs taken out), for the prose checks."""
    problems: list[str]
    """What an author may not write (raw HTML, numbered lists), one line each."""
    attributes: list[tuple[str, str]] = field(default_factory=list)
    """The texts a reader sees outside the prose, by field: tooltips (``link title``,
    ``image title``, ``reference definition [label] title``) and ``image alt text``."""


def render_prose(text: str) -> Prose:
    """Markdown prose (placeholders for directive outputs) rendered by the build."""
    env: dict = {}
    # Raw HTML on, images on: to name the raw HTML and find every tooltip and alt text.
    found_tokens = _html_finder().parse(text, env)
    problems = [
        f"raw HTML {token.content.strip()[:60]!r}: content is Markdown, only directives "
        "write markup"
        for token in _walk(found_tokens)
        if token.type in ("html_block", "html_inline")
    ]
    attributes, attribute_problems = _attributes(found_tokens, env)
    problems += attribute_problems
    tokens = found_tokens if _parsed_alike(text, env) else _markdown().parse(text)
    if any(token.type == "ordered_list_open" for token in tokens):
        # Its item numbers are figures the page shows (CSS counters), written by hand.
        problems.append("an ordered list numbers its items: write a bullet list")
    blocks: list[str] = []
    pending: list[Token] = []
    index = 0
    while index < len(tokens):
        token = tokens[index]
        if token.type == "heading_open" and token.level == 0:
            blocks.append(_html_block(pending))
            pending = []
            level = int(token.tag[1])
            blocks.append("#" * level + " " + _heading_text(tokens[index + 1]))
            index += 3
            continue
        pending.append(token)
        index += 1
    blocks.append(_html_block(pending))
    html = _markdown().renderer.render(tokens, _markdown().options, {})
    read = _TextReader()
    read.feed(_PLACEHOLDERS.sub(" ", html))
    read.close()
    markdown = "\n\n".join(b for b in blocks if b)
    return Prose(markdown, "".join(read.text), problems, attributes)


def _parsed_alike(text: str, env: dict) -> bool:
    """Whether ``_markdown`` parses ``text`` into the tokens ``_html_finder`` gave it (``env``
    as that parse filled it), so that one parse serves both. They differ only in raw HTML
    and autolinks (each starts with ``<``), images (``![``) and the link targets they keep:
    an inline link's (``](``) and a reference definition's. Every target markdown-it
    refuses, ``link_allowed`` refuses too; so where it allows each reference definition
    ``_html_finder`` kept, both parsers keep the same ones."""
    if any(mark in text for mark in ("<", "![", "](")):
        return False
    return all(link_allowed(found["href"]) for found in env.get("references", {}).values())


def _attributes(tokens: list[Token], env: dict) -> tuple[list[tuple[str, str]], list[str]]:
    """The tooltips and alt texts of Markdown parsed by ``_html_finder`` (``tokens``, and
    ``env`` the parse filled), by field, and what is wrong with them: an image without alt
    text, a directive inside a tooltip. Content Markdown shows an image as a link whose
    text is its alt text (no picture); reference definitions count whether or not a link
    uses them."""
    found: list[tuple[str, str]] = []
    for label, definition in env.get("references", {}).items():
        found.append((f"reference definition [{label.lower()}] title", definition.get("title")))
    problems = []
    for token in _walk(tokens):
        if token.type == "image":
            if not readable(token.content).strip():
                problems.append(
                    "an image without alt text: content shows an image as a link whose text is "
                    "its alt text; write what it shows"
                )
            found.append(("image alt text", token.content))
            found.append(("image title", token.attrGet("title")))
        elif token.type == "link_open":
            found.append(("link title", token.attrGet("title")))
    attributes: list[tuple[str, str]] = []
    for name, value in found:
        if value and (name == "image alt text" or value not in {v for _, v in attributes}):
            attributes.append((name, str(value)))
    problems += [
        f"a directive in the {name} {_PLACEHOLDERS.sub('…', value)[:60]!r}: a tooltip shows "
        "text only; put directives in the prose, beside their caveats"
        for name, value in attributes
        if name != "image alt text" and _PLACEHOLDERS.search(value)
    ]
    return attributes, problems


def _walk(tokens: list[Token]):
    for token in tokens:
        yield token
        yield from _walk(token.children or [])


_BETWEEN_PLACEHOLDERS = re.compile("(\x02sg\\d+\x03)")
_PRE = re.compile(r"<pre>.*?</pre>", re.DOTALL)
_LONE_PLACEHOLDER = re.compile("<p>(\x02sg\\d+\x03)</p>")


def _html_block(tokens: list[Token]) -> str:
    """Rendered blocks as one raw-HTML block for mkdocs: no blank line (a code block's line
    breaks become character references); a directive alone in a paragraph is unwrapped."""
    if not tokens:
        return ""
    html = _markdown().renderer.render(tokens, _markdown().options, {})
    html = _PRE.sub(lambda m: m.group().replace("\n", "&#10;"), html)
    html = _LONE_PLACEHOLDER.sub(r"\1", html)
    return "\n".join(line for line in html.split("\n") if line.strip())


def _heading_text(inline: Token) -> str:
    """A heading's text as escaped Markdown (markup and links dropped, placeholders kept)."""
    plain = "".join(
        " " if child.type in ("softbreak", "hardbreak") else child.content
        for child in _walk(inline.children or [])
        if child.type in ("text", "code_inline", "softbreak", "hardbreak")
    )
    return "".join(
        part if _PLACEHOLDERS.fullmatch(part) else str(markdown_inline_text(part))
        for part in _BETWEEN_PLACEHOLDERS.split(plain)
        if part
    )


class _TextReader(HTMLParser):
    """Every text node of rendered HTML, entities decoded."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.text: list[str] = []

    def handle_data(self, data: str) -> None:
        self.text.append(data)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag not in _INLINE_TAGS:
            self.text.append(" ")  # blocks and cells separate words on screen

    def handle_endtag(self, tag: str) -> None:
        if tag not in _INLINE_TAGS:
            self.text.append(" ")


_INLINE_TAGS = frozenset({"a", "code", "em", "strong"})
