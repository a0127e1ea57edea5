"""Running a fleet: each campaign as one Ray actor on a node that has its resources.

The driver (``sitegen measure --fleet``) owns every campaign's ``CampaignStore`` on its
own ``data/``. Each actor runs the ordinary campaign runner (``measure.run_trials``)
against a ``_NodeSink`` that stands in for the store: it starts from the driver's latest
attempts, so done trials are skipped, and every record the runner appends is handed back
with the engine log written before it; the driver appends both through the store (lock,
fsync, manifest) as they come. The driver keeps one ``take`` call pending per actor rather than
using a Ray streaming generator, which Ray Client (``ray://``) does not support. A node
lost mid-campaign ends that campaign only: what arrived is intact and signed, and the
next run resumes the rest on any matching node. Ray's own output on the driver goes to
``data/logs/ray.log`` (``sitegen.fleet.raylog``), not the terminal.

Ray is optional (``pip install 'sitegen[fleet]'``) and imported only here, lazily.
"""

from __future__ import annotations

import queue
import shutil
import socket
import tempfile
import threading
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack, suppress
from dataclasses import dataclass, replace
from pathlib import Path
from types import ModuleType
from typing import Any

import sitegen
from sitegen.core.errors import ConfigError, MissingDependency, SitegenError, StorageError
from sitegen.core.signing import Signer
from sitegen.engine.engines import get_engine_class
from sitegen.fleet.fleet_file import Fleet, FleetEntry
from sitegen.fleet.fleet_plan import FleetResources
from sitegen.fleet.raylog import RayLog, ray_output_to
from sitegen.measure import CampaignResult, run_trials
from sitegen.plan.expand import expand_trials
from sitegen.plan.plan_file import campaign_id
from sitegen.plan.plan_models import Plan
from sitegen.records.layout import CAMPAIGNS_DIR, ENGINE_LOG, LOG_FILES, TELEMETRY_LOG
from sitegen.records.record_models import NodeInfo, TrialRecord
from sitegen.records.registrations import find_campaign
from sitegen.records.store import CampaignStore, LatestAttempt

FleetProgress = Callable[[FleetEntry, int, int, TrialRecord], None]
"""Called on the driver after each appended record: campaign, index, total, record."""

ACCELERATOR_PREFIX = "accelerator_type:"
NODE_ID_LABEL = "ray.io/node-id"
"""The label Ray gives every node: its id, for keeping campaigns off lost nodes."""
RAY_LOG = Path("logs") / "ray.log"
"""Ray's own output on the driver, under the data directory; every fleet run appends."""
RAYLET_ANSWER_TIMEOUT_S = 2.0
"""How long a node's raylet may take to accept a connection before the node counts as
lost (a live raylet's kernel accepts at once, however busy the node)."""


def import_ray() -> ModuleType:
    """Ray, or the error that says how to install it."""
    try:
        import ray
    except ImportError:
        raise MissingDependency(
            "ray", "sitegen measure --fleet", "pip install 'sitegen[fleet]'"
        ) from None
    return ray


@dataclass(frozen=True)
class FleetOutcome:
    """What one fleet run did for one campaign."""

    entry: FleetEntry
    directory: Path
    """The campaign directory on the driver's ``data/``."""
    appended: int
    """Records appended by this run."""
    incomplete: int
    """Planned trials still without an ok record (failed, pending, or left by a lost node)."""
    result: CampaignResult | None
    """The campaign runner's summary; ``None`` when the campaign ended early."""
    ended_early: str | None
    """Why the campaign stopped before its runner finished (node lost, error on the node)."""


# --- resources ------------------------------------------------------------------------------


def _requirements(resources: FleetResources) -> dict[str, float]:
    """What a node must offer (totals), in Ray's resource names."""
    needed = resources.ray_resources()
    if resources.accelerator_type:
        # Ray requests a sliver of this marker resource; any amount on the node matches.
        needed[ACCELERATOR_PREFIX + resources.accelerator_type] = 0.0
    return needed


def _offers(total: dict[str, float], needed: dict[str, float]) -> bool:
    return all(name in total and total[name] >= amount for name, amount in needed.items())


