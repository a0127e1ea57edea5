"""Fleet plans without Ray: validation naming the fleet file and field, the resource check
against the cluster's nodes (and the lost ones Ray still lists), the node side of a
campaign, and the system table's node."""

from __future__ import annotations

import json
import socket
import sys
from pathlib import Path

import pytest

from sitegen.cli import main
from sitegen.core.errors import ConfigError, MissingDependency
from sitegen.engine.engines import get_engine_class
from sitegen.fleet.fleet_file import load_fleet
from sitegen.fleet.fleet_runner import _NodeSink, check_resources, import_ray, lost_nodes
from sitegen.measure import run_campaign, run_trials
from sitegen.plan.expand import expand_trials
from sitegen.plan.plan_file import campaign_id, canonical_plan_json, plan_sha256
from sitegen.records.campaign import parse_records
from sitegen.records.record_models import NodeInfo, TrialRecord
from sitegen.records.store import LatestAttempt
from sitegen.records.table import RecordTable
from sitegen.statistics.system import system_table
from tests.conftest import make_plan


def _write(tmp_path: Path, fleet: dict, plans: tuple[str, ...] = ("a", "b")) -> Path:
    for name in plans:
        (tmp_path / f"{name}.json").write_text(canonical_plan_json(make_plan(name=name)))
    path = tmp_path / "fleet.json"
    path.write_text(json.dumps(fleet))
    return path


def _fleet(*resources: dict, plans: tuple[str, ...] = ("a", "b")) -> dict:
    return {
        "schema_version": 1,
        "name": "pair",
        "campaigns": [
            {"plan": f"{name}.json", "resources": r}
            for name, r in zip(plans, resources, strict=True)
        ],
    }


PLANS = Path(__file__).resolve().parents[2] / "examples" / "plans"


@pytest.mark.parametrize("path", sorted(PLANS.glob("fleet-*.yaml")), ids=lambda p: p.name)
def test_every_example_fleet_loads_with_its_plans(path):
    fleet = load_fleet(path)
    assert all(entry.plan_path.parent == PLANS for entry in fleet.entries)


def test_a_fleet_loads_each_campaign_plan_relative_to_the_fleet_file(tmp_path):
    path = _write(
        tmp_path,
        _fleet({"accelerator_type": "B200", "accelerator_count": 2}, {"custom": {"gpu_h100x2": 1}}),
    )
    fleet = load_fleet(path)
    assert [e.plan.name for e in fleet.entries] == ["a", "b"]
    assert fleet.entries[0].resources.ray_resources() == {"GPU": 2.0}
    assert fleet.entries[1].resources.ray_resources() == {"gpu_h100x2": 1.0}
    assert fleet.entries[1].where == f"{path} → campaigns.1"


@pytest.mark.parametrize(
    ("resources", "field", "message"),
    [
        ({"accelerator_type": "H100"}, "campaigns.0.resources", "needs accelerator_count"),
        ({}, "campaigns.0.resources", "name the accelerators"),
        ({"custom": {"gpu_b200": 0}}, "campaigns.0.resources", "amount > 0"),
        ({"custom": {"GPU": 1}}, "campaigns.0.resources", "use accelerator_count"),
        ({"accelerator_count": 0}, "campaigns.0.resources.accelerator_count", "greater than"),
        ({"gpus": 2}, "campaigns.0.resources.gpus", "Extra inputs"),
    ],
)
def test_bad_resources_are_refused_naming_the_fleet_file_and_field(
    tmp_path, resources, field, message
):
    path = _write(tmp_path, _fleet(resources, plans=("a",)), plans=("a",))
    with pytest.raises(ConfigError) as caught:
        load_fleet(path)
    assert f"{path} → {field}" in str(caught.value) and message in str(caught.value)


def test_an_unknown_schema_version_and_an_empty_fleet_are_refused(tmp_path):
    path = _write(tmp_path, {"schema_version": 2, "name": "x", "campaigns": []})
    with pytest.raises(ConfigError) as caught:
        load_fleet(path)
    assert f"{path} → schema_version" in str(caught.value)
    assert f"{path} → campaigns" in str(caught.value)


