#!/usr/bin/env bash
# The tick's counter cost against the number of tenants (issue 13, benchmark 3): 3 tenants and
# 3,000 tenants, each with 3 operations and 4 outcomes active in every minute of the last 30
# (3,000 x 3 x 4 x 30 = 1.08M counter rows), in two scratch schemas of one database. For each,
# pgbench runs, one client, serially, interleaved:
#   v8   the unfiltered tick's counter part as statsSql() has it: the window summed from
#        idem_counters_total (what schema 8's add_counters() writes beside the detail)
#   v7   the same sums from the detailed idem_counters, as schema 7's tick read them
#   tick the whole unfiltered tick's row and counter parts: idem_live_stats() (shared, so mostly
#        a read of its row) plus the v8 sums
# Usage: bench/counters_bench.sh DSN [IDEMCTL] [SECONDS]
set -euo pipefail
dsn="$1"
idemctl="${2:-build/ci/cli/idemctl}"
seconds="${3:-10}"
pgbench=$(ls /usr/lib/postgresql/*/bin/pgbench | tail -1)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

populate() { # schema tenants
    local schema="$1" tenants="$2"
    psql "$dsn" -qX -v ON_ERROR_STOP=1 -c "DROP SCHEMA IF EXISTS $schema CASCADE" >/dev/null 2>&1
    "$idemctl" migrate --dsn "$dsn" --schema "$schema" --no-roles >/dev/null
    psql "$dsn" -qX -v ON_ERROR_STOP=1 <<SQL
SET search_path = $schema;
-- What add_counters() writes for such traffic: the detailed rows and their per-minute totals.
INSERT INTO idem_counters (bucket, tenant, operation, outcome, n)
SELECT date_trunc('minute', now()) - m * interval '1 minute', 'tenant-' || t, o, w, 1 + (t + m) % 7
  FROM generate_series(0, 29) m, generate_series(1, $tenants) t,
       unnest(ARRAY['charge', 'refund', 'ship']) o, unnest(ARRAY['acquired', 'replayed', 'succeeded', 'conflict']) w;
INSERT INTO idem_counters_total (minutes, bucket, outcome, n)
SELECT 1, bucket, outcome, sum(n) FROM idem_counters GROUP BY bucket, outcome;
VACUUM ANALYZE idem_counters;
VACUUM ANALYZE idem_counters_total;
SQL
}

sums() { # table extra-where
    cat <<SQL
SELECT coalesce(sum(c.n) FILTER (WHERE c.outcome = 'acquired'), 0),
       coalesce(sum(c.n) FILTER (WHERE c.outcome IN ('replayed', 'in_progress', 'conflict')), 0),
       coalesce(sum(c.n) FILTER (WHERE c.outcome IN ('reacquired_lease', 'reacquired_retry')), 0),
       coalesce(sum(c.n) FILTER (WHERE c.outcome = 'retry_failed'), 0),
       coalesce(sum(c.n) FILTER (WHERE c.outcome = 'conflict'), 0),
       coalesce(sum(c.n) FILTER (WHERE c.outcome = 'stale_token'), 0)
  FROM $1 c WHERE $2 c.bucket >= date_trunc('minute', now()) - 14 * interval '1 minute';
SQL
}

run() { # label schema script
    local out
    out=$(PGOPTIONS="-c search_path=$2 -c max_parallel_workers_per_gather=0" \
        "$pgbench" -n -c 1 -T "$seconds" -M prepared -f "$3" "$dsn" 2>&1)
    printf '%-28s %s\n' "$1" "$(grep -E '^latency average' <<<"$out" | sed 's/latency average = //')"
}

populate idem_cbench_3 3
populate idem_cbench_3000 3000
sums "idem_counters_total" "c.minutes = 1 AND" >"$work/v8.sql"
sums "idem_counters" "" >"$work/v7.sql"
{ echo "SELECT * FROM idem_live_stats(NULL, NULL, 60);"; cat "$work/v8.sql"; } >"$work/tick.sql"
echo "counter rows: $(psql "$dsn" -Atc 'SELECT count(*) FROM idem_cbench_3.idem_counters') (3 tenants)," \
    "$(psql "$dsn" -Atc 'SELECT count(*) FROM idem_cbench_3000.idem_counters') (3000 tenants)"
for round in 1 2; do
    for tenants in 3 3000; do
        run "round $round v8 $tenants tenants" "idem_cbench_$tenants" "$work/v8.sql"
        run "round $round v7 $tenants tenants" "idem_cbench_$tenants" "$work/v7.sql"
        run "round $round tick $tenants tenants" "idem_cbench_$tenants" "$work/tick.sql"
    done
done
psql "$dsn" -qX -c "DROP SCHEMA idem_cbench_3 CASCADE" -c "DROP SCHEMA idem_cbench_3000 CASCADE" >/dev/null 2>&1
