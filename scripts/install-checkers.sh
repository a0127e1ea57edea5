#!/usr/bin/env bash
# Install the independent checkers the slow browser tests run over the built site:
# Java (Debian's default-jre-headless) for the W3C Nu HTML validator, and, pinned by
# tests/browser/checkers/package-lock.json, the validator (npm vnu-jar) and axe-core.
# Idempotent: skips what is already there. Works as root (CI) or via sudo.
set -euo pipefail
cd "$(dirname "$0")/.."

CHECKERS=tests/browser/checkers

if [ "$(id -u)" -eq 0 ]; then
    SUDO=""
elif command -v sudo >/dev/null 2>&1; then
    SUDO="sudo"
else
    SUDO="__none__"
fi

apt_install() {
    if [ "$SUDO" = "__none__" ]; then
        echo "install-checkers.sh: need $* but not root and sudo is unavailable" >&2
        exit 1
    fi
    echo "install-checkers.sh: installing $* via apt-get" >&2
    $SUDO env DEBIAN_FRONTEND=noninteractive apt-get update -q
    $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "$@"
}

if ! command -v java >/dev/null 2>&1; then
    apt_install default-jre-headless
fi
if ! command -v npm >/dev/null 2>&1; then
    apt_install nodejs npm
fi

# Reinstall only when the lock file changed since the last install.
stamp="$CHECKERS/node_modules/.installed-lock"
if [ ! -f "$stamp" ] || ! cmp -s "$stamp" "$CHECKERS/package-lock.json" \
    || [ ! -f "$CHECKERS/node_modules/vnu-jar/build/dist/vnu.jar" ] \
    || [ ! -f "$CHECKERS/node_modules/axe-core/axe.min.js" ]; then
    echo "install-checkers.sh: npm ci in $CHECKERS" >&2
    # --ignore-scripts: vnu-jar's postinstall would fetch a Java runtime; Debian's is used.
    (cd "$CHECKERS" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error)
    cp "$CHECKERS/package-lock.json" "$stamp"
fi

java -version 2>&1 | head -n 1
