"""No side channel for a figure or a caveat: the trusted places a project writes text a
reader sees (its catalog file, tooltips and alt texts of its pages, the footer's social
links, its sources, its logo) are refused when they state a figure, change a caveat or
say who measured, each with one line naming the file and the field. A few harmless
changes are shown to pass. Every case runs the check the build runs (``check_project``,
``load_catalogs``, ``render_page``, ``read_site_settings``) without publishing."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest
import yaml
from markupsafe import Markup

from sitegen.core.errors import DataError
from sitegen.core.site_settings import read_site_settings
from sitegen.core.string_catalog import packaged_strings
from sitegen.pages.content import content_environment
from sitegen.pages.i18n import load_catalogs
from sitegen.pages.render import render_page
from sitegen.validation import check_project
from sitegen.validation.catalog_overrides import OVERRIDABLE, overridable
from tests.sitefixtures import copy_project


@pytest.fixture
def project(tmp_path) -> Path:
    return copy_project(tmp_path / "project")


def write_catalog(project: Path, lang: str, strings: dict[str, object]) -> Path:
    path = project / "theme" / "i18n" / f"{lang}.yml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(strings, allow_unicode=True), encoding="utf-8")
    return path


def refusals(project: Path) -> list[str]:
    """What ``sitegen check`` says of the project's own files, one line per issue."""
    return [str(issue) for issue in check_project(project)]


def the_refusal(project: Path, where: str) -> str:
    """The one line naming ``where`` (``en.yml → caveat.limits``): it must exist."""
    lines = [line for line in refusals(project) if where in line]
    assert lines, f"nothing refused at {where}: {refusals(project)}"
    assert all("\n" not in line for line in lines)
    return lines[0]


# --- catalog: caveats, rules, quotations and who measured are the package's -------------

PACKAGE_STRINGS = {
    # The held-out corpus: caveats turned into false statements without a figure.
    "limits-swapped": (
        "caveat.limits",
        "Output cap {capacity} tokens; allocated context {cap} tokens; actual input {prompt} tokens.",
    ),
    "excluded-denied": ("caveat.excluded", "All trials enter the statistics."),
    "order-claims-alternation": (
        "caveat.order.sequential",
        "Run order: conditions alternated per input and repetition.",
    ),
    "outliers-removed": ("caveat.outliers.none", "Outliers were removed."),
    "hardware-cut": ("caveat.hardware", "Measured on: {hardware}."),
    "medians-zero-width": ("caveat.medians", "\u200b"),
    "imported-as-measured": ("imported.source", "Measured by sitegen ({tool} format)."),
    "literal-as-measured": ("literal.not_measured", "measured in this report"),
    # Every other kind of text the package owns.
    "units": ("caveat.units", "tokens/s counts answer tokens only."),
    "capacity": ("caveat.capacity", "Context {capacity} tokens, input {prompt} tokens."),
    "tail": ("caveat.tail", "Every percentile is exact."),
    "ngram-is-mtp": ("caveat.ngram_not_mtp", "N-gram speculative decoding is MTP."),
    "unhashed": ("caveat.unhashed_model", "The model file was hashed."),
    "missing-trials": ("caveat.missing", "The campaign ran to the end."),
    "literal-source": ("literal.source", "measured"),
    "literals-note": ("literals.note", "These figures were measured by this report."),
    "imported-lead": ("imported.lead", "Every figure on this page was measured by sitegen."),
    "imported-side": ("compare.imported_side", "measured by sitegen"),
    "measured-side": ("compare.measured_side", "measured independently"),
    "imported-declared": ("imported.declared_lead", "Measured and recorded."),
    "home-imported": ("home.imported", "measured"),
    "role-measured": ("role.measured", "verified"),
    "review-automated": (
        "review.automated",
        "Review of full answers: reviewed by a person ({reviewer}).",
    ),
    "signing": ("signing.unsigned", "The records are signed."),
    "method": ("method.repetitions", "Each condition was measured many times."),
    "glossary": ("glossary.gen_tps", "Tokens per second, first token included."),
    "rules-summary": ("rules.summary", "The rules the build checks ({n})"),
    "quality-scope": ("quality.scope", "This verdict holds for every input and hardware."),
    "threshold-guarantee": ("threshold.not_guarantee", "Guaranteed on any hardware."),
    "version-outdated": ("version.outdated", "This is the latest version."),
    "headline": ("headline.factor_only", "The conditions are identical."),
    "history-caveat": ("history.caveat", "Changes between versions are the factor's effect."),
    "curated-notice": ("examples.curated_notice", "A random sample."),
    "overview-note": ("overview.note", "Campaigns ran on the same hardware."),
    "column-meaning": ("col.gen_tps_median", "Gen tok/s best"),
}


