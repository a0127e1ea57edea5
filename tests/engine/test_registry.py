"""One row per engine: every lookup reads it, and listing engines imports none of them."""

from __future__ import annotations

import subprocess
import sys

import pytest

from sitegen.core.errors import ConfigError
from sitegen.engine.engines import get_engine_class
from sitegen.plan.engine_registry import ENGINES, engine_entry, is_publishable, prefill_source


def test_rows_are_keyed_by_their_id_and_only_the_fake_is_never_published():
    assert all(engine_id == entry.id for engine_id, entry in ENGINES.items())
    assert {e for e in ENGINES if not is_publishable(e)} == {"fake"}
    assert prefill_source("openai") is None
    assert prefill_source("exllamav3") == "ExLlamaV3 time_prefill"


def test_an_unknown_engine_is_refused_with_the_known_ones():
    with pytest.raises(ConfigError, match="unknown engine 'vllm' \\(known: exllamav3, fake"):
        engine_entry("vllm")
    with pytest.raises(ConfigError, match="unknown engine 'vllm'"):
        get_engine_class("vllm")
    assert not is_publishable("vllm") and prefill_source("vllm") is None


def test_listing_engines_imports_no_engine_and_no_options_model():
    # `sitegen engines` and `sitegen measure --help` run on machines without torch,
    # exllamav3 or xllamacpp, and every CLI start builds the help.
    code = (
        "import sys, contextlib, io; from sitegen.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    main(['engines'])\n"
        "    try: main(['measure', '--help'])\n"
        "    except SystemExit: pass\n"
        "print(sorted(m for m in sys.modules if m.startswith('sitegen.engine.') "
        "and m != 'sitegen.engine.engines' or m.split('.')[0] in "
        "('torch', 'exllamav3', 'xllamacpp', 'httpx')))"
    )
    output = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert output.strip() == "[]"
