"""Bypass attempts against "every published figure comes from the data": each is refused
with the file and field named, or published safe (shown as inert text). The corpus is
parametrized so its size shows in the test count (``pytest -q``).

What an author writes on a page is refused, or rendered inert, by the renderer of that
page (``render_page``, which ``render_site`` runs for every page): those attempts render
the report's summary page in both languages over a report computed once. Settings,
catalogs and data fields go through ``render_site``, and so do the harmless texts, all on
one page; ``test_content_policy`` shows the build refusing page text as a whole.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
import yaml

from sitegen.commands.build import RenderedSite, render_site
from sitegen.core.errors import ConfigError, DataError
from sitegen.plan.plan_models import ConditionSpec, InputSpec, SpeculativeSpec
from tests.conftest import make_plan
from tests.pages.test_content_policy import append, page_refused, refused, summary_pages
from tests.sitefixtures import PROJECT, copy_project, publishable_campaign, resign

INDEX = "report/index.md"


@pytest.fixture(scope="module")
def data(tmp_path_factory) -> Path:
    """One publishable campaign, read only by the tests."""
    root = tmp_path_factory.mktemp("figure-corpus") / "data"
    publishable_campaign(root)
    return root


@pytest.fixture(scope="module")
def site(data) -> RenderedSite:
    """The demo project's site of ``data``: the report the summary pages show."""
    return render_site(data, PROJECT)


@pytest.fixture
def project(tmp_path) -> Path:
    return copy_project(tmp_path / "project")


def published_page(data: Path, project: Path, lang: str = "en") -> str:
    docs = render_site(data, project).docs
    suffix = "index.md" if lang == "ja" else "index.en.md"
    return next(
        v for k, v in docs.items() if k.startswith("reports/") and k.endswith(suffix)
    ).decode()


# --- prose: refused with the page and the figure named ---------------------------------

