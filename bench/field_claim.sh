#!/usr/bin/env bash
# bench/field_claim.sh [ROUNDS] [TASKS]
#
# What field fingerprints cost the claim path (issue 46 item 3; bench/README.md, "Session 19: field
# fingerprints"), inside the backend (a PL/pgSQL loop: no network, no client), in one scratch schema
# migrated by this checkout's idemctl (build/ci):
#   fields  idem_claim_fields of new keys with the fingerprints of a 6-field request (what a worker
#           that opted its operation in sends), plus complete()
#   plain   claim() of new keys of an operation that did not opt in, plus complete(), same schema
#   v30     claim() + complete() in a second scratch schema without schema v32's table and columns
#           (idem_request_fields dropped, task_idempotency_conflicts' two columns dropped): the
#           claim path before fingerprints existed
# Each round runs TASKS (default 2000) tasks of each variant, in one session, warmed first, in an
# order that rotates over the rounds; the figures are the paired medians over ROUNDS (default 9),
# with the lowest and highest round: fields/plain (an opted-in operation's claims) and plain/v30
# (every other operation's). The worker's own cost (the HMAC per field) is not in these figures:
# bench/README.md gives it separately.
# Against this checkout's private cluster (scripts/idem-db) or IDEM_BENCH_DSN; drops its schemas.
set -euo pipefail

. "$(dirname "${BASH_SOURCE[0]}")/scratch.sh"
bench_init 9 2000 "$@"
a=idem_bench_fp_$$
b=idem_bench_fp30_$$
bench_schema "$a"
bench_schema "$b"
psql <<EOF
DROP TABLE $b.idem_request_fields;
ALTER TABLE $b.task_idempotency_conflicts DROP COLUMN last_fields, DROP COLUMN last_field_count;
CREATE FUNCTION $a.bench_loop(p_variant text, p_tasks integer, p_prefix text) RETURNS double precision
LANGUAGE plpgsql AS \$\$
DECLARE
    t0 timestamptz := clock_timestamp();
    tok uuid;
    h text := 'v1:' || repeat('ab', 32);
    prints jsonb := '{"amount_cents":"efe2e89af36f7b79","currency":"a6013c41d8d49477","customer":"0f3c9a1b2d4e5f60",'
                   '"description":"1a2b3c4d5e6f7081","items":"9f8e7d6c5b4a3928","target":"ec0d84b19927f7da"}';
BEGIN
    FOR i IN 1..p_tasks LOOP
        IF p_variant = 'fields' THEN
            SELECT c.owner_token INTO tok FROM $a.idem_claim_fields('b:fp:' || p_prefix || i, h, gen_random_uuid(), 30000, 5,
                                                                    NULL, prints, 6, NULL) c;
            PERFORM $a.complete('b:fp:' || p_prefix || i, tok, '{"ok":true}'::jsonb);
        ELSIF p_variant = 'plain' THEN
            SELECT c.owner_token INTO tok FROM $a.claim('b:pl:' || p_prefix || i, h, gen_random_uuid(), 30000) c;
            PERFORM $a.complete('b:pl:' || p_prefix || i, tok, '{"ok":true}'::jsonb);
        ELSE
            SELECT c.owner_token INTO tok FROM $b.claim('b:pl:' || p_prefix || i, h, gen_random_uuid(), 30000) c;
            PERFORM $b.complete('b:pl:' || p_prefix || i, tok, '{"ok":true}'::jsonb);
        END IF;
    END LOOP;
    RETURN extract(epoch FROM clock_timestamp() - t0) * 1e6 / p_tasks;
END
\$\$;
EOF

echo "machine: $(nproc) cores, load average: $(cut -d' ' -f1-3 /proc/loadavg); $rounds rounds of $tasks tasks"
printf '%-6s %10s %10s %10s %13s %10s\n' round "fields us" "plain us" "v30 us" "fields/plain" "plain/v30"
orders=("fields plain v30" "v30 plain fields" "plain v30 fields" "fields v30 plain" "v30 fields plain" "plain fields v30")
results=()
for r in $(seq 1 "$rounds"); do
    read -r x y z <<<"${orders[$(( (r - 1) % 6 ))]}"
    declare -A us=()
    mapfile -t out < <(psql <<SQL
SELECT $a.bench_loop('fields', 200, 'w$r-') * 0;
SELECT $a.bench_loop('plain', 200, 'w$r-') * 0;
SELECT $a.bench_loop('v30', 200, 'w$r-') * 0;
SELECT round($a.bench_loop('$x', $tasks, 'r$r-')::numeric, 2);
SELECT round($a.bench_loop('$y', $tasks, 'r$r-')::numeric, 2);
SELECT round($a.bench_loop('$z', $tasks, 'r$r-')::numeric, 2);
SQL
)
    us[$x]=${out[3]}
    us[$y]=${out[4]}
    us[$z]=${out[5]}
    # Throughput ratios: the inverse of the time ratios.
    q1=$(python3 -c "print('%.3f' % (${us[plain]} / ${us[fields]}))")
    q2=$(python3 -c "print('%.3f' % (${us[v30]} / ${us[plain]}))")
    printf '%-6s %10s %10s %10s %12sx %9sx\n' "$r" "${us[fields]}" "${us[plain]}" "${us[v30]}" "$q1" "$q2"
    results+=("${us[fields]} ${us[plain]} ${us[v30]} $q1 $q2")
    psql -c "TRUNCATE $a.task_idempotency, $a.idem_request_fields; TRUNCATE $b.task_idempotency;
             ANALYZE $a.task_idempotency; ANALYZE $b.task_idempotency" >/dev/null
    unset us
done
printf '%s\n' "${results[@]}" | python3 -c '
import statistics, sys
rows = [list(map(float, l.split())) for l in sys.stdin if l.strip()]
s, p, v, q1, q2 = (statistics.median(c) for c in zip(*rows))
r1 = sorted(r[3] for r in rows)
r2 = sorted(r[4] for r in rows)
print("median: fields %.2f, plain %.2f, v30 %.2f us/task; throughput (paired medians): an opted-in operation"
      " %.3fx of a plain claim (rounds %.3f..%.3f); other operations %.3fx of v30 (rounds %.3f..%.3f)"
      % (s, p, v, q1, r1[0], r1[-1], q2, r2[0], r2[-1]))'
