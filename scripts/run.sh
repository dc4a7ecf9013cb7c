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

# process_start and demo_pid: whether demo.pid still names this checkout's demo.
. "$here/scripts/demo-pid.sh"

# SIGTERM, then up to 30 s for it to end. The demo finishes its running tasks and checks the
# business table; the HTTP demo stops its services: let them, before the database goes away.
term_and_wait() { # PID
    local i
    kill -TERM "$1"
    for i in $(seq 1 60); do
        kill -0 "$1" 2>/dev/null || break
        sleep 0.5
    done
}

stop_demo() {
    local pid
    pid=$(demo_pid)
    if [ -n "$pid" ]; then
        term_and_wait "$pid"
        echo "run: demo stopped (summary in $state/demo.log)"
    elif [ -f "$state/demo.pid" ]; then
        echo "run: the demo recorded in $state/demo.pid is no longer running (its pid is not signalled: it may be another program's now)"
    fi
    rm -f "$state/demo.pid"
    # The HTTP demo (issue 43): its example services stop with it.
    pid=$(demo_pid "$state/http-demo.pid" '*http_demo.py*')
    if [ -n "$pid" ]; then
        term_and_wait "$pid"
        echo "run: HTTP demo stopped (log in $state/http-demo.log)"
    fi
    rm -f "$state/http-demo.pid"
}

if [ "${1:-}" = --stop ]; then
    stop_demo
    scripts/idem-db stop
    exit 0
fi

# The build's steps as they go, condensed: one line per twentieth of them, with the time so far
# and a guess at what is left (ninja prints "[n/N] ..." per step; anything else is shown as is).
build_with_progress() {
    local t0 line n total e left shown=0 mmss
    t0=$(date +%s)
    mmss() { printf '%dm%02ds' $(( $1 / 60 )) $(( $1 % 60 )); }
    # A shell loop, not awk: Debian's mawk reads a pipe in blocks, so its lines came in bursts.
    while IFS= read -r line; do
        if [[ $line =~ ^\[([0-9]+)/([0-9]+)\] ]]; then
            n=${BASH_REMATCH[1]} total=${BASH_REMATCH[2]}
            if [ "$n" -eq "$total" ] || [ $(( (n - shown) * 20 )) -ge "$total" ]; then
                e=$(( $(date +%s) - t0 )) left=""
                if [ "$n" -ge 20 ] && [ "$n" -lt "$total" ]; then
                    left=", about $(mmss $(( e * (total - n) / n ))) left"
                fi
                echo "run: build step $n of $total, $(mmss "$e") so far$left"
                shown=$n
            fi
        elif [[ $line != "ninja: no work to do"* ]]; then
            printf '%s\n' "$line"
        fi
    done < <(scripts/build.sh dev idem-console idemctl 2>&1)
    wait $! || { echo "run: the build failed (its errors are above)" >&2; return 1; }
    echo "run: built in $(( $(date +%s) - t0 )) s."
}

# Tell a newcomer what the silence is about. It builds only what it runs (the console and
# idemctl, no tests): 180 compile and link steps, 295 s measured on 2 cores with ccache off
# (issue 41 item 13); later starts rebuild only what changed (seconds).
if [ ! -x "$console" ] || [ ! -x "$idemctl" ]; then
    echo "run: first start: installing missing Debian packages (if any), then building Idem in build/dev:" \
         "about 180 compile and link steps (the console and idemctl), 5-10 minutes on 2 cores (later starts: seconds). Progress below."
else
    echo "run: checking packages and rebuilding what changed."
fi
scripts/deps.sh run
build_with_progress
echo "run: starting the private PostgreSQL cluster and migrating it."
scripts/idem-db start
dsn=$(scripts/idem-db dsn)
"$idemctl" migrate --dsn "$dsn"

