"""The large corpus of hostile text and the fields it goes into.

``HOSTILE_PAYLOADS`` (see ``hostile_payloads``): every payload carries a tag
``<field>.<payload>`` so that whatever fires or gets injected names the field it came
from; ``HOSTILE_FIELDS`` is every text field a plan author, an annotator or a model can
fill (``tests.hostilecampaign`` places the corpus in each).
"""

from __future__ import annotations

import string
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

PWN_HOOK = "(window.__pwned=window.__pwned||[]).push('$T')"
"""What a payload runs if it ever executes: appends its tag to ``window.__pwned``."""
PWN_HOOK_NO_QUOTES = "(window.__pwned=window.__pwned||[]).push(/$T/.source)"
"""The hook without quotes or spaces, for unquoted attributes and URLs."""
PWN_HOOK_PARENT = "(parent.__pwned=parent.__pwned||[]).push('$T')"
"""The hook from inside a same-origin frame."""
INJECTED_SELECTOR = "[data-pwn], #pwn, .pwn, [id^=pwn], [name^=pwn]"
"""Matches any element a payload managed to inject (every payload element is marked)."""
PWN_URL_MARK = "/pwn/"
"""Every URL a payload would make the browser load holds this (``/pwn/<tag>.png`` …)."""
TEMPLATE_MARK = "PWNTPL"
"""Text that appears only if a template payload was evaluated (``{{ 'PWN' ~ 'TPL' }}``)."""
MARKDOWN_MARK = "PWNMD"
"""Text that an element holds *alone* only if a Markdown payload was formatted."""
TAG_PATTERN = r"[a-z0-9][a-z0-9-]*\.[a-z0-9_]+"
"""A payload's tag: ``<field>.<payload>``."""


def _fullwidth(text: str) -> str:
    """ASCII as its full-width forms (NFKC folds them back: a normalizer must not)."""
    return "".join(
        "\u3000" if c == " " else chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in text
    )