def test_a_missing_or_invalid_plan_is_named_with_its_fleet_entry(tmp_path):
    path = _write(
        tmp_path,
        _fleet({"custom": {"x": 1}}, {"custom": {"y": 1}}, plans=("a", "gone")),
        plans=("a",),
    )
    (tmp_path / "a.json").write_text('{"name": "a"}')
    with pytest.raises(ConfigError) as caught:
        load_fleet(path)
    text = str(caught.value)
    assert f"{path} → campaigns.0.plan" in text and "a.json → title" in text
    assert f"{path} → campaigns.1.plan" in text and "cannot read plan" in text


def test_the_same_campaign_twice_is_refused(tmp_path):
    path = _write(
        tmp_path, _fleet({"custom": {"x": 1}}, {"custom": {"y": 1}}, plans=("a", "a")), plans=("a",)
    )
    with pytest.raises(ConfigError, match=r"campaigns\.1\.plan.*already listed as campaigns\.0"):
        load_fleet(path)


def _node(alive: bool = True, **resources: float) -> dict:
    return {"Alive": alive, "Resources": {"CPU": 8.0, "node:10.0.0.1": 1.0, **resources}}


def test_a_campaign_whose_resources_no_node_has_is_refused_naming_them(tmp_path):
    fleet = load_fleet(
        _write(
            tmp_path,
            _fleet(
                {"accelerator_type": "B200", "accelerator_count": 2}, {"custom": {"gpu_h100x2": 1}}
            ),
        )
    )
    nodes = [_node(GPU=8.0, **{"accelerator_type:B200": 1.0}), _node(alive=False, gpu_h100x2=1.0)]
    with pytest.raises(ConfigError) as caught:
        check_resources(fleet, nodes)
    text = str(caught.value)
    assert "campaigns.1: campaign b-" in text and "no node has gpu_h100x2 ≥ 1" in text
    assert "campaigns.0" not in text  # the B200 node has what campaign 0 needs
    assert "nothing was run" in text and "{GPU: 8, accelerator_type:B200: 1}" in text

    with pytest.raises(ConfigError, match="no single node has all of them"):
        check_resources(
            fleet, [_node(GPU=8.0, gpu_h100x2=1.0), _node(**{"accelerator_type:B200": 1.0})]
        )
    with pytest.raises(ConfigError, match="no node has GPU ≥ 2"):
        check_resources(fleet, [_node(GPU=1.0, gpu_h100x2=1.0, **{"accelerator_type:B200": 1.0})])
    check_resources(fleet, [nodes[0], _node(gpu_h100x2=1.0)])


def test_a_node_whose_raylet_does_not_answer_counts_as_lost_and_is_named(tmp_path):
    fleet = load_fleet(_write(tmp_path, _fleet({"custom": {"gpu_b200": 1}}, {"custom": {"h": 1}})))
    with socket.socket() as listening, socket.socket() as closed:
        listening.bind(("127.0.0.1", 0))
        listening.listen()
        closed.bind(("127.0.0.1", 0))  # bound, never listening: connections are refused
        nodes = [
            _raylet("a" * 56, listening, gpu_b200=1.0),
            _raylet("b" * 56, closed, h=1.0),
            _raylet("c" * 56, closed, alive=False),  # Ray knows: not probed
        ]
        lost = lost_nodes(nodes)
    assert list(lost) == ["b" * 56]
    assert lost["b" * 56].startswith(f"raylet at 127.0.0.1:{nodes[1]['NodeManagerPort']} ")
    with pytest.raises(ConfigError) as caught:
        check_resources(fleet, nodes, lost)
    (line,) = str(caught.value).splitlines()
    assert "campaigns.1: campaign b-" in line and "cannot run (nothing was run)" in line
    assert "needs {h: 1}; only lost node(s) have them" in line and "bbbbbbbbbbbb (raylet" in line
    # A lost node does not hide a live one with the same resources.
    check_resources(fleet, [*nodes, nodes[1] | {"NodeID": "d" * 56}], lost)


def _raylet(node_id: str, raylet: socket.socket, alive: bool = True, **resources: float) -> dict:
    address, port = raylet.getsockname()
    node = _node(alive, **resources)
    return node | {"NodeID": node_id, "NodeManagerAddress": address, "NodeManagerPort": port}


def test_without_ray_the_fleet_says_how_to_install_it(monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)
    with pytest.raises(MissingDependency, match=r"pip install 'sitegen\[fleet\]'"):
        import_ray()


