"""Redaction: no published file names the measuring machine (its host name, server
addresses, the virtualenv and home paths); labels stay consistent; the transform is pure
and the raw campaign is left as measured."""

from __future__ import annotations

import gzip
import hashlib
import json
import re
import socket
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest
import yaml

from sitegen.commands.build import build_site, render_site
from sitegen.core.errors import DataError
from sitegen.plan.plan_file import campaign_id, canonical_plan_json, plan_sha256
from sitegen.plan.plan_models import ConditionSpec, ModelSpec, Plan
from sitegen.records.campaign import read_campaigns
from sitegen.records.layout import MANIFEST_FILE, PLAN_FILE, RECORDS_FILE
from sitegen.records.record_models import Manifest, NodeInfo, TrialRecord
from sitegen.records.redact import Redactor, RedactPolicy, redact_campaign
from tests.builtsites import published_folder
from tests.conftest import make_plan
from tests.recordfixtures import h100_provenance, make_record
from tests.sitefixtures import (
    PROJECT,
    copy_project,
    publishable_campaign,
    read_records,
    report_address,
    reregister,
    resign,
    write_records,
)

HOST = socket.gethostname()
HOME = str(Path.home())
PORT = 18_437
BASE_URL = f"http://127.0.0.1:{PORT}"
MODEL_PATH = f"{sys.prefix}/models/gemma-3-270m-Q4_K_M.gguf"
DRAFT_PATH = f"{HOME}/models/draft/gemma-draft.gguf"
FAILURE = (
    f"httpx.ConnectError: All connection attempts failed: {BASE_URL}/v1/chat/completions "
    f"(File {sys.prefix}/lib/python3.11/site-packages/httpx/_transports/default.py, "
    f"cwd {HOME}/bench on {HOST})"
)


def _forbidden() -> dict[str, re.Pattern[str]]:
    """What no published byte may show. Bounded like names and paths are, so that a short
    host name (``vm``) is not found inside unrelated words of the theme's scripts."""

    def bounded(value: str) -> re.Pattern[str]:
        return re.compile(rf"(?<![\w.-]){re.escape(value)}(?![\w-])")

    return {
        "host name": bounded(HOST),
        "virtualenv": bounded(sys.prefix),
        "home": re.compile(rf"(?<![\w.-]){re.escape(HOME)}(?=/)"),
        "loopback port": re.compile(r"127\.0\.0\.1:\d"),
    }


def _relabel(record: dict) -> None:
    """The fake engine's record as an HTTP server's on this machine would look."""
    provenance = record["provenance"]
    provenance["engine"]["id"] = "llamacpp-http"
    provenance["host"]["hostname"] = HOST
    provenance["flags"].update(
        base_url=BASE_URL,
        server_model_path=MODEL_PATH,
        draft_model=DRAFT_PATH,
        server_sampling_defaults=json.dumps({"model": MODEL_PATH}),
    )
    provenance["env"].update(CUDA_VISIBLE_DEVICES="0", OMP_NUM_THREADS="4", HF_HOME=HOME)
    if record["status"] == "failed":
        record["failure_reason"] = FAILURE


def _replan(directory: Path, plan: Plan) -> Path:
    """The campaign as if ``plan`` had been registered (test data only: the records' plan
    hash, the directory and the manifest follow). Returns the campaign directory."""
    moved = directory.with_name(campaign_id(plan))
    directory.rename(moved)
    reregister(directory.name, moved, plan)
    (moved / PLAN_FILE).write_text(canonical_plan_json(plan), encoding="utf-8")
    records = read_records(moved / RECORDS_FILE)
    for record in records:
        record.update(campaign_id=campaign_id(plan), plan_sha256=plan_sha256(plan))
    manifest = Manifest.model_validate_json((moved / MANIFEST_FILE).read_bytes())
    relabelled = manifest.model_copy(
        update={
            "campaign_id": campaign_id(plan),
            "plan_sha256": plan_sha256(plan),
            "registration_nonce": None,
        }
    )
    (moved / MANIFEST_FILE).write_text(relabelled.model_dump_json(indent=2) + "\n")
    write_records(moved / RECORDS_FILE, records)
    return moved


