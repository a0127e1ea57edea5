"""What a rendered page claims: the elements marked ``data-claim`` and the caveat markers
(``data-caveat``) inside them. A claim's caveats are looked for anywhere inside its
outermost claim element."""

from __future__ import annotations

import html
import re
from dataclasses import dataclass

VOID_TAGS = frozenset(
    {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "wbr"}
)
NUMBER = re.compile(r"\d[\d,]*(?:\.\d+)?")


@dataclass
class Claim:
    kind: str
    attrs: dict[str, str]
    root: int
    """Index of the outermost claim element containing this one (itself if outermost)."""
    caveats: set[str]
    text: list[str]


_MARKUP = re.compile(
    r"<!--.*?--\s*>|<[!?][^>]*>"  # a comment, a declaration or processing instruction
    r"|<(/?)([a-zA-Z][^\t\n\r\f />\x00]*)((?:[^>\"']|\"[^\"]*\"|'[^']*')*)>",  # a tag
    re.DOTALL,
)
"""The markup of a page: comments, declarations and tags (an attribute's quoted value may
hold ``>``); everything between is text."""
_ATTRIBUTE = re.compile(r"""([^\s/>][^\s/=>]*)(?:\s*=\s*("[^"]*"|'[^']*'|[^\s>]*))?""")
_RAW_TEXT = {tag: re.compile(f"</{tag}[\\s/>]", re.IGNORECASE) for tag in ("script", "style")}
"""Where a script's or style's text ends: nothing inside is markup."""


def _attributes(text: str) -> dict[str, str]:
    """A tag's attributes, names in lower case, values unquoted and unescaped (a name
    alone has the value ``""``); the first of a repeated name counts, as in a browser."""
    values: dict[str, str] = {}
    for name, value in _ATTRIBUTE.findall(text):
        if value[:1] in ("'", '"'):
            value = value[1:-1]
        values.setdefault(name.lower(), html.unescape(value))
    return values


class _ClaimReader:
    """Reads a page's tags and text in order (``read``), noting its claims and caveats."""

    def __init__(self) -> None:
        self.claims: list[Claim] = []
        self.page_caveats: set[str] = set()
        self._stack: list[int | None] = []  # claim index per open element
        self._open_claims: list[int] = []  # the claims among the open elements, outermost first
        # Per open element: whether a reader cannot see it (inside a <template>, a
        # [hidden] element or a closed <details> outside its <summary>), and whether it
        # is a closed <details>. A caveat there is not shown, so it does not count.
        self._concealed: list[tuple[bool, bool]] = []
        self.text: list[str] = []

    def read(self, page: str) -> None:
        position = 0
        while (markup := _MARKUP.search(page, position)) is not None:
            if markup.start() > position:
                self._text(html.unescape(page[position : markup.start()]))
            position = markup.end()
            closing, tag, attributes = markup.groups()
            if tag is None:  # a comment or declaration
                continue
            tag = tag.lower()
            if closing:
                self._end(tag)
                continue
            self._start(tag, _attributes(attributes))
            if attributes.rstrip().endswith("/"):  # <tag/>: opened and closed
                self._end(tag)
            elif tag in _RAW_TEXT:
                end = _RAW_TEXT[tag].search(page, position)
                position = end.start() if end else len(page)
        if position < len(page):
            self._text(html.unescape(page[position:]))

    def _start(self, tag: str, values: dict[str, str]) -> None:
        claim_index = None
        if "data-claim" in values:
            claim_index = len(self.claims)
            root = self.claims[self._open_claims[0]].root if self._open_claims else claim_index
            self.claims.append(Claim(values["data-claim"], values, root, set(), []))
        concealed, in_closed_details = self._concealed[-1] if self._concealed else (False, False)
        concealed = (
            concealed
            or tag == "template"
            or "hidden" in values
            or (in_closed_details and tag != "summary")
        )
        caveat = values.get("data-caveat")
        if caveat and not concealed:
            self.page_caveats.add(caveat)
            for index in self._open_claims:
                self.claims[index].caveats.add(caveat)
            if claim_index is not None:
                self.claims[claim_index].caveats.add(caveat)
        if tag not in VOID_TAGS:
            self._stack.append(claim_index)
            if claim_index is not None:
                self._open_claims.append(claim_index)
            self._concealed.append((concealed, tag == "details" and "open" not in values))

    def _end(self, tag: str) -> None:
        if tag not in VOID_TAGS and self._stack:
            if self._stack.pop() is not None:
                self._open_claims.pop()
            self._concealed.pop()

    def _text(self, data: str) -> None:
        self.text.append(data)
        for index in self._open_claims:
            self.claims[index].text.append(data)


@dataclass(frozen=True)
class PageFacts:
    claims: list[Claim]
    caveats: set[str]
    text: str = ""
    """Every text of the page outside scripts and styles."""

    def effective_caveats(self, claim: Claim) -> set[str]:
        root = self.claims[claim.root]
        return root.caveats | {
            c for other in self.claims if other.root == claim.root for c in other.caveats
        }

    def claims_of(self, kind: str) -> list[Claim]:
        return [c for c in self.claims if c.kind == kind]

    def figures(self) -> list[str]:
        """Every number of the page's text, claims and prose alike (ja/en parity)."""
        return sorted(n.replace(",", "") for n in NUMBER.findall(self.text))


def read_page(page: str) -> PageFacts:
    reader = _ClaimReader()
    reader.read(page)
    return PageFacts(reader.claims, reader.page_caveats, "\n".join(reader.text))