@pytest.mark.parametrize(("key", "text"), PACKAGE_STRINGS.values(), ids=PACKAGE_STRINGS.keys())
def test_a_project_cannot_override_the_package_s_strings(project, key, text):
    path = write_catalog(project, "en", {key: text})
    line = the_refusal(project, f"{path} → {key}")
    assert "the package's string" in line
    with pytest.raises(DataError, match="the package's string"):
        load_catalogs(project)


@pytest.mark.parametrize(
    ("key", "text"),
    [
        ("caveat.excluded", "すべての試行を統計に含めます。"),
        ("literal.not_measured", "本レポートで測定"),
        ("imported.source", "sitegen が測定（{tool} 形式）。"),
    ],
    ids=["excluded-ja", "literal-ja", "imported-ja"],
)
def test_the_package_s_strings_are_refused_in_japanese_too(project, key, text):
    path = write_catalog(project, "ja", {key: text})
    assert "the package's string" in the_refusal(project, f"{path} → {key}")


def test_every_override_of_a_package_string_is_one_line_each(project):
    keys = ["caveat.limits", "caveat.excluded", "imported.source"]
    path = write_catalog(project, "en", dict.fromkeys(keys, "changed"))
    with pytest.raises(DataError) as caught:
        load_catalogs(project)
    message = str(caught.value)
    assert message.count("the package's string") == len(keys)
    for key in keys:
        assert f"{path} → {key}: the package's string" in message


def test_no_caveat_rule_literal_or_imported_key_is_overridable():
    owned = (
        *("caveat.", "rules.", "literal.", "literals.", "imported.", "signing.", "method."),
        *("glossary.", "review.", "compare.imported_side", "compare.measured_side"),
    )
    for key in packaged_strings():
        if key.startswith(owned):
            assert not overridable(key), key
    # Every entry of the allow-list names catalog keys that exist.
    for entry in OVERRIDABLE:
        prefix = entry.removesuffix("*") if entry.endswith(".*") else None
        keys = [k for k in packaged_strings() if k == entry or (prefix and k.startswith(prefix))]
        assert keys, f"{entry} names no key of the catalog"


# --- catalog: an interface label keeps sitegen's placeholders, in their order -----------

PLACEHOLDER_TRICKS = {
    "swapped": ("answers.page", "Page {pages} of {page}", "moved"),
    "dropped": ("answers.page", "Page {page}", "dropped"),
    "both-dropped": ("answers.page", "Pages", "dropped"),
    "title-dropped": ("history.title", "History", "dropped"),
    "added": ("history.title", "History: {title} ({n})", "added"),
    "added-to-plain-label": ("page.speed", "{n} Speed", "added"),
    "repeated": ("history.title", "{title}: history of {title}", "added"),
    "renamed": ("answers.page", "Page {page} of {total}", "added or changed"),
    "format-spec": ("answers.page", "Page {page:>9} of {pages}", "added or changed"),
    "attribute-access": ("history.title", "History: {title.__class__}", "added or changed"),
    "unpaired-brace": ("answers.page", "Page {page} of {pages", "brace"),
}


@pytest.mark.parametrize(
    ("key", "text", "why"), PLACEHOLDER_TRICKS.values(), ids=PLACEHOLDER_TRICKS.keys()
)
def test_placeholders_cannot_move_drop_or_be_added(project, key, text, why):
    path = write_catalog(project, "en", {key: text})
    line = the_refusal(project, f"{path} → {key}")
    assert why in line
    with pytest.raises(DataError, match=why):
        load_catalogs(project)


# --- catalog: a label shows some text ----------------------------------------------------

BLANK_TRICKS = {
    "empty": "",
    "space": " ",
    "tab": "\t",
    "zero-width-space": "\u200b",
    "zero-width-joiners": "\u200c\u200d",
    "word-joiner-and-space": "\u2060 ",
    "entity-of-zero-width": "&#8203;",
    "no-break-space-entity": "&nbsp;",
    "ideographic-space": "\u3000",
}


@pytest.mark.parametrize("text", BLANK_TRICKS.values(), ids=BLANK_TRICKS.keys())
def test_a_blank_or_invisible_label_is_refused(project, text):
    path = write_catalog(project, "en", {"page.speed": text})
    assert "blank" in the_refusal(project, f"{path} → page.speed")