def _machine_campaign(data_dir: Path) -> Path:
    """A campaign measured against a server on this machine: its plan and records carry
    the host name, a loopback address with its port, paths under the virtualenv and the
    home directory, environment values and failure reasons quoting all of them."""
    env = ["CUDA_VISIBLE_DEVICES", "NCCL_P2P_DISABLE", "OMP_NUM_THREADS", "HF_HOME"]
    fake = make_plan(
        name="machine",
        record_env=env,
        conditions=[
            ConditionSpec(id="off", context_capacity=512),
            ConditionSpec(
                id="failing", context_capacity=512, engine_options={"fail_input": "question two"}
            ),
        ],
    )
    records_path = publishable_campaign(data_dir, fake, mutate=_relabel)
    served = {"base_url": BASE_URL}
    plan = Plan.model_validate(
        {
            **json.loads((records_path.parent / PLAN_FILE).read_text()),
            "model": ModelSpec(name="gemma-3-270m", source=MODEL_PATH, quantization="Q4_K_M"),
            "conditions": [
                ConditionSpec(id="off", context_capacity=512, engine_options=served),
                ConditionSpec(id="failing", context_capacity=512, engine_options=served),
            ],
        }
    )
    return _replan(records_path.parent, plan)


def _shipped() -> set[bytes]:
    """SHA-256 of every file sitegen and the project ship (theme, scripts): copied to the
    site as they are, never made from records (plotly's bundle holds ``vm`` as a word)."""
    roots = [PROJECT / "theme", PROJECT / "sitegen"]
    return {
        hashlib.sha256(p.read_bytes()).digest()
        for root in roots
        for p in root.rglob("*")
        if p.is_file()
    }


def _published_text(path: Path) -> list[str]:
    """What a reader gets from a published file: text, gz decompressed, every Parquet cell."""
    if path.suffix == ".parquet":
        table = pq.read_table(path)
        return [*table.column_names, *(str(v) for c in table.columns for v in c.to_pylist())]
    data = path.read_bytes()
    if path.suffix == ".gz":
        data = gzip.decompress(data)
    return [data.decode("utf-8", errors="replace")]


@pytest.fixture(scope="module")
def machine_site(tmp_path_factory):
    root = tmp_path_factory.mktemp("redaction")
    directory = _machine_campaign(root / "data")
    raw = {p.name: p.read_bytes() for p in directory.rglob("*") if p.is_file()}
    build_site(root / "data", root / "site", PROJECT, version="test")
    return root, directory, raw


def test_the_fixture_carries_every_machine_value(machine_site):
    _, directory, raw = machine_site
    records = raw[RECORDS_FILE].decode()
    for name, pattern in _forbidden().items():
        assert pattern.search(records), name
    assert BASE_URL in raw[PLAN_FILE].decode() and MODEL_PATH in raw[PLAN_FILE].decode()
    assert FAILURE in records


def test_no_published_file_names_the_machine(machine_site):
    root, _, _ = machine_site
    shipped = _shipped()
    files = sorted(
        p
        for p in (root / "site").rglob("*")
        if p.is_file() and hashlib.sha256(p.read_bytes()).digest() not in shipped
    )
    kinds = {p.suffix for p in files}
    assert {".html", ".gz", ".parquet", ".csv", ".json"} <= kinds
    found = [
        f"{path.relative_to(root)}: {name}"
        for path in files
        for text in _published_text(path)
        for name, pattern in _forbidden().items()
        if pattern.search(text)
    ]
    assert found == []


def test_the_raw_campaign_is_left_as_measured(machine_site):
    _, directory, raw = machine_site
    assert {p.name: p.read_bytes() for p in directory.rglob("*") if p.is_file()} == raw


