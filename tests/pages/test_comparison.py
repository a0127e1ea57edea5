"""Reports over several campaigns: medians side by side, every differing
field listed, a ratio only when exactly the declared factor differs."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from sitegen.commands.build import RenderedSite, render_site
from sitegen.core.errors import DataError
from sitegen.pages.render import check_rendered
from sitegen.statistics.comparison import CrossCampaign
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


@pytest.fixture(scope="module")
def three(tmp_path_factory) -> Path:
    """``three_campaigns``, read only by the tests."""
    return three_campaigns(tmp_path_factory.mktemp("three"))


@pytest.fixture(scope="module")
def hosts_and_gpus(three, tmp_path_factory) -> RenderedSite:
    """The site of ``three`` declaring two comparisons: all three campaigns (``hosts``) and
    the two in-process ones with the devices as the declared factor (``gpus``)."""
    hosts = {"id": "hosts", "title": TITLE, "campaigns": ["b200", "h100x2", "http"]}
    gpus = {"id": "gpus", "title": TITLE, "campaigns": ["b200", "h100x2"], "factor": "devices"}
    project = project_with(tmp_path_factory.mktemp("hosts-and-gpus"), hosts=hosts, gpus=gpus)
    return render_site(three, project)


def comparison(site: RenderedSite, comparison_id: str) -> CrossCampaign:
    return next(c for c in site.comparisons if c.spec.id == comparison_id)


def test_three_campaigns_are_a_configuration_comparison_without_a_ratio(hosts_and_gpus):
    site = hosts_and_gpus
    page = site.docs["compare/hosts/index.en.md"].decode()
    assert page.count('data-claim="configuration-comparison"') == 4  # 2 conditions × 2 inputs
    assert 'data-differing="engine,interface,devices"' in page
    assert 'data-claim="speed-ratio"' not in page and "×" not in page.split("</h3>", 1)[1]
    assert "Hosts compared" in page and "interface (HTTP or in-process)" in page
    assert "compare/hosts/index.md" in site.docs  # ja too


def test_a_ratio_only_when_exactly_the_declared_factor_differs(hosts_and_gpus):
    site = hosts_and_gpus
    page = site.docs["compare/gpus/index.en.md"].decode()
    assert page.count('data-claim="speed-ratio" data-factor-only="true"') == 4
    assert comparison(site, "gpus").warnings == []
    row = comparison(site, "gpus").rows[0]
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


def test_a_bad_declaration_names_the_file_and_field(three, tmp_path):
    data = three
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
    from sitegen.plan.plan_file import plan_sha256
    from sitegen.plan.plan_models import ModelSpec
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


def on_gpus(name: str, driver: str | None, interconnect: str | None, runtime: str | None):
    """Two GPUs of one kind, with what the host recorded of driver, interconnect and runtime."""

    def mutate(record: dict) -> None:
        host = record["provenance"]["host"]
        host["devices"] = [
            {"id": f"cuda:{i}", "name": name, "memory_total_mib": 81559.0} for i in range(2)
        ]
        host.update(driver=driver, interconnect=interconnect, gpu_runtime=runtime)

    return mutate


def gpu_campaigns(root: Path, b200_driver: str | None, b200_recorded: bool) -> Path:
    """H100×2 and B200×2 campaigns of one plan; the B200 host recorded its interconnect and
    GPU runtime only when ``b200_recorded``."""
    data = root / "data"
    h100 = on_gpus("NVIDIA H100 80GB HBM3", "550.54.15", "NVLink (NV18)", "CUDA 12.4")
    publishable_campaign(data, make_plan(name="h100x2"), mutate=h100)
    recorded = ("NVLink (NV18)", "CUDA 12.4") if b200_recorded else (None, None)
    publishable_campaign(
        data, make_plan(name="b200x2"), mutate=on_gpus("NVIDIA B200", b200_driver, *recorded)
    )
    return data


GPUS = {"id": "gpus", "title": TITLE, "campaigns": ["h100x2", "b200x2"], "factor": "devices"}


def test_devices_alone_is_refused_when_the_driver_and_interconnect_are_not_recorded(tmp_path):
    """The audit's case: H100×2 against B200×2 declared ``factor: devices`` printed a ratio
    "in the declared factor (devices) alone" though drivers and interconnect were never
    compared."""
    data = gpu_campaigns(tmp_path, b200_driver=None, b200_recorded=False)
    site = render_site(data, project_with(tmp_path, gpus=GPUS))
    row = site.comparisons[0].rows[0]
    assert not row.factor_only and row.ratios == [None, None]
    assert row.differing == ("devices",)
    assert row.unrecorded == ("driver", "gpu_runtime", "interconnect")
    page = site.docs["compare/gpus/index.en.md"].decode()
    assert 'data-claim="speed-ratio"' not in page and "alone:" not in page
    assert page.count('data-unrecorded="driver,gpu_runtime,interconnect"') == 4
    assert "no ratio is shown: GPU driver, GPU runtime, interconnect." in page
    assert page.count('<td data-unrecorded="true">not recorded</td>') == 4 * 3
    assert "記録なし" in site.docs["compare/gpus/index.md"].decode()
    assert site.comparisons[0].warnings[0] == (
        "off on input short: not the declared factor alone (not recorded on both sides: "
        "driver, gpu_runtime, interconnect)"
    )


def test_devices_alone_is_refused_when_the_drivers_differ(tmp_path):
    data = gpu_campaigns(tmp_path, b200_driver="570.86.10", b200_recorded=True)
    site = render_site(data, project_with(tmp_path, gpus=GPUS))
    row = site.comparisons[0].rows[0]
    assert (row.differing, row.unrecorded, row.factor_only) == (("devices", "driver"), (), False)
    page = site.docs["compare/gpus/index.en.md"].decode()
    assert 'data-claim="speed-ratio"' not in page
    assert page.count('data-differing="devices,driver"') == 4


def test_devices_alone_with_everything_else_recorded_and_equal_gets_its_ratio(tmp_path):
    data = gpu_campaigns(tmp_path, b200_driver="550.54.15", b200_recorded=True)
    site = render_site(data, project_with(tmp_path, gpus=GPUS))
    assert all(row.factor_only and row.ratios[1] is not None for row in site.comparisons[0].rows)
    page = site.docs["compare/gpus/index.en.md"].decode()
    assert page.count('data-claim="speed-ratio" data-factor-only="true"') == 4
    assert site.comparisons[0].warnings == []


def test_inputs_are_matched_by_their_text_not_their_id(tmp_path):
    """The audit's case: campaigns whose input ids match but whose texts differ printed
    1.80× "as if only the engine build differed"; with nothing else to compare the
    declaration is refused, naming its file."""
    data = tmp_path / "data"
    publishable_campaign(data, make_plan(name="old"))
    base = make_plan().inputs
    other_texts = [spec.model_copy(update={"text": f"{spec.text}, reworded"}) for spec in base]
    build = {
        "id": "build",
        "title": TITLE,
        "campaigns": ["old", "new"],
        "factor": "engine_build",
    }

    def new_build(record: dict) -> None:
        record["provenance"]["engine"]["build"] = "b6600-0a0a0a0"

    publishable_campaign(data, make_plan(name="new", inputs=other_texts), mutate=new_build)
    project = project_with(tmp_path, build=build)
    with pytest.raises(DataError) as caught:
        render_site(data, project)
    (issue,) = caught.value.issues
    assert issue.location.endswith("build.yaml") and "nothing to compare" in issue.message
    assert "\n" not in str(issue)

    renamed = [spec.model_copy(update={"id": f"{spec.id}-renamed"}) for spec in base]
    publishable_campaign(data, make_plan(name="renamed", inputs=renamed), mutate=new_build)
    build["campaigns"] = ["old", "renamed"]
    (project / "content" / "comparisons" / "build.yaml").write_text(yaml.safe_dump(build))
    site = render_site(data, project)
    rows = site.comparisons[0].rows
    assert [(r.input_id, r.cells[1].input_id) for r in rows if r.condition_id == "off"] == [
        ("short", "short-renamed"),
        ("padded", "padded-renamed"),
    ]
    assert all(r.differing == ("engine_build",) and r.factor_only for r in rows)
