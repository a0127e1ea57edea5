"""Publishable campaigns without a model: plans for the fake engine, its campaigns
relabelled as a real engine's, the demo project to copy, records rewritten and re-signed.

The fake engine's records are relabelled as a real engine's (the build refuses the
fake engine), so site tests run in seconds and need no model file. ``HOSTILE_TEXTS`` is
the small corpus of hostile model outputs the site tests have always used (the large one:
``tests.hostilecorpus``).
"""

from __future__ import annotations

import json
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path
from unittest import mock

from sitegen.core.project import packaged_content
from sitegen.measure import run_campaign
from sitegen.plan.plan_file import campaign_id, canonical_plan_json, plan_sha256
from sitegen.plan.plan_models import (
    ConditionSpec,
    InputSpec,
    Plan,
    SamplingOverride,
    SpeculativeSpec,
)
from sitegen.records.layout import (
    CAMPAIGNS_DIR,
    MANIFEST_FILE,
    PLAN_FILE,
    RECORDS_FILE,
    REGISTRY_FILE,
    sha256_file,
)
from sitegen.records.record_models import ArtifactEntry, Manifest
from sitegen.records.registrations import find_campaign
from tests.conftest import make_plan

PROJECT = Path(__file__).resolve().parents[1]
PUBLISHED_ENGINE = "llamacpp-embedded"

HOSTILE_TEXTS: dict[str, str] = {
    "script": "<script>alert('script')</script>",
    "breakout": "</script><script>alert('breakout')</script><!--",
    "json_breakout": '"}]}</script><script>alert("json")</script>\u2028\u2029',
    "event_handlers": (
        '<img src=x onerror=alert("onerror")><svg onload=alert("onload")>'
        '<details open ontoggle=alert("ontoggle")><summary>x</summary></details>'
        "<body onload=alert('body')>"
    ),
    "attribute_breakout": "\" autofocus onfocus=alert('attr') x=\"' onmouseover=alert(1) '",
    "javascript_links": (
        "<a href=\"javascript:alert('link')\">click</a> [md](javascript:alert('md')) "
        "<javascript:alert('autolink')> [data](data:text/html,<script>alert(1)</script>)"
    ),
    "markdown": (
        "# not a heading\n\n* not a list\n\n```\nnot code\n```\n\n"
        '<div markdown="1">**not bold**</div>\n\n| a | b |\n|---|---|\n| 1 | 2 |\n'
    ),
    "markdown_placeholder": "\x02wzxhzdk:0\x03 \x02klzzwxh:0\x03",
    "jinja": "{{ 7 * 7 }} {% raw %}{{ raw }}{% endraw %} {{ ''.__class__.__mro__ }} {# c #}",
    "long_line": "A" * 100_000,
    "bidi": "file\u202etxt.exe\u202c \u2066isolate\u2069 \u200fRTL mark",
    "control": "nul\x00bell\x07esc\x1b[31mred\x1b[0m vt\x0b ff\x0c del\x7f",
}
"""Model outputs that must stay inert text wherever the site shows them."""

HOSTILE_INPUT_TEXT = "\n".join(HOSTILE_TEXTS.values())
"""The plan's input text (prompts are untrusted too)."""


def sweep_condition(
    cid: str, spec: SpeculativeSpec, temperature: float = 0.0, users: int = 1
) -> ConditionSpec:
    """A fake-engine condition of a sweep: speculation, temperature and concurrency."""
    return ConditionSpec(
        id=cid,
        speculative=spec,
        context_capacity=512,
        sampling=SamplingOverride(temperature=temperature),
        concurrency=users,
    )


def sweep_plan(concurrency: bool = False, **overrides) -> Plan:
    """Draft length 2/4 × temperature 0/0.7 with matched baselines on the fake engine;
    ``concurrency`` adds off and ≤4 at temperature 0 with 2 and 4 users."""
    off = SpeculativeSpec()
    levels = [
        ("off", off),
        ("ng2", SpeculativeSpec(mode="ngram-simple", draft_max=2)),
        ("ng4", SpeculativeSpec(mode="ngram-simple", draft_max=4)),
    ]
    conditions = [
        sweep_condition(f"{name}-t{t:g}", spec, t) for t in (0.0, 0.7) for name, spec in levels
    ]
    if concurrency:
        conditions += [
            sweep_condition(f"{name}-t0-c{users}", spec, 0.0, users)
            for users in (2, 4)
            for name, spec in (levels[0], levels[2])
        ]
    fields = dict(
        name="sweep",
        title={"ja": "掃引の単体テスト", "en": "Sweep unit test"},
        conditions=conditions,
        inputs=[InputSpec(id="q", text="question", max_output_tokens=12)],
        repetitions=4,
    )
    return make_plan(**(fields | overrides))