def test_the_published_records_carry_labels_and_file_names(machine_site):
    root, directory, _ = machine_site
    version = root / "site" / "v" / "test"
    downloads = published_folder(version, f"reports/{report_address(directory)}/downloads")
    lines = gzip.decompress(downloads["records.jsonl.gz"].read_bytes()).decode()
    records = [TrialRecord.model_validate_json(line) for line in lines.splitlines()]
    assert len(records) == len(read_records(directory / RECORDS_FILE))
    labels = Redactor(RedactPolicy())
    provenance = records[0].provenance
    assert provenance.host.hostname == labels.host(HOST)
    assert provenance.flags["base_url"].startswith("http://localhost:port-")
    assert provenance.flags["server_model_path"].endswith("/gemma-3-270m-Q4_K_M.gguf")
    assert provenance.flags["draft_model"].endswith("/gemma-draft.gguf")
    assert provenance.env["CUDA_VISIBLE_DEVICES"] == "0"
    assert provenance.env["OMP_NUM_THREADS"] == "4"
    assert provenance.env["HF_HOME"].startswith("env-")
    assert provenance.host.devices == read_campaign_devices(directory)
    failed = [r for r in records if r.status == "failed"]
    assert failed and all("localhost:port-" in r.failure_reason for r in failed)
    plan = json.loads(downloads["plan.json"].read_text())
    assert plan["model"]["source"].endswith("/gemma-3-270m-Q4_K_M.gguf")
    assert plan["conditions"][0]["engine_options"]["base_url"] == provenance.flags["base_url"]


def read_campaign_devices(directory: Path) -> list:
    raw = TrialRecord.model_validate(read_records(directory / RECORDS_FILE)[0])
    return raw.provenance.host.devices


def test_a_declared_label_is_published(tmp_path):
    _machine_campaign(tmp_path / "data")
    project = copy_project(tmp_path / "project")
    settings = yaml.safe_load((PROJECT / "mkdocs.yml").read_text(encoding="utf-8"))
    settings["redact"] = {"hosts": {HOST: "node A"}, "env": {"keep": ["HF_HOME"]}}
    (project / "mkdocs.yml").write_text(yaml.safe_dump(settings), encoding="utf-8")
    site = render_site(tmp_path / "data", project)
    (report,) = site.reports
    provenance = report.campaign.table.provenance(0)
    assert provenance.host.hostname == "node A"
    assert provenance.env["HF_HOME"] == HOME  # kept, as declared
    assert provenance.env["CUDA_VISIBLE_DEVICES"].startswith("env-")  # the list replaces


def test_a_bad_policy_is_one_line_naming_the_file_and_field(tmp_path):
    publishable_campaign(tmp_path / "data")
    project = copy_project(tmp_path / "project")
    policy = {"redact": {"hosts": {"a": "same", "b": "same"}, "paths": {}}}
    (project / "mkdocs.yml").write_text(yaml.safe_dump(policy), encoding="utf-8")
    with pytest.raises(DataError) as caught:
        render_site(tmp_path / "data", project)
    lines = str(caught.value).splitlines()
    assert any("mkdocs.yml → redact.hosts" in line and "share the label" in line for line in lines)
    assert any("mkdocs.yml → redact.paths" in line for line in lines)


# ------------------------------------------------------------------------- the transform


def _record(host: str, url: str, path: str, env: str | None = "secret") -> TrialRecord:
    provenance = h100_provenance()
    provenance["host"]["hostname"] = host
    provenance["flags"].update(base_url=url, model_path=path)
    provenance["env"]["HF_TOKEN"] = env
    return make_record("off", "short", 20.0, provenance=provenance)