# $T: the tag; $H / $N / $P: the hook (quoted / without quotes / from a frame); $W: an
# image with an onerror hook in full-width forms. Payloads that swallow what follows them
# when unescaped (comments, raw-text elements, unclosed tags and quotes) come last, so a
# concatenation still reaches all the others.
_PAYLOAD_TEMPLATES: dict[str, str] = {
    # -- script elements
    "script": '<script data-pwn="$T">$H</script>',
    "script_src": '<script data-pwn="$T" src="/pwn/$T.js"></script>',
    "script_mixed_case": '<ScRiPt data-pwn="$T">$H</sCrIpT >',
    "script_breakout": '</script><script data-pwn="$T">$H</script>',
    "context_breakout": (
        "</title></textarea></style></noscript></noembed></xmp></iframe></pre></code>"
        '--></select></template></svg></math><img data-pwn="$T" src=x onerror="$H">'
    ),
    "json_breakout": '"}]}\'}]}</script><script data-pwn="$T">$H</script>\u2028\u2029',
    "json_line_separators": "[$T] \u2028\";$H;//\u2029';$H;//",
    "js_string_breakout": "[$T] ';$H;// \";$H;// `;$H;// $${$H} \\';$H;//",
    # -- event handlers
    "img_onerror": '<img data-pwn="$T" src=x onerror="$H">',
    "img_onerror_unquoted": "<img data-pwn=$T src=x onerror=$N>",
    "svg_onload": '<svg data-pwn="$T" onload="$H"></svg>',
    "details_ontoggle": '<details data-pwn="$T" open ontoggle="$H"><summary>$T</summary>x</details>',
    "body_onload": '<body data-pwn="$T" onload="$H" onpageshow="$H">',
    "autofocus_onfocus": '<input data-pwn="$T" autofocus onfocus="$H">',
    "media_onerror": (
        '<video data-pwn="$T"><source onerror="$H"></video>'
        '<audio data-pwn="$T" src=x onerror="$H"></audio>'
    ),
    "animation_start": (
        '<style data-pwn="$T">@keyframes pwnspin{}</style>'
        '<div data-pwn="$T" style="animation:pwnspin 1ms" onanimationstart="$H">$T</div>'
    ),
    "attribute_breakout_double": '" data-pwn="$T" autofocus onfocus="$H" tabindex="1" x="',
    "attribute_breakout_single": "' data-pwn='$T' autofocus onfocus='$N' x='",
    "attribute_breakout_unquoted": " x data-pwn=$T autofocus onfocus=$N ",
    # -- URLs with scripts in them, in HTML, Markdown and autolinks
    "javascript_href": '<a data-pwn="$T" href="javascript:$H">$T</a>',
    "data_href": '<a data-pwn="$T" href="data:text/html,<script>alert(\'$T\')</script>">$T</a>',
    "vbscript_href": '<a data-pwn="$T" href="vbscript:msgbox(\'$T\')">$T</a>',
    "markdown_javascript_link": "[pwn $T](javascript:$N) [pwn $T](JaVaScRiPt:$N)",
    "markdown_data_link": (
        "[pwn $T](data:text/html,%3Cscript%3Ealert('$T')%3C/script%3E) "
        "![pwn $T](data:image/svg+xml,%3Csvg%20onload=alert('$T')%3E)"
    ),
    "markdown_vbscript_link": "[pwn $T](vbscript:msgbox('$T'))",
    "markdown_autolinks": "<javascript:$N> <vbscript:msgbox(/$T/)> <data:text/html,pwn-$T>",
    "markdown_image": "![pwn $T](/pwn/$T.png) ![pwn $T](javascript:$N)",
    "markdown_link_title": '[pwn $T](/pwn/$T "t\\" data-pwn=\\"$T\\" onmouseover=\\"$H")',
    "markdown_reference_link": "[pwn $T][pwnref] [pwnref]\n\n[pwnref]: javascript:$N\n",
    # -- elements that change the page around them
    "base_href": '<base data-pwn="$T" href="/pwn/$T/">',
    "meta_refresh": '<meta data-pwn="$T" http-equiv="refresh" content="0;url=/pwn/$T.html">',
    "style_hides_caveats": (
        '<style data-pwn="$T">.sg-caveat,[data-caveat]{display:none!important}</style>'
    ),
    "style_fades_caveats": (
        '<style data-pwn="$T">@import "/pwn/$T.css";[data-caveat],.sg-caveat{visibility:hidden'
        "!important;opacity:0!important;font-size:0!important;color:transparent!important}"
        "</style>"
    ),
    "link_stylesheet": (
        '<link data-pwn="$T" rel="stylesheet" href="/pwn/$T.css"><link data-pwn="$T" '
        'rel="stylesheet" href="data:text/css,.sg-caveat,[data-caveat]{display:none!important}">'
    ),
    "overlay": (
        '<div data-pwn="$T" style="position:fixed;inset:0;z-index:99999;background:#fff">$T</div>'
    ),
    "fake_caveat": '<p class="sg-caveat pwn" data-caveat="C-REVIEW" data-pwn="$T">$T</p>',
    # -- SVG and MathML
    "svg_script": '<svg data-pwn="$T"><script>$H</script></svg>',
    "svg_animate": (
        '<svg data-pwn="$T"><animate onbegin="$H" attributeName="x" dur="1s"></animate></svg>'
    ),
    "svg_xlink": (
        '<svg data-pwn="$T"><a xlink:href="javascript:$H"><text x="0" y="10">$T</text></a></svg>'
    ),
    "svg_foreign_object": (
        '<svg data-pwn="$T"><foreignObject><img data-pwn="$T" src=x onerror="$H">'
        "</foreignObject></svg>"
    ),
    # -- frames and plugins
    "iframe_srcdoc": '<iframe data-pwn="$T" srcdoc="<script>$P</script>"></iframe>',
    "iframe_javascript": '<iframe data-pwn="$T" src="javascript:$P"></iframe>',
    "object_data": (
        '<object data-pwn="$T" data="data:text/html,<script>alert(\'$T\')</script>"></object>'
    ),
    "embed_src": '<embed data-pwn="$T" src="/pwn/$T.svg" type="image/svg+xml">',
    # -- forms
    "form_action": (
        '<form data-pwn="$T" action="javascript:$H">'
        '<button data-pwn="$T" formaction="javascript:$H">$T</button>'
        '<input data-pwn="$T" type="image" src="/pwn/$T.png"></form>'
    ),
    # -- entity and encoding tricks
    "entity_script": '&lt;script data-pwn="$T"&gt;$H&lt;/script&gt;',
    "entity_hex": (
        '&#x3C;script data-pwn="$T">$H&#x3C;/script> &#x3C;img data-pwn="$T" src=x '
        'onerror="$H"&#x3E; &#60;script&#62;$H&#60;/script&#62;'
    ),
    "entity_javascript": (
        '<a data-pwn="$T" href="&#106;avascript:$H">$T</a>'
        '<a data-pwn="$T" href="jav&#x09;ascript:$H">$T</a>'
        '<a data-pwn="$T" href=" &#14; javascript:$H">$T</a>'
        " [pwn $T](&#106;avascript:$N)"
    ),
    "double_encoded": "[$T] %3Cscript%3E$H%3C/script%3E %253Cscript%253E &amp;lt;script&amp;gt;",
    "utf7": "[$T] +ADw-script data-pwn=+ACI-$T+ACI-+AD4-$H+ADw-/script+AD4-",
    "fullwidth_html": "[$T] $W",
    "small_form_variants": "[$T] \ufe64script\ufe65$H\ufe64/script\ufe65 \u2039b\u203a",
    # -- CSS-selector and quote breakers (page scripts must not build selectors from data)
    "selector_breakers": '[$T] "] [data-x=\'] \\\\ \\" \')" } { ; , > ~ + * #x .y :not( ::',
    # -- template languages
    "jinja_expression": "[$T] {{ 'PWN' ~ 'TPL-$T' }} {{ 7 * 7 }} {{ report_title() }}",
    "jinja_statement": (
        "[$T] {% if true %}PWN{{ '' }}TPL-$T{% endif %} {% raw %}{{ raw }}{% endraw %} {# c #}"
    ),
    "other_templates": "[$T] $${7*7} #{7*7} <%= 7*7 %> {{{triple}}} [[wiki]] {{< shortcode >}}",
    # -- Markdown
    "markdown_heading": '\n# PWNMD-$T {: #pwn-$T .pwn data-pwn="$T" }\n\nPWNMD-$T\n===\n',
    "markdown_emphasis": '**PWNMD-$T**{: data-pwn="$T" onclick="$H" } _PWNMD-$T_ `PWNMD-$T`',
    "markdown_blocks": "\n\n* PWNMD-$T\n\n> PWNMD-$T\n\n1. PWNMD-$T\n\n---\n",
    "markdown_table": "\n\n| PWNMD-$T | b |\n|---|---|\n| 1 | 2 |\n\n",
    "markdown_code_fence": '\n\n```\n</code></pre><img data-pwn="$T" src=x onerror="$H">\n```\n\n',
    "markdown_raw_html_block": '\n\n<div data-pwn="$T" class="pwn">\n\nPWNMD-$T\n\n</div>\n\n',
    "markdown_div_markdown": '\n\n<div markdown="1" data-pwn="$T">**PWNMD-$T**</div>\n\n',
    "markdown_attr_list": '\n\nPWNMD-$T\n{: data-pwn="$T" onclick="$H" style="color:red" }\n\n',
    "markdown_admonition": '\n\n!!! danger "PWNMD-$T"\n    PWNMD-$T\n\n',
    # -- text that must come through as it is
    "bidi_overrides": (
        "[$T] file\u202egnp.exe\u202c \u2066isolate\u2069 \u2067rtl\u2069 \u200fRTL mark\u200e"
        " \u061c \u202bembed\u202c \u202dlro\u202c"
    ),
    "zero_width": (
        "[$T] java\u200bscript:$N jav\u200dascript \ufeffBOM \u200c\u2060 <\u200bscript>"
        " [pwn $T](java\u200bscript:$N)"
    ),
    "nul_and_controls": (
        "[$T] nul\x00bell\x07esc\x1b[31mred\x1b[0m bs\x08 vt\x0b ff\x0c del\x7f "
        "c1\x85\x9b\x9f \x01\x02\x03\x0e\x1f"
    ),
    "nul_in_markup": (
        '<scr\x00ipt data-pwn="$T">$H</scr\x00ipt><img\x00 data-pwn="$T" src=x onerror="$H">'
        ' <a data-pwn="$T" href="java\x00script:$H">$T</a>'
    ),
    "long_word": "[$T] " + "W" * 4_000,
    "long_url": "[$T] https://example.invalid/" + "a/" * 800,
    "japanese": (
        "[$T] 日本語の回答です。「かぎ括弧」『二重』【隅付き】〈山括弧〉《二重山括弧》〜ー…・※"
        "　全角空白 ＡＢＣａｂｃ１２３ ｱｲｳｴｵ半角ｶﾀｶﾅ ＜全角不等号＞ ＆＃＄％＇＂ ￥1,000 ①②③ "
        "髙﨑 𠮷野家 🍣 ㈱ ㌔ ヴ ゛゜"
    ),
    # -- swallowers, last
    "xml_cdata": (
        '<![CDATA[<img data-pwn="$T" src=x onerror="$H">]]> <?xml-stylesheet href="/pwn/$T.xsl"?>'
    ),
    "math_mxss": (
        '<math data-pwn="$T"><mtext><table><mglyph><style><img data-pwn="$T" src=x '
        'onerror="$H"></style></mglyph></table></mtext></math>'
    ),
    "noscript_mxss": "<noscript><p title=\"</noscript><img data-pwn='$T' src=x onerror='$N'>\">",
    "textarea_open": '<textarea data-pwn="$T">',
    "dangling_markup": '<img data-pwn="$T" src=\'/pwn/$T?',
    "unclosed_tag": '<img data-pwn="$T" src=x onerror="$H"',
    "comment_open": "<!-- [$T]",
}
_FULLWIDTH_TEMPLATE = '<img data-pwn="$T" src=x onerror="$H">'


