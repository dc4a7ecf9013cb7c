#!/usr/bin/env bash
# The run command: installs what is missing, builds, starts the private PostgreSQL cluster
# (TLS, loopback, its own port), migrates it, starts the demo workload in the background so
# there is live traffic with faults, and opens the console on it.
#
#   scripts/run.sh                the whole thing
#   scripts/run.sh --no-console   database and demo only; prints how to open the console
#   scripts/run.sh --stop         stop the demo and the database
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$here"
state=${IDEM_DB_DIR:-$here/.idem-db}
idemctl=$here/build/dev/cli/idemctl
console=$here/build/dev/app/idem-console

stop_demo() {
    if [ -f "$state/demo.pid" ] && kill -0 "$(cat "$state/demo.pid")" 2>/dev/null; then
        local pid i
        pid=$(cat "$state/demo.pid")
        kill -TERM "$pid"
        # It finishes its running tasks and checks the business table: let it, before the
        # database goes away under it.
        for i in $(seq 1 60); do
            kill -0 "$pid" 2>/dev/null || break
            sleep 0.5
        done
        echo "run: demo stopped (summary in $state/demo.log)"
    fi
    rm -f "$state/demo.pid"
}

if [ "${1:-}" = --stop ]; then
    stop_demo
    scripts/idem-db stop
    exit 0
fi

# Tell a newcomer what the silence is about: the first build compiles ~300 files.
if [ ! -x "$console" ] || [ ! -x "$idemctl" ]; then
    echo "run: first start: installing missing Debian packages (if any), then building Idem" \
         "(about 300 files; roughly 5-10 minutes on 2 cores, seconds on later starts)."
else
    echo "run: checking packages and rebuilding what changed."
fi
scripts/deps.sh run
scripts/build.sh dev
echo "run: built. Starting the private PostgreSQL cluster and migrating it."
scripts/idem-db start
dsn=$(scripts/idem-db dsn)
"$idemctl" migrate --dsn "$dsn"

# One demo at a time: a restart replaces the previous one.
stop_demo
IDEM_DSN=$dsn nohup "$idemctl" demo --workers 4 --duration 0 >"$state/demo.log" 2>&1 &
echo $! >"$state/demo.pid"
echo "run: demo workload running in the background (pid $(cat "$state/demo.pid"), log $state/demo.log)"

if [ "${1:-}" = --no-console ]; then
    echo "run: open the console with: $console --dsn \"$dsn\""
    exit 0
fi
if [ -z "${DISPLAY:-}" ] && [ -z "${WAYLAND_DISPLAY:-}" ] && [ -z "${QT_QPA_PLATFORM:-}" ]; then
    echo "run: no display (DISPLAY and WAYLAND_DISPLAY are unset). Database and demo are up; from a desktop run:" >&2
    echo "  $console --dsn \"$dsn\"" >&2
    exit 1
fi
"$console" --dsn "$dsn"
echo "run: console closed; the demo and the database keep running (scripts/run.sh --stop ends them)"
