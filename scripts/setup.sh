#!/usr/bin/env bash
# Creates .venv and installs sitegen with everything it needs (no GPU, no compiling).
# Usage: bash scripts/setup.sh [extra]   e.g. "test" for the test tools
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
[[ -x .venv/bin/python ]] || "$PYTHON" -m venv .venv
.venv/bin/python -m pip install --quiet --upgrade pip
if [[ $# -gt 0 ]]; then
  .venv/bin/python -m pip install --quiet -e ".[$1]"
else
  .venv/bin/python -m pip install --quiet -e .
fi