def test_fleet_options_are_checked_before_anything_runs(tmp_path, capsys):
    data = tmp_path / "data"
    assert main(["measure", "--address", "auto", "--data", str(data)]) == 2
    assert "needs --fleet" in capsys.readouterr().err
    path = _write(tmp_path, _fleet({"custom": {"x": 1}}, {"custom": {"y": 1}}))
    assert main(["measure", "--fleet", str(path), "--plan", str(tmp_path / "a.json")]) == 2
    assert "give --plan or --fleet" in capsys.readouterr().err
    assert not data.exists()


NODE = NodeInfo(
    ray_node_id="ab" * 28, hostname="gpu-host-1", accelerator_type="B200", resources={"GPU": 2.0}
)


def test_on_the_node_the_runner_sends_log_then_record_and_skips_done_trials(tmp_path):
    plan = make_plan()
    directory = run_campaign(plan, tmp_path / "data").directory
    done = parse_records((directory / "records.jsonl").read_bytes().split(b"\n"), directory)[0][:3]
    sent: list[tuple[str, object]] = []
    latest = {r.trial_id: LatestAttempt.of(r) for r in done}
    sink = _NodeSink(latest, campaign_id(plan), plan_sha256(plan), tmp_path / "node", sent.append)
    run_trials(plan, sink, get_engine_class(plan.engine), None, NODE)
    records = [TrialRecord.model_validate_json(v) for k, v in sent if k == "record"]
    planned = {t.trial_id for t in expand_trials(plan)}
    assert {r.trial_id for r in records} & planned == planned - set(latest)
    assert records[0].trial_id == "off/resume-warmup-1-0"  # a new process warms up again
    assert all(r.provenance.node == NODE for r in records)
    assert {k for k, _ in sent} <= {"log", "record"}


def test_the_system_table_shows_the_node_of_fleet_records_only(tmp_path):
    plan = make_plan()
    directory = run_campaign(plan, tmp_path / "data").directory
    records = parse_records((directory / "records.jsonl").read_bytes().split(b"\n"), directory)[0]
    plain = {row.field for row in system_table(RecordTable.of(records), plan)[0].rows}
    assert "host" in plain and not plain & {"ray_node", "accelerator_type"}
    fleet = [
        r.model_copy(update={"provenance": r.provenance.model_copy(update={"node": NODE})})
        for r in records
    ]
    rows = {row.field: row.values for row in system_table(RecordTable.of(fleet), plan)[0].rows}
    assert rows["ray_node"][0].value == f"gpu-host-1 (Ray node {'ab' * 6})"
    assert rows["accelerator_type"][0].value == "B200"


def test_a_campaign_that_ended_early_makes_measure_exit_3(tmp_path, monkeypatch, capsys):
    from sitegen.fleet import fleet_runner as runner

    path = _write(tmp_path, _fleet({"custom": {"x": 1}}, plans=("a",)), plans=("a",))
    entry = load_fleet(path).entries[0]

    def lost_node(fleet, data_dir, address, progress, signer):
        return [runner.FleetOutcome(entry, tmp_path / "a", 2, 12, None, "node lost (gone)")]

    monkeypatch.setattr(runner, "run_fleet", lost_node)
    assert main(["measure", "--fleet", str(path), "--data", str(tmp_path / "data")]) == 3
    captured = capsys.readouterr()
    assert "2 record(s) appended, then it ended early: node lost (gone)" in captured.out
    assert "12 planned trial(s) of a have no ok record" in captured.err


def test_an_address_where_nothing_listens_is_refused_at_once():
    import socket

    from sitegen.core.errors import ConfigError
    from sitegen.fleet.fleet_runner import _require_listening

    with socket.socket() as free:
        free.bind(("127.0.0.1", 0))
        port = free.getsockname()[1]  # closed again below: nothing listens there
    with pytest.raises(ConfigError, match=f"cannot reach the Ray cluster at 127.0.0.1:{port}"):
        _require_listening(f"127.0.0.1:{port}")
    with pytest.raises(ConfigError, match="give auto, HOST:PORT"):
        _require_listening("nonsense")
    with socket.socket() as listening:
        listening.bind(("127.0.0.1", 0))
        listening.listen()
        _require_listening(f"ray://127.0.0.1:{listening.getsockname()[1]}")
