"""The format of a signed list of published files (``files.json``).

The publisher writes the lists (``publish.signed_files``) and ``sitegen audit`` reads
them; the model lies here, below both, because the pages publish its JSON Schema in the
data dictionary beside the other published formats (``schema``).
"""

from __future__ import annotations

from typing import Literal

from sitegen.core.strict_model import StrictModel


class ListedFile(StrictModel):
    """One published file."""

    sha256: str
    """SHA-256 of its bytes."""
    size_bytes: int
    """Its size: a reader fetches no more than this."""


class SignedFiles(StrictModel):
    """A list of published files (``files.json``), signed by the publisher's key when the
    project declares one."""

    schema_version: Literal[1] = 1
    """Version of this format."""
    label: str
    """The version it lists; in the site root's list, the newest version when it was
    written."""
    files: dict[str, ListedFile]
    """Every file, by its path from the site root. A version's list: the files under
    ``v/<label>/``, every object its pages name (each file of a folder object) and the
    shared assets. The root's list: every other file (``v/versions.json`` included) but
    the objects."""
    figures: dict[str, list[tuple[str, str]]] = {}
    """A version's list: each page (path from the version's root) → the figures it marks,
    id and printed text, in page order. Empty in the root's list."""
    versions: dict[str, str | None] = {}
    """The root's list: each published version → the SHA-256 of its ``files.json``
    (``None``: a version published before versions had one). Empty in a version's list."""
