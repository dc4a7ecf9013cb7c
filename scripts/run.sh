#!/usr/bin/env bash
# The run command: installs what is missing, builds, starts the private PostgreSQL cluster
# (TLS, loopback, its own port), migrates it, and opens the console on it.
# Usage: scripts/run.sh [--no-console]
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$here"

scripts/deps.sh run
scripts/build.sh dev
scripts/idem-db start
dsn=$(scripts/idem-db dsn)
build/dev/cli/idemctl migrate --dsn "$dsn"

if [ "${1:-}" = --no-console ]; then
    echo "run: database ready; connect with: build/dev/app/idem-console --dsn \"$dsn\""
    exit 0
fi
if [ -z "${DISPLAY:-}" ] && [ -z "${WAYLAND_DISPLAY:-}" ] && [ -z "${QT_QPA_PLATFORM:-}" ]; then
    echo "run: no display (DISPLAY/WAYLAND_DISPLAY unset). The database is up; start the console from a desktop:" >&2
    echo "  build/dev/app/idem-console --dsn \"$dsn\"" >&2
    exit 1
fi
exec build/dev/app/idem-console --dsn "$dsn"
