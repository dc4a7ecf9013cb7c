#!/usr/bin/env bash
# bench/ramp_claim.sh [ROUNDS] [TASKS]
#
# What a resume that ramps (schema v33) costs the claim path (issue 46 item 4; bench/README.md,
# "Session 19: ramp"), inside the backend (a PL/pgSQL loop: no network, no client), in scratch
# schemas migrated by this checkout's idemctl (build/ci):
#   v33      claim() + complete() of new keys, nothing paused: the check is idem_pause_may_cover's
#            catalog lookup, as before
#   v30      the same in a second schema whose claim() is main's before v33 (git show
#            main:resources/sql/functions/claim.sql, or IDEM_BENCH_OLD_CLAIM): the claim path before
#   ramping  the same in a third schema while a ramp of the operation is at its first step
#            (50 %), on keys the step admits only (the check reads the pause and adds one to the
#            step's tally): what a claim costs while the ramp runs
# Each round runs TASKS (default 2000) tasks of each variant, in one session, warmed first, in an
# order that rotates over the rounds; the figures are the paired medians over ROUNDS (default 9)
# and the spread (min to max) of the per-round ratios. Against this checkout's private cluster
# (scripts/idem-db) or IDEM_BENCH_DSN; drops its schemas.
set -euo pipefail

. "$(dirname "${BASH_SOURCE[0]}")/scratch.sh"
bench_init 9 2000 "$@"
a=idem_bench_rp_$$
b=idem_bench_rp30_$$
c=idem_bench_rpr_$$
bench_schema "$a"
bench_schema "$b"
bench_schema "$c"
old=${IDEM_BENCH_OLD_CLAIM:-}
if [ -z "$old" ]; then
    old=$(mktemp)
    git show main:resources/sql/functions/claim.sql >"$old"
fi
sed "s/@extschema@/$b/g" "$old" | command psql "$dsn" -qX -v ON_ERROR_STOP=1 \
    -c "SET search_path = $b, pg_temp" -f - >/dev/null
psql <<EOF
SELECT count(*) FROM $c.idem_pause('b', 'rm', 'bench', 'bench');
SELECT count(*) FROM $c.idem_resume_ramp('b', 'rm', '{50,100}', 86400000, 1, 1000000, 'bench', 'bench');
CREATE FUNCTION $a.bench_loop(p_variant text, p_tasks integer, p_prefix text) RETURNS double precision
LANGUAGE plpgsql AS \$\$
DECLARE
    t0 timestamptz;
    tok uuid;
    h text := 'v1:' || encode(sha256('{"amount_cents":1234}'::bytea), 'hex');
    keys text[];
    k text;
BEGIN
    IF p_variant = 'ramping' THEN -- keys the first step admits, picked before the clock starts
        SELECT array_agg(x.k) INTO keys FROM (
            SELECT 'b:rm:' || p_prefix || g AS k FROM generate_series(1, p_tasks * 3) g) x
         WHERE $c.idem_ramp_bucket(x.k) < 5000 LIMIT p_tasks;
        keys := keys[1:p_tasks];
    ELSE
        SELECT array_agg('b:pl:' || p_prefix || g) INTO keys FROM generate_series(1, p_tasks) g;
    END IF;
    t0 := clock_timestamp();
    FOREACH k IN ARRAY keys LOOP
        IF p_variant = 'v33' THEN
            SELECT c.owner_token INTO tok FROM $a.claim(k, h, gen_random_uuid(), 30000) c;
            PERFORM $a.complete(k, tok, '{"ok":true}'::jsonb);
        ELSIF p_variant = 'v30' THEN
            SELECT c.owner_token INTO tok FROM $b.claim(k, h, gen_random_uuid(), 30000) c;
            PERFORM $b.complete(k, tok, '{"ok":true}'::jsonb);
        ELSE
            SELECT c.owner_token INTO tok FROM $c.claim(k, h, gen_random_uuid(), 30000) c;
            IF tok IS NULL THEN
                RAISE EXCEPTION 'a ramping claim was not admitted: %', k;
            END IF;
            PERFORM $c.complete(k, tok, '{"ok":true}'::jsonb);
        END IF;
    END LOOP;
    RETURN extract(epoch FROM clock_timestamp() - t0) * 1e6 / array_length(keys, 1);
END
\$\$;
EOF

echo "machine: $(nproc) cores, load average: $(cut -d' ' -f1-3 /proc/loadavg); $rounds rounds of $tasks tasks"
printf '%-6s %10s %10s %10s %10s %13s\n' round "v33 us" "v30 us" "ramping us" "v33/v30" "ramping/v33"
orders=("v33 v30 ramping" "ramping v30 v33" "v30 ramping v33" "v33 ramping v30" "ramping v33 v30" "v30 v33 ramping")
results=()
for r in $(seq 1 "$rounds"); do
    read -r x y z <<<"${orders[$(( (r - 1) % 6 ))]}"
    declare -A us=()
    mapfile -t out < <(psql <<SQL
SELECT $a.bench_loop('v33', 200, 'w$r-') * 0;
SELECT $a.bench_loop('v30', 200, 'w$r-') * 0;
SELECT $a.bench_loop('ramping', 200, 'w$r-') * 0;
SELECT round($a.bench_loop('$x', $tasks, 'r$r-')::numeric, 2);
SELECT round($a.bench_loop('$y', $tasks, 'r$r-')::numeric, 2);
SELECT round($a.bench_loop('$z', $tasks, 'r$r-')::numeric, 2);
SQL
)
    us[$x]=${out[3]}
    us[$y]=${out[4]}
    us[$z]=${out[5]}
    # Throughput ratios: the inverse of the time ratios.
    q1=$(python3 -c "print('%.3f' % (${us[v30]} / ${us[v33]}))")
    q2=$(python3 -c "print('%.3f' % (${us[v33]} / ${us[ramping]}))")
    printf '%-6s %10s %10s %10s %9sx %12sx\n' "$r" "${us[v33]}" "${us[v30]}" "${us[ramping]}" "$q1" "$q2"
    results+=("${us[v33]} ${us[v30]} ${us[ramping]} $q1 $q2")
    psql -c "TRUNCATE $a.task_idempotency; TRUNCATE $b.task_idempotency; TRUNCATE $c.task_idempotency;
             ANALYZE $a.task_idempotency; ANALYZE $b.task_idempotency; ANALYZE $c.task_idempotency" >/dev/null
    unset us
done
printf '%s\n' "${results[@]}" | python3 -c '
import statistics, sys
rows = [list(map(float, l.split())) for l in sys.stdin if l.strip()]
a, b, c, q1, q2 = (statistics.median(x) for x in zip(*rows))
r1 = [r[3] for r in rows]; r2 = [r[4] for r in rows]
print("median: v33 %.2f, v30 %.2f, ramping %.2f us/task; throughput (paired medians): nothing paused, v33 %.3fx of v30"
      " (rounds %.3f to %.3f); an admitted claim while ramping %.3fx of v33 (rounds %.3f to %.3f)"
      % (a, b, c, q1, min(r1), max(r1), q2, min(r2), max(r2)))'
