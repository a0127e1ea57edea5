"""A campaign with the hostile corpus (``tests.hostilecorpus``) in every text field a
plan author, an annotator or a model can fill: ``write_hostile_campaign`` places given
texts, ``hostile_site_data`` the whole corpus less what each field refuses (found by
asking the build's reading and validation).
"""

from __future__ import annotations

import json
import shutil
import tempfile
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from sitegen.measure import run_campaign
from sitegen.plan.items import suite_sha256
from sitegen.plan.plan_models import (
    ConditionSpec,
    DocumentSpec,
    InputSpec,
    Plan,
    QualitySpec,
    SpeculativeSpec,
)
from sitegen.records.annotations import ANNOTATIONS_FILE, Annotations
from sitegen.records.campaign import read_campaigns
from sitegen.records.record_models import TrialRecord
from sitegen.validation import validate_campaigns
from tests.conftest import make_plan
from tests.hostilecorpus import (
    FAIL_MARK,
    FIELDS_BY_NAME,
    HOSTILE_FIELDS,
    HostileField,
    field_payload_names,
    field_text,
)
from tests.sitefixtures import (
    PUBLISHED_ENGINE,
    read_records,
    register_engine,
    write_records,
)

QUALITY_TEMPLATES = ["arithmetic.change", "units.achievement", "logic.order"]


def hostile_base_plan() -> Plan:
    """Speed inputs (one of them failing on the ``on`` condition) and a small quality
    evaluation, so every report page exists: summary, speed, quality, examples, method,
    data."""
    draft = QualitySpec(
        suite_id="t",
        per_template=1,
        suite_seed=3,
        templates=QUALITY_TEMPLATES,
        suite_sha256="0" * 64,
        documents=[DocumentSpec(task_id="doc", n_records=5, seed=2, max_output_tokens=32)],
        seeds=1,
        max_output_tokens=32,
        off_condition="off",
        on_condition="on",
        bootstrap_resamples=200,
    )
    quality = draft.model_copy(update={"suite_sha256": suite_sha256(draft)})
    plan = make_plan()
    inputs = [
        *plan.inputs,
        InputSpec(id="hostile", text=f"benign input\n{FAIL_MARK}", max_output_tokens=16),
    ]
    conditions = [
        ConditionSpec(id="off", context_capacity=512),
        ConditionSpec(
            id="on",
            speculative=SpeculativeSpec(mode="ngram-simple", draft_max=4),
            context_capacity=512,
            engine_options={"fail_input": FAIL_MARK},
        ),
    ]
    return make_plan(inputs=inputs, conditions=conditions, quality=quality, repetitions=2)


def hostile_base_annotations() -> dict:
    return {
        "review": "automated",
        "reviewer": "sitegen scorer",
        "curated_examples": [
            {"trial_id": "off/hostile/r0", "reason": {"ja": "選んだ回答", "en": "a chosen answer"}}
        ],
        "post_hoc": [
            {
                "label": "no-logic",
                "exclude_templates": ["logic.order"],
                "added_at": "2999-01-01",
                "reason": {"ja": "曖昧なテンプレート", "en": "an ambiguous template"},
            }
        ],
        "thresholds": [{"condition_id": "off", "above": 10.0}],
    }


def _place(target: Any, spec: HostileField, value: str) -> None:
    *parents, leaf = spec.path
    for key in parents:
        target = target[key]
    if spec.as_key:
        target[leaf][value] = "1"
    else:
        target[leaf] = value


def _apply(target: Any, where: str, values: Mapping[str, str], record: bool = False) -> None:
    for name, value in values.items():
        spec = FIELDS_BY_NAME[name]
        if spec.where != where:
            continue
        if record and spec.only_failed and target.get("status") != "failed":
            continue
        _place(target, spec, value)


def write_hostile_campaign(data_dir: Path, values: Mapping[str, str]) -> Path:
    """Measure the hostile base plan on the fake engine into ``data_dir`` with ``values``
    (field name → text) in their fields; returns the campaign directory."""
    plan_data = hostile_base_plan().model_dump()
    _apply(plan_data, "plan", values)
    plan = Plan.model_validate(plan_data)
    return _finish_campaign(run_campaign(plan, data_dir).directory, values)


def _finish_campaign(directory: Path, values: Mapping[str, str]) -> Path:
    """Relabel the records as a real engine's, then put ``values`` into the records, the
    annotations and the directory's name."""
    path = directory / "records.jsonl"
    records = read_records(path)
    for record in records:
        record["provenance"]["engine"]["id"] = PUBLISHED_ENGINE
        _apply(record, "record", values, record=True)
    write_records(path, records)
    directory = register_engine(directory, PUBLISHED_ENGINE)
    annotations = hostile_base_annotations()
    _apply(annotations, "annotations", values)
    (directory / ANNOTATIONS_FILE).write_text(
        yaml.safe_dump(annotations, allow_unicode=True), encoding="utf-8"
    )
    if "directory" in values:
        renamed = directory.with_name(f"{values['directory']}-{directory.name.rsplit('-', 1)[1]}")
        directory = directory.rename(renamed)
    return directory