def hostile_plan() -> Plan:
    """The unit plan plus an input whose text is the whole corpus; one condition fails on
    that input so the corpus also lands in ``failure_reason``."""
    plan = make_plan()
    inputs = [*plan.inputs, InputSpec(id="hostile", text=HOSTILE_INPUT_TEXT, max_output_tokens=16)]
    conditions = [
        ConditionSpec(id="off", context_capacity=512),
        ConditionSpec(
            id="on",
            speculative=SpeculativeSpec(mode="ngram-simple", draft_max=4),
            context_capacity=512,
            engine_options={"fail_input": "nul\x00bell"},
        ),
    ]
    return make_plan(inputs=inputs, conditions=conditions)


def publishable_campaign(
    data_dir: Path,
    plan: Plan | None = None,
    hostile: bool = False,
    mutate: Callable[[dict], None] | None = None,
) -> Path:
    """Run ``plan`` (default: the unit plan; ``hostile``: the hostile plan) on the fake
    engine into ``data_dir`` and relabel its records as a real engine's (then ``mutate``
    each record, when given); returns the records file."""
    plan = plan or (hostile_plan() if hostile else make_plan())
    key = (canonical_plan_json(plan), hostile)
    fresh = find_campaign(data_dir / CAMPAIGNS_DIR, plan) is None
    if mutate is None and fresh and key in _PUBLISHABLE_BY_PLAN:
        # The same campaign byte for byte as relabelling it again would make.
        kept = _PUBLISHABLE_BY_PLAN[key]
        directory = data_dir / CAMPAIGNS_DIR / kept.name
        shutil.copytree(kept, directory)
        return directory / RECORDS_FILE
    path = _fake_engine_campaign(plan, data_dir) / RECORDS_FILE
    records = read_records(path)
    corpus = list(HOSTILE_TEXTS.values())
    for index, record in enumerate(records):
        record["provenance"]["engine"]["id"] = PUBLISHED_ENGINE
        if hostile:
            record["text"] = corpus[index % len(corpus)]
            record["reasoning_text"] = corpus[(index + 1) % len(corpus)]
            if record["status"] == "failed":
                record["failure_reason"] = corpus[(index + 2) % len(corpus)]
        if mutate:
            mutate(record)
    write_records(path, records)
    directory = register_engine(path.parent, records[0]["provenance"]["engine"]["id"])
    if mutate is None and fresh:
        kept = Path(_MEASURED.name) / "publishable" / str(len(_PUBLISHABLE_BY_PLAN))
        _PUBLISHABLE_BY_PLAN[key] = kept / directory.name
        shutil.copytree(directory, kept / directory.name)
    return directory / RECORDS_FILE


_MEASURED = tempfile.TemporaryDirectory(prefix="sitegen-tests-measured-")
"""The fake engine's campaigns ``publishable_campaign`` ran in this test process, as
they were measured (removed when the process ends)."""
_MEASURED_BY_PLAN: dict[str, Path] = {}
"""Each of those campaigns by its plan (``canonical_plan_json``)."""
_PUBLISHABLE_BY_PLAN: dict[tuple[str, bool], Path] = {}
"""The campaigns ``publishable_campaign`` made of them without ``mutate``, relabelled, by
plan and ``hostile``: copied again instead of relabelled again."""


def _fake_engine_campaign(plan: Plan, data_dir: Path) -> Path:
    """``plan`` measured on the fake engine into ``data_dir``; returns the campaign's
    directory. A plan this process measured before is copied from that run, the same
    campaign byte for byte (measuring took a twentieth of the fast tests' time), except
    where ``data_dir`` holds the campaign already: that is resumed, as ``sitegen measure``
    would."""
    key = canonical_plan_json(plan)
    fresh = find_campaign(data_dir / CAMPAIGNS_DIR, plan) is None
    if key in _MEASURED_BY_PLAN and fresh:
        directory = data_dir / CAMPAIGNS_DIR / _MEASURED_BY_PLAN[key].name
        shutil.copytree(_MEASURED_BY_PLAN[key], directory)
        return directory
    # No fsync: it makes a record survive a power cut, which no test of a site needs (the
    # store's own tests keep it).
    with mock.patch("os.fsync"):
        directory = run_campaign(plan, data_dir).directory
    if fresh:
        measured = Path(_MEASURED.name) / str(len(_MEASURED_BY_PLAN)) / directory.name
        _MEASURED_BY_PLAN[key] = measured
        shutil.copytree(directory, measured)
    return directory