def lost_nodes(nodes: list[dict[str, Any]]) -> dict[str, str]:
    """Node id → why, for each node that Ray lists as alive (``nodes`` as ``ray.nodes()``
    lists them) but whose raylet accepts no connection. Ray notices a lost node only after
    several missed health checks (many seconds) and would place a campaign there meanwhile;
    a connection is refused at once, or not accepted within ``RAYLET_ANSWER_TIMEOUT_S``."""
    alive = [node for node in nodes if node.get("Alive")]

    def why_lost(node: dict[str, Any]) -> str | None:
        raylet = (node["NodeManagerAddress"], node["NodeManagerPort"])
        try:
            socket.create_connection(raylet, timeout=RAYLET_ANSWER_TIMEOUT_S).close()
        except OSError as exc:
            return f"raylet at {raylet[0]}:{raylet[1]} does not answer: {exc.strerror or exc}"
        return None

    with ThreadPoolExecutor(max_workers=max(1, min(32, len(alive)))) as pool:
        answers = list(pool.map(why_lost, alive))
    return {node["NodeID"]: why for node, why in zip(alive, answers, strict=True) if why}


def check_resources(
    fleet: Fleet,
    nodes: list[dict[str, Any]],
    lost: Mapping[str, str] | None = None,
    data_dir: Path | None = None,
) -> None:
    """Refuse the fleet before anything runs if some campaign's resources are on no alive
    node (``nodes`` as ``ray.nodes()`` lists them; ``lost``: the ids of those that Ray
    still lists but that are gone, with why), one line per campaign naming it (the
    campaign of ``data_dir`` it would resume, or its id with the nonce still to be drawn)
    and what is missing."""
    lost = lost or {}
    usable = [node for node in nodes if node.get("Alive") and node.get("NodeID") not in lost]
    totals = [node["Resources"] for node in usable]
    problems = []
    for entry in fleet.entries:
        needed = _requirements(entry.resources)
        if any(_offers(total, needed) for total in totals):
            continue
        wanted = ", ".join(
            f"{name}: {amount:g}" if amount else name for name, amount in needed.items()
        )
        on_lost = [
            f"{node['NodeID'][:12]} ({lost[node['NodeID']]})"
            for node in nodes
            if node.get("NodeID") in lost and _offers(node["Resources"], needed)
        ]
        if on_lost:
            lost_list = "; ".join(on_lost)
            why = f"only lost node(s) have them, though Ray still lists them as alive: {lost_list}"
        else:
            missing = [
                f"{name} ≥ {amount:g}" if amount else name
                for name, amount in needed.items()
                if not any(_offers(total, {name: amount}) for total in totals)
            ]
            offered = "; ".join(_describe_node(total) for total in totals) or "none"
            why = (
                f"no node has {', '.join(missing)}" if missing else "no single node has all of them"
            ) + f" (the alive nodes offer: {offered})"
        problems.append(
            f"{entry.where}: campaign {_campaign_name(entry.plan, data_dir)} cannot run "
            "(nothing was run): "
            f"it needs {{{wanted}}}; {why}"
        )
    if problems:
        raise ConfigError("\n".join(problems))


def _campaign_name(plan: Plan, data_dir: Path | None) -> str:
    """The campaign of ``plan`` that a measure into ``data_dir`` would resume, else its id
    with the nonce that registering it draws shown as ``<nonce>``."""
    with suppress(SitegenError):  # several: measuring refuses them, naming them
        if data_dir is not None and (found := find_campaign(data_dir / CAMPAIGNS_DIR, plan)):
            return found.name
    return campaign_id(plan, "<nonce>")


def _describe_node(total: dict[str, float]) -> str:
    # Ray's bookkeeping resources (node:<ip>, memory …) say nothing about placement.
    shown = {
        name: amount
        for name, amount in sorted(total.items())
        if not name.startswith("node:") and name not in ("memory", "object_store_memory", "CPU")
    }
    if not shown:
        return "{no GPU or custom resource}"
    return "{" + ", ".join(f"{name}: {amount:g}" for name, amount in shown.items()) + "}"


# --- on the node ----------------------------------------------------------------------------


