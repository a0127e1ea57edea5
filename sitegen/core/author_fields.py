"""The one registry of author-controlled strings: which fields of the models a build reads
(a plan, annotations, an import declaration and its registration, the site settings of
``mkdocs.yml`` with its redaction labels, ``content/sources.yaml``, ``content/prices.yaml``,
comparison specs) hold text an author writes, and which hold strings that are not prose.

Each string field is declared once, in its model, by a marker in its type:

- ``Annotated[str, AUTHOR_TEXT]`` (``AuthorStr``, ``AuthorNonBlank``): an author writes
  it and a reader sees it; C-FIGURE runs the detector over it (``author_texts``).
  ``AuthorText(reads=…)`` says how the detector reads it: ``name`` (``AUTHOR_NAME``: a
  product, format or version name, ``AMD EPYC 9654``), ``copyright`` (the years a
  copyright line opens with are a date), ``icon`` (an icon's name is read as its words).
- ``Annotated[str, NotProse(why)]``: declared safe, with why (an id another field
  defines, a hash, a path, a timestamp, a value sitegen writes …). On a field of another
  type (a list of models) it leaves the whole field out.

The marker covers every string beneath it (``list[AuthorStr]``, ``dict[str, AuthorStr]``
values, ``Annotated[list[str], AUTHOR_TEXT]``), and a nested model declares its own
fields (``Bilingual``'s ``ja`` and ``en`` are author text wherever a title is one).
Markers are plain metadata: validation and the published JSON Schemas do not change.

Models written by engines and importers (a trial record, its provenance, what a source
file states) are measured data, not author text: they say ``MEASURED_DATA`` (a class
attribute with why), and neither the walker nor the enumeration enters them.

``unclassified_fields`` walks the types reachable from the roots and lists every string
field that says neither (the test that keeps a new field from skipping the check).
"""

from __future__ import annotations

import types
import typing
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Annotated, Any, Literal, Union, get_args, get_origin

from pydantic import BaseModel
from pydantic.fields import FieldInfo


@dataclass(frozen=True)
class AuthorText:
    """Marker of a string an author writes and a reader sees: C-FIGURE reads it."""

    reads: Literal["text", "name", "copyright", "icon"] = "text"
    """How the detector reads it: as it is (``text``); as the name of a product, a
    version or a format (``name``: ``AMD EPYC 9654``, ``xllamacpp 2026.10.11549``,
    ``EXL3 sc_3.10bpw`` are names, ``3× faster``, ``62.27 tok/s`` and ``twice`` are not);
    the years a copyright line opens with are a date (``copyright``); an icon's name is
    read as its words (``icon``: ``numeric-3-box``)."""


@dataclass(frozen=True)
class NotProse:
    """Marker of a field that holds no author prose, with why (shown by the docs and the
    enumeration test)."""

    why: str


AUTHOR_TEXT = AuthorText()
"""The marker of a plain author text: titles, labels, reasons, ids a reader sees."""
AUTHOR_NAME = AuthorText("name")
"""The marker of a name an author declares: a model, a device, an engine, its version."""

AuthorStr = Annotated[str, AUTHOR_TEXT]
"""A string an author writes and a reader sees."""

ID_REFERENCE = NotProse("refers to an id declared in another field, which is checked there")
HASH = NotProse("a hex digest or key fingerprint, matched by a strict pattern")
PATH = NotProse("a file, model or package path: shown as code, redacted as a path")
PROMPT = NotProse("the prompt sent to the engine: the measured input, shown as the request")
TIMESTAMP = NotProse("a time sitegen writes")
WRITTEN_BY_SITEGEN = NotProse("written by sitegen (its version, the importer's name)")
HOST_NAME = NotProse("a host name: never published, its label is")
ENV_NAME = NotProse("an environment variable's name, recorded as the engine saw it")
ENGINE_ID = NotProse("a registered engine's id, refused unless sitegen has that engine")
ENGINE_SETTING = NotProse(
    "an engine or chat-template setting, validated by the engine's options model and "
    "recorded as a flag"
)
TEMPLATE_ID = NotProse("a quality template's id, refused unless the suite has that template")
COLUMN_NAME = NotProse("a CSV column's header, matched against the file")
SOURCE_FILE = NotProse("a source file's name or group as the import names it, shown as code")


@dataclass(frozen=True)
class AuthorField:
    """One registered string: where it is and what it says."""

    path: str
    """Dotted field path (``conditions.0.label.en``)."""
    text: str
    marker: AuthorText


def _split(annotation: Any) -> tuple[Any, tuple[Any, ...]]:
    """``annotation`` without ``Annotated`` and the metadata it carried (nested
    ``Annotated`` are flattened by Python)."""
    if get_origin(annotation) is Annotated:
        base, *metadata = get_args(annotation)
        return base, tuple(metadata)
    return annotation, ()


def field_annotation(info: FieldInfo) -> Any:
    """A field's annotation with the metadata pydantic took out of it put back."""
    if info.metadata:
        return Annotated[(info.annotation, *info.metadata)]
    return info.annotation