def register_engine(directory: Path, engine: str) -> Path:
    """The fake engine's campaign as if its plan had named ``engine``, the engine its
    records were relabelled as (C-ENGINE): plan.json, the directory's hash, the records'
    plan hash and the manifest follow, the registration time kept (test data only: a
    plan is never changed after measuring). Returns the campaign directory."""
    plan_data = json.loads((directory / PLAN_FILE).read_text(encoding="utf-8"))
    if plan_data["engine"] == engine:
        return directory
    plan = Plan.model_validate({**plan_data, "engine": engine})
    registered = directory.with_name(campaign_id(plan))
    directory.rename(registered)
    reregister(directory.name, registered, plan)
    (registered / PLAN_FILE).write_text(canonical_plan_json(plan), encoding="utf-8")
    records = read_records(registered / RECORDS_FILE)
    for record in records:
        record.update(campaign_id=campaign_id(plan), plan_sha256=plan_sha256(plan))
    manifest_path = registered / MANIFEST_FILE
    manifest = Manifest.model_validate_json(manifest_path.read_bytes())
    relabelled = manifest.model_copy(
        update={
            "campaign_id": campaign_id(plan),
            "plan_sha256": plan_sha256(plan),
            "registration_nonce": None,
        }
    )
    manifest_path.write_text(relabelled.model_dump_json(indent=2) + "\n", encoding="utf-8")
    write_records(registered / RECORDS_FILE, records)
    return registered


def reregister(earlier: str, directory: Path, plan: Plan) -> None:
    """The data directory's registry (``registry.jsonl``) as if ``directory`` had been
    registered for ``plan`` in place of the campaign ``earlier`` (test data only, like the
    relabelled campaign itself: otherwise the site would list ``earlier`` as discarded)."""
    registry = directory.parents[1] / REGISTRY_FILE
    if not registry.is_file():
        return
    lines = []
    for line in registry.read_text(encoding="utf-8").splitlines():
        entry = json.loads(line)
        if entry["campaign_id"] == earlier:
            entry.update(
                campaign_id=directory.name, plan_name=plan.name, plan_sha256=plan_sha256(plan)
            )
        lines.append(json.dumps(entry) + "\n")
    registry.write_text("".join(lines), encoding="utf-8")


def copy_project(target: Path) -> Path:
    """A copy of the demo project (what a project holds: ``mkdocs.yml``, ``content/`` and
    ``theme/``, its logo and labels; the templates and pages are sitegen's packaged ones),
    to add things to or break."""
    shutil.copytree(PROJECT / "content", target / "content")
    shutil.copytree(PROJECT / "theme", target / "theme")
    shutil.copy(PROJECT / "mkdocs.yml", target / "mkdocs.yml")
    return target


def project_page(project: Path, page: str) -> Path:
    """The project's own ``content/<lang>/…md`` (``page`` from the language on), made from
    the packaged page on first use: an author changes a page by copying it into the project."""
    path = project / "content" / page
    if not path.is_file():
        path.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(packaged_content() / page, path)
    return path


def write_records(path: Path, records: list[dict]) -> None:
    """Write a campaign's records and sign them, as the host that measured them would
    have (the build refuses records that do not match their manifest)."""
    # ASCII escapes, like the store's own JSON of non-ASCII control characters.
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    resign(path.parent)


def resign(directory: Path) -> None:
    """Rewrite ``manifest.json`` to match the files as they are now (test data only:
    ``sitegen measure`` never signs what it did not write)."""
    manifest_path = directory / MANIFEST_FILE
    if not manifest_path.is_file():
        return
    manifest = Manifest.model_validate_json(manifest_path.read_bytes())
    artifacts = [
        ArtifactEntry(
            path=entry.path,
            sha256=sha256_file(directory / entry.path),
            size_bytes=(directory / entry.path).stat().st_size,
        )
        for entry in manifest.artifacts
    ]
    lines = (directory / RECORDS_FILE).read_bytes().split(b"\n")
    signed = manifest.model_copy(
        update={
            "artifacts": artifacts,
            "record_count": sum(1 for line in lines if line.strip()),
            "pending_record_sha256": None,
        }
    )
    manifest_path.write_text(signed.model_dump_json(indent=2) + "\n", encoding="utf-8")


def read_records(path: Path) -> list[dict]:
    lines = path.read_text(encoding="utf-8").split("\n")
    return [json.loads(line) for line in lines if line]


def report_address(campaign_dir: Path) -> str:
    """The report's folder under ``reports/``: its plan's name."""
    return json.loads((campaign_dir / "plan.json").read_text(encoding="utf-8"))["name"]
