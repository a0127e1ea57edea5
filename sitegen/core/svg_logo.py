"""The project's logo (``logo`` of ``mkdocs.yml``, a file of ``theme/assets/``), shown in
the header of every page.

An SVG logo is a document, not only a picture: it can write text (``<text>`` "3× faster"
on every page), run scripts, embed HTML or load other files. sitegen refuses an SVG logo
holding any of these; what its shapes draw, like every pixel of a raster logo, is the
publisher's responsibility (docs/project.md, "Branding").
"""

from __future__ import annotations

import gzip
import re
import xml.etree.ElementTree as ElementTree
from pathlib import Path

SVG_SUFFIXES = frozenset({".svg", ".svgz"})
"""File names read as SVG (a file that starts like XML is read as SVG whatever its name)."""

TEXT_ELEMENTS = frozenset({"text", "tspan", "textPath", "tref", "flowRoot", "flowPara"})
"""Elements that write text: a logo draws, it does not state."""
ACTIVE_ELEMENTS = frozenset({"script", "foreignObject", "iframe", "handler", "listener"})
"""Elements that run code or embed another document."""
LOCAL_REFERENCE = re.compile(r"^\s*#")
"""A reference to an element of the same file (``#gradient``)."""
CSS_URL = re.compile(r"url\(\s*(['\"]?)\s*(?!#)([^)'\"]*)\1\s*\)|@import", re.IGNORECASE)
"""A CSS reference to another file (``url(https://…)``, ``@import``); ``url(#id)`` is local."""
PROCESSING_INSTRUCTION = re.compile(r"<\?(?!xml[\s?])", re.IGNORECASE)
"""A processing instruction other than the XML declaration (``<?xml-stylesheet …?>``)."""
DECLARATION = re.compile(r"<!(?:DOCTYPE|ENTITY)", re.IGNORECASE)
"""A document type or entity declaration: entities can hold references and text."""


def is_svg(path: Path, data: bytes) -> bool:
    """Whether the logo is (or reads as) an SVG document."""
    if path.suffix.lower() in SVG_SUFFIXES:
        return True
    head = data.lstrip(b"\xef\xbb\xbf \t\r\n")[:5].lower()
    return head.startswith((b"<?xml", b"<svg", b"<!--", b"<!doc"))


def svg_logo_problems(path: Path) -> list[str]:
    """What an SVG logo at ``path`` holds that a logo may not: text, scripts, embedded
    documents, event attributes, references to anything but its own elements; ``[]`` for
    a logo that only draws (or a raster file)."""
    data = path.read_bytes()
    if data[:2] == b"\x1f\x8b":  # .svgz: gzip-compressed SVG
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError):
            return ["not a readable gzip-compressed SVG"]
    if not is_svg(path, data):
        return []
    text = data.decode("utf-8", errors="replace")
    found: list[str] = []
    if DECLARATION.search(text):
        found.append("a DOCTYPE or ENTITY declaration")
    if PROCESSING_INSTRUCTION.search(text):
        found.append("a processing instruction (<?xml-stylesheet …?>)")
    if found:
        return found
    try:
        root = ElementTree.fromstring(data)
    except ElementTree.ParseError as exc:
        return [f"not well-formed XML ({exc})"]
    for element in root.iter():
        name = _local(element.tag)
        if name in TEXT_ELEMENTS or name in ACTIVE_ELEMENTS:
            found.append(f"<{name}>")
        if name == "style" and CSS_URL.search(element.text or ""):
            found.append("a <style> with url(…) or @import of another file")
        for attribute, value in element.attrib.items():
            attr = _local(attribute)
            if attr.lower().startswith("on"):
                found.append(f"an event attribute {attr}")
            elif attr in ("href", "src") and not LOCAL_REFERENCE.match(value):
                found.append(f"<{name} {attr}={value[:40]!r}>: a reference outside the file")
            elif CSS_URL.search(value):
                found.append(f"<{name} {attr}=…url({value[:40]!r})>: a reference outside the file")
    return list(dict.fromkeys(found))


def _local(name: str) -> str:
    """An element's or attribute's name without its namespace (``{…svg}text`` → ``text``)."""
    return name.rsplit("}", 1)[-1]
