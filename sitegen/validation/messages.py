"""Turning pydantic errors into messages that name the file, the record and the field."""

from __future__ import annotations

from pydantic import ValidationError


def format_validation_error(exc: ValidationError, where: str) -> str:
    """One line per problem: ``where → field.path: message``."""
    lines = []
    for error in exc.errors():
        field = ".".join(str(part) for part in error["loc"]) or "(record)"
        lines.append(f"{where} → {field}: {error['msg']}")
    return "\n".join(lines)
