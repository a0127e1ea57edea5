"""Every internal link of a built site: each ``href``/``src`` that stays on the site must
name a file of it (a directory URL: its ``index.html``)."""

from __future__ import annotations

from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

LINK_ATTRIBUTES = {"href", "src", "data-spec", "data-all-versions", "data-plotly"}


class _Links(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.targets: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.targets += [value for name, value in attrs if name in LINK_ATTRIBUTES and value]


def _resolves(site: Path, page: Path, target: str) -> bool:
    parts = urlsplit(target)
    if parts.scheme or parts.netloc or not parts.path:
        return True  # another site, mailto:, data:, or a fragment of this page
    base = site if parts.path.startswith("/") else page.parent
    path = (base / unquote(parts.path).lstrip("/")).resolve()
    if not path.is_relative_to(site.resolve()):
        return False
    return (path / "index.html").is_file() if path.is_dir() else path.is_file()


def broken_internal_links(site: Path) -> list[str]:
    """``page → target`` for every internal link of every HTML page that names nothing."""
    broken = []
    for page in sorted(site.rglob("*.html")):
        parser = _Links()
        parser.feed(page.read_text(encoding="utf-8"))
        broken += [
            f"{page.relative_to(site)} → {target}"
            for target in parser.targets
            if not _resolves(site, page, target)
        ]
    return broken