# Logins of their own for the console (an operator: its audit entries name it, not the
# superuser) and the demo (a worker that may also read, own its two business tables and check
# them). Their passwords live only in the cluster's passfile, beside the superuser's.
ensure_login() { # NAME ROLE...
    local name=$1 password
    shift
    password=$(awk -F: -v u="$name" '$1 == "127.0.0.1" && $4 == u { print $5; exit }' "$state/pgpass")
    if [ -z "$password" ]; then
        password=$(openssl rand -hex 24)
        (umask 077; printf '127.0.0.1:*:*:%s:%s\nlocalhost:*:*:%s:%s\n' "$name" "$password" "$name" "$password" \
            >>"$state/pgpass")
    fi
    # On stdin, never on a command line; the statement kept out of the server log.
    psql "$dsn" -Xq -v ON_ERROR_STOP=1 >/dev/null <<SQL
SET client_min_messages = warning;
SET log_statement = 'none';
SET log_min_duration_statement = -1;
DO \$\$BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = '$name') THEN
        CREATE ROLE "$name" LOGIN;
    END IF;
END\$\$;
ALTER ROLE "$name" LOGIN PASSWORD '$password';
$(for role in "$@"; do printf 'GRANT %s TO "%s";\n' "$role" "$name"; done)
SQL
}
ensure_login idem_console_operator idem_operator
ensure_login idem_demo_worker idem_worker idem_reader
# The demo creates its tables in the Idem schema (once) and owns them.
psql "$dsn" -Xq -v ON_ERROR_STOP=1 >/dev/null <<'SQL'
SET client_min_messages = warning;
GRANT CREATE ON SCHEMA idem TO idem_demo_worker;
-- The HTTP example services' table (shop.orders) lives in a schema of the demo's login.
CREATE SCHEMA IF NOT EXISTS shop AUTHORIZATION idem_demo_worker;
DO $$BEGIN
    IF to_regclass('idem.demo_payments') IS NOT NULL THEN
        ALTER TABLE idem.demo_payments OWNER TO idem_demo_worker;
    END IF;
    IF to_regclass('idem.demo_orders_effects') IS NOT NULL THEN
        ALTER TABLE idem.demo_orders_effects OWNER TO idem_demo_worker;
    END IF;
END$$;
SQL
operator_dsn=${dsn/user=postgres/user=idem_console_operator}
demo_dsn=${dsn/user=postgres/user=idem_demo_worker}
printf '%s\n' "$operator_dsn" >"$state/operator.dsn"

# One demo at a time: a restart replaces the previous one.
stop_demo
IDEM_DSN=$demo_dsn nohup "$idemctl" demo --workers 4 --duration 0 >"$state/demo.log" 2>&1 &
demo=$!
printf '%s %s\n' "$demo" "$(process_start "$demo")" >"$state/demo.pid"
echo "run: demo workload running in the background as idem_demo_worker (pid $demo, log $state/demo.log)"
# The HTTP demo: the example order service in FastAPI and in Express, driven by retrying clients
# (docs/http-idempotency.md); the console shows them as tenants http-demo-python and http-demo-node.
nohup /usr/bin/python3 "$here/clients/python/examples/http_demo.py" --dsn "$demo_dsn" >"$state/http-demo.log" 2>&1 &
http_demo=$!
printf '%s %s\n' "$http_demo" "$(process_start "$http_demo")" >"$state/http-demo.pid"
echo "run: HTTP demo running in the background (pid $http_demo; its services' addresses and tallies in $state/http-demo.log)"
echo "run: idemctl is $idemctl; scripts/idemctl runs it as idem_console_operator on this cluster. For every example in README.md and docs/:"
echo "  export PATH=\"$here/scripts:\$PATH\"    # then: idemctl stats; man -l $here/packaging/idemctl.1"

if [ "${1:-}" = --no-console ]; then
    echo "run: open the console (as idem_console_operator) with: $console --dsn \"$operator_dsn\""
    exit 0
fi
if [ -z "${DISPLAY:-}" ] && [ -z "${WAYLAND_DISPLAY:-}" ] && [ -z "${QT_QPA_PLATFORM:-}" ]; then
    echo "run: no display (DISPLAY and WAYLAND_DISPLAY are unset). Database and demo are up; from a desktop run:" >&2
    echo "  $console --dsn \"$operator_dsn\"" >&2
    exit 1
fi
"$console" --dsn "$operator_dsn"
echo "run: console closed; the demo and the database keep running (scripts/run.sh --stop ends them)"