PROSE_REFUSED = {
    # number words (en)
    "halves": ("MTP halves generation time.", "halves"),
    "halved": ("Generation time is halved.", "halved"),
    "half": ("It takes half the time.", "half"),
    "tenfold": ("A tenfold gain.", "tenfold"),
    "two-times": ("It is two times faster.", "two"),
    "fifty": ("Always above fifty tokens per second.", "fifty"),
    "twice": ("Twice as fast as before.", "Twice"),
    "thrice": ("Thrice as fast.", "Thrice"),
    "doubles": ("Speculation doubles the rate.", "doubles"),
    "triples": ("It triples throughput.", "triples"),
    "quadrupled": ("Quadrupled throughput.", "Quadrupled"),
    "ninety-percent": ("Ninety percent of answers were right.", "Ninety"),
    "percent-word": ("The rate rose by several percent.", "percent"),
    "hundred": ("A hundred tokens per second.", "hundred"),
    "million": ("A million-token context.", "million"),
    "dozen": ("A dozen times faster.", "dozen"),
    "hyphen-fold": ("A many-fold gain.", "many-fold"),
    "one-third": ("One third slower.", "One"),
    # Japanese forms
    "ja-baininaru": ("投機的デコードで速度が倍になる。", "倍に"),
    "ja-nibun-no-ichi": ("生成時間が二分の一になる。", "二分の"),
    "ja-sanbai": ("投機的デコードで三倍速い。", "三倍"),
    "ja-hanbun": ("生成時間が半分になる。", "半分"),
    "ja-hangen": ("生成時間が半減する。", "半減"),
    "ja-gowari": ("五割速い。", "五割"),
    "ja-percent": ("十パーセント速い。", "十パーセント"),
    "ja-baizou": ("処理量が倍増した。", "倍増"),
    "ja-baisoku": ("倍速で動く。", "倍速"),
    "ja-digit-bai": ("投機的デコードで5倍速い。", "'5'"),
    # other scripts' digits
    "arabic-indic": ("It is ٢× faster.", "٢"),
    "devanagari": ("It is २× faster.", "२"),
    "thai": ("It is ๒× faster.", "๒"),
    "math-bold": ("It is 𝟐× faster.", "𝟐"),
    "roman": ("Ⅻ tokens per second.", "Ⅻ"),
    "bengali": ("It is ২× faster.", "২"),
    # fractions, circled, full-width, superscripts
    "vulgar-half": ("It takes ½ the time.", "½"),
    "vulgar-third": ("It takes ⅓ less time.", "⅓"),
    "circled": ("② times faster.", "②"),
    "full-width": ("２倍速い。", "２"),
    "full-width-decimal": ("１.５× faster.", "１"),
    "superscript": ("x² faster.", "²"),
    "subscript": ("x₂ faster.", "₂"),
    # entities
    "entity-decimal": ("It is &#50;&#215; faster.", "'2'"),
    "entity-hex": ("It is &#x32;x faster.", "'2x'"),
    "entity-named": ("It takes &frac12; the time.", "½"),
    "entity-full-width": ("It is &#65298;× faster.", "２"),
    "entity-word": ("It is &#116;wice as fast.", "twice"),
    # invisible characters and markup inside numbers
    "zero-width-space": ("It is 1\u200b.5× faster.", "'1.5'"),
    "word-joiner": ("It is 1\u2060.5× faster.", "'1.5'"),
    "soft-hyphen": ("It is 1\u00ad5× faster.", "'15'"),
    "bidi-mark": ("It is 1\u200e.5× faster.", "'1.5'"),
    "emphasis-inside": ("It is 1**.**5× faster.", "'5'"),
    "code-inside": ("It is `1.5`× faster.", "'1.5'"),
    "link-text": ("See [2× faster](https://example.org).", "'2'"),
    "heading": ("## 2× faster", "'2'"),
    "table-cell": ("| a | b |\n|---|---|\n| fast | 2× |", "'2'"),
    # number-like tokens
    "mtp-colon": ("MTP:62.27 tokens per second.", "'62.27'"),
    "x-decimal": ("x1.22 faster.", "'x1.22'"),
    "decimal-in-word": ("MTP62.27 tokens per second.", "'MTP62.27'"),
    "ja-keta": ("一桁速い。", "一桁"),
    "ja-ketachigai": ("桁違いに速い。", "桁違い"),
    "decimal": ("62.27 tokens per second.", "'62.27'"),
    "x-multiplier": ("x2 faster.", "'x2'"),
    "multiplier-x": ("2x faster.", "'2x'"),
    "times-sign": ("×2 faster.", "'2'"),
    "percent": ("50% faster.", "'50'"),
    "magnitude": ("A 1M context.", "'1M'"),
    "fraction": ("11/12 problems passed.", "'11'"),
    "negative": ("-3 tokens.", "'3'"),
    "thousands": ("1,000 tokens.", "'1'"),
}


@pytest.mark.parametrize(("text", "named"), PROSE_REFUSED.values(), ids=PROSE_REFUSED.keys())
def test_prose_figure_is_refused(site, project, text, named):
    append(project, INDEX, text)
    message = page_refused(site, project)
    assert "[C-FIGURE] content/ja/report/index.md → prose" in message and named in message


# --- markup an author may not write: refused, naming the page ---------------------------

MARKUP_REFUSED = {
    "list-marker-dot": ("2. faster than before", "ordered list"),
    "list-marker-paren": ("50) tokens per second", "ordered list"),
    "list-one": ("1. first\n1. second", "ordered list"),
    "style": ("<style>[data-caveat]{display:none}</style>", "raw HTML"),
    "template": ("<template><p>hidden</p></template>", "raw HTML"),
    "hidden": ("<div hidden>\n\ncaveat gone\n\n</div>", "raw HTML"),
    "details": ("<details><summary>more</summary>caveats</details>", "raw HTML"),
    "comment": ("<!-- 2× faster -->", "raw HTML"),
    "css-counter": ('<ol style="counter-reset: x 2"><li>a</li></ol>', "raw HTML"),
    "inline-markup": ("It is 1<b></b>.5× faster.", "raw HTML"),
    "claim-marker": ('<p data-claim="speed-ratio" data-factor-only="true">fast</p>', "raw HTML"),
    "caveat-marker": ('<span data-caveat="C-REVIEW">reviewed</span>', "raw HTML"),
    "script": ("<script>alert(1)</script>", "raw HTML"),
    "event-handler": ("<img src=x onerror=alert(1)>", "raw HTML"),
}


