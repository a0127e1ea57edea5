#!/usr/bin/env bash
# Refreshes the vendored plotly.js partial bundle (scatter, bar, pie: all the site draws)
# in sitegen/defaults/theme/assets/shared/js/ from npm, for the plotly.js version that the installed
# plotly (Python) writes figures for. The site serves it once, at its root.
# Usage: bash scripts/plotly_bundle.sh   (needs npm; the build itself never downloads)
set -euo pipefail
cd "$(dirname "$0")/.."
VERSION=$(.venv/bin/python -c "import plotly.offline; print(plotly.offline.get_plotlyjs_version())")
PACKAGE="plotly.js-basic-dist-min@${VERSION}"
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
# npm pack checks the tarball against the registry's integrity hash.
(cd "$WORK" && npm pack --silent "$PACKAGE" >/dev/null && tar xzf ./*.tgz)
TARGET=sitegen/defaults/theme/assets/shared/js
mkdir -p "$TARGET"
cp "$WORK/package/plotly-basic.min.js" "$TARGET/plotly-basic-${VERSION}.min.js"
cp "$WORK/package/LICENSE" "$TARGET/plotly-basic-${VERSION}.LICENSE.txt"
sha256sum "$TARGET/plotly-basic-${VERSION}.min.js"
echo "If the version changed: set PLOTLY_BUNDLE in sitegen/pages/site.py and remove the old files."
