"""Fast checks of what the independent checkers (tests/browser/test_checkers.py) found:
a palette under WCAG AA contrast is one warning line, material's invalid attributes are
left out, and every page gets a meta description from its own title and first paragraph."""

from __future__ import annotations

import pytest
import yaml

from sitegen.commands.build_command import _warn_palette
from sitegen.pages.mkdocs_hooks import description, valid_html
from sitegen.validation.contrast import contrast_ratio, palette_colours, palette_warning
from tests.sitefixtures import copy_project


def test_contrast_ratio_is_wcag_s():
    assert contrast_ratio((0, 0, 0), (1, 1, 1)) == pytest.approx(21)
    assert contrast_ratio((1, 1, 1), (1, 1, 1)) == pytest.approx(1)
    # #767676 on white is the lightest grey that passes AA (4.54:1).
    grey = (0x76 / 255,) * 3
    assert contrast_ratio(grey, (1, 1, 1)) == pytest.approx(4.54, abs=0.01)


def test_material_s_colours_are_read_from_its_stylesheet():
    amber = palette_colours("amber", "amber")
    assert amber["--md-primary-fg-color"] == "#ffc105"
    assert amber["--md-typeset-a-color"] == "#d19d00"  # the light scheme's, not slate's
    assert palette_colours("deep orange", None)["--md-primary-fg-color"] == "#ff6e42"


@pytest.mark.parametrize("primary", [None, "indigo", "deep purple", "black", "white", "brown"])
def test_a_readable_palette_warns_nothing(primary):
    assert palette_warning(primary, "amber") is None  # the accent colours no text at rest


def test_a_palette_under_aa_is_one_line_naming_colours_and_ratio():
    line = palette_warning("blue", None)
    assert line is not None and "\n" not in line
    assert line.startswith("mkdocs.yml → palette: primary blue fails WCAG AA contrast")
    assert "header text #ffffff on #2094f3 is 3.19:1" in line
    assert "link text #2094f3 on #ffffff is 3.19:1" in line
    assert "link text #d19d00 on #ffffff is 2.46:1" in palette_warning("amber", None)


def test_the_build_warns_of_the_project_s_palette(tmp_path, capsys):
    project = copy_project(tmp_path / "project")
    (project / "mkdocs.yml").write_text(yaml.safe_dump({"palette": {"primary": "cyan"}}))
    _warn_palette(project)
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and err[0].startswith("warning: mkdocs.yml → palette: primary cyan")
    (project / "mkdocs.yml").write_text(yaml.safe_dump({"palette": {"primary": "indigo"}}))
    _warn_palette(project)
    assert capsys.readouterr().err == ""


def test_material_s_invalid_attributes_are_left_out():
    page = (
        '<input class="md-toggle" data-md-toggle="drawer" type="checkbox" id="__drawer" '
        'autocomplete="off">\n<input type="text" class="md-search__input" autocomplete="off">\n'
        '<label class="md-nav__link " for="__nav_3" id="__nav_3_label" tabindex="">\n'
        '<label class="md-nav__link" for="__nav_4" id="__nav_4_label" tabindex="0">'
    )
    assert valid_html(page) == (
        '<input class="md-toggle" data-md-toggle="drawer" type="checkbox" id="__drawer">\n'
        '<input type="text" class="md-search__input" autocomplete="off">\n'
        '<label class="md-nav__link " for="__nav_3" id="__nav_3_label">\n'
        '<label class="md-nav__link" for="__nav_4" id="__nav_4_label" tabindex="0">'
    )


def test_material_s_search_dialog_is_named_as_its_field():
    page = (
        '<div class="md-search" data-md-component="search" role="dialog">\n'
        '<input type="text" class="md-search__input" name="query" aria-label="検索" x>'
    )
    assert valid_html(page).startswith(
        '<div class="md-search" data-md-component="search" role="dialog" aria-label="検索">'
    )


def test_description_is_the_title_and_first_paragraph_escaped():
    content = (
        '<h1>Speed</h1>\n<p class="sg-kpi-label">1.8×</p>\n'
        "<p>The <abbr title='x'>rate</abbr> counts &amp; divides &lt;tokens&gt;.</p>"
    )
    assert description("Speed", content) == (
        "Speed — The rate counts &amp; divides &lt;tokens&gt;."
    )
    # A paragraph with a marked figure is not copied (the audit could not check it there).
    marked = '<p>Up <span data-figure="ratio">1.8×</span> faster.</p>'
    assert description('<b>"Q"</b>', marked) == "&quot;Q&quot;"
    long = description("T", "<p>" + "word " * 100 + "</p>")
    assert len(long) <= 160 and long.endswith("…")
    assert description("T", "<p>x</p>", given="Given <b>") == "Given"