class _Template(string.Template):
    """``$T``, ``$H`` …: one capital letter, whatever follows it."""

    idpattern = "[A-Z]"
    flags = 0


def hostile_payloads(field: str, names: Iterable[str] | None = None) -> dict[str, str]:
    """The large corpus for ``field`` by payload name (default: all of it, in order), each
    payload tagged ``<field>.<payload>`` and holding that tag as plain text too."""
    out = {}
    for name in _PAYLOAD_TEMPLATES if names is None else names:
        tag = f"{field}.{name}"
        hooks = {
            "H": PWN_HOOK.replace("$T", tag),
            "N": PWN_HOOK_NO_QUOTES.replace("$T", tag),
            "P": PWN_HOOK_PARENT.replace("$T", tag),
        }
        wide = _fullwidth(_Template(_FULLWIDTH_TEMPLATE).substitute(T=tag, **hooks))
        out[name] = _Template(_PAYLOAD_TEMPLATES[name]).substitute(T=tag, W=wide, **hooks)
    return out


def hostile_text(field: str, names: Iterable[str] | None = None, separator: str = "\n\n") -> str:
    """The payloads of ``field`` (default: all) joined into one text."""
    return separator.join(hostile_payloads(field, names).values())


HOSTILE_PAYLOADS: dict[str, str] = hostile_payloads("payload")
"""The large corpus, tagged with the placeholder field ``payload``."""