class _NodeSink:
    """The part of ``CampaignStore`` the campaign runner uses, on the node: it starts from
    the driver's latest attempts and hands every record to ``send`` (with the engine log
    written before it) instead of writing it."""

    def __init__(
        self,
        latest: dict[str, LatestAttempt],
        campaign_id: str,
        plan_sha256: str,
        directory: Path,
        send: Callable[[tuple[str, Any]], None],
    ) -> None:
        self._latest = latest
        self.campaign_id = campaign_id
        self.plan_sha256 = plan_sha256
        self.directory = directory
        self.engine_log_path = directory / ENGINE_LOG
        self.telemetry_log_path = directory / TELEMETRY_LOG
        for relative in LOG_FILES:
            (directory / relative).parent.mkdir(parents=True, exist_ok=True)
            (directory / relative).touch()
        self._send = send
        self._log_sent = dict.fromkeys(LOG_FILES, 0)

    def latest_attempts(self) -> dict[str, LatestAttempt]:
        return self._latest

    def append(self, record: TrialRecord) -> None:
        self.send_log()  # the log first: the driver signs it with the record
        self._send(("record", record.model_dump_json()))

    def send_log(self) -> None:
        """What the engine and the telemetry sampler logged since the last call."""
        for relative in LOG_FILES:
            with (self.directory / relative).open("rb") as log:
                log.seek(self._log_sent[relative])
                data = log.read()
            if data:
                self._log_sent[relative] += len(data)
                self._send(("log", (relative, data)))


class CampaignWorker:
    """One campaign on one node (a Ray actor: ``ray.remote(CampaignWorker)``). Creating it
    starts the campaign's pending trials in a thread; ``take`` hands the driver what the
    runner sent since the last call. ``campaign``: the id of the campaign the driver
    opened (its registration nonce is the driver's)."""

    def __init__(
        self,
        plan: Plan,
        latest: dict[str, LatestAttempt],
        resources: dict[str, float],
        campaign: str | None = None,
    ) -> None:
        self._items: queue.Queue[tuple[str, Any]] = queue.Queue()
        self._held: tuple[str, Any] | None = None
        # Nothing here may fail: an error raised while creating an actor reads like a lost
        # node on the driver, so every error is sent as an item instead.
        threading.Thread(
            target=self._measure,
            args=(plan, latest, resources, campaign),
            name="campaign",
            daemon=True,
        ).start()

    def _measure(
        self,
        plan: Plan,
        latest: dict[str, LatestAttempt],
        resources: dict[str, float],
        campaign: str | None,
    ) -> None:
        import ray

        from sitegen.plan.plan_file import plan_sha256

        try:
            scratch = Path(tempfile.mkdtemp(prefix="sitegen-fleet-"))
            try:
                sink = _NodeSink(
                    latest,
                    campaign or campaign_id(plan),
                    plan_sha256(plan),
                    scratch,
                    self._items.put,
                )
                result = run_trials(
                    plan,
                    sink,
                    get_engine_class(plan.engine),
                    lambda index, total, _record: self._items.put(("progress", (index, total))),
                    _this_node(ray, resources),
                )
                sink.send_log()
            finally:
                shutil.rmtree(scratch, ignore_errors=True)
            self._items.put(("result", result))
        except BaseException as exc:  # handed to the driver as the error of ``take``
            self._items.put(("error", exc))

    def take(self) -> list[tuple[str, Any]]:
        """What the runner sent since the last call, waiting for at least one item:
        ``("log", bytes)``, ``("record", json)``, ``("progress", (index, total))``; the
        last batch ends with ``("result", CampaignResult)``. An error in the runner is
        raised once the items sent before it are taken."""
        item = self._held or self._items.get()
        self._held = None
        batch: list[tuple[str, Any]] = []
        while True:
            if item[0] == "error":
                if not batch:
                    raise item[1]
                self._held = item
                return batch
            batch.append(item)
            if item[0] == "result":
                return batch
            try:
                item = self._items.get_nowait()
            except queue.Empty:
                return batch


def _this_node(ray: ModuleType, resources: dict[str, float]) -> NodeInfo:
    node_id = ray.get_runtime_context().get_node_id()
    total: dict[str, float] = next(
        (n["Resources"] for n in ray.nodes() if n["NodeID"] == node_id), {}
    )
    accelerator = next(
        (
            name.removeprefix(ACCELERATOR_PREFIX)
            for name in total
            if name.startswith(ACCELERATOR_PREFIX)
        ),
        None,
    )
    return NodeInfo(
        ray_node_id=node_id,
        hostname=socket.gethostname(),
        accelerator_type=accelerator,
        resources=resources,
    )


