#!/usr/bin/env bash
# Fresh machine to green tests: install sitegen with its test tools and Debian's
# Chromium (for the real-browser tests) and the independent checkers (Nu validator,
# axe-core: scripts/install-checkers.sh), then lint and run the whole suite.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-chromium.sh
bash scripts/install-checkers.sh
bash scripts/setup.sh test
.venv/bin/ruff check sitegen tests benchmarks scripts
# Type check: sitegen/ (files and per-module settings under [tool.mypy] in pyproject.toml).
.venv/bin/mypy
# In parallel with pytest-xdist (addopts in pyproject.toml); -n 0 for one process.
.venv/bin/python -m pytest -q "$@"
