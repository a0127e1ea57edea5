"""JSON Schemas of the published data models (the data dictionary)."""

from __future__ import annotations

import json
from pathlib import Path

from pydantic import BaseModel

from sitegen.plan.models import Plan
from sitegen.records.models import Manifest, TrialRecord

SCHEMA_MODELS: dict[str, type[BaseModel]] = {
    "plan": Plan,
    "trial-record": TrialRecord,
    "manifest": Manifest,
}


def schema_files() -> dict[str, bytes]:
    """``<name>.schema.json`` → bytes, deterministic."""
    return {
        f"{name}.schema.json": (
            json.dumps(model.model_json_schema(), ensure_ascii=False, indent=2) + "\n"
        ).encode("utf-8")
        for name, model in SCHEMA_MODELS.items()
    }


def write_json_schemas(out: Path) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for name, data in schema_files().items():
        path = out / name
        path.write_bytes(data)
        written.append(path)
    return written


def field_dictionary(model: type[BaseModel]) -> list[tuple[str, str, str]]:
    """(dotted field path, type, description) for every field, nested models expanded."""
    schema = model.model_json_schema()
    definitions = schema.get("$defs", {})
    rows: list[tuple[str, str, str]] = []

    def resolve(node: dict) -> dict:
        for option in node.get("anyOf", [node]):
            if "$ref" in option:
                return definitions[option["$ref"].rsplit("/", 1)[-1]]
            if option.get("type") == "array" and "$ref" in option.get("items", {}):
                return definitions[option["items"]["$ref"].rsplit("/", 1)[-1]]
        return {}

    def type_name(node: dict) -> str:
        options = node.get("anyOf", [node])
        names = []
        for option in options:
            if "$ref" in option:
                names.append("object")
            elif option.get("type") == "array":
                names.append("array")
            elif "enum" in option or "const" in option:
                values = option.get("enum", [option.get("const")])
                names.append(" | ".join(json.dumps(v, ensure_ascii=False) for v in values))
            else:
                names.append(str(option.get("type", "any")))
        return " | ".join(names)

    def walk(node: dict, prefix: str) -> None:
        for name, prop in node.get("properties", {}).items():
            path = f"{prefix}{name}"
            rows.append((path, type_name(prop), prop.get("description", "")))
            nested = resolve(prop)
            if nested:
                walk(nested, f"{path}{'[]' if _is_array(prop) else ''}.")

    walk(schema, "")
    return rows


def _is_array(prop: dict) -> bool:
    return any(o.get("type") == "array" for o in prop.get("anyOf", [prop]))
