"""The base of every published data model.

Field docstrings are the data dictionary: they become the fields' descriptions in the JSON
Schemas the site publishes. They are read from the models' source when a schema is made,
each module parsed once (pydantic's ``use_attribute_docstrings`` reads them as each class
is created, which every start of sitegen would pay for every model).
"""

from __future__ import annotations

import ast
import inspect
import sys
from functools import cache
from typing import Any

from pydantic import BaseModel, ConfigDict


def describe_fields(schema: dict[str, Any], model: type[BaseModel]) -> None:
    """``json_schema_extra`` of every model: each property's description is its field's
    docstring."""
    docstrings = field_docstrings(model)
    for name, field_schema in schema.get("properties", {}).items():
        if name in docstrings:
            field_schema.setdefault("description", docstrings[name])


class StrictModel(BaseModel):
    """Frozen, unknown fields forbidden, docstrings become field descriptions."""

    model_config = ConfigDict(extra="forbid", frozen=True, json_schema_extra=describe_fields)


def field_docstrings(model: type[BaseModel]) -> dict[str, str]:
    """Each documented field of ``model`` with its docstring (the string right below its
    annotation, in the class that declares it or the nearest base class that does)."""
    found: dict[str, str] = {}
    for cls in reversed(model.__mro__):
        if issubclass(cls, BaseModel) and cls is not BaseModel:
            found.update(_class_docstrings(cls.__module__).get(cls.__qualname__, {}))
    return {name: doc for name, doc in found.items() if name in model.model_fields}


@cache
def _class_docstrings(module_name: str) -> dict[str, dict[str, str]]:
    """Field docstrings of every class of a module, by qualified name (the module's
    source parsed once)."""
    try:
        source = inspect.getsource(sys.modules[module_name])
    except (KeyError, OSError, TypeError):  # built in, or run without its source
        return {}
    classes: dict[str, dict[str, str]] = {}

    def visit(body: list[ast.stmt], prefix: str) -> None:
        for node in body:
            if isinstance(node, ast.ClassDef):
                classes[prefix + node.name] = _docstrings(node.body)
                visit(node.body, f"{prefix}{node.name}.")

    visit(ast.parse(source).body, "")
    return classes


def _docstrings(body: list[ast.stmt]) -> dict[str, str]:
    """``name: type`` statements followed by a string, in a class body."""
    return {
        field.target.id: inspect.cleandoc(doc.value.value)
        for field, doc in zip(body, body[1:], strict=False)
        if isinstance(field, ast.AnnAssign)
        and isinstance(field.target, ast.Name)
        and isinstance(doc, ast.Expr)
        and isinstance(doc.value, ast.Constant)
        and isinstance(doc.value.value, str)
    }
