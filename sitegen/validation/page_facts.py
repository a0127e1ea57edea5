"""What a rendered page claims: the elements marked ``data-claim`` and the caveat markers
(``data-caveat``) inside them. A claim's caveats are looked for anywhere inside its
outermost claim element."""

from __future__ import annotations

import re
from dataclasses import dataclass
from html.parser import HTMLParser

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


class _ClaimParser(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.claims: list[Claim] = []
        self.page_caveats: set[str] = set()
        self._stack: list[int | None] = []  # claim index per open element
        # Per open element: whether a reader cannot see it (inside a <template>, a
        # [hidden] element or a closed <details> outside its <summary>), and whether it
        # is a closed <details>. A caveat there is not shown, so it does not count.
        self._concealed: list[tuple[bool, bool]] = []
        self._in_script = False
        self.text: list[str] = []

    def _open_claims(self) -> list[int]:
        return [i for i in self._stack if i is not None]

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = {k: v or "" for k, v in attrs}
        claim_index = None
        if "data-claim" in values:
            open_claims = self._open_claims()
            claim_index = len(self.claims)
            root = self.claims[open_claims[0]].root if open_claims else claim_index
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
            for index in [
                *self._open_claims(),
                *([claim_index] if claim_index is not None else []),
            ]:
                self.claims[index].caveats.add(caveat)
        if tag in ("script", "style"):
            self._in_script = True
        if tag not in VOID_TAGS:
            self._stack.append(claim_index)
            self._concealed.append((concealed, tag == "details" and "open" not in values))

    def handle_endtag(self, tag: str) -> None:
        if tag in ("script", "style"):
            self._in_script = False
        if tag not in VOID_TAGS and self._stack:
            self._stack.pop()
            self._concealed.pop()

    def handle_data(self, data: str) -> None:
        if self._in_script:
            return
        self.text.append(data)
        for index in self._open_claims():
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


def read_page(html: str) -> PageFacts:
    parser = _ClaimParser()
    parser.feed(html)
    parser.close()
    return PageFacts(parser.claims, parser.page_caveats, "\n".join(parser.text))