DIRECTORY_PAYLOADS: dict[str, str] = {
    "selector_quotes": "[$T]\"']<[",
    "img_onerror": '<img data-pwn="$T" src=x onerror="$H">',
}
"""What a directory name can hold (no ``/``, no NUL, a few hundred bytes at most)."""


def directory_prefix(names: Iterable[str] | None = None) -> str:
    """A campaign directory name's prefix made of ``DIRECTORY_PAYLOADS``."""
    parts = []
    for name in DIRECTORY_PAYLOADS if names is None else names:
        tag = f"directory.{name}"
        hook = PWN_HOOK.replace("$T", tag)
        parts.append(_Template(DIRECTORY_PAYLOADS[name]).substitute(T=tag, H=hook))
    return "unit" + "".join(parts)


# --------------------------------------------------------------------------- hostile fields

FAIL_MARK = "sitegen-fake-fails-here"
"""Text of the hostile input that makes the fake engine fail it (so failure reasons exist)."""


@dataclass(frozen=True)
class HostileField:
    """A text field that a plan author, an annotator or a model fills."""

    name: str
    """Short name, also the first part of every tag placed in it."""
    where: Literal["plan", "record", "annotations", "directory"]
    path: tuple[str | int, ...] = ()
    """Keys from the plan, each record or the annotations down to the field."""
    as_key: bool = False
    """The text goes in as a key of the mapping at ``path`` (its value is ``"1"``)."""
    only_failed: bool = False
    """Records that failed only (``failure_reason``)."""
    prefix: str = ""
    suffix: str = ""


