"""The theme files a build copies are those mkdocs itself would list."""

from __future__ import annotations

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.structure.files import Files

from sitegen.pages import mkdocs as site_mkdocs
from sitegen.project import packaged_theme


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