# --- on the driver --------------------------------------------------------------------------


@dataclass
class _Campaign:
    """The driver's state of one running campaign."""

    entry: FleetEntry
    store: CampaignStore
    latest: dict[str, LatestAttempt]
    actor: Any
    appended: int = 0
    last_record: TrialRecord | None = None
    """The record the next progress item is about (the runner reports after appending)."""
    result: CampaignResult | None = None
    ended_early: str | None = None

    def incomplete(self) -> int:
        return sum(
            self.latest.get(t.trial_id) is None or self.latest[t.trial_id].status != "ok"
            for t in expand_trials(self.entry.plan)
        )


def run_fleet(
    fleet: Fleet,
    data_dir: Path,
    address: str | None = None,
    progress: FleetProgress | None = None,
    signer: Signer | None = None,
) -> list[FleetOutcome]:
    """Run every campaign of ``fleet`` on the Ray cluster at ``address`` (``None``: a local
    Ray instance on this machine; ``auto``: the cluster this machine belongs to), each as
    one actor holding its resources, and append every record to ``data_dir`` here
    (``signer``: the driver signs every manifest it writes).

    Refused before anything runs when a campaign's resources are on no node, or only on
    nodes that Ray still lists but that are lost (``ConfigError``). A campaign whose node
    is lost, or that fails on its node, ends early and the others go on; its outcome says
    why. Ray's own output goes to ``data_dir/logs/ray.log``, only ``progress`` is shown."""
    ray = import_ray()
    # The driver's sitegen goes to every node, so all campaigns run the same code.
    if address not in (None, "auto", "local"):
        _require_listening(address)
    with ray_output_to(data_dir / RAY_LOG, f"sitegen measure --fleet {fleet.path}") as ray_log:
        try:
            ray.init(
                # "local" starts a new instance, where None would join the last cluster here.
                address=address or "local",
                runtime_env={"py_modules": [str(Path(sitegen.__file__).parent)]},
                log_to_driver=True,  # the campaigns' own output, into the log with the rest
                logging_level="INFO",
            )
        except (ConnectionError, RuntimeError, ValueError, ray.exceptions.RayError) as exc:
            ray_log.note(str(exc))
            raise ConfigError(
                f"cannot reach the Ray cluster at {address or 'a new local instance'}: "
                f"{_first_line(exc)} (is `ray start` running there, and does this machine "
                f"have the cluster's auth token? See docs/fleets.md; Ray's messages: "
                f"{ray_log.path})"
            ) from exc
        try:
            nodes = ray.nodes()
            # Ray Client's driver is off the cluster and may not reach the nodes itself.
            lost = {} if (address or "").startswith("ray://") else lost_nodes(nodes)
            check_resources(fleet, nodes, lost, data_dir)
            shown = ray_log.on_terminal(progress) if progress else None
            return _drive(ray, fleet, data_dir, ray_log, set(lost), shown, signer)
        finally:
            ray.shutdown()