def test_default_labels_are_stable_short_hashes():
    first = Redactor(RedactPolicy()).record(_record("gpu-node-7", BASE_URL, MODEL_PATH))
    again = Redactor(RedactPolicy()).record(_record("gpu-node-7", BASE_URL, MODEL_PATH))
    assert first == again
    assert re.fullmatch(r"host-[0-9a-f]{6}", first.provenance.host.hostname)
    assert re.fullmatch(r"env-[0-9a-f]{6}", first.provenance.env["HF_TOKEN"])


def test_declared_labels_replace_hosts_everywhere():
    redactor = Redactor(RedactPolicy(hosts={"gpu-node-7": "node A"}))
    record = redactor.record(_record("gpu-node-7", "http://gpu-node-7:8080", MODEL_PATH))
    assert record.provenance.host.hostname == "node A"
    assert record.provenance.flags["base_url"].startswith("http://node A:port-")


def test_equal_values_stay_equal_and_different_stay_different():
    redactor = Redactor(RedactPolicy())
    a, a_again, b = (
        redactor.record(_record(host, url, path))
        for host, url, path in (
            ("gpu-a", "http://10.0.0.5:8080", "/srv/a/model.gguf"),
            ("gpu-a", "http://10.0.0.5:8080", "/srv/a/model.gguf"),
            ("gpu-b", "http://10.0.0.5:9090", "/srv/b/model.gguf"),
        )
    )
    assert a.provenance == a_again.provenance
    for get in (
        lambda r: r.provenance.host.hostname,
        lambda r: r.provenance.flags["base_url"],
        lambda r: r.provenance.flags["model_path"],
    ):
        assert get(a) != get(b)
    assert a.provenance.env == b.provenance.env  # the same secret, the same label


@pytest.mark.parametrize(
    "url",
    ["http://localhost:39485", "http://127.0.0.1:8080", "http://[::1]:8080", "http://gpu-a:80"],
)
def test_a_published_address_redacted_again_stays_as_published(url):
    # The audit redacts the published records again and compares: redaction is idempotent.
    published = Redactor(RedactPolicy()).record(_record("gpu-a", url, MODEL_PATH))
    again = Redactor(RedactPolicy()).record(published)
    assert again.provenance.flags["base_url"] == published.provenance.flags["base_url"]
    assert ":port-" in published.provenance.flags["base_url"]


def test_paths_are_reduced_to_file_names_and_addresses_to_labels():
    redactor = Redactor(RedactPolicy())
    text = (
        f"{BASE_URL}/v1/chat/completions refused at /home/alice/venv/lib/x.py, "
        "/Users/bob/m.gguf and /root on 192.168.1.20:8000"
    )
    scrubbed = redactor.scrub(text)
    assert "/v1/chat/completions refused at dir-" in scrubbed
    assert "/x.py" in scrubbed and "/m.gguf" in scrubbed
    for secret in ("alice", "bob", "/root", "127.0.0.1", "192.168.1.20", str(PORT), "8000"):
        assert secret not in scrubbed
    assert redactor.scrub("/v1/chat/completions") == "/v1/chat/completions"
    assert (
        redactor.scrub("NVIDIA H100 PCIe, driver 550.54.15") == "NVIDIA H100 PCIe, driver 550.54.15"
    )


def test_benign_values_stay():
    raw = _record("gpu-a", BASE_URL, MODEL_PATH, env=None)
    record = Redactor(RedactPolicy()).record(raw)
    host, kept = record.provenance.host, raw.provenance.host
    assert (host.devices, host.driver, host.cpu, host.cpu_count) == (
        kept.devices,
        kept.driver,
        kept.cpu,
        kept.cpu_count,
    )
    assert (
        record.provenance.env["CUDA_VISIBLE_DEVICES"] == raw.provenance.env["CUDA_VISIBLE_DEVICES"]
    )
    assert record.provenance.env["HF_TOKEN"] is None
    assert record.provenance.model == raw.provenance.model
    assert record.metrics == raw.metrics and record.text == raw.text


