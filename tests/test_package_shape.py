"""The package's shape, as ARCHITECTURE.md states it: layers whose imports point only
down, no import circle, modules and functions short enough to read, one name per file,
only the entry points at the package root, tests mirroring the package.

The layer order is read from ARCHITECTURE.md, so the document and the code cannot drift
apart. Imports inside functions and under ``TYPE_CHECKING`` count: a lazy import still
ties a lower layer to a higher one."""

from __future__ import annotations

import ast
import re
from collections import Counter
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "sitegen"
MAX_MODULE_LINES = 600
MAX_FUNCTION_LINES = 80
ENTRY_POINTS = {"__init__.py", "__main__.py", "cli.py"}


@cache
def layers() -> tuple[str, ...]:
    """The packages in ARCHITECTURE.md's "Layers, low to high" line."""
    text = (ROOT / "ARCHITECTURE.md").read_text(encoding="utf-8")
    line = next(line for line in text.splitlines() if line.startswith("Layers, low to high:"))
    return tuple(re.findall(r"`([a-z_]+)`", line))


def modules() -> dict[str, Path]:
    """Every module of the package by dotted name (a package by its own name)."""
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(ROOT).with_suffix("").parts
        found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


def imported_modules(path: Path, known: dict[str, Path]) -> set[str]:
    """The sitegen modules ``path`` imports, anywhere in it."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("sitegen"):
            for alias in node.names:
                child = f"{node.module}.{alias.name}"
                names.add(child if child in known else node.module)
        elif isinstance(node, ast.Import):
            names.update(a.name for a in node.names if a.name.startswith("sitegen"))
    return names


def layer_of(module: str) -> str:
    """The layer a module belongs to: its top package below sitegen; ``cli`` for the entry
    points; the lowest for the package itself, whose ``__init__`` holds only the version."""
    parts = module.split(".")
    if len(parts) == 1:
        return layers()[0]
    return parts[1] if len(parts) > 2 or parts[1] in layers() else "cli"


def test_the_architecture_names_every_package_as_a_layer():
    packages = {p.name for p in PACKAGE.iterdir() if (p / "__init__.py").exists()}
    assert packages | {"cli"} == set(layers())


def test_imports_point_only_down_the_layers():
    rank = {name: index for index, name in enumerate(layers())}
    known = modules()
    upward = [
        f"{module} ({layer_of(module)}) imports {target} ({layer_of(target)})"
        for module, path in known.items()
        for target in imported_modules(path, known)
        if target in known and rank[layer_of(target)] > rank[layer_of(module)]
    ]
    assert upward == []


def test_no_import_circle():
    known = modules()
    # A package whose __init__ imports its modules, which import from that __init__ in
    # turn, is a circle too: its modules must import from a module of their own.
    graph = {m: imported_modules(p, known) & known.keys() - {m} for m, p in known.items()}
    circles = []
    state: dict[str, int] = {}  # 1: on the current path, 2: done

    def visit(module: str, path: list[str]) -> None:
        state[module] = 1
        for target in sorted(graph[module]):
            if state.get(target) == 1:
                circles.append(" → ".join([*path[path.index(target) :], target]))
            elif target not in state:
                visit(target, [*path, target])
        state[module] = 2

    for module in sorted(graph):
        if module not in state:
            visit(module, [module])
    assert circles == []


def test_no_module_is_longer_than_the_limit():
    long = {
        str(path.relative_to(ROOT)): lines
        for path in PACKAGE.rglob("*.py")
        if (lines := len(path.read_text(encoding="utf-8").splitlines())) > MAX_MODULE_LINES
    }
    assert long == {}


def test_no_function_is_longer_than_the_limit():
    long = [
        f"{path.relative_to(ROOT)}:{node.lineno} {node.name} ({length} lines)"
        for path in PACKAGE.rglob("*.py")
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        and (length := (node.end_lineno or node.lineno) - node.lineno + 1) > MAX_FUNCTION_LINES
    ]
    assert long == []


def test_every_file_name_is_used_once():
    names = Counter(p.name for p in PACKAGE.rglob("*.py") if p.name != "__init__.py")
    assert {name: n for name, n in names.items() if n > 1} == {}


def test_the_package_root_holds_only_the_entry_points():
    assert (PACKAGE / "__init__.py").read_text(encoding="utf-8").count("\n") <= 3  # the version
    assert {p.name for p in PACKAGE.glob("*.py")} == ENTRY_POINTS


WHOLE_RUN_TESTS = {
    "test_cli.py",  # the entry point
    "test_end_to_end.py",  # measure and build with the real engine
    "test_fuzz_inputs.py",  # every file a user gives, through the command that reads it
    "test_package_shape.py",
    "test_recipes.py",  # docs/project.md's recipes, across packages
    "test_registry_lists.py",  # README, docs and --help against the registries
}
"""The tests that stay at ``tests/``: they are about the whole package, not one layer."""


@pytest.mark.parametrize(
    "test_file",
    sorted(str(p.relative_to(ROOT / "tests")) for p in (ROOT / "tests").rglob("test_*.py")),
)
def test_each_test_file_sits_in_its_packages_folder(test_file):
    # tests/<package>/… for a package's modules; tests/browser/ is the real-browser tier
    # (every page kind at once); tests/ itself only for whole-run tests.
    folder = Path(test_file).parent
    if folder == Path("."):
        assert Path(test_file).name in WHOLE_RUN_TESTS
    else:
        assert folder == Path("browser") or (PACKAGE / folder).is_dir()
