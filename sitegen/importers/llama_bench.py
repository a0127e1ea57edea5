"""llama.cpp's ``llama-bench -o json`` (one array) or ``-o jsonl`` (one test per line).

Each test entry is one configuration running one test, named as llama-bench prints it:
``pp512`` (processing a 512-token prompt), ``tg128`` (generating 128 tokens),
``pp512+tg128``, with `` @ d<n>`` after a context depth. Each repetition
(``samples_ns[k]``, ``samples_ts[k]``) is one measurement. The file's configurations
(every setting except the test's own fields) are its groups, named by the settings that
differ between them (``n_threads=2``); a file of one configuration is one group. Settings
that no configuration changes are kept as ``SourceInfo.stated``. ``model_filename`` is
kept as its last path part only: llama-bench writes the host path it was given.
"""

from __future__ import annotations

import json
from pathlib import PurePath

from sitegen.importers.reading import (
    Reader,
    SourceFile,
    check_count,
    check_number,
    decode_text,
    file_digest,
    json_lines,
    load_json,
    malformed,
    measurement,
)
from sitegen.records.import_source import ImportedMeasurement, ImportedSource, SourceInfo

TEST_FIELDS = frozenset(
    {"n_prompt", "n_gen", "n_depth", "test_time", "avg_ns", "stddev_ns", "avg_ts", "stddev_ts"}
    | {"samples_ns", "samples_ts"}
)
"""The fields of one test run; every other field is a setting of its configuration."""


def parse(file: SourceFile) -> ImportedSource:
    if decode_text(file).lstrip().startswith("["):
        document = Reader(file, None, load_json(file))
        entries = [Reader(file, f"[{index}]", value) for index, value in enumerate(document.value)]
    else:
        entries = [Reader(file, f"line {number}", value) for number, value in json_lines(file)]
    if not entries:
        raise malformed(file, None, None, "no tests: llama-bench wrote none")
    settings = [_settings(entry) for entry in entries]
    keys = list(dict.fromkeys(key for setting in settings for key in setting))
    varying = [key for key in keys if len({s.get(key) for s in settings}) > 1]
    constant = {key: value for key, value in settings[0].items() if key not in varying}
    measurements = []
    for entry, setting in zip(entries, settings, strict=True):
        group = ", ".join(f"{key}={setting.get(key, '(none)')}" for key in varying) or None
        measurements += _repetitions(entry, group)
    commit, number = constant.get("build_commit"), constant.get("build_number")
    sha256, size = file_digest(file)
    return ImportedSource(
        source=SourceInfo(
            format="llama-bench",
            tool="llama-bench",
            # llama.cpp prints its version as "<build number> (<commit>)".
            tool_version=f"{number} ({commit})" if commit and number else None,
            file=file.name,
            sha256=sha256,
            size_bytes=size,
            model=constant.get("model_filename"),
            backend=constant.get("backends"),
            stated=constant,
        ),
        measurements=measurements,
    )


def _settings(entry: Reader) -> dict[str, str]:
    """The entry's configuration as text, in the file's order."""
    if not isinstance(entry.value, dict):
        raise entry.error(None, "expected a JSON object (one llama-bench test)")
    settings = {}
    for key, value in entry.value.items():
        if key in TEST_FIELDS or value is None:
            continue
        text = value if isinstance(value, str) else json.dumps(value)
        settings[key] = PurePath(text).name if key == "model_filename" else text
    return settings


def _repetitions(entry: Reader, group: str | None) -> list[ImportedMeasurement]:
    n_prompt = entry.count("n_prompt", required=True)
    n_gen = entry.count("n_gen", required=True)
    n_depth = entry.count("n_depth")
    parts = [f"pp{n_prompt}"] if n_prompt else []
    parts += [f"tg{n_gen}"] if n_gen else []
    if not parts:
        raise entry.error("n_prompt", "0, and n_gen is 0: the entry names no test")
    label = "+".join(parts) + (f" @ d{n_depth}" if n_depth else "")
    samples_ns, samples_ts = entry.items("samples_ns"), entry.items("samples_ts")
    if len(samples_ns) != len(samples_ts):
        raise entry.error(
            "samples_ts", f"{len(samples_ts)} entries, but samples_ns has {len(samples_ns)}"
        )
    # "[1].samples_ts[2]" in a JSON array, "line 2, samples_ts[2]" in JSON Lines
    where = "." if (entry.record or "").startswith("[") else ", "
    return [
        measurement(
            Reader(entry.file, f"{entry.record}{where}samples_ts[{k}]", None),
            status="ok",
            group=group,
            measure=label,
            prompt_tokens=n_prompt,
            output_tokens=n_gen,
            tokens_per_s=check_number(entry, f"samples_ts[{k}]", ts),
            duration_s=check_count(entry, f"samples_ns[{k}]", ns) / 1e9,
        )
        for k, (ns, ts) in enumerate(zip(samples_ns, samples_ts, strict=True))
    ]