@pytest.mark.parametrize(("text", "named"), MARKUP_REFUSED.values(), ids=MARKUP_REFUSED.keys())
def test_author_markup_is_refused(site, project, text, named):
    append(project, INDEX, text)
    message = page_refused(site, project)
    assert "content/ja/report/index.md" in message and named in message


def test_recursive_macro_is_one_line_naming_the_file(site, project):
    append(project, INDEX, "{% macro m() %}{{ m() }}{% endmacro %}{{ m() }}")
    message = page_refused(site, project)
    assert "content/ja/report/index.md: a macro or include calls itself" in message
    assert "Traceback" not in message


@pytest.mark.parametrize("kind", ["file", "directory"])
def test_symlinks_in_content_are_refused(data, project, kind):
    target = project / "content" / "en" / "report" / "linked"
    target.parent.mkdir(parents=True)
    if kind == "file":
        os.symlink("/etc/passwd", target)
    else:
        os.symlink("/etc", target)
    with pytest.raises(DataError) as caught:
        render_site(data, project)
    assert str(target) in str(caught.value) and "symbolic link" in str(caught.value)


# --- mkdocs.yml: only the site settings; copyright is author text -----------------------

MKDOCS_REFUSED = {
    "snippets": (
        {"markdown_extensions": [{"pymdownx.snippets": {"base_path": ["/"]}}]},
        "markdown_extensions",
    ),
    "plugins": ({"plugins": ["search", "macros"]}, "plugins"),
    "custom-dir": ({"theme": {"name": "material", "custom_dir": "/tmp"}}, "theme"),
    "extra-css": ({"extra_css": ["hide.css"]}, "extra_css"),
    "extra-javascript": ({"extra_javascript": ["x.js"]}, "extra_javascript"),
    "hooks": ({"hooks": ["evil.py"]}, "hooks"),
    "docs-dir": ({"docs_dir": "/etc"}, "docs_dir"),
    "extra-version": ({"extra": {"version": {"provider": "mike"}}}, "extra.version"),
    "site-url-scheme": ({"site_url": "javascript:alert(1)"}, "site_url"),
    "site-name": ({"site_name": "2× faster"}, "site_name"),
}


@pytest.mark.parametrize(("config", "key"), MKDOCS_REFUSED.values(), ids=MKDOCS_REFUSED.keys())
def test_mkdocs_settings_outside_the_allow_list_are_refused(data, project, config, key):
    (project / "mkdocs.yml").write_text(yaml.safe_dump(config))
    message = refused(data, project)
    assert f"mkdocs.yml → {key}" in message


@pytest.mark.parametrize(
    ("key", "text"),
    [
        ("copyright", "© 2026 Example, 2× faster"),
        ("copyright", "Twice as fast since forever"),
        ("site_description", "Reports of an engine 2× faster"),
        ("site_author", "Team ½"),
    ],
    ids=["copyright-year", "copyright-word", "description", "author"],
)
def test_site_setting_figures_are_refused(data, project, key, text):
    (project / "mkdocs.yml").write_text(yaml.safe_dump({key: text}, allow_unicode=True))
    assert "[C-FIGURE]" in (message := refused(data, project))
    assert f"mkdocs.yml → {key}" in message


@pytest.mark.parametrize(
    "text", ["© 2026 Example Inc.", "Copyright 2024–2026 Example", "(c) 2025 Example"]
)
def test_a_copyright_line_may_open_with_its_years(data, project, text):
    (project / "mkdocs.yml").write_text(yaml.safe_dump({"copyright": text}, allow_unicode=True))
    render_site(data, project)


