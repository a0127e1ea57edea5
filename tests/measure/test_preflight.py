"""Preflight: setup mistakes are refused before anything is created under --data, one line
per problem naming the condition and the fix, exit 2; ``--dry-run`` checks and stops.

The HTTP cases run against a stub llama-server on 127.0.0.1 (``/health``, ``/props``,
``/slots``, ``/tokenize``), so no model is loaded; the real listener is exercised in
``tests/engine/test_llamacpp_http.py``."""

from __future__ import annotations

import io
import json
import os
import socket
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from sitegen.cli import main
from sitegen.engine import server as server_module
from sitegen.engine.fake import FakeEngine
from sitegen.measure.progress import MeasureDisplay
from sitegen.plan.plan_file import campaign_id, canonical_plan_json
from sitegen.plan.plan_models import ConditionSpec, InputSpec, ModelSpec, Plan, SpeculativeSpec
from tests.conftest import make_plan

MODEL = ModelSpec(name="stub-model", source="/nowhere/stub-model.gguf", quantization="Q4")
SERVED = "/srv/models/stub-model.gguf"


class StubServer:
    """A llama-server's readiness and state endpoints: ``/health`` answers 503 until
    ``loading_s`` has passed, then 200."""

    def __init__(self, model_path: str = SERVED, n_ctx: int = 512, drafts: bool = False):
        self.props = {
            "model_path": model_path,
            "build_info": "stub",
            "default_generation_settings": {"n_ctx": n_ctx, "params": {}},
            "total_slots": 1,
        }
        self.slots = [{"id": 0, "speculative": drafts}]
        self.loading_until = 0.0

    def reply(self, path: str, body: bytes) -> tuple[int, object]:
        if path == "/health":
            loading = time.monotonic() < self.loading_until
            return (503, {"error": {"message": "Loading model"}}) if loading else (200, {})
        if path == "/props":
            return 200, self.props
        if path == "/slots":
            return 200, self.slots
        if path == "/tokenize":
            return 200, {"tokens": json.loads(body)["content"].split()}
        return 404, {"error": {"message": "not found"}}


