#!/usr/bin/env bash
# bench/peer_bench.sh [peer_bench.js options...]
#
# Idem beside pg-boss (a PostgreSQL task system from the npm registry, pinned by
# bench/peer/package-lock.json) and Idem's HTTP middleware, doing the same work on the same
# cluster in one run, the systems alternated in rounds (bench/peer_bench.js says what each does).
# Installs pg-boss with `npm ci` into .cache/peer-bench (once per lockfile), builds the TypeScript
# client when its build is missing or older than its sources, creates a fresh database
# idem_peer_bench on this checkout's private cluster (scripts/idem-db: started if it is not
# running; IDEM_DB_DIR picks another), migrates it with idemctl (IDEMCTL names the binary; else
# build/ci's or build/dev's, else one is built in Release in build/bench), runs, and drops the
# database. The table goes to stdout and build/bench/peer-results.txt, progress to stderr.
# Example: bench/peer_bench.sh --rounds 3 --seconds 8
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$here"

# pg-boss from the npm registry, exactly the locked versions.
deps=$here/.cache/peer-bench
mkdir -p "$deps"
if ! cmp -s bench/peer/package-lock.json "$deps/package-lock.json" || [ ! -d "$deps/node_modules/pg-boss" ]; then
    command -v npm >/dev/null 2>&1 || { echo "peer_bench: npm not found (apt-get install npm)" >&2; exit 1; }
    cp bench/peer/package.json bench/peer/package-lock.json "$deps/"
    (cd "$deps" && npm ci --no-audit --no-fund --loglevel=error >&2) \
        || { echo "peer_bench: npm ci failed (is the npm registry reachable?)" >&2; rm -f "$deps/package-lock.json"; exit 1; }
fi

# Idem's TypeScript client (the example service rebuilds it by the same rule).
built=clients/node/dist/src/http/example-orders.js
if [ ! -f "$built" ] || [ -n "$(find clients/node/src -newer "$built" -name '*.ts' | head -1)" ]; then
    clients/node/build.sh >&2
fi

idemctl=${IDEMCTL:-}
if [ -z "$idemctl" ]; then
    for b in build/ci/cli/idemctl build/dev/cli/idemctl build/bench/cli/idemctl; do
        [ -x "$b" ] && { idemctl=$b; break; }
    done
fi
if [ -z "$idemctl" ]; then
    cmake -S . -B build/bench -G Ninja -DCMAKE_BUILD_TYPE=Release -DIDEM_BUILD_TESTS=OFF >&2
    cmake --build build/bench --target idemctl >&2
    idemctl=build/bench/cli/idemctl
fi

scripts/idem-db start >&2
admin=$(IDEM_DB_NAME=postgres scripts/idem-db dsn)
db=idem_peer_bench
psql "$admin" -qX -v ON_ERROR_STOP=1 -c "DROP DATABASE IF EXISTS $db" -c "CREATE DATABASE $db" >&2
trap 'psql "$admin" -qX -c "DROP DATABASE IF EXISTS $db WITH (FORCE)" >&2 || true' EXIT
dsn=$(IDEM_DB_NAME=$db scripts/idem-db dsn)
"$idemctl" migrate --dsn "$dsn" | tail -2 >&2
psql "$dsn" -qX -v ON_ERROR_STOP=1 >&2 <<'SQL'
CREATE SCHEMA bench_peer;
-- The business row of pg-boss's and Idem's runs: one per task id is the promise checked.
CREATE TABLE bench_peer.effects (id bigserial PRIMARY KEY, system text NOT NULL, task_id text NOT NULL,
                                 amount int NOT NULL, created_at timestamptz NOT NULL DEFAULT now());
CREATE INDEX ON bench_peer.effects (task_id);
-- pg-boss made exactly-once by hand: the task id is the business row's key.
CREATE TABLE bench_peer.effects_keyed (id bigserial PRIMARY KEY, system text NOT NULL, task_id text NOT NULL UNIQUE,
                                       amount int NOT NULL, created_at timestamptz NOT NULL DEFAULT now());
-- The example service's table, made here so its count by order_id is indexed.
CREATE SCHEMA shop;
SQL
psql "$dsn" -qX -v ON_ERROR_STOP=1 -c "SET client_min_messages = warning" -f clients/shop-orders.sql >&2
psql "$dsn" -qX -v ON_ERROR_STOP=1 -c 'CREATE INDEX ON shop.orders (order_id)' >&2

mkdir -p build/bench
settings=$(psql "$dsn" -AtqX -c "SELECT string_agg(name || '=' || setting, ', ' ORDER BY name) FROM pg_settings
                                 WHERE name IN ('fsync', 'synchronous_commit', 'server_version', 'shared_buffers')")
share=$(clients/node/share.sh)
{
    echo "machine: $(nproc) cores, $(uname -sr), load average: $(cut -d' ' -f1-3 /proc/loadavg); cluster: $settings"
    NODE_PATH="$share${NODE_PATH:+:$NODE_PATH}" node bench/peer_bench.js --dsn "$dsn" --pgboss "$deps/node_modules" \
        --idem-client "$here/clients/node/dist/src" --service "$here/scripts/example-service" "$@"
} | tee build/bench/peer-results.txt
exit "${PIPESTATUS[0]}"