@pytest.mark.parametrize("folder", ["overrides", "partials"])
def test_theme_templates_of_a_project_are_refused(data, project, folder):
    own = project / "theme" / folder / "main.html"
    own.parent.mkdir(parents=True)
    own.write_text("<style>[data-caveat]{display:none}</style>")
    with pytest.raises(ConfigError) as caught:
        render_site(data, project)
    message = str(caught.value)
    assert f"theme/{folder}: the theme's templates and partials are sitegen's own" in message
    assert "\n" not in message


# --- catalog strings and t() ----------------------------------------------------------


def add_catalog_string(project: Path, key: str, text: str) -> None:
    for lang in ("ja", "en"):
        path = project / "theme" / "i18n" / f"{lang}.yml"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text((path.read_text() if path.exists() else "") + f"\n{key}: {text!r}\n")


@pytest.mark.parametrize(
    ("key", "text", "named"),
    [
        ("custom.claim", "ExLlamaV3 is 1.36× faster", "'1.36'"),
        ("custom.word", "twice as fast", "twice"),
        ("caveat.units", "2× faster than any other engine", "'2'"),
    ],
    ids=["custom-figure", "custom-word", "shipped-key-changed"],
)
def test_catalog_strings_with_figures_are_refused(data, project, key, text, named):
    add_catalog_string(project, key, text)
    append(project, INDEX, f'{{{{ t("{key}") }}}}')
    message = refused(data, project)
    assert f"theme/i18n/en.yml → {key}" in message and named in message


@pytest.mark.parametrize(
    ("call", "why"),
    [
        ('{{ t("no.such.key") }}', "not a key of the shipped catalog"),
        ('{{ t("headline.ratio") }}', "not a catalog string without values"),
        ('{{ t("caveat.capacity") }}', "not a catalog string without values"),
    ],
    ids=["unknown-key", "key-with-values", "another-key-with-values"],
)
def test_t_takes_only_shipped_catalog_strings_without_values(site, project, call, why):
    append(project, INDEX, call)
    assert why in (message := page_refused(site, project))
    assert "content/ja/report/index.md" in message


# --- literal(): only with a declared source ------------------------------------------

SOURCE = {
    "id": "gemma-card",
    "title": "Gemma model card",
    "publisher": "Google",
    "url": "https://ai.google.dev/gemma",
    "date": "2025-03-12",
}


def declare_sources(project: Path, *sources: dict) -> None:
    (project / "content" / "sources.yaml").write_text(
        yaml.safe_dump({"sources": list(sources)}, allow_unicode=True)
    )


@pytest.mark.parametrize(
    "call",
    [
        '{{ literal("128k", why="model card") }}',
        '{{ literal("128k", why="answer") }}',
        '{{ literal("62.27", why="document tasks") }}',
        '{{ literal("128k") }}',
        '{{ literal("128k", source="no-such-source") }}',
        '{{ literal(" ", source="gemma-card") }}',
    ],
    ids=["why-model-card", "why-answer", "why-document-tasks", "no-source", "unknown", "blank"],
)
def test_literal_misuse_is_refused(site, project, call):
    declare_sources(project, SOURCE)
    append(project, INDEX, call)
    message = page_refused(site, project)
    assert "content/ja/report/index.md" in message and "content/sources.yaml" in message


@pytest.mark.parametrize(
    ("change", "field"),
    [({"note": "x"}, "sources.0.note"), ({"publisher": None, "url": None}, "sources.0")],
    ids=["extra-field", "no-publisher-or-url"],
)
def test_bad_source_entries_are_refused(site, project, change, field):
    declare_sources(project, {k: v for k, v in (SOURCE | change).items() if v is not None})
    append(project, INDEX, '{{ literal("128k", source="gemma-card") }}')
    message = page_refused(site, project)
    assert f"sources.yaml → {field}" in message


def test_a_literal_is_a_quotation_listed_on_the_method_page(data, project):
    declare_sources(project, SOURCE)
    append(project, INDEX, 'The card gives {{ literal("128k", source="gemma-card") }} tokens.')
    docs = render_site(data, project).docs
    for lang, suffix, notice in (
        ("ja", ".md", "本レポートの測定値ではない"),
        ("en", ".en.md", "not measured in this report"),
    ):
        index = next(
            v for k, v in docs.items() if k.endswith(f"/index{suffix}") and "reports/" in k
        )
        method = next(v for k, v in docs.items() if k.endswith(f"/method{suffix}"))
        assert '<q class="sg-literal" data-literal="128k">128k</q>' in index.decode(), lang
        assert notice in index.decode() and "Gemma model card" in index.decode()
        assert (
            'data-literal="128k"' in method.decode()
            and "https://ai.google.dev/gemma" in method.decode()
        )


