"""GuideLLM's JSON report: a real GuideLLM 0.8.1 run read request by request."""

from __future__ import annotations

import hashlib
import json
import re
from html import unescape
from pathlib import Path

import pytest

from sitegen.core.project import packaged_theme
from sitegen.core.string_catalog import load_strings
from sitegen.importers import guidellm
from sitegen.importers.reading import SourceFile
from sitegen.pages.directives import PageContext, directive_functions, html_environment
from sitegen.pages.i18n import Catalog
from tests.importers.sources import as_file, fixture, fixture_json, imported_report, problem

REPORT = "guidellm/benchmarks.json.gz"


@pytest.fixture(scope="module")
def imported():
    return guidellm.parse(fixture(REPORT))


def test_the_source_is_named_with_what_the_report_states(imported):
    source = imported.source
    assert (source.format, source.tool, source.tool_version) == ("guidellm", "GuideLLM", "0.8.1")
    assert source.file == "guidellm/benchmarks.json"
    assert source.sha256 == hashlib.sha256(fixture(REPORT).data).hexdigest()
    assert source.sha256 == "fa82d2d4dec5be1b89a58f8aa07f615397ce933d0e91f3a27487a84143ae0e0e"
    assert source.target == "http://127.0.0.1:38989"
    assert source.model == "SmolLM2-135M-Instruct"
    assert source.backend == "openai_http /v1/chat/completions"
    assert source.speculative is None


def test_every_request_of_every_benchmark_is_a_measurement_in_file_order(imported):
    assert [(m.location, m.status, m.group) for m in imported.measurements] == [
        ("benchmarks[0].requests.successful[0]", "ok", "benchmarks[0]"),
        ("benchmarks[0].requests.successful[1]", "ok", "benchmarks[0]"),
        ("benchmarks[0].requests.errored[0]", "failed", "benchmarks[0]"),
        ("benchmarks[1].requests.successful[0]", "ok", "benchmarks[1]"),
        ("benchmarks[1].requests.successful[1]", "ok", "benchmarks[1]"),
        ("benchmarks[1].requests.errored[0]", "failed", "benchmarks[1]"),
    ]
    assert [(m.load_pattern, m.concurrency) for m in imported.measurements[::3]] == [
        ("concurrent", 1),
        ("concurrent", 2),
    ]


def test_timings_are_seconds_since_the_request_start(imported):
    # benchmarks[1].requests.successful[1].info.timings, Unix seconds as GuideLLM wrote them
    start, first, last, end = (
        1796141604.1311789,
        1796141604.3000352,
        1796141604.5168555,
        1796141604.5180168,
    )
    second = imported.measurements[4]
    assert second.started_at == "2026-12-01T16:13:24.131179+00:00"
    assert second.ttft_s == first - start
    assert second.ttft_s == pytest.approx(0.1688563, abs=1e-6)
    assert second.last_token_s == last - start
    assert second.e2e_s == end - start
    assert (second.prompt_tokens, second.output_tokens) == (35, 8)
    assert second.output_text == "The primary colours are: \n\nRed"
    assert second.request_body.startswith('{"model":"SmolLM2-135M-Instruct","stream":true')
    assert '"text":"Name three primary colours."' in second.request_body


def test_what_guidellm_does_not_keep_stays_absent(imported):
    second = imported.measurements[4]
    assert second.inter_chunk_latencies_s is None  # GuideLLM keeps no per-token times
    assert second.prompt_text is None and second.started_monotonic_s is None
    assert second.request_rate is None  # a concurrent strategy aims at no rate
    assert second.warmup is None and second.measure is None


def test_a_refused_request_is_failed_with_guidellm_s_error_and_no_timings(imported):
    failed = imported.measurements[2]
    assert failed.error.startswith("HTTPStatusError(\"Client error '400 Bad Request'")
    assert failed.started_at == "2026-12-01T16:13:19.761768+00:00"
    assert (failed.ttft_s, failed.e2e_s, failed.output_tokens, failed.output_text) == (
        None,
        None,
        None,
        None,
    )


def _edited(edit) -> object:
    report = fixture_json(REPORT)
    edit(report)
    return lambda: guidellm.parse(as_file("b.json", report))


def _first_timings(report):
    return report["benchmarks"][0]["requests"]["successful"][0]["info"]["timings"]


@pytest.mark.parametrize(
    ("edit", "expected"),
    [
        (
            lambda r: _first_timings(r).update(first_token_iteration=1796141599.0),
            "b.json benchmarks[0].requests.successful[0] → info.timings.first_token_iteration: "
            "1796141599.0 is before request_start",
        ),
        (
            lambda r: _first_timings(r).update(request_start=-1.0),
            "b.json benchmarks[0].requests.successful[0] → info.timings.request_start: "
            "negative (-1.0)",
        ),
        (
            lambda r: _first_timings(r).update(request_end="soon"),
            "b.json benchmarks[0].requests.successful[0] → info.timings.request_end: "
            "expected a number, got text ('soon')",
        ),
        (
            lambda r: r["benchmarks"][1]["requests"]["successful"][0].pop("info"),
            "b.json benchmarks[1].requests.successful[0] → info: missing",
        ),
        (
            lambda r: r["benchmarks"][0]["requests"].update(errored={}),
            "b.json benchmarks[0] → requests.errored: expected a list, got an object",
        ),
        (
            lambda r: r["benchmarks"][0]["requests"]["successful"][1].update(output_tokens=2.5),
            "b.json benchmarks[0].requests.successful[1] → output_tokens: expected a whole number",
        ),
        (
            lambda r: r["metadata"].update(version=1),
            "b.json → metadata.version: GuideLLM report format 1 is not read here",
        ),
        (lambda r: r.pop("benchmarks"), "b.json → benchmarks: missing"),
    ],
)
def test_a_malformed_report_is_refused_naming_file_record_and_field(edit, expected):
    assert expected in problem(_edited(edit))