class _Prober:
    """Asks the build's reading and validation what they say about a campaign with some
    fields filled; re-measures only when a plan field changes (records, annotations and
    the directory's name are rewritten in a copy of a measured campaign)."""

    def __init__(self, workdir: Path) -> None:
        self.workdir = workdir
        self.base = write_hostile_campaign(workdir / "base", {})
        self.samples = {
            "plan": json.loads((self.base / "plan.json").read_text(encoding="utf-8")),
            "record": read_records(self.base / "records.jsonl")[0],
            "annotations": hostile_base_annotations(),
        }
        self.probes = 0

    def issues(self, values: Mapping[str, str]) -> list[str]:
        """An exception while writing the campaign, or the issues found reading it."""
        return self.probe(values)[0]

    def probe(self, values: Mapping[str, str]) -> tuple[list[str], bool]:
        """``issues``, and whether they are an exception's (which ends the writing at the
        first field it refuses: the others are not checked)."""
        self.probes += 1
        data_dir = self.workdir / f"probe-{self.probes}"
        try:
            if any(FIELDS_BY_NAME[f].where == "plan" for f in values):
                write_hostile_campaign(data_dir, values)
            else:
                copy = data_dir / "campaigns" / self.base.name
                shutil.copytree(self.base, copy)
                _finish_campaign(copy, values)
        except Exception as exc:  # noqa: BLE001 - any refusal is a result
            return [f"{type(exc).__name__}: {' '.join(str(exc).split())[:500]}"], True
        campaigns, issues = read_campaigns(data_dir)
        issues += validate_campaigns(campaigns)
        shutil.rmtree(data_dir, ignore_errors=True)
        where = str(data_dir)
        return [
            " ".join(str(issue).replace(where, "<data>").split())[:500] for issue in issues
        ], False

    def model_refusal(self, field: str, value: str) -> str | None:
        """Why the field's own model refuses ``value`` (``None``: it takes it)."""
        spec = FIELDS_BY_NAME[field]
        if spec.where == "directory":
            too_long = len(f"{value}-000000000000".encode()) > 255
            return "not a file name" if "/" in value or "\x00" in value or too_long else None
        model = {"plan": Plan, "record": TrialRecord, "annotations": Annotations}[spec.where]
        data = json.loads(json.dumps(self.samples[spec.where]))
        if spec.only_failed:
            data["status"] = "failed"
        _place(data, spec, value)
        try:
            model.model_validate(data)
        except ValidationError as exc:
            return " ".join(str(exc).split())[:300]
        return None


@dataclass
class HostileData:
    """A campaign with the corpus in every field that takes it."""

    directory: Path
    placed: dict[str, list[str]]
    """Field → the payloads it holds."""
    refused: dict[str, dict[str, str]]
    """Field → payload → why the field's model or the build's validation refused it."""
    probes: int = 0
    """Campaigns written to find the refusals."""

    @property
    def placements(self) -> int:
        return sum(len(names) for names in self.placed.values())


PLAIN_TEXT = "plain text"
"""What a field that refuses every payload is tried with: refusing it too, the field takes
no free text at all (an id, a reference, a date)."""


def hostile_site_data(data_dir: Path) -> HostileData:
    """Write into ``data_dir`` one campaign with the whole corpus in every field, less
    the payloads a field refuses (found with the field's own model first, then with the
    build's reading and validation); the refusals are part of the result."""
    with tempfile.TemporaryDirectory(prefix="sitegen-hostile-") as tmp:
        prober = _Prober(Path(tmp))
        if issues := prober.issues({}):
            raise AssertionError("the hostile base campaign is invalid:\n" + "\n".join(issues))
        placed: dict[str, list[str]] = {}
        refused: dict[str, dict[str, str]] = {f.name: {} for f in HOSTILE_FIELDS}
        separators = {f.name: "\n\n" for f in HOSTILE_FIELDS}

        def values(fields: Iterable[str]) -> dict[str, str]:
            return {f: field_text(f, placed[f], separators[f]) for f in fields if placed[f]}

        for spec in HOSTILE_FIELDS:  # the fields' own models: cheap, one payload at a time
            field = spec.name
            names = field_payload_names(field)

            def model_accepts(chosen: list[str], separator: str, field: str = field) -> bool:
                text = field_text(field, chosen, separator)
                return prober.model_refusal(field, text) is None

            if model_accepts(names, "\n\n"):
                placed[field] = names
                continue
            accepted = []
            for name in names:
                if why := prober.model_refusal(field, field_text(field, [name])):
                    refused[field][name] = why
                else:
                    accepted.append(name)
            placed[field], separators[field] = _largest_accepted(
                accepted, model_accepts, refused[field]
            )
        # The build's validation: first the fields its issues name (by a tag or a path),
        # then, if issues remain, every field.
        for round_ in ("named", "every"):
            if not (issues := prober.issues(values(placed))):
                break
            candidates = [f for f in placed if placed[f]]
            if round_ == "named":
                candidates = [f for f in candidates if _named_in(f, issues)]
            refusing = [field for field in candidates if prober.issues(values([field]))]
            _drop_refused(prober, refusing, placed, separators, refused)
        else:
            if issues := prober.issues(values(placed)):
                raise AssertionError("the hostile campaign is invalid:\n" + "\n".join(issues))
        directory = write_hostile_campaign(data_dir, values(placed))
        return HostileData(
            directory, placed, {f: r for f, r in refused.items() if r}, prober.probes
        )