def test_the_transform_is_pure(tmp_path):
    raw = _record("gpu-a", BASE_URL, MODEL_PATH)
    dumped = raw.model_dump_json()
    redacted = Redactor(RedactPolicy()).record(raw)
    assert raw.model_dump_json() == dumped
    assert redacted.provenance.host.hostname != raw.provenance.host.hostname

    directory = _machine_campaign(tmp_path / "data")
    campaigns, issues = read_campaigns(tmp_path / "data")
    assert issues == []
    published = redact_campaign(campaigns[0], Redactor(RedactPolicy()))
    assert campaigns[0].table.provenance(0).host.hostname == HOST
    assert published.table.provenance(0).host.hostname != HOST
    full = next(published.iter_full_records())
    assert full.provenance.host.hostname == published.table.provenance(0).host.hostname
    assert HOST in (directory / RECORDS_FILE).read_text()


def test_a_ray_node_host_gets_the_label_of_the_same_host_anywhere():
    raw = _record("gpu-host-1", "http://gpu-host-1:8080", MODEL_PATH)
    node = NodeInfo(ray_node_id="ab" * 28, hostname="gpu-host-1")
    raw = raw.model_copy(update={"provenance": raw.provenance.model_copy(update={"node": node})})
    record = Redactor(RedactPolicy()).record(raw)
    label = record.provenance.host.hostname
    assert record.provenance.node.hostname == label
    assert record.provenance.node.ray_node_id == node.ray_node_id
    assert record.provenance.flags["base_url"].startswith(f"http://{label}:port-")


def test_an_answer_keeps_its_words_when_a_host_shares_them():
    """Scores are computed from the published answer: a host called ``vm`` or ``gpu`` must
    not change an answer that says "vm" or "gpu"; addresses in it are still labelled."""
    redactor = Redactor(RedactPolicy())
    record = _record("vm", BASE_URL, MODEL_PATH).model_copy(
        update={"text": f"Answer: run it on a vm with a gpu, or ask {BASE_URL}/v1/models"}
    )
    published = redactor.record(record)
    assert published.provenance.host.hostname != "vm"
    assert published.text.startswith(
        "Answer: run it on a vm with a gpu, or ask http://localhost:port-"
    )


def test_published_lines_are_the_records_published_and_written_again(tmp_path):
    """The download keeps a record's own line where publishing changes only its
    provenance; a line quoting a relabelled path or an address, or with a failure
    reason, is written again: both give the bytes of the published record."""
    texts = iter([f"the model at {MODEL_PATH} answered", f"see {BASE_URL}/v1 for more"])

    def quoting(record: dict) -> None:
        _relabel(record)
        if record["status"] == "ok" and record["role"] == "measured":
            record["text"] = next(texts, record["text"])

    make = make_plan(
        name="machine",
        conditions=[
            ConditionSpec(id="off", context_capacity=512),
            ConditionSpec(
                id="failing", context_capacity=512, engine_options={"fail_input": "question two"}
            ),
        ],
    )
    path = publishable_campaign(tmp_path / "data", make, mutate=quoting)
    # As the store writes records (the fixture's JSON has other spacing).
    records = [TrialRecord.model_validate(r) for r in read_records(path)]
    path.write_bytes(b"".join((r.model_dump_json() + "\n").encode() for r in records))
    resign(path.parent)
    (campaign,), _ = read_campaigns(tmp_path / "data")
    published = redact_campaign(campaign, Redactor(RedactPolicy()))
    lines = list(published.iter_published_lines())
    expected = [(r.model_dump_json() + "\n").encode() for r in published.iter_full_records()]
    assert lines == expected
    assert HOST.encode() not in b"".join(lines) and MODEL_PATH.encode() not in b"".join(lines)
    raw = (campaign.records_path).read_bytes().splitlines(keepends=True)
    reused = [
        index
        for index, offset in enumerate(campaign.rows["line"])
        if published.published_line(index, raw[offset - 1]) is not None
    ]
    assert 0 < len(reused) < len(lines)  # both ways were taken