HOSTILE_FIELDS: tuple[HostileField, ...] = (
    # the plan (what its author writes)
    HostileField("title-ja", "plan", ("title", "ja")),
    HostileField("title-en", "plan", ("title", "en")),
    HostileField("input-text", "plan", ("inputs", 2, "text"), suffix=f"\n{FAIL_MARK}"),
    HostileField("model-name", "plan", ("model", "name")),
    HostileField("model-quantization", "plan", ("model", "quantization")),
    HostileField("model-source", "plan", ("model", "source")),
    HostileField("template-kwarg", "plan", ("template_kwargs", "pwn_kwarg")),
    HostileField("filler", "plan", ("filler",)),
    HostileField("plan-name", "plan", ("name",)),
    HostileField("input-id", "plan", ("inputs", 2, "id")),
    HostileField("condition-id", "plan", ("conditions", 0, "id")),
    # the records (what the model and the engine say)
    HostileField("answer-text", "record", ("text",)),
    HostileField("reasoning-text", "record", ("reasoning_text",)),
    HostileField("failure-reason", "record", ("failure_reason",), only_failed=True),
    HostileField("engine-version", "record", ("provenance", "engine", "version")),
    HostileField("engine-build", "record", ("provenance", "engine", "build")),
    HostileField("engine-api", "record", ("provenance", "engine", "api")),
    HostileField("record-model-name", "record", ("provenance", "model", "name")),
    HostileField("record-model-file", "record", ("provenance", "model", "file")),
    HostileField("record-quantization", "record", ("provenance", "model", "quantization")),
    HostileField("hostname", "record", ("provenance", "host", "hostname")),
    HostileField("platform", "record", ("provenance", "host", "platform")),
    HostileField("python-version", "record", ("provenance", "host", "python")),
    HostileField("device-name", "record", ("provenance", "host", "devices", 0, "name")),
    HostileField("driver", "record", ("provenance", "host", "driver")),
    HostileField("interconnect", "record", ("provenance", "host", "interconnect")),
    HostileField("flag-value", "record", ("provenance", "flags", "pwn_flag")),
    HostileField("flag-key", "record", ("provenance", "flags"), as_key=True),
    HostileField("env-value", "record", ("provenance", "env", "PWN_ENV")),
    HostileField("env-key", "record", ("provenance", "env"), as_key=True),
    HostileField("record-template-kwarg", "record", ("provenance", "template_kwargs", "pwn")),
    HostileField("sitegen-version", "record", ("provenance", "sitegen_version")),
    # the annotations (what a reviewer writes after measuring)
    HostileField("reviewer", "annotations", ("reviewer",)),
    HostileField("curated-reason-ja", "annotations", ("curated_examples", 0, "reason", "ja")),
    HostileField("curated-reason-en", "annotations", ("curated_examples", 0, "reason", "en")),
    HostileField("curated-trial-id", "annotations", ("curated_examples", 0, "trial_id")),
    HostileField("posthoc-reason-ja", "annotations", ("post_hoc", 0, "reason", "ja")),
    HostileField("posthoc-reason-en", "annotations", ("post_hoc", 0, "reason", "en")),
    HostileField(
        "posthoc-added-at", "annotations", ("post_hoc", 0, "added_at"), prefix="2999-01-01 "
    ),
    HostileField("posthoc-label", "annotations", ("post_hoc", 0, "label")),
    HostileField("posthoc-template", "annotations", ("post_hoc", 0, "exclude_templates", 0)),
    # the campaign directory's name (whoever copies campaigns around)
    HostileField("directory", "directory"),
)
"""Every text field that reaches the build; each gets the whole corpus."""
FIELDS_BY_NAME = {f.name: f for f in HOSTILE_FIELDS}


def field_text(field: str, names: Iterable[str] | None = None, separator: str = "\n\n") -> str:
    """What goes into ``field``: its payloads (default: all) joined, with the field's
    prefix and suffix."""
    spec = FIELDS_BY_NAME[field]
    if spec.where == "directory":
        return directory_prefix(names)
    return spec.prefix + hostile_text(field, names, separator) + spec.suffix


def field_payload_names(field: str) -> list[str]:
    """The payloads ``field`` is given."""
    return list(
        DIRECTORY_PAYLOADS if FIELDS_BY_NAME[field].where == "directory" else _PAYLOAD_TEMPLATES
    )
