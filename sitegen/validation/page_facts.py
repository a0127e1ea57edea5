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
    r"|<(/?)([a-zA-Z][^\t\n\r\f />\x00]*)((?:[^>\"']+|\"[^\"]*\"|'[^']*')*)>",  # a tag
    re.DOTALL,
)
"""The markup of a page: comments, declarations and tags (an attribute's quoted value may
hold ``>``); everything between is text."""
_ATTRIBUTE = re.compile(r"""([^\s/>][^\s/=>]*)(?:\s*=\s*("[^"]*"|'[^']*'|[^\s>]*))?""")
_READ_ATTRIBUTES = re.compile("data-claim|data-caveat|hidden|open", re.IGNORECASE)
_READ_TAGS = frozenset({"template", "details"})
"""The attribute names and tags ``_ClaimReader._start`` looks at (``open`` for a
``<details>``): the attributes of another tag that holds none of these names are not
parsed."""
_SHOWN = (None, False, False)
_CONCEALED = (None, True, False)
"""An open element that is no claim and no closed ``<details>``, seen or not."""
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
        # Per open element: its claim's index (None: it is no claim), whether a reader
        # cannot see it (inside a <template>, a [hidden] element or a closed <details>
        # outside its <summary>) and whether it is a closed <details>. A caveat a reader
        # cannot see does not count.
        self._open: list[tuple[int | None, bool, bool]] = []
        self._open_claims: list[int] = []  # the claims among the open elements, outermost first
        self.text: list[str] = []

    def read(self, page: str) -> None:
        opened = self._open
        position = 0
        searching = True
        while searching:  # searched anew after a script's or style's text
            searching = False
            for markup in _MARKUP.finditer(page, position):
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
                if (attributes and _READ_ATTRIBUTES.search(attributes)) or tag in _READ_TAGS:
                    self._start(tag, _attributes(attributes))
                elif tag not in VOID_TAGS:  # _start of a tag that is no claim and no caveat
                    parent = opened[-1] if opened else _SHOWN
                    concealed = parent[1] or (parent[2] and tag != "summary")
                    opened.append(_CONCEALED if concealed else _SHOWN)
                if "/" in attributes and attributes.rstrip().endswith("/"):  # <tag/>
                    self._end(tag)
                elif tag in _RAW_TEXT:
                    end = _RAW_TEXT[tag].search(page, position)
                    position = end.start() if end else len(page)
                    searching = True
                    break
        if position < len(page):
            self._text(html.unescape(page[position:]))

    def _start(self, tag: str, values: dict[str, str]) -> None:
        claim_index = None
        if "data-claim" in values:
            claim_index = len(self.claims)
            root = self.claims[self._open_claims[0]].root if self._open_claims else claim_index
            self.claims.append(Claim(values["data-claim"], values, root, set(), []))
        _, concealed, in_closed_details = self._open[-1] if self._open else _SHOWN
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
            closed_details = tag == "details" and "open" not in values
            self._open.append((claim_index, concealed, closed_details))
            if claim_index is not None:
                self._open_claims.append(claim_index)

    def _end(self, tag: str) -> None:
        if tag not in VOID_TAGS and self._open and self._open.pop()[0] is not None:
            self._open_claims.pop()

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
