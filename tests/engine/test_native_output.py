"""An engine that will not load says why in one line: the error llama.cpp logged, not the
wheel's generic message; one that ended the process in native code is named by the next
measure."""

from __future__ import annotations

import json
import os

import pytest

from sitegen.cli import main
from sitegen.core.errors import ConfigError
from sitegen.engine.native_output import NativeOutput, error_line
from sitegen.measure import run_campaign
from sitegen.measure.native import native_output_to
from sitegen.plan.engine_registry import validate_engine_options
from sitegen.plan.plan_file import canonical_plan_json
from sitegen.plan.plan_models import ConditionSpec, InputSpec, ModelSpec, Plan
from sitegen.records.registrations import find_campaign
from tests.conftest import make_plan

# What llama.cpp logs loading a file that is not GGUF (xllamacpp 2026.10).
NOT_GGUF_LOG = """\
0.00.000.405 I srv          init: initializing ...
0.00.004.235 W srv          init: security: no API key is set and CORS allows all origins
0.00.005.833 I srv    load_model: loading model '/models/garbage.gguf'
0.00.005.938 E gguf_init_from_reader: invalid magic characters: 'not ', expected 'GGUF'
0.00.006.288 E llama_model_load: error loading model: llama_model_loader: failed to load model
0.00.006.406 E cmn  common_init_: failed to load model '/models/garbage.gguf'
0.00.006.409 I srv    operator(): operator(): cleaning up before exit...
0.00.006.858 E srv          init: exiting due to model loading error"""
CAUSE = "gguf_init_from_reader: invalid magic characters: 'not ', expected 'GGUF'"


@pytest.mark.parametrize(
    ("output", "line"),
    [
        (NOT_GGUF_LOG, CAUSE),
        (
            "0.00.004.009 I srv    load_model: loading model 'm.gguf'\n"
            "/src/llama-context.cpp:2529: GGML_ASSERT(n_outputs >= 1) failed\n"
            "#0  syscall () at ../sysdeps/unix/sysv/linux/x86_64/syscall.S:38\n",
            "/src/llama-context.cpp:2529: GGML_ASSERT(n_outputs >= 1) failed",
        ),
        (
            # The last attempt's consequence, written late by llama.cpp's log thread.
            "0.00.006.858 E srv          init: exiting due to model loading error\n" + NOT_GGUF_LOG,
            CAUSE,
        ),
        (
            "0.00.006.406 E cmn  common_init_: failed to load model 'm.gguf'\n"
            "0.00.006.858 E srv          init: exiting due to model loading error\n",
            "cmn common_init_: failed to load model 'm.gguf'",
        ),
        ("0.00.000.405 I srv  init: initializing ...\n\n", "srv init: initializing ..."),
        ("\n \n", None),
    ],
    ids=[
        "first error of a log",
        "an assertion without a level",
        "a consequence before the cause",
        "consequences only: the first",
        "no error: the last",
        "none",
    ],
)
def test_the_quoted_line_is_the_first_error(output, line):
    assert error_line(output) == line


def test_a_consequence_alone_waits_for_the_cause_the_log_thread_writes_next(tmp_path):
    import threading

    log = tmp_path / "engine.log"
    with native_output_to(log):
        since = NativeOutput()
        os.write(2, b"0.00.006.858 E srv          init: exiting due to model loading error\n")
        late = threading.Timer(
            0.2, os.write, (2, f"0.00.005.938 E {CAUSE}\n".encode())
        )  # llama.cpp's log thread
        late.start()
        try:
            assert since.error_line() == CAUSE
        finally:
            late.join()


def test_what_native_code_writes_to_the_engine_log_is_read_back(tmp_path):
    log = tmp_path / "engine.log"
    log.write_text("0.00.000.001 E an error of an earlier load\n")
    with native_output_to(log):
        since = NativeOutput()
        os.write(2, NOT_GGUF_LOG.encode())
        assert since.error_line() == CAUSE


