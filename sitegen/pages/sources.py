"""The declared sources of figures that are not measurements (``content/sources.yaml``).

A content page may quote such a figure (a model card's context length, say) only with
``literal(value, source="<id>")``, citing one entry of this list; the page shows it as a
quotation that this report did not measure, and the method page lists every one used.
"""

from __future__ import annotations

from pathlib import Path

import yaml
from pydantic import ValidationError

from sitegen.core.errors import DataError, Issue, one_line, pydantic_issues
from sitegen.core.source_list import Source, SourceList
from sitegen.core.yaml_text import read_yaml

SOURCES_FILE = "sources.yaml"
"""The source list, in the project's ``content/`` directory."""


def load_sources(content_dir: Path) -> dict[str, Source]:
    """The declared sources by id (none without the file); raises ``DataError`` naming the
    file and field of a bad entry."""
    path = content_dir / SOURCES_FILE
    if not path.is_file():
        return {}
    try:
        declared = SourceList.model_validate(read_yaml(path) or {})
    except yaml.YAMLError as exc:
        raise DataError([Issue(str(path), f"not valid YAML: {one_line(exc)}", "content")]) from None
    except ValidationError as exc:
        raise DataError(pydantic_issues(exc, str(path))) from None
    return {s.id: s for s in declared.sources}
