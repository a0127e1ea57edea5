"""Text an author writes with formatting (annotation reasons, curated-example reasons,
post-hoc reasons): CommonMark through markdown-it-py, never Python-Markdown.

Raw HTML is off, links may only go to http, https, mailto or relative addresses, and
images, headings and code blocks are switched off: an author can emphasise, list and
link, but never inject markup or hide a caveat.
"""

from __future__ import annotations

from functools import cache
from urllib.parse import urlsplit

from markdown_it import MarkdownIt
from markupsafe import Markup

LINK_SCHEMES = frozenset({"http", "https", "mailto"})
"""Link schemes an author may use; addresses without a scheme (relative) are allowed."""


def link_allowed(url: str) -> bool:
    """Whether an author's link target may become a link (``url`` as markdown-it decoded
    it, entities and escapes resolved)."""
    scheme = urlsplit(url.strip()).scheme.lower()
    return scheme == "" or scheme in LINK_SCHEMES


class LinkCheckedMarkdown(MarkdownIt):
    """Markdown whose links are kept only where ``link_allowed`` accepts their target."""

    def validateLink(self, url: str) -> bool:  # markdown-it-py's name
        return link_allowed(url)


@cache
def _renderer() -> MarkdownIt:
    renderer = LinkCheckedMarkdown("commonmark", {"html": False})
    renderer.disable(["image", "heading", "lheading", "code", "fence", "html_block", "html_inline"])
    return renderer


def render_author_text(text: str) -> Markup:
    """``text`` as HTML: one block without blank lines (it sits inside raw HTML of a
    Markdown page, where a blank line would end the block)."""
    html = _renderer().render(str(text))
    return Markup("\n".join(line for line in html.split("\n") if line.strip()))