def test_a_file_that_is_not_a_report_is_refused():
    assert "b.json: the file is empty" in problem(lambda: guidellm.parse(SourceFile("b.json", b"")))
    assert "b.json: not valid JSON" in problem(
        lambda: guidellm.parse(SourceFile("b.json", b'{"metadata": '))
    )
    assert "b.json: expected a JSON object, got a list" in problem(
        lambda: guidellm.parse(SourceFile("b.json", b"[1, 2]"))
    )


def _body(report, benchmark: int, position: int) -> dict:
    """The body of ``benchmarks[i].requests.successful[k]``, inside ``request_args`` (JSON
    text, as GuideLLM stores it); ``_with_body`` writes one back."""
    request = report["benchmarks"][benchmark]["requests"]["successful"][position]
    return json.loads(request["request_args"])["body"]


def _with_body(report, benchmark: int, position: int, body: dict) -> None:
    request = report["benchmarks"][benchmark]["requests"]["successful"][position]
    args = json.loads(request["request_args"])
    request["request_args"] = json.dumps(args | {"body": body})


def test_each_request_s_cap_is_its_body_s_and_no_finish_reason_is_kept(imported):
    # Every successful request's request_args.body holds "max_completion_tokens": 8 (and
    # "ignore_eos": true); the refused requests' request_args are null. GuideLLM keeps no
    # finish reason anywhere in the report.
    raw = fixture(REPORT).data.decode()
    assert raw.count('\\"max_completion_tokens\\":8,') == 4 and "finish_reason" not in raw
    assert [(m.output_cap, m.finish_reason) for m in imported.measurements] == [
        (8, None),
        (8, None),
        (None, None),
    ] * 2


@pytest.mark.parametrize(
    ("caps", "expected"),
    [
        ({"max_tokens": 16}, 16),  # /v1/completions
        ({"max_output_tokens": 32}, 32),  # /v1/responses
        ({"max_tokens": 8, "max_completion_tokens": 8}, 8),
        ({"max_tokens": 16, "max_completion_tokens": 8}, None),  # which one applied is unknown
        ({}, None),
    ],
)
def test_the_cap_is_read_under_each_api_s_name_and_never_chosen_between_two(caps, expected):
    report = fixture_json(REPORT)
    body = _body(report, 0, 0)
    body.pop("max_completion_tokens")
    _with_body(report, 0, 0, body | caps)
    first = guidellm.parse(as_file("b.json", report)).measurements[0]
    assert (first.output_cap, first.finish_reason) == (expected, None)


def test_a_cap_that_is_not_a_positive_count_is_refused():
    report = fixture_json(REPORT)
    _with_body(report, 0, 1, _body(report, 0, 1) | {"max_completion_tokens": 0})
    assert (
        "b.json benchmarks[0].requests.successful[1] → request_args.body.max_completion_tokens: "
        "expected a count ≥ 1, got 0"
    ) in problem(lambda: guidellm.parse(as_file("b.json", report)))


def _render(report, lang: str) -> tuple[str, str]:
    catalog = Catalog(lang, load_strings(packaged_theme()))
    env = html_environment(str(packaged_theme() / "partials"))
    html = str(directive_functions(PageContext(env, catalog, imported=report))["imported_report"]())
    return html, unescape(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html)))


BENCHMARKS = {
    "c1": "[{file: b.json, group: 'benchmarks[0]'}]",
    "c2": "[{file: b.json, group: 'benchmarks[1]'}]",
}


def test_requests_that_reached_their_stated_cap_are_counted_on_the_report(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    report = fixture_json(REPORT)
    # A copy whose benchmarks[0].requests.successful[1] was sent with a cap of 16: its 8
    # output tokens stopped before the cap.
    _with_body(report, 0, 1, _body(report, 0, 1) | {"max_completion_tokens": 16})
    Path("b.json").write_text(json.dumps(report))
    imported = imported_report("guidellm", ["b.json"], BENCHMARKS)
    # Of each benchmark's two successful requests (the refused one states no cap): c1 one
    # at its cap of 8 and one under its cap of 16; c2 both at their cap of 8.
    assert [(r.condition_id, r.truncated, r.truncation_known) for r in imported.rows] == [
        ("c1", 1, 2),
        ("c2", 2, 2),
    ]
    assert imported.shows_truncation and "truncation" not in dict(imported.refused)
    html, text = _render(imported, "en")
    assert 'data-truncated="1"' in html and 'data-truncated="2"' in html
    assert "1 of 2" in text and "2 of 2" in text and "Stopped at the output cap" in text
    _, text = _render(imported, "ja")
    assert "2 件中 1 件" in text and "出力上限で終了" in text


def test_the_real_report_s_requests_all_stopped_at_their_cap(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    Path("b.json").write_bytes(fixture(REPORT).data)
    imported = imported_report("guidellm", ["b.json"], BENCHMARKS)
    # Each of the four answers is 8 tokens long, its request's max_completion_tokens.
    assert [(r.truncated, r.truncation_known) for r in imported.rows] == [(2, 2), (2, 2)]