def _named_in(field: str, issues: list[str]) -> bool:
    spec = FIELDS_BY_NAME[field]
    path = ".".join(str(key) for key in spec.path)
    return any(f"{field}." in issue or (path and path in issue) for issue in issues)


def _drop_refused(
    prober: _Prober,
    fields: list[str],
    placed: dict[str, list[str]],
    separators: dict[str, str],
    refused: dict[str, dict[str, str]],
) -> None:
    """Take out of each of ``fields`` what the build refuses: everything if it refuses
    plain text too, else each payload it refuses alone, then what it refuses together."""
    searched = []
    for field in fields:
        if plain := prober.issues({field: field_text_plain(field)}):
            reason = f"refuses any free text: {plain[0]}"
            refused[field].update(dict.fromkeys(placed[field], reason))
            placed[field] = []
        else:
            searched.append(field)
    for field, names in _refusing_payloads(
        prober, {field: placed[field] for field in searched}, refused
    ).items():
        for name in names:
            placed[field].remove(name)
    for field in searched:

        def build_accepts(chosen: list[str], separator: str, field: str = field) -> bool:
            return not prober.issues(
                {field: field_text(field, chosen, separator)} if chosen else {}
            )

        # Alone: what the bisection found together with other fields is checked here.
        placed[field], separators[field] = _largest_accepted(
            placed[field], build_accepts, refused[field]
        )


def field_text_plain(field: str) -> str:
    """``PLAIN_TEXT`` as ``field`` would hold it (with its prefix and suffix)."""
    spec = FIELDS_BY_NAME[field]
    return "unit-plain" if spec.where == "directory" else spec.prefix + PLAIN_TEXT + spec.suffix


def _refusing_payloads(
    prober: _Prober, groups: dict[str, list[str]], refused: dict[str, dict[str, str]]
) -> dict[str, list[str]]:
    """The payloads of each field's ``groups`` entry the build refuses on their own in it
    (bisection); records why in ``refused``. The fields are searched side by side, one
    group of each in one campaign, as long as the build's issues name a single field each
    (``_probe_side_by_side``)."""
    found: dict[str, list[str]] = {field: [] for field in groups}
    pending = [(field, names) for field, names in groups.items() if names]
    while pending:
        batch: dict[str, list[str]] = {}
        later = []
        for field, names in pending:
            if field in batch:
                later.append((field, names))
            else:
                batch[field] = names
        pending = later
        for field, issues in _probe_side_by_side(prober, batch).items():
            names = batch[field]
            if not issues:
                continue
            if len(names) == 1:
                refused[field][names[0]] = issues[0]
                found[field].append(names[0])
            else:
                half = len(names) // 2
                pending += [(field, names[:half]), (field, names[half:])]
    return found


def _probe_side_by_side(prober: _Prober, batch: dict[str, list[str]]) -> dict[str, list[str]]:
    """The build's issues with each field of ``batch`` holding its payloads: one campaign
    for all when its issues each name exactly one of them (an exception or an issue naming
    none or several could hide another field's: then one campaign per field)."""
    texts = {field: field_text(field, names) for field, names in batch.items()}
    if len(batch) > 1:
        issues, raised = prober.probe(texts)
        owners = [[f for f in batch if _named_in(f, [issue])] for issue in issues]
        if not raised and all(len(named) == 1 for named in owners):
            by_field: dict[str, list[str]] = {field: [] for field in batch}
            for issue, (field,) in zip(issues, owners, strict=True):
                by_field[field].append(issue)
            return by_field
    return {field: prober.issues({field: text}) for field, text in texts.items()}


def _largest_accepted(
    names: list[str], accepts: Callable[[list[str], str], bool], refused: dict[str, str]
) -> tuple[list[str], str]:
    """``names`` and their separator if accepted together (one paragraph each, else on one
    line); otherwise the longest run from the start that is, the rest recorded as refused
    together."""
    for separator in ("\n\n", " "):
        if not names or accepts(names, separator):
            return names, separator
    chosen: list[str] = []
    for name in names:
        if accepts([*chosen, name], " "):
            chosen.append(name)
        else:
            refused[name] = "refused together with the payloads before it (a length limit?)"
    return chosen, " "