def _drive(
    ray: ModuleType,
    fleet: Fleet,
    data_dir: Path,
    ray_log: RayLog,
    lost: set[str],
    progress: FleetProgress | None,
    signer: Signer | None = None,
) -> list[FleetOutcome]:
    worker_class = ray.remote(CampaignWorker)
    with ExitStack() as stack:
        # Every campaign is locked and checked against its manifest before any actor starts.
        stores = [
            stack.enter_context(CampaignStore.open(data_dir / CAMPAIGNS_DIR, entry.plan, signer))
            for entry in fleet.entries
        ]
        campaigns: list[_Campaign] = []
        waiting: dict[Any, _Campaign] = {}  # the pending ``take`` of each running campaign
        try:
            for entry, store in zip(fleet.entries, stores, strict=True):
                resources = entry.resources
                latest = store.latest_attempts()
                placement: dict[str, Any] = {}
                if lost:  # Ray would still place campaigns there
                    placement["label_selector"] = {NODE_ID_LABEL: f"!in({', '.join(lost)})"}
                actor = worker_class.options(
                    num_gpus=resources.accelerator_count or 0,
                    accelerator_type=resources.accelerator_type,
                    resources=resources.custom,
                    max_restarts=0,  # a lost node ends the campaign; the next run resumes
                    **placement,
                ).remote(entry.plan, latest, resources.ray_resources(), store.campaign_id)
                campaign = _Campaign(entry, store, latest, actor)
                campaigns.append(campaign)
                # Ray waits for the resources: a campaign whose GPUs are held starts later.
                waiting[actor.take.remote()] = campaign
            while waiting:
                (taken,), _ = ray.wait(list(waiting), num_returns=1)
                campaign = waiting.pop(taken)
                if _take(ray, taken, campaign, ray_log, progress):
                    waiting[campaign.actor.take.remote()] = campaign
                else:
                    # Free the node's accelerators for a campaign waiting for them.
                    ray.kill(campaign.actor)
        finally:
            for campaign in campaigns:
                ray.kill(campaign.actor)
            for store in stores:
                store.sign()  # covers the engine log appended after the last record
    return [
        FleetOutcome(
            c.entry, c.store.directory, c.appended, c.incomplete(), c.result, c.ended_early
        )
        for c in campaigns
    ]


def _take(
    ray: ModuleType,
    taken: Any,
    campaign: _Campaign,
    ray_log: RayLog,
    progress: FleetProgress | None,
) -> bool:
    """Append what a campaign's ``take`` returned; ``False`` once the campaign has ended
    (why: one line of sitegen's, Ray's whole report in the log)."""
    errors = ray.exceptions
    try:
        batch = ray.get(taken)
    except errors.RayTaskError as exc:
        campaign.ended_early = f"failed on its node: {exc.cause}"
        return False
    except (errors.RayActorError, errors.NodeDiedError, errors.ObjectLostError) as exc:
        ray_log.note(f"campaign {campaign.store.campaign_id}: {exc}")
        campaign.ended_early = f"node lost{_last_node(campaign)}; Ray's report: {ray_log.path}"
        return False
    except errors.RayError as exc:  # e.g. the node could not set up the runtime environment
        ray_log.note(f"campaign {campaign.store.campaign_id}: {exc}")
        campaign.ended_early = f"Ray could not run it ({_first_line(exc)}; see {ray_log.path})"
        return False
    store = campaign.store
    for kind, value in batch:
        if kind == "log":
            _append_log(store, *value)
        elif kind == "record":
            record = TrialRecord.model_validate_json(value)
            store.append(record)
            campaign.appended += 1
            campaign.latest[record.trial_id] = LatestAttempt.of(record)
            campaign.last_record = record
        # the node sends a trial's record before its progress
        elif kind == "progress" and progress and campaign.last_record is not None:
            index, total = value
            progress(campaign.entry, index, total, campaign.last_record)
        elif kind == "result":
            campaign.result = replace(value, directory=store.directory)
            return False
    return True


def _last_node(campaign: _Campaign) -> str:
    """`` (node <id> on <host>)`` where the campaign's last record was measured, if any."""
    record = campaign.last_record
    node = record.provenance.node if record else None
    return f" (node {node.ray_node_id[:12]} on {node.hostname})" if node else ""


def _require_listening(address: str) -> None:
    """Refuse at once a ``HOST:PORT`` or ``ray://HOST:PORT`` where nothing listens (Ray
    itself retries for minutes before it gives up)."""
    host, _, port = address.removeprefix("ray://").rpartition(":")
    if not host or not port.isdigit():
        raise ConfigError(f"--address {address!r}: give auto, HOST:PORT or ray://HOST:PORT")
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=10).close()
    except OSError as exc:
        raise ConfigError(
            f"cannot reach the Ray cluster at {address}: {exc.strerror or exc} (is `ray start "
            "--head` running there?)"
        ) from exc


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def _append_log(store: CampaignStore, relative: str, data: bytes) -> None:
    if relative not in LOG_FILES:  # the node names a log; only the campaign's logs are written
        raise StorageError(f"{store.directory}: a node sent an unknown log '{relative}'")
    path = store.directory / relative
    try:
        with path.open("ab") as log:
            log.write(data)
    except OSError as exc:
        raise StorageError.from_os_error(exc, "append to", path) from exc
