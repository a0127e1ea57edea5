"""mkdocs hooks of every build (``hooks`` in ``BUILD_CONFIG``)."""

from __future__ import annotations

import re
from typing import Any

import jinja2

from sitegen.pages import template_cache

_HTML_MARK = "<!--sitegen-html-{index}-->"
_HTML_MARKS = re.compile(r"<!--sitegen-html-(\d+)-->")

_html_blocks: dict[str, list[str]] = {}
"""Each page's HTML blocks (by source path) between ``on_page_markdown`` and
``on_page_content``."""


def on_env(env: jinja2.Environment, config: object, files: object) -> jinja2.Environment:
    """The theme's templates compiled once, not at every build (``template_cache``)."""
    env.bytecode_cache = template_cache.bytecode_cache()
    return env


def on_page_markdown(markdown: str, page: Any, config: object, files: object) -> str:
    """Each block of HTML the build rendered becomes a short mark Python-Markdown passes
    through: parsing the page's HTML again (its raw-HTML preprocessor) took most of the
    Markdown time and changes nothing. Heading lines stay, for the title, the table of
    contents and the anchors."""
    blocks = markdown.split("\n\n")
    html: list[str] = []
    for position, block in enumerate(blocks):
        if block.startswith("<"):
            blocks[position] = _HTML_MARK.format(index=len(html))
            html.append(block)
    _html_blocks[page.file.src_uri] = html
    return "\n\n".join(blocks)


def on_page_content(content: str, page: Any, config: object, files: object) -> str:
    """The page's HTML blocks back in place of their marks."""
    html = _html_blocks.pop(page.file.src_uri)
    return _HTML_MARKS.sub(lambda mark: html[int(mark.group(1))], content)