# --- author fields of the data --------------------------------------------------------


def campaign_with(tmp_path: Path, **plan_fields) -> Path:
    publishable_campaign(tmp_path / "data", make_plan(**plan_fields))
    return tmp_path / "data"


@pytest.mark.parametrize(
    ("fields", "where", "named"),
    [
        (
            {"title": {"ja": "単体テスト", "en": "ExLlamaV3 is 1.36× faster"}},
            "plan.json → title.en",
            "'1.36'",
        ),
        ({"title": {"ja": "二倍速い", "en": "Unit test"}}, "plan.json → title.ja", "二倍"),
        (
            {
                "conditions": [
                    ConditionSpec(id="off", context_capacity=512),
                    ConditionSpec(
                        id="2x-faster",
                        speculative=SpeculativeSpec(mode="ngram-simple", draft_max=4),
                        context_capacity=512,
                    ),
                ]
            },
            "plan.json → conditions.1.id",
            "'2x-faster'",
        ),
        ({"name": "mtp-1.36x"}, "plan.json → name", "'mtp-1.36x'"),
        (
            {
                "inputs": [
                    *make_plan().inputs,
                    InputSpec(id="x1.22", text="question three", max_output_tokens=16),
                ]
            },
            "plan.json → inputs.2.id",
            "'x1.22'",
        ),
    ],
    ids=["plan-title-en", "plan-title-ja", "condition-id", "plan-name", "input-id"],
)
def test_plan_fields_with_figures_are_refused(tmp_path, fields, where, named):
    data = campaign_with(tmp_path, **fields)
    message = refused(data, PROJECT)
    assert "[C-FIGURE]" in message and where in message and named in message


def annotated(data: Path, tmp_path: Path, annotations: dict) -> Path:
    copy = tmp_path / "data"
    shutil.copytree(data, copy)
    campaign = next(p.parent for p in copy.rglob("records.jsonl"))
    (campaign / "annotations.yaml").write_text(yaml.safe_dump(annotations, allow_unicode=True))
    resign(campaign)
    return copy


def first_trial(data: Path) -> str:
    import json

    records = next(data.rglob("records.jsonl")).read_text().splitlines()
    return next(
        r["trial_id"]
        for r in map(json.loads, records)
        if r["role"] == "measured" and r["status"] == "ok"
    )


def posthoc(reason: str = "why", label: str = "no-logic") -> dict:
    """A post-hoc analysis declaration (the unit plan has no quality evaluation, so C-POSTHOC
    refuses it too; C-FIGURE reads its texts all the same)."""
    return {
        "label": label,
        "exclude_templates": ["logic.order"],
        "added_at": "2999-01-01",
        "reason": {"ja": "理由", "en": reason},
    }


@pytest.mark.parametrize(
    ("make", "where", "named"),
    [
        (
            lambda trial: {
                "curated_examples": [{"trial_id": trial, "reason": {"ja": "二倍速い", "en": "why"}}]
            },
            "curated_examples.0.reason.ja",
            "二倍",
        ),
        (
            lambda trial: {
                "curated_examples": [
                    {"trial_id": trial, "reason": {"ja": "理由", "en": "MTP:62.27 here"}}
                ]
            },
            "curated_examples.0.reason.en",
            "'62.27'",
        ),
        (
            lambda trial: {"post_hoc": [posthoc(reason="It halves the errors")]},
            "post_hoc.0.reason.en",
            "halves",
        ),
        (lambda trial: {"post_hoc": [posthoc(label="2x-drop")]}, "post_hoc.0.label", "'2x-drop'"),
        (lambda trial: {"review": "human", "reviewer": "Reviewer 2"}, "reviewer", "'2'"),
        (
            lambda trial: {"review": "automated", "reviewer": "twice-checked bot"},
            "reviewer",
            "twice",
        ),
    ],
    ids=[
        "curated-reason-ja",
        "curated-reason-en",
        "posthoc-reason",
        "posthoc-label",
        "reviewer-digit",
        "reviewer-word",
    ],
)
def test_annotation_fields_with_figures_are_refused(data, tmp_path, make, where, named):
    copy = annotated(data, tmp_path, make(first_trial(data)))
    message = refused(copy, PROJECT)
    assert f"annotations.yaml → {where}" in message and named in message


