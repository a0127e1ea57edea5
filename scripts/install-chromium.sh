#!/usr/bin/env bash
# Install Debian's headless-capable Chromium (plus CJK fonts) for the browser
# test harness in tests/browser/. Idempotent: does nothing if /usr/bin/chromium
# already exists. Works as root (CI) or via sudo for a non-root developer.
set -euo pipefail

CHROMIUM_BIN="${CHROMIUM_BIN:-/usr/bin/chromium}"

if [ "$(id -u)" -eq 0 ]; then
    SUDO=""
elif command -v sudo >/dev/null 2>&1; then
    SUDO="sudo"
else
    echo "install-chromium.sh: not root and sudo is unavailable" >&2
    exit 1
fi

if [ ! -x "$CHROMIUM_BIN" ]; then
    echo "install-chromium.sh: installing chromium + fonts-noto-cjk via apt-get" >&2
    export DEBIAN_FRONTEND=noninteractive
    $SUDO env DEBIAN_FRONTEND=noninteractive apt-get update -q
    $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
        chromium fonts-noto-cjk
fi

if [ ! -x "$CHROMIUM_BIN" ]; then
    echo "install-chromium.sh: $CHROMIUM_BIN still missing after install" >&2
    exit 1
fi

# Debian's /usr/bin/chromium is a shell wrapper whose /etc/chromium.d snippets
# can print noise; ask the real binary behind it when it is there.
if [ -x /usr/lib/chromium/chromium ]; then
    /usr/lib/chromium/chromium --version
else
    "$CHROMIUM_BIN" --version
fi