@pytest.fixture
def stub() -> Iterator[tuple[StubServer, str]]:
    state = StubServer()

    class Handler(BaseHTTPRequestHandler):
        def _answer(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            status, payload = state.reply(self.path, self.rfile.read(length))
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        do_GET = do_POST = _answer

        def log_message(self, *args: object) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    yield state, f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


def http_plan(base_url: str, **options: object) -> Plan:
    return Plan(
        name="preflight",
        title={"ja": "事前確認", "en": "Preflight"},
        engine="llamacpp-http",
        model=MODEL.model_copy(update={"remote_unhashable": True}),
        conditions=[
            ConditionSpec(
                id="c", context_capacity=512, engine_options={"base_url": base_url, **options}
            )
        ],
        inputs=[InputSpec(id="short", text="one two three", max_output_tokens=8)],
        repetitions=1,
        warmups=0,
    )


def measure(tmp_path: Path, plan: Plan, *flags: str) -> int:
    path = tmp_path / "plan.json"
    path.write_text(canonical_plan_json(plan), encoding="utf-8")
    return main(["measure", "--plan", str(path), "--data", str(tmp_path / "data"), *flags])


def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_server_down_is_refused_within_seconds_and_nothing_is_created(
    tmp_path, capsys, monkeypatch
):
    # The grace shortened here: the test's point is that preflight gives up after it.
    monkeypatch.setattr(server_module, "REFUSED_GRACE_S", 0.5)
    url = f"http://127.0.0.1:{closed_port()}"
    started = time.monotonic()
    assert measure(tmp_path, http_plan(url)) == 2
    elapsed = time.monotonic() - started
    err = capsys.readouterr().err
    assert elapsed < 3, elapsed  # not the 300 s of ready_timeout_s
    assert f"preflight: waiting for {url} (0 s of 300 s)" in err
    assert f"error: plan preflight: condition 'c': nothing answers at {url}" in err
    assert "start the server, or correct engine_options.base_url" in err
    assert not (tmp_path / "data").exists()


def test_a_loading_server_is_waited_for_then_measured(tmp_path, capsys, stub):
    state, url = stub
    state.loading_until = time.monotonic() + 0.4  # 503 for a while, as while loading
    plan = http_plan(url, server_pid=os.getpid())
    assert measure(tmp_path, plan, "--dry-run") == 0
    captured = capsys.readouterr()
    assert f"waiting for {url} (0 s of 300 s)" in captured.err
    assert "preflight of plan preflight: passed" in captured.out
    assert not (tmp_path / "data").exists()


def test_wrong_model_mode_and_capacity_are_each_one_line(tmp_path, capsys, stub):
    state, url = stub
    state.props.update(model_path="/srv/models/other-model.gguf")
    state.props["default_generation_settings"]["n_ctx"] = 1024
    state.slots[0]["speculative"] = True
    assert measure(tmp_path, http_plan(url)) == 2
    errors = [line for line in capsys.readouterr().err.splitlines() if "condition 'c'" in line]
    where = f"error: plan preflight: condition 'c': llama-server at {url}: "
    assert len(errors) == 3 and all(line.startswith(where) for line in errors)
    assert "server drafts (restart it without --spec-type)" in errors[0]
    assert "context capacity of 512 tokens but the server's slot has 1024" in errors[1]
    assert "serves '/srv/models/other-model.gguf' but the plan's model is 'stub-model'" in errors[2]
    assert not (tmp_path / "data").exists()


def test_memory_probe_required_on_this_host_warned_for_a_remote_one(
    tmp_path, capsys, stub, monkeypatch
):
    _, url = stub
    monkeypatch.setattr(server_module, "server_memory_probes", lambda *args: [])
    assert measure(tmp_path, http_plan(url), "--dry-run") == 2
    err = capsys.readouterr().err
    assert "condition 'c': no memory probe for the server at" in err
    assert "engine_options.memory_unavailable: true" in err
    assert measure(tmp_path, http_plan(url, memory_unavailable=True), "--dry-run") == 0
    assert "warning" not in capsys.readouterr().err
    monkeypatch.setattr("sitegen.measure.preflight.is_local", lambda url: False)
    assert measure(tmp_path, http_plan(url), "--dry-run") == 0
    assert "is on another host, so its records carry no memory figures" in capsys.readouterr().err


def test_unreadable_server_pid_is_refused(tmp_path, capsys, stub):
    _, url = stub
    assert measure(tmp_path, http_plan(url, server_pid=2**22 + 1), "--dry-run") == 2
    assert "memory probe process-rss of cpu cannot be read" in capsys.readouterr().err


def test_too_small_context_is_refused_with_the_numbers(tmp_path, capsys):
    plan = make_plan(
        inputs=[
            InputSpec(id="short", text="question one", max_output_tokens=16),
            InputSpec(id="long", text="question", target_prompt_tokens=600, max_output_tokens=16),
            # No target: the text as the engine counts it (the fake: one token a word).
            InputSpec(id="text", text="word " * 500, max_output_tokens=16),
        ]
    )
    assert measure(tmp_path, plan) == 2
    err = capsys.readouterr().err
    for condition in ("off", "on"):
        assert (
            f"condition '{condition}': input 'long' needs 600 input tokens + output cap 16 = "
            "616, above context_capacity 512 (1 more input(s) do not fit either): raise "
            "context_capacity"
        ) in err
    assert not (tmp_path / "data").exists()


def test_embedded_engine_is_checked_without_loading(tmp_path, capsys):
    missing = ModelSpec(name="m", source=str(tmp_path / "missing.gguf"), quantization="Q4")
    conditions = [
        ConditionSpec(id="off", context_capacity=512),
        ConditionSpec(
            id="draft", speculative=SpeculativeSpec(mode="draft", draft_max=4), context_capacity=512
        ),
    ]
    plan = make_plan(engine="llamacpp-embedded", model=missing, conditions=conditions)
    started = time.monotonic()
    assert measure(tmp_path, plan) == 2
    assert time.monotonic() - started < 5
    err = capsys.readouterr().err
    assert f"condition 'off': model file not found: {tmp_path / 'missing.gguf'}" in err
    assert "condition 'draft': speculative mode 'draft' needs speculative.draft_model" in err
    assert not (tmp_path / "data").exists()


def test_dry_run_prints_the_trials_and_creates_nothing(tmp_path, capsys):
    assert measure(tmp_path, make_plan(), "--dry-run") == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("campaign unit-") and "14 request(s), engine fake" in out[0]
    assert out[1:] == [
        "  off: 1 warm-up(s), short ×3, padded ×3",
        "  on: 1 warm-up(s), short ×3, padded ×3",
        "  run order: off/warmup-0, off/short/r0, off/short/r1 … on/padded/r0, on/padded/r1, "
        "on/padded/r2",
        "  seeds: 1234 … 201234",
        "campaign: would register a new campaign, "
        f"{tmp_path / 'data' / 'campaigns' / campaign_id(make_plan(), '<nonce>')}",
        "preflight of plan unit: passed",
    ]
    assert not (tmp_path / "data").exists()


def test_passing_preflight_measures_with_the_engines_it_constructed(tmp_path, capsys, monkeypatch):
    constructed = []
    real_init = FakeEngine.__init__

    def counting(self, plan, condition):
        constructed.append(condition.id)
        real_init(self, plan, condition)

    monkeypatch.setattr(FakeEngine, "__init__", counting)
    assert measure(tmp_path, make_plan()) == 0
    assert "14 trial(s) run, 0 already recorded, 0 failed" in capsys.readouterr().out
    assert constructed == ["off", "on"]  # by preflight, kept for the run


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_waiting_line_live_on_a_terminal_every_ten_seconds_elsewhere():
    url = "http://127.0.0.1:8080"
    plain = io.StringIO()
    with MeasureDisplay(plain).preflight("p") as waiting:
        for waited in (0.0, 0.25, 9.9, 10.1, 12.0):
            waiting(url, waited, 300.0)
    assert plain.getvalue().splitlines() == [
        f"p: waiting for {url} (0 s of 300 s)",
        f"p: waiting for {url} (10 s of 300 s)",
    ]
    terminal = _Terminal()
    with MeasureDisplay(terminal).preflight("p") as waiting:
        waiting(url, 12.0, 300.0)
    assert f"waiting for {url} (12 s of 300 s)" in terminal.getvalue()


def test_help_and_fleet_say_what_preflight_covers(tmp_path, capsys):
    with pytest.raises(SystemExit):
        main(["measure", "--help"])
    out = " ".join(capsys.readouterr().out.split())
    assert "Preflight comes first" in out and "--fleet runs skip preflight" in out
    assert "--dry-run" in out and "a failed preflight (nothing created)" in out
    fleet = ["measure", "--fleet", str(tmp_path / "f.yaml"), "--dry-run"]
    assert main(fleet) == 2
    assert "a fleet has no preflight" in capsys.readouterr().err


def test_exllamav3_is_checked_without_loading(tmp_path, capsys, monkeypatch):
    from sitegen.engine import exllamav3

    monkeypatch.setattr(exllamav3.importlib.util, "find_spec", lambda name: None)
    assert measure(tmp_path, make_plan(engine="exllamav3"), "--dry-run") == 2
    err = capsys.readouterr().err
    assert "condition 'off': engine exllamav3 needs the package 'exllamav3'" in err
    assert not (tmp_path / "data").exists()


def test_more_threads_than_the_machine_has_are_refused_before_the_engine(tmp_path, capsys):
    cpus = os.cpu_count() or 1
    conditions = [
        ConditionSpec(id="off", context_capacity=512, threads=cpus),
        ConditionSpec(id="many", context_capacity=512, threads=cpus + 1),
    ]
    assert measure(tmp_path, make_plan(conditions=conditions)) == 2
    err = capsys.readouterr().err
    assert (
        f"condition 'many': threads {cpus + 1}, more than this machine's {cpus} logical CPUs; "
        f"set threads to at most {cpus}"
    ) in err
    assert "condition 'off'" not in err
    assert not (tmp_path / "data").exists()


def test_a_figure_in_the_plans_author_text_is_refused_before_measuring(tmp_path, capsys):
    labelled = ConditionSpec(
        id="off", label={"ja": "十二倍速い", "en": "twelvefold faster"}, context_capacity=512
    )
    plan = make_plan(conditions=[labelled, *make_plan().conditions[1:]])
    path = tmp_path / "plan.json"
    path.write_text(canonical_plan_json(plan))
    code = main(["measure", "--plan", str(path), "--data", str(tmp_path / "data"), "--dry-run"])
    out = capsys.readouterr()
    assert code != 0
    assert (
        "plan → conditions.0.label.en: figure(s) 'twelvefold' written by hand" in out.out + out.err
    )
    assert not (tmp_path / "data").exists()