@pytest.mark.parametrize(
    ("title", "named"),
    [
        ({"ja": "比較", "en": "ExLlamaV3 is 1.36× faster"}, "'1.36'"),
        ({"ja": "半分の時間", "en": "x"}, "半分"),
    ],
    ids=["comparison-title-en", "comparison-title-ja"],
)
def test_comparison_titles_with_figures_are_refused(data, project, title, named):
    (project / "content" / "comparisons").mkdir()
    spec = {"id": "hosts", "title": title, "campaigns": ["unit", "unit"]}
    (project / "content" / "comparisons" / "hosts.yaml").write_text(
        yaml.safe_dump(spec, allow_unicode=True)
    )
    message = refused(data, project)
    assert "hosts.yaml → title" in message and named in message


# --- harmless: published, and inert -----------------------------------------------------

PUBLISHED_SAFE = {
    "identifiers": ("Measured on H100 with gemma-3-270m, Q4_K_M, ngram8 and mtp2.", "gemma-3-270m"),
    "version-name": ("Models such as Qwen2.5 are named as they are.", "Qwen2.5"),
    "ratio-word-ja": ("倍率は指令が示します。", "倍率"),
    "counter-ja": ("最初の一つを除きます。", "一つ"),
    "link-target": (
        "See [the notes](https://example.org/v2/50x).",
        'href="https://example.org/v2/50x"',
    ),
    "less-than": ("a < b & c > d", "a &lt; b &amp; c &gt; d"),
    "code-name": ("The engine reports `timings.prompt_ms`.", "<code>timings.prompt_ms</code>"),
    "escaped-tag": ("Write \\<b> to get nothing.", "&lt;b&gt;"),
    "javascript-link": ("[click](javascript:alert(this))", "[click](javascript:alert(this))"),
    "bullet-list": ("- first item\n- second item", "<li>second item</li>"),
    "image": (
        "![a chart](https://example.org/2x.png)",
        '!<a href="https://example.org/2x.png">a chart</a>',
    ),
}


@pytest.mark.parametrize(("text", "shown"), PUBLISHED_SAFE.values(), ids=PUBLISHED_SAFE.keys())
def test_harmless_text_is_rendered_inert(site, project, text, shown):
    append(project, INDEX, text)
    pages, issues = summary_pages(site, project)
    assert issues == [] and shown in pages["en"]


def test_harmless_texts_are_published_inert(data, project):
    for text, _ in PUBLISHED_SAFE.values():  # on one page: the build publishes it
        append(project, INDEX, text)
    page = published_page(data, project)
    for text, shown in PUBLISHED_SAFE.values():
        assert shown in page, text


# --- review claims: only the review() directive states who looked at the answers --------

REVIEW_CLAIMS = {
    "reviewed": "Every answer was reviewed by our team.",
    "checked-by-human": "All outputs were checked by a human before publishing.",
    "proofread": "The answers were proofread.",
    "ja-mokushi": "全回答を目視で確認しました。",
    "ja-review": "回答はレビュー済みです。",
    "ja-ningen": "人間がすべての回答を確かめました。",
}


@pytest.mark.parametrize("text", REVIEW_CLAIMS.values(), ids=REVIEW_CLAIMS.keys())
def test_review_claims_in_prose_are_refused(site, project, text):
    append(project, INDEX, text)
    message = page_refused(site, project)
    assert "[C-REVIEW]" in message and "report/index.md → prose" in message