@pytest.mark.parametrize(
    "text",
    ["Sp\u200beed", "\u202eSpeed", "Speed\u2066", "Spe\x1bed"],
    ids=["zero-width-inside", "bidi-override", "bidi-isolate", "escape-character"],
)
def test_a_label_with_invisible_characters_is_refused(project, text):
    path = write_catalog(project, "en", {"page.speed": text})
    assert "invisible" in the_refusal(project, f"{path} → page.speed")


# --- catalog: an overridable label still passes the detector ----------------------------

FIGURES_IN_LABELS = {
    "speed": ("en", "page.speed", "Speed (3× faster)", "'3'"),
    "summary": ("en", "page.summary", "Summary: 50 tok/s", "'50'"),
    "site-name": ("en", "site.name", "Twice as fast benchmarks", "Twice"),
    "details": ("en", "kpi.more.speed", "Speed details: doubled", "doubled"),
    "latest": ("en", "version.to_latest", "Latest (2x faster)", "'2x'"),
    "with-placeholder": ("en", "history.title", "History: {title}, 3× faster", "'3'"),
    "percent": ("en", "page.quality", "Quality: ninety percent", "ninety"),
    "entity": ("en", "page.data", "Data &#51;x", "'3x'"),
    "full-width": ("en", "page.method", "Method ２x", "'２'"),
    "compare-ja": ("ja", "compare.title", "三倍速い比較", "三倍"),
    "half-ja": ("ja", "page.speed", "速度（半分の時間）", "半分"),
}


@pytest.mark.parametrize(
    ("lang", "key", "text", "named"), FIGURES_IN_LABELS.values(), ids=FIGURES_IN_LABELS.keys()
)
def test_an_overridable_label_with_a_figure_is_refused(project, lang, key, text, named):
    path = write_catalog(project, lang, {key: text})
    line = the_refusal(project, f"{path} → {key}")
    assert "[C-FIGURE]" in line and "written by hand" in line and named.strip("'") in line


def test_a_key_sitegen_lacks_and_a_file_that_is_no_mapping_are_refused(project):
    path = write_catalog(project, "en", {"custom.claim": "Our engine wins"})
    assert "not a key of sitegen's catalog" in the_refusal(project, f"{path} → custom.claim")
    path.write_text("- a list\n")
    assert "not a mapping" in the_refusal(project, str(path))


# --- catalog: what a project may change ---------------------------------------------------


def test_a_renamed_navigation_label_in_both_languages_is_allowed(project):
    write_catalog(project, "ja", {"page.speed": "速さ", "site.name": "社内ベンチマーク"})
    write_catalog(project, "en", {"page.speed": "Throughput", "site.name": "Our benchmarks"})
    assert refusals(project) == []
    catalogs = load_catalogs(project)
    assert catalogs["ja"].t("page.speed") == "速さ"
    assert catalogs["en"].t("page.speed") == "Throughput"
    assert catalogs["en"].t("site.name") == "Our benchmarks"
    # What it did not replace stays sitegen's.
    assert catalogs["en"].t("caveat.medians") == packaged_strings()["caveat.medians"].en


def test_labels_reworded_around_their_placeholders_are_allowed(project):
    write_catalog(
        project, "en", {"answers.page": "{page} / {pages}", "history.title": "{title}: versions"}
    )
    write_catalog(project, "ja", {"answers.first": "先頭", "kpi.more.speed": "速さの詳細"})
    assert refusals(project) == []
    catalogs = load_catalogs(project)
    assert catalogs["en"].t("answers.page", page="a", pages="b") == "a / b"
    assert catalogs["ja"].t("answers.first") == "先頭"


# --- tooltips and alt texts of content pages ------------------------------------------


def _headline() -> Markup:
    """A directive that renders markup (``render_page`` takes directives by name)."""
    return Markup('<p data-claim="speed-ratio">ratio</p>')


def page_issues(tmp_path: Path, prose: str) -> list[str]:
    """The issues ``render_page`` (what the build runs for every content page) finds in a
    page of this prose."""
    (tmp_path / "content" / "en").mkdir(parents=True, exist_ok=True)
    (tmp_path / "content" / "en" / "page.md").write_text(f"# Title\n\n{prose}\n")
    content = content_environment([str(tmp_path / "content")])
    _, issues = render_page(content, "en/page.md", {"headline": _headline})
    return [str(issue) for issue in issues]


