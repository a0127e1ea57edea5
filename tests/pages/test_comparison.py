"""Reports over several campaigns: medians side by side, every differing
field listed, a ratio only when exactly the declared factor differs."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from sitegen.build import render_site
from sitegen.errors import DataError
from sitegen.pages.render import check_rendered
from tests.conftest import make_plan
from tests.sitefixtures import copy_project, publishable_campaign


def on_host(device: str, engine: str = "llamacpp-embedded", api: str = "in-process"):
    def mutate(record: dict) -> None:
        record["provenance"]["host"]["devices"][0]["name"] = device
        record["provenance"]["engine"].update(id=engine, api=api)

    return mutate


def three_campaigns(root: Path) -> Path:
    """B200-like, H100-like and an HTTP campaign on the same plan (different names)."""
    data = root / "data"
    publishable_campaign(data, make_plan(name="b200"), mutate=on_host("B200"))
    publishable_campaign(data, make_plan(name="h100x2"), mutate=on_host("H100"))
    publishable_campaign(
        data, make_plan(name="http"), mutate=on_host("B200", "llamacpp-http", "http completion")
    )
    return data


def project_with(root: Path, **specs: dict) -> Path:
    project = copy_project(root / "project")
    (project / "content" / "comparisons").mkdir()
    for name, spec in specs.items():
        (project / "content" / "comparisons" / f"{name}.yaml").write_text(
            yaml.safe_dump(spec, allow_unicode=True)
        )
    return project


TITLE = {"ja": "ホスト比較", "en": "Hosts compared"}


def test_three_campaigns_are_a_configuration_comparison_without_a_ratio(tmp_path):
    data = three_campaigns(tmp_path)
    project = project_with(
        tmp_path, hosts={"id": "hosts", "title": TITLE, "campaigns": ["b200", "h100x2", "http"]}
    )
    site = render_site(data, project)
    page = site.docs["compare/hosts/index.en.md"].decode()
    assert page.count('data-claim="configuration-comparison"') == 4  # 2 conditions × 2 inputs
    assert 'data-differing="engine,interface,devices"' in page
    assert 'data-claim="speed-ratio"' not in page and "×" not in page.split("</h3>", 1)[1]
    assert "Hosts compared" in page and "interface (HTTP or in-process)" in page
    assert "compare/hosts/index.md" in site.docs  # ja too


def test_a_ratio_only_when_exactly_the_declared_factor_differs(tmp_path):
    data = three_campaigns(tmp_path)
    spec = {"id": "gpus", "title": TITLE, "campaigns": ["b200", "h100x2"], "factor": "devices"}
    site = render_site(data, project_with(tmp_path, gpus=spec))
    page = site.docs["compare/gpus/index.en.md"].decode()
    assert page.count('data-claim="speed-ratio" data-factor-only="true"') == 4
    row = site.comparisons[0].rows[0]
    assert row.differing == ("devices",) and row.ratios[1] == pytest.approx(
        row.cells[1].median / row.cells[0].median
    )
    broken = {
        k: v.replace(b'data-factor-only="true"', b'data-factor-only="false"')
        if isinstance(v, bytes)
        else v
        for k, v in site.docs.items()
    }
    assert "C-CONFDIFF" in {i.rule for i in check_rendered(broken, site.reports, site.comparisons)}


def test_location_options_are_never_a_difference(tmp_path):
    data = tmp_path / "data"

    def at(url):
        def mutate(record):
            record["provenance"]["engine"]["id"] = "llamacpp-http"
            record["provenance"]["flags"].update(base_url=url, server_pid=url[-4:])

        return mutate

    publishable_campaign(data, make_plan(name="a"), mutate=at("http://h1:8080"))
    publishable_campaign(data, make_plan(name="b"), mutate=at("http://h2:9090"))
    spec = {"id": "same", "title": TITLE, "campaigns": ["a", "b"], "factor": "devices"}
    site = render_site(data, project_with(tmp_path, same=spec))
    assert all(row.differing == () for row in site.comparisons[0].rows)


def test_a_bad_declaration_names_the_file_and_field(tmp_path):
    data = three_campaigns(tmp_path)
    project = project_with(
        tmp_path,
        bad={"id": "bad", "title": TITLE, "campaigns": ["b200", "nope"], "factor": "colour"},
    )
    with pytest.raises(DataError) as caught:
        render_site(data, project)
    assert "bad.yaml → factor" in str(caught.value)
    (project / "content" / "comparisons" / "bad.yaml").write_text(
        yaml.safe_dump({"id": "bad", "title": TITLE, "campaigns": ["b200", "nope"]})
    )
    with pytest.raises(DataError) as caught:
        render_site(data, project)
    assert "bad.yaml → campaigns.1" in str(caught.value) and "no published campaign" in str(
        caught.value
    )


def test_a_condition_with_its_own_model_file_is_a_configuration_comparison():
    from sitegen.plan.io import plan_sha256
    from sitegen.plan.models import ModelSpec
    from sitegen.statistics.speed import condition_differences

    plan = make_plan()
    mtp_file = ModelSpec(name="glm-mtp", source="/models/glm-mtp.gguf", quantization="Q4_K_M")
    off, on = plan.conditions
    with_file = plan.model_copy(
        update={"conditions": [off, on.model_copy(update={"model": mtp_file})]}
    )
    assert condition_differences(off, with_file.conditions[1], plan.factor, plan.engine) == (
        "model",
    )
    assert with_file.model_for(with_file.conditions[1]) == mtp_file
    assert with_file.model_for(off) == plan.model
    assert plan_sha256(plan) != plan_sha256(with_file)
    assert plan_sha256(plan) == plan_sha256(make_plan())  # unset: the hash is unchanged
