"""Reading ``DECL.yaml`` and mapping each imported source group to its declared condition
(the declaration's models: ``records.import_declaration``)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from pydantic import ValidationError

from sitegen.core.errors import DataError, Issue, pydantic_issues
from sitegen.plan.plan_file import read_config_file
from sitegen.records.import_declaration import (
    ConditionDecl,
    ImportDeclaration,
    SourceGroup,
    describe_group,
)
from sitegen.records.import_source import ImportedSource


def parse_declaration(raw: object, where: str) -> ImportDeclaration:
    """The declaration in ``raw`` (parsed YAML, TOML or JSON); every problem is one line
    naming ``where`` and the field."""
    try:
        return ImportDeclaration.model_validate(raw)
    except ValidationError as exc:
        raise DataError(pydantic_issues(exc, where)) from exc


def load_declaration(path: Path) -> ImportDeclaration:
    """Read ``DECL.yaml`` (YAML, or TOML/JSON by suffix) into a declaration. YAML is read as
    plans are, with only ``true``/``false`` as booleans, so ``mode: off`` stays ``off``."""
    return parse_declaration(read_config_file(path, "import declaration"), str(path))


def assign_conditions(
    declaration: ImportDeclaration, sources: Sequence[ImportedSource], where: str
) -> dict[SourceGroup, ConditionDecl]:
    """Each source group of the imported files → its declared condition. A file holding one
    group maps without naming it (a GuideLLM report of one benchmark). Refused, with one
    line per problem: a group no condition names (with the YAML that would name it), a
    declared group no file holds, and a whole file declared where the file holds several
    groups."""
    present: dict[str, set[str | None]] = {}
    for source in sources:
        groups = present.setdefault(source.source.file, set())
        groups.update(measurement.group for measurement in source.measurements)
    declared = {
        SourceGroup(ref.file, ref.group): condition
        for condition in declaration.conditions
        for ref in condition.sources
    }

    def condition_of(key: SourceGroup) -> ConditionDecl | None:
        if key in declared:
            return declared[key]
        if len(present.get(key.file, ())) == 1:  # the file's one group, named or not
            return declared.get(SourceGroup(key.file, None))
        return None

    issues = []
    for file, groups in present.items():
        for group in sorted(groups, key=str):
            key = SourceGroup(file, group)
            if condition_of(key) is None:
                issues.append(
                    Issue(
                        f"{where} → conditions",
                        f"{describe_group(key)} is in no condition's sources: declare which "
                        "condition it is (the import does not guess); add to that "
                        f"condition's sources: {_yaml(key)}",
                    )
                )
    for key, condition in declared.items():
        held = present.get(key.file)
        one_group = key.group is None and held is not None and len(held) == 1
        if held is None or (key.group not in held and not one_group):
            if held is None:
                why = "no such file was imported"
            elif held == {None}:
                why = "the file is one group: name no group"
            else:
                why = f"the file holds groups {', '.join(sorted(map(str, held)))}"
            issues.append(
                Issue(
                    f"{where} → conditions.{condition.id}.sources",
                    f"{describe_group(key)} is not among the imported sources: {why}",
                )
            )
    if issues:
        raise DataError(issues)
    assigned = {}
    for file, groups in present.items():
        for group in groups:
            of_group = condition_of(SourceGroup(file, group))
            assert of_group is not None  # refused above
            assigned[SourceGroup(file, group)] = of_group
    return assigned


def _yaml(key: SourceGroup) -> str:
    """The source entry naming ``key``, as one line of YAML (JSON quoting is YAML's)."""
    entry = f"file: {json.dumps(key.file, ensure_ascii=False)}"
    if key.group is not None and len(key.group) > 200:  # a broken file's value, not a name
        entry += f", group: <{len(key.group)} characters>"
    elif key.group is not None:
        entry += f", group: {json.dumps(key.group, ensure_ascii=False)}"
    return f"- {{{entry}}}"