TOOLTIPS = {
    "link-title": ('See [notes](https://example.org "3× faster").', "link title", "'3'"),
    "single-quoted-title": ("See [notes](https://example.org '50 tok/s').", "link title", "'50'"),
    "parenthesised-title": (
        "See [notes](https://example.org (twice as fast)).",
        "link title",
        "twice",
    ),
    "entity-title": ('See [notes](/x "&#50;x faster").', "link title", "'2x'"),
    "zero-width-title": ('See [notes](/x "1\u200b.5x").', "link title", "'1.5x'"),
    "ja-title": ('[資料](/x "三倍速い")を参照。', "link title", "三倍"),
    "reference-title": (
        'See [notes][n].\n\n[n]: https://example.org "Halved latency"',
        "reference definition [n] title",
        "Halved",
    ),
    "unused-reference": (
        'Text.\n\n[spare]: /x "ten-fold faster"',
        "reference definition [spare] title",
        "fold",
    ),
    "image-title": ('![a chart](/c.png "2x faster")', "image title", "'2x'"),
    "image-alt": ("![Speed doubles](/c.png)", "image alt text", "doubles"),
    "image-alt-ja": ("![速度が倍増](/c.png)", "image alt text", "倍増"),
}


@pytest.mark.parametrize(("prose", "field", "named"), TOOLTIPS.values(), ids=TOOLTIPS.keys())
def test_a_figure_in_a_tooltip_or_alt_text_is_refused(tmp_path, prose, field, named):
    lines = [
        line for line in page_issues(tmp_path, prose) if f"content/en/page.md → {field}" in line
    ]
    assert lines and "[C-FIGURE]" in lines[0] and named.strip("'") in lines[0]


@pytest.mark.parametrize(
    ("prose", "why"),
    [
        ("![](/c.png)", "an image without alt text"),
        ("![ \u200b ](/c.png)", "an image without alt text"),
        ('[a](/x "{{ headline() }}")', "a directive in the link title"),
        ('[a][r]\n\n[r]: /x "{{ headline() }}"', "a directive in the reference definition"),
    ],
    ids=["no-alt", "invisible-alt", "directive-in-title", "directive-in-reference-title"],
)
def test_an_image_needs_alt_text_and_a_tooltip_holds_no_directive(tmp_path, prose, why):
    assert any(why in line for line in page_issues(tmp_path, prose))


def test_tooltips_and_alt_texts_without_figures_pass(tmp_path):
    prose = (
        'See [the notes](https://example.org/v2 "Vendor notes on H100").\n\n'
        '![The speed chart of gemma-3-270m](/c.png "Qwen2.5 chart")\n\n[n]: /x "Notes"'
    )
    assert page_issues(tmp_path, prose) == []


# --- the footer's social links --------------------------------------------------------


def write_settings(project: Path, settings: dict) -> Path:
    path = project / "mkdocs.yml"
    path.write_text(yaml.safe_dump(settings, allow_unicode=True), encoding="utf-8")
    return path


SOCIAL = {
    "name": ({"name": "3× faster than vLLM"}, "name", "'3'"),
    "name-word": ({"name": "Twice as fast"}, "name", "Twice"),
    "name-ja": ({"name": "二倍速い"}, "name", "二倍"),
    "name-zero-width": ({"name": "1\u200b0x"}, "name", "'10x'"),
    "numeric-icon": ({"icon": "material/numeric-3-box"}, "icon", "'3'"),
    "percent-icon": ({"icon": "fontawesome/solid/percent"}, "icon", "percent"),
}


@pytest.mark.parametrize(("change", "field", "named"), SOCIAL.values(), ids=SOCIAL.keys())
def test_a_figure_in_a_social_link_is_refused(project, change, field, named):
    link = {"icon": "fontawesome/brands/github", "link": "https://github.com/example"}
    path = write_settings(project, {"extra": {"social": [link | change]}})
    line = the_refusal(project, f"{path} → extra.social.0.{field}")
    assert "[C-FIGURE]" in line and named.strip("'") in line


def test_a_social_link_without_figures_passes(project):
    link = {"icon": "fontawesome/brands/github", "link": "https://github.com/x", "name": "GitHub"}
    write_settings(project, {"extra": {"social": [link]}})
    assert refusals(project) == []


# --- sources of quoted figures ----------------------------------------------------------


SOURCES = {
    "title": ("title", "Vendor sheet: 3× faster"),
    "title-word": ("title", "Why MTP doubles throughput"),
    "title-ja": ("title", "三倍速い推論"),
    "publisher": ("publisher", "Vendor (2x faster)"),
    "publisher-entity": ("publisher", "Vendor &#51;x"),
}


@pytest.mark.parametrize(("field", "text"), SOURCES.values(), ids=SOURCES.keys())
def test_a_figure_in_a_source_title_or_publisher_is_refused(project, field, text):
    source = {"id": "vendor", "title": "Vendor sheet", "publisher": "Vendor", "date": "2025-01-01"}
    path = project / "content" / "sources.yaml"
    path.write_text(yaml.safe_dump({"sources": [source | {field: text}]}, allow_unicode=True))
    line = the_refusal(project, f"{path} → sources.0.{field}")
    assert "[C-FIGURE]" in line


