"""Fixtures for real headless-Chromium tests (see harness.py).

A missing Chromium or playwright package FAILS the tests (never skips):
CI installs Chromium with ``scripts/install-chromium.sh``.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

# Make `import harness` work whatever pytest's import mode is.
_HERE = str(Path(__file__).resolve().parent)
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)

from harness import (  # noqa: E402
    SCREENSHOT_DIR,
    Browser,
    ChromiumNotInstalled,
    PlaywrightNotInstalled,
    open_browser,
    serve_directory,
)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "browser: drives a real headless Chromium")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if Path(str(item.path)).resolve().is_relative_to(_HERE):
            item.add_marker(pytest.mark.browser)


@pytest.fixture(scope="session")
def browser() -> Iterator[Browser]:
    """One headless Chromium for the whole session; use ``browser.new_page()``
    for an isolated, tracked page per test."""
    cm = open_browser()
    missing = None
    try:
        b = cm.__enter__()
    except (ChromiumNotInstalled, PlaywrightNotInstalled) as exc:
        missing = str(exc)
    if missing is not None:  # fail outside `except` to avoid a chained traceback
        pytest.fail(missing, pytrace=False)
    try:
        yield b
    finally:
        cm.__exit__(None, None, None)


@pytest.fixture
def served_site() -> Iterator[Callable[[str | os.PathLike[str]], str]]:
    """Factory: ``base_url = served_site(directory)`` serves the directory on
    127.0.0.1 until the end of the test."""
    with contextlib.ExitStack() as stack:

        def serve(path: str | os.PathLike[str]) -> str:
            return stack.enter_context(serve_directory(path))

        yield serve


@pytest.fixture(scope="session")
def screenshot_dir() -> Path:
    """``<repo>/test-artifacts/screenshots`` (gitignored), created on demand."""
    SCREENSHOT_DIR.mkdir(parents=True, exist_ok=True)
    return SCREENSHOT_DIR
