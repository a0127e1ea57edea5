"""The theme files a build copies are those mkdocs itself would list."""

from __future__ import annotations

from pathlib import Path

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.structure.files import Files

from sitegen.core.project import packaged_theme
from sitegen.pages import mkdocs as site_mkdocs


def test_theme_files_listed_without_dot_folders_are_mkdocs_own(tmp_path):
    theme = {"name": "material", "custom_dir": str(packaged_theme() / "overrides")}
    config = MkDocsConfig()
    config.load_dict({"site_name": "x", "theme": theme, "docs_dir": str(tmp_path)})
    assert not config.validate()[0]
    env = config.theme.get_env()
    # mkdocs' own, whether or not a build of this process has put sitegen's in its place.
    mkdocs_own = site_mkdocs._ADD_FILES_FROM_THEME or Files.add_files_from_theme
    without_dot_folders = site_mkdocs._WithoutDotFolders.of(env)
    assert isinstance(without_dot_folders, site_mkdocs._WithoutDotFolders)
    listed, walked = Files([]), Files([])
    mkdocs_own(listed, env, config)
    mkdocs_own(walked, without_dot_folders, config)
    assert [(f.src_uri, f.src_dir) for f in walked] == [(f.src_uri, f.src_dir) for f in listed]
    assert any(f.src_uri.endswith(".css") for f in listed)


def test_a_build_copies_only_the_lunr_scripts_its_search_loads(tmp_path):
    theme = {"name": "material", "custom_dir": str(packaged_theme() / "overrides")}
    config = MkDocsConfig()
    config.load_dict({"site_name": "x", "theme": theme, "docs_dir": str(tmp_path)})
    assert not config.validate()[0]
    site_mkdocs._list_theme_files_once()  # as a build does
    files = Files([])
    site_mkdocs._theme_files(files, config.theme.get_env(), config)
    lunr = {
        f.src_uri: f.abs_src_path for f in files if f.src_uri.startswith("assets/javascripts/lunr/")
    }
    assert set(lunr) == {
        "assets/javascripts/lunr/tinyseg.js",
        "assets/javascripts/lunr/min/lunr.ja.min.js",
        "assets/javascripts/lunr/min/lunr.multi.min.js",
        "assets/javascripts/lunr/min/lunr.stemmer.support.min.js",
    }
    assert site_mkdocs.search_scripts(site_mkdocs.SEARCH_LANGUAGES) == set(lunr)
    assert all(Path(path).is_file() for path in lunr.values())
    # The other scripts are material's own: left out, not missing.
    left_out = Path(lunr["assets/javascripts/lunr/tinyseg.js"]).with_name("wordcut.js")
    assert left_out.is_file()
    assert site_mkdocs.search_scripts(("en",)) == set()
    assert "assets/javascripts/lunr/wordcut.js" in site_mkdocs.search_scripts(("th", "en"))