# --- the logo ----------------------------------------------------------------------------

SVG = '<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" viewBox="0 0 10 10">{}</svg>'

LOGOS = {
    "text": ("<text x='0' y='9'>3× faster</text>", "<text>"),
    "tspan": ("<text><tspan>fast</tspan></text>", "<tspan>"),
    "text-path": ("<path id='p' d='M0 0'/><textPath href='#p'>fast</textPath>", "<textPath>"),
    "prefixed-text": ("<s:text xmlns:s='http://www.w3.org/2000/svg'>fast</s:text>", "<text>"),
    "script": ("<script>alert(1)</script>", "<script>"),
    "foreign-object": (
        "<foreignObject><p xmlns='http://www.w3.org/1999/xhtml'>x</p></foreignObject>",
        "<foreignObject>",
    ),
    "onload": ("<rect width='1' height='1' onload='alert(1)'/>", "event attribute onload"),
    "onclick-upper": ("<rect width='1' height='1' ONCLICK='x'/>", "event attribute"),
    "remote-image": ("<image href='https://example.org/3x.png'/>", "a reference outside the file"),
    "xlink-image": (
        "<image xlink:href='http://example.org/a.png'/>",
        "a reference outside the file",
    ),
    "data-image": ("<image href='data:image/png;base64,AAAA'/>", "a reference outside the file"),
    "remote-use": ("<use href='other.svg#shape'/>", "a reference outside the file"),
    "link": (
        "<a href='https://example.org'><rect width='1' height='1'/></a>",
        "a reference outside the file",
    ),
    "style-attribute-url": (
        "<rect style='fill:url(https://example.org/p.svg#g)'/>",
        "a reference outside the file",
    ),
    "style-import": ("<style>@import url(https://example.org/a.css);</style>", "<style>"),
    "style-url": ("<style>rect{fill:url('//example.org/p.svg#g')}</style>", "<style>"),
}


def logo_refusal(project: Path, name: str, data: bytes) -> str:
    (project / "theme" / "assets").mkdir(parents=True, exist_ok=True)
    (project / "theme" / "assets" / name).write_bytes(data)
    path = write_settings(project, {"logo": name})
    with pytest.raises(DataError) as caught:
        read_site_settings(project)
    (issue,) = caught.value.issues
    assert issue.location == f"{path} → logo" and "\n" not in str(issue)
    return issue.message


@pytest.mark.parametrize(("body", "named"), LOGOS.values(), ids=LOGOS.keys())
def test_an_svg_logo_that_writes_runs_or_refers_is_refused(project, body, named):
    message = logo_refusal(project, "logo.svg", SVG.format(body).encode())
    assert named in message and "an SVG logo only draws" in message


@pytest.mark.parametrize(
    ("name", "data", "named"),
    [
        (
            "logo.svg",
            b'<?xml-stylesheet href="https://example.org/a.css"?>' + SVG.format("").encode(),
            "processing instruction",
        ),
        (
            "logo.svg",
            b'<!DOCTYPE svg [<!ENTITY t "3x faster">]>' + SVG.format("<text>&t;</text>").encode(),
            "DOCTYPE",
        ),
        ("logo.svgz", gzip.compress(SVG.format("<text>fast</text>").encode()), "<text>"),
        ("logo.png", SVG.format("<text>fast</text>").encode(), "<text>"),
        ("logo.svg", b"<svg><rect></svg>", "not well-formed"),
    ],
    ids=["stylesheet-instruction", "entity", "compressed", "svg-named-png", "malformed"],
)
def test_an_svg_logo_in_disguise_is_refused(project, name, data, named):
    assert named in logo_refusal(project, name, data)


def test_a_logo_that_only_draws_and_a_raster_logo_pass(project):
    assets = project / "theme" / "assets"
    assets.mkdir(parents=True, exist_ok=True)
    drawing = (
        "<title>Example</title><defs><linearGradient id='g'/><path id='p' d='M0 0h9'/></defs>"
        "<rect width='9' height='9' fill='url(#g)' style='stroke:url(#g)'/><use href='#p'/>"
        "<use xlink:href='#p'/>"
    )
    (assets / "logo.svg").write_text(SVG.format(drawing))
    write_settings(project, {"logo": "logo.svg"})
    assert read_site_settings(project).logo == "logo.svg"
    (assets / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(32))
    write_settings(project, {"logo": "logo.png"})
    assert read_site_settings(project).logo == "logo.png"