def test_a_terminal_or_pipe_is_not_read_back():
    reading, writing = os.pipe()
    saved = os.dup(2)
    os.dup2(writing, 2)
    try:
        since = NativeOutput()
        os.write(2, b"0.00.000.001 E lost\n")
        assert since.error_line() is None
    finally:
        os.dup2(saved, 2)
        for descriptor in (saved, reading, writing):
            os.close(descriptor)


@pytest.mark.slow
def test_a_model_that_is_not_gguf_is_one_line_quoting_llama_cpp(tmp_path, capsys):
    pytest.importorskip("xllamacpp")
    model = tmp_path / "garbage.gguf"
    model.write_text("not a gguf file at all\n")
    plan = Plan(
        name="garbage",
        title={"ja": "壊れたモデル", "en": "Broken model"},
        engine="llamacpp-embedded",
        model=ModelSpec(name="garbage", source=str(model), quantization="none"),
        conditions=[ConditionSpec(id="off", context_capacity=256, threads=1)],
        inputs=[InputSpec(id="q", text="hello", max_output_tokens=2)],
        repetitions=4,  # three load failures stop the condition, one is left pending
        warmups=0,
    )
    plan_file = tmp_path / "plan.json"
    plan_file.write_text(canonical_plan_json(plan), encoding="utf-8")
    code = main(["measure", "--plan", str(plan_file), "--data", str(tmp_path / "data")])
    err = capsys.readouterr().err
    assert code == 3 and "Traceback" not in err, err
    reason = f"load failure: llama.cpp could not load garbage.gguf: {CAUSE}"
    assert (
        f"condition off stopped after 3 engine failures in a row ({reason}); "
        "1 of its trial(s) left pending"
    ) in err.splitlines()
    directory = find_campaign(tmp_path / "data" / "campaigns", plan)
    records = [json.loads(line) for line in (directory / "records.jsonl").read_text().splitlines()]
    assert [record["failure_reason"] for record in records] == [reason] * 3
    log = (directory / "logs" / "engine.log").read_text()
    assert CAUSE in log and "exiting due to model loading error" in log  # all of it kept


def test_a_batch_of_one_token_is_refused_before_llama_cpp_aborts():
    # llama.cpp's warm-up decodes BOS and EOS in one batch: n_batch 1 ends the process in
    # abort() (GGML "get_sub_batch: failed to add token"), where nothing can be reported.
    condition = ConditionSpec(id="off", context_capacity=256, engine_options={"n_batch": 1})
    plan = make_plan(engine="llamacpp-embedded", conditions=[condition])
    with pytest.raises(ConfigError, match="option 'n_batch': input should be greater than or"):
        validate_engine_options(plan)


def test_the_next_measure_names_why_the_last_one_died_in_the_engine(tmp_path, capsys):
    # abort() in native code ends the process before Python can say anything: its reason
    # is in the engine log only, after the campaign's last signature.
    plan = make_plan()
    plan_file = tmp_path / "plan.json"
    plan_file.write_text(canonical_plan_json(plan), encoding="utf-8")
    directory = run_campaign(plan, tmp_path / "data").directory
    log = directory / "logs" / "engine.log"
    with log.open("a") as engine:
        engine.write("0.00.004.009 I srv load_model: loading model\n")
        engine.write("/src/common.cpp:2245: get_sub_batch: failed to add token 0 at index 1\n")
    measure = ["measure", "--plan", str(plan_file), "--data", str(tmp_path / "data")]
    assert main(measure) == 0
    assert (
        f"note: the last measure of {directory.name} died in the engine, whose log ({log}) "
        "says: /src/common.cpp:2245: get_sub_batch: failed to add token 0 at index 1"
    ) in capsys.readouterr().err.splitlines()
    assert main(measure) == 0  # signed since: nothing to say
    assert "note:" not in capsys.readouterr().err
