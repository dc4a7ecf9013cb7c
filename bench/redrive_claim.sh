#!/usr/bin/env bash
# bench/redrive_claim.sh [ROUNDS] [TASKS]
#
# What storing requests costs the claim path (issue 42; bench/README.md, "Session 17" for schema
# v25, "Session 18" for v27), inside the backend (a PL/pgSQL loop: no network, no client), in one
# scratch schema migrated by this checkout's idemctl (build/ci), with operation rd registered
# re-drivable:
#   stored  idem_claim_stored of new keys of rd with a 200-byte request, plus complete()
#   plain   claim() of new keys of another operation, plus complete(), in the same schema
#   v24     claim() + complete() in a second scratch schema without idem_stored_requests: the
#           claim path as v24 had it (before v27 the table's foreign key to task_idempotency went
#           with it; since v27 there is none, so the two schemas differ by an idle table)
# Each round runs TASKS (default 2000) tasks of each variant, in one session, warmed first, in an
# order that rotates over the rounds; the figures are the paired medians over ROUNDS (default 9):
# stored/plain (a re-drivable operation's claims) and plain/v24 (every other operation's).
# Against this checkout's private cluster (scripts/idem-db) or IDEM_BENCH_DSN; drops its schemas.
set -euo pipefail

. "$(dirname "${BASH_SOURCE[0]}")/scratch.sh"
bench_init 9 2000 "$@"
a=idem_bench_rd_$$
b=idem_bench_rd24_$$
bench_schema "$a"
bench_schema "$b"
psql <<EOF
DROP TABLE $b.idem_stored_requests;
SELECT * FROM $a.idem_redrive_register('b', 'rd');
CREATE FUNCTION $a.bench_loop(p_variant text, p_tasks integer, p_prefix text) RETURNS double precision
LANGUAGE plpgsql AS \$\$
DECLARE
    t0 timestamptz := clock_timestamp();
    tok uuid;
    req text := '{"amount_cents":1234,"currency":"EUR","customer":{"email":"someone@example.com","id":"cus-4711"},'
                '"description":"order 4711 of the benchmark, paid by card","target":"acct-42","items":[1,2,3]}';
    h text := 'v1:' || encode(sha256(convert_to(req, 'UTF8')), 'hex');
BEGIN
    FOR i IN 1..p_tasks LOOP
        IF p_variant = 'stored' THEN
            SELECT c.owner_token INTO tok FROM $a.idem_claim_stored('b:rd:' || p_prefix || i, h, gen_random_uuid(), 30000, 5,
                                                                    NULL, req) c;
            PERFORM $a.complete('b:rd:' || p_prefix || i, tok, '{"ok":true}'::jsonb);
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
printf '%-6s %10s %10s %10s %13s %10s\n' round "stored us" "plain us" "v24 us" "stored/plain" "plain/v24"
orders=("stored plain v24" "v24 plain stored" "plain v24 stored" "stored v24 plain" "v24 stored plain" "plain stored v24")
results=()
for r in $(seq 1 "$rounds"); do
    read -r x y z <<<"${orders[$(( (r - 1) % 6 ))]}"
    declare -A us=()
    mapfile -t out < <(psql <<SQL
SELECT $a.bench_loop('stored', 200, 'w$r-') * 0;
SELECT $a.bench_loop('plain', 200, 'w$r-') * 0;
SELECT $a.bench_loop('v24', 200, 'w$r-') * 0;
SELECT round($a.bench_loop('$x', $tasks, 'r$r-')::numeric, 2);
SELECT round($a.bench_loop('$y', $tasks, 'r$r-')::numeric, 2);
SELECT round($a.bench_loop('$z', $tasks, 'r$r-')::numeric, 2);
SQL
)
    us[$x]=${out[3]}
    us[$y]=${out[4]}
    us[$z]=${out[5]}
    # Throughput ratios: the inverse of the time ratios.
    q1=$(python3 -c "print('%.3f' % (${us[plain]} / ${us[stored]}))")
    q2=$(python3 -c "print('%.3f' % (${us[v24]} / ${us[plain]}))")
    printf '%-6s %10s %10s %10s %12sx %9sx\n' "$r" "${us[stored]}" "${us[plain]}" "${us[v24]}" "$q1" "$q2"
    results+=("${us[stored]} ${us[plain]} ${us[v24]} $q1 $q2")
    psql -c "TRUNCATE $a.task_idempotency, $a.idem_stored_requests; TRUNCATE $b.task_idempotency;
             ANALYZE $a.task_idempotency; ANALYZE $b.task_idempotency" >/dev/null
    unset us
done
printf '%s\n' "${results[@]}" | python3 -c '
import statistics, sys
rows = [list(map(float, l.split())) for l in sys.stdin if l.strip()]
s, p, v, q1, q2 = (statistics.median(c) for c in zip(*rows))
print("median: stored %.2f, plain %.2f, v24 %.2f us/task; throughput (paired medians): a re-drivable operation"
      " storing its request %.3fx of a plain claim; other operations %.3fx of v24" % (s, p, v, q1, q2))'
