"""vLLM's ``bench serve --save-result --save-detailed`` file: a real vLLM 0.33.0 run."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from sitegen.importers import vllm
from tests.importers.sources import (
    FIXTURES,
    as_file,
    fixture,
    fixture_json,
    imported_report,
    problem,
)

RESULT = "vllm/vllm-serve.json"


@pytest.fixture(scope="module")
def imported():
    return vllm.parse(fixture(RESULT))


def test_the_file_states_model_and_client_but_no_version_or_server(imported):
    source = imported.source
    assert (source.format, source.tool, source.tool_version) == ("vllm", "vLLM bench serve", None)
    assert (source.model, source.backend, source.target) == (
        "SmolLM2-135M-Instruct",
        "openai-chat",
        None,
    )
    assert source.stated["request_rate"] == "inf" and source.stated["burstiness"] == "1.0"
    assert source.stated["date"] == "20261201-162631"  # local time as vLLM wrote it
    assert "label" not in source.stated  # null in the file
    assert source.speculative is None  # llama.cpp's server reports no vllm:spec_decode counters


def test_lists_are_read_index_by_index_in_seconds(imported):
    first = imported.measurements[0]
    assert (first.location, first.status, first.group) == ("index 0", "ok", None)
    assert first.ttft_s == 0.03144629600137705
    assert first.e2e_s == 0.15258961899962742
    assert first.inter_chunk_latencies_s[0] == 0.013955239999631885
    assert len(first.inter_chunk_latencies_s) == 7
    assert (first.prompt_tokens, first.output_tokens) == (37, 8)
    assert first.output_text == "L'Étoile, la Mar"
    assert first.started_monotonic_s == 22641.697012627 and first.started_at is None
    assert (first.concurrency, first.request_rate) == (1, None)  # "inf": no rate aimed at


def test_a_failed_request_keeps_vllm_s_error_but_not_its_placeholder_zeros(imported):
    failed = imported.measurements[2]
    assert (failed.status, failed.error) == ("failed", "Bad Request")
    assert (failed.ttft_s, failed.e2e_s, failed.output_tokens, failed.output_text) == (None,) * 4
    assert failed.inter_chunk_latencies_s is None
    assert failed.prompt_tokens == 1503  # the prompt's length is known without a response


def test_the_file_keeps_no_finish_reason_and_no_output_cap(imported):
    # vllm-serve.json holds output_lens [8, 8, 0], the tokens generated, and no key for why
    # a request stopped or for the max_tokens it was sent with (--custom-output-len 8).
    result = fixture_json(RESULT)
    assert result["output_lens"] == [8, 8, 0]
    assert not [key for key in result if "finish" in key or "max_tokens" in key]
    assert [(m.finish_reason, m.output_cap) for m in imported.measurements] == [(None, None)] * 3


def test_the_report_counts_no_truncation_it_cannot_know(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    shutil.copy(FIXTURES / RESULT, Path("r.json"))
    report = imported_report("vllm", ["r.json"], {"c1": "[{file: r.json}]"})
    (row,) = report.rows
    assert (row.truncated, row.truncation_known) == (None, 0)  # never 0 of 2: not known
    assert not report.shows_truncation
    assert dict(report.refused)["truncation"] == "finish_reason"


def test_zero_timings_without_error_text_are_a_failure():
    # vLLM saves an empty error when the server refuses without a reason.
    result = fixture_json(RESULT)
    result["errors"][2] = ""
    failed = vllm.parse(as_file("r.json", result)).measurements[2]
    assert (failed.status, failed.error) == ("failed", None)


def test_speculative_totals_are_read_when_the_server_reported_them():
    # The keys serve.py adds when the server's Prometheus endpoint has vllm:spec_decode_*.
    result = fixture_json(RESULT) | {
        "spec_decode_acceptance_rate": 62.5,
        "spec_decode_acceptance_length": 3.5,
        "spec_decode_num_drafts": 40,
        "spec_decode_draft_tokens": 160,
        "spec_decode_accepted_tokens": 100,
        "spec_decode_per_position_acceptance_rates": [0.9, 0.7, 0.5, 0.4],
    }
    totals = vllm.parse(as_file("r.json", result)).source.speculative
    assert (totals.drafts, totals.draft_tokens, totals.accepted_tokens) == (40, 160, 100)
    assert (totals.acceptance_rate_pct, totals.acceptance_length) == (62.5, 3.5)
    assert totals.per_position_acceptance == [0.9, 0.7, 0.5, 0.4]


@pytest.mark.parametrize(
    ("edit", "expected"),
    [
        (
            lambda r: r.pop("itls"),
            "r.json → itls: missing: the per-request lists are saved only with --save-detailed",
        ),
        (lambda r: r["latencies"].pop(), "r.json → latencies: 2 entries, but ttfts has 3"),
        (lambda r: r["ttfts"].__setitem__(1, -0.5), "r.json index 1 → ttfts[1]: negative (-0.5)"),
        (
            lambda r: r["itls"][0].__setitem__(3, "x"),
            "r.json index 0 → itls[0][3]: expected a number",
        ),
        (
            lambda r: r["output_lens"].__setitem__(0, 7.5),
            "r.json index 0 → output_lens[0]: expected a whole number",
        ),
        (
            lambda r: r["errors"].__setitem__(1, 5),
            "r.json index 1 → errors[1]: expected text or null",
        ),
        (
            lambda r: r.update(max_concurrency=0),
            "r.json → max_concurrency: expected a count ≥ 1, got 0",
        ),
        (
            lambda r: r.update(request_rate="fast"),
            "r.json → request_rate: expected a number, got text ('fast')",
        ),
    ],
)
def test_a_malformed_result_is_refused_naming_index_and_field(edit, expected):
    result = fixture_json(RESULT)
    edit(result)
    assert expected in problem(lambda: vllm.parse(as_file("r.json", result)))


def test_a_summary_saved_without_details_is_refused():
    result = {key: value for key, value in fixture_json(RESULT).items() if key != "ttfts"}
    assert "--save-detailed" in problem(lambda: vllm.parse(as_file("r.json", result)))
    assert "r.json: expected a JSON object" in problem(lambda: vllm.parse(as_file("r.json", [])))