def _marker(metadata: tuple[Any, ...]) -> AuthorText | NotProse | None:
    found = [m for m in metadata if isinstance(m, (AuthorText, NotProse))]
    return found[-1] if found else None


def measured(model: type) -> str | None:
    """Why ``model`` is measured data (``None``: it is not)."""
    return getattr(model, "MEASURED_DATA", None) if isinstance(model, type) else None


def _is_union(origin: Any) -> bool:
    return origin is Union or origin is types.UnionType


def _arm(annotation: Any, value: object) -> Any:
    """The arm of a union that ``value`` is (the annotation itself otherwise)."""
    base, metadata = _split(annotation)
    if not _is_union(get_origin(base)):
        return annotation
    for option in get_args(base):
        inner, _ = _split(option)
        origin = get_origin(inner) or inner
        if isinstance(origin, type) and isinstance(value, origin):
            return Annotated[(option, *metadata)] if metadata else option
    return annotation


def author_texts(model: BaseModel, prefix: str = "") -> Iterator[AuthorField]:
    """Every registered author text of ``model``: nested models, lists, tuples, dicts and
    ``Bilingual`` values included, each with its dotted path."""
    if measured(type(model)):
        return
    for name, info in type(model).model_fields.items():
        value = getattr(model, name)
        yield from _walk(f"{prefix}{name}", field_annotation(info), value, None)


def _walk(
    path: str, annotation: Any, value: object, marker: AuthorText | NotProse | None
) -> Iterator[AuthorField]:
    if value is None:
        return
    base, metadata = _split(_arm(annotation, value))
    marker = _marker(metadata) or marker
    if isinstance(marker, NotProse):
        return
    if isinstance(value, BaseModel):
        yield from author_texts(value, f"{path}.")
    elif isinstance(value, str):
        if isinstance(marker, AuthorText):
            yield AuthorField(path, value, marker)
    elif isinstance(value, (list, tuple)):
        args = get_args(base)
        for i, item in enumerate(value):
            item_type = (
                args[0]
                if args and (len(args) == 1 or args[1] is Ellipsis)
                else (args[i] if i < len(args) else Any)
            )
            yield from _walk(f"{path}.{i}", item_type, item, marker)
    elif isinstance(value, dict):
        key_type, value_type = get_args(base) or (Any, Any)
        for key, item in value.items():
            yield from _walk(f"{path}.{key}", key_type, key, marker)  # a key may be text too
            yield from _walk(f"{path}.{key}", value_type, item, marker)


# --- the enumeration: every string field reachable from the roots says what it is -----


@dataclass(frozen=True)
class FieldClass:
    """How one string (or string container) field of a model is declared."""

    model: str
    field: str
    """The field's name, with ``[]`` for list items, ``{}`` for dict values and ``{key}``
    for dict keys."""
    declared: AuthorText | NotProse | None
    """``None``: neither, which the enumeration test refuses."""


TEXT_TYPES = (str,)
"""Leaf types that hold text and need a declaration."""


def classify(roots: tuple[type[BaseModel], ...]) -> tuple[list[FieldClass], set[type]]:
    """Every string leaf of every model reachable from ``roots`` (field annotations walked
    recursively; measured models not entered), with its declaration, and the models
    reached."""
    seen: set[type] = set()
    found: list[FieldClass] = []

    def visit_model(model: type[BaseModel]) -> None:
        if model in seen or measured(model):
            return
        seen.add(model)
        hints = model.model_fields
        for name, info in hints.items():
            visit(model.__name__, name, field_annotation(info), None)

    def visit(model: str, where: str, annotation: Any, marker: object) -> None:
        base, metadata = _split(annotation)
        marker = _marker(metadata) or marker
        if isinstance(marker, NotProse):
            found.append(FieldClass(model, where, marker))
            return
        origin = get_origin(base)
        if base is Any or base is object:
            found.append(
                FieldClass(model, where, marker if isinstance(marker, AuthorText) else None)
            )
        elif isinstance(base, type) and issubclass(base, BaseModel):
            if measured(base):
                return
            visit_model(base)
        elif isinstance(base, type) and issubclass(base, TEXT_TYPES):
            found.append(FieldClass(model, where, marker))  # type: ignore[arg-type]
        elif _is_union(origin):
            for option in get_args(base):
                visit(model, where, option, marker)
        elif origin is Literal or base is type(None):
            return
        elif origin in (list, tuple, set, frozenset, typing.Sequence):
            for arg in get_args(base):
                if arg is not Ellipsis:
                    visit(model, f"{where}[]", arg, marker)
        elif origin is dict:
            key_type, value_type = get_args(base)
            visit(model, f"{where}{{key}}", key_type, marker)
            visit(model, f"{where}{{}}", value_type, marker)

    for root in roots:
        visit_model(root)
    unique = list(dict.fromkeys(found))
    return unique, seen


def unclassified_fields(roots: tuple[type[BaseModel], ...]) -> list[str]:
    """``Model.field`` of every string field reachable from ``roots`` that is neither
    author text nor declared safe."""
    fields, _ = classify(roots)
    return [f"{f.model}.{f.field}" for f in fields if f.declared is None]
