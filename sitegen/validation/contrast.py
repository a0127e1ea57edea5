"""WCAG contrast of a project's palette (``mkdocs.yml`` → ``palette``): material's
colours for the chosen names, read from the installed theme's own stylesheet, checked for
the text they colour on the default (light) scheme: the header's text on the primary
colour, and links (material's link colour for the primary). The accent colours only a
hovered link and borders (as material's default accent, which is under 4.5:1 too). A pair under AA (4.5:1 for text) is
one warning line naming the colours and the ratio; nothing is refused."""

from __future__ import annotations

import colorsys
import re
from functools import cache
from pathlib import Path

AA_TEXT = 4.5
"""WCAG 2 AA, normal text."""

_RULE = re.compile(r"([^{}]+)\{([^{}]*)\}")
_DECLARATION = re.compile(r"(--md-[a-z-]+)\s*:\s*([^;]+)")
_HEX = re.compile(r"#([0-9a-fA-F]{3,8})")
_HSL = re.compile(r"hsla?\(\s*([\d.]+)\s*,\s*([\d.]+)%\s*,\s*([\d.]+)%\s*(?:,\s*([\d.]+))?\s*\)")
_DEFAULTS = {
    "--md-primary-fg-color": "#4051b5",
    "--md-primary-bg-color": "#fff",
    "--md-accent-fg-color": "#526cfe",
    "--md-typeset-a-color": "var(--md-primary-fg-color)",
}
"""material's ``:root`` values (indigo), which a palette name overrides."""
WHITE = (1.0, 1.0, 1.0)


@cache
def _stylesheet() -> str:
    import material

    folder = Path(material.__file__).parent / "templates" / "assets" / "stylesheets"
    return "".join(p.read_text(encoding="utf-8") for p in sorted(folder.glob("palette.*.css")))


def _applies(selector: str, attribute: str, name: str) -> bool:
    """Whether ``selector`` sets the palette ``attribute=name`` on the light scheme."""
    selector = selector.strip()
    rest = selector.replace(f"[data-md-color-{attribute}={name}]", "", 1)
    if rest == selector:
        return False
    return rest in ("", ":not([data-md-color-scheme=slate])")


def palette_colours(primary: str | None, accent: str | None) -> dict[str, str]:
    """material's custom properties (``--md-…``) for these names on the light scheme."""
    values = dict(_DEFAULTS)
    for attribute, name in (("primary", primary), ("accent", accent)):
        if not name:
            continue
        name = name.replace(" ", "-")
        for selectors, body in _RULE.findall(_stylesheet()):
            if any(_applies(s, attribute, name) for s in selectors.split(",")):
                values.update(_DECLARATION.findall(body))
    return values


def _rgba(value: str, values: dict[str, str]) -> tuple[float, float, float, float]:
    value = value.strip()
    if value.startswith("var("):
        return _rgba(values[value[4:].rstrip(")").strip()], values)
    if match := _HEX.fullmatch(value):
        digits = match.group(1)
        if len(digits) in (3, 4):
            digits = "".join(d * 2 for d in digits)
        channels = [int(digits[i : i + 2], 16) / 255 for i in range(0, len(digits), 2)]
        return (*channels[:3], channels[3] if len(channels) == 4 else 1.0)  # type: ignore[return-value]
    if match := _HSL.fullmatch(value.replace("var(--md-hue)", "225")):  # material's hue
        h, s, l_, a = match.groups()
        r, g, b = colorsys.hls_to_rgb(float(h) / 360, float(l_) / 100, float(s) / 100)
        return (r, g, b, float(a) if a else 1.0)
    raise ValueError(f"not a colour: {value}")


def _over(colour: tuple[float, float, float, float], background: tuple[float, ...]) -> tuple:
    alpha = colour[3]
    return tuple(
        alpha * c + (1 - alpha) * b for c, b in zip(colour[:3], background[:3], strict=True)
    )


def _luminance(rgb: tuple) -> float:
    def linear(c: float) -> float:
        return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4

    r, g, b = (linear(c) for c in rgb)
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def contrast_ratio(foreground: tuple, background: tuple) -> float:
    """WCAG contrast ratio of two opaque sRGB colours (channels 0–1)."""
    lighter, darker = sorted((_luminance(foreground), _luminance(background)), reverse=True)
    return (lighter + 0.05) / (darker + 0.05)


def _hex(rgb: tuple) -> str:
    return "#" + "".join(f"{round(c * 255):02x}" for c in rgb)


def palette_warning(primary: str | None, accent: str | None = None) -> str | None:
    """One line naming each text/background pair of the palette under WCAG AA (4.5:1)
    with its ratio, or ``None`` (``accent`` colours no text at rest: it is not checked)."""
    values = palette_colours(primary, accent)
    header_bg = _over(_rgba(values["--md-primary-fg-color"], values), WHITE)
    pairs = (
        ("header text", "--md-primary-bg-color", header_bg),
        ("link text", "--md-typeset-a-color", WHITE),
    )
    failing = []
    for what, variable, background in pairs:
        text = _over(_rgba(values[variable], values), background)
        ratio = contrast_ratio(text, background)
        if ratio < AA_TEXT:
            failing.append(f"{what} {_hex(text)} on {_hex(background)} is {ratio:.2f}:1")
    if not failing:
        return None
    return (
        f"mkdocs.yml → palette: primary {primary or 'indigo'} fails WCAG AA contrast "
        f"({AA_TEXT}:1 for text): {'; '.join(failing)}"
    )
