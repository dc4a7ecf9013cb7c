#!/usr/bin/env bash
# bench/claim_isolation.sh [ROUNDS] [TASKS]
#
# What schema v24's READ COMMITTED check costs claim() (issue 40 item 7; bench/README.md,
# "Session 16"). In one scratch schema migrated by this checkout's idemctl (build/ci), the
# shipped claim() and, beside it, claim_v23: the same body without the check (cut from the
# shipped file here, so the two differ by the check alone). Each round runs TASKS claims of new
# keys plus their complete() inside the backend (a PL/pgSQL loop: no network, no client), once per
# variant in ABBA order, and reports the microseconds per task of each and their ratio; the
# medians over ROUNDS (default 15) rounds of TASKS (default 3000) are the figures. Runs against
# this checkout's private cluster (scripts/idem-db) or IDEM_BENCH_DSN; drops its schema at the end.
set -euo pipefail

. "$(dirname "${BASH_SOURCE[0]}")/scratch.sh"
bench_init 15 3000 "$@"
schema=idem_bench_iso_$$
bench_schema "$schema"
# The baseline: the shipped body without the isolation check (the IF block that raises it).
python3 - "$schema" > /tmp/claim_v23_$$.sql <<'EOF'
import re, sys
body = open("resources/sql/functions/claim.sql").read()
cut = re.sub(r"\n    IF current_setting\('transaction_isolation'\).*?\n    END IF;\n", "\n", body, count=1, flags=re.S)
assert cut != body, "the check was not found in claim.sql"
cut = cut.replace("CREATE OR REPLACE FUNCTION claim(", "CREATE OR REPLACE FUNCTION claim_v23(", 1)
cut = cut.replace("ON FUNCTION claim(", "ON FUNCTION claim_v23(", 1)
print("SET search_path = %s;" % sys.argv[1])
print(cut.replace("@extschema@", sys.argv[1]))
EOF
psql -f /tmp/claim_v23_$$.sql
rm -f /tmp/claim_v23_$$.sql
psql <<EOF
CREATE FUNCTION $schema.bench_loop(p_variant text, p_tasks integer, p_prefix text) RETURNS double precision
LANGUAGE plpgsql AS \$\$
DECLARE
    t0 timestamptz := clock_timestamp();
    tok uuid;
BEGIN
    FOR i IN 1..p_tasks LOOP
        IF p_variant = 'v23' THEN
            SELECT c.owner_token INTO tok FROM $schema.claim_v23(p_prefix || i, 'v1:x', gen_random_uuid(), 30000) c;
        ELSE
            SELECT c.owner_token INTO tok FROM $schema.claim(p_prefix || i, 'v1:x', gen_random_uuid(), 30000) c;
        END IF;
        PERFORM $schema.complete(p_prefix || i, tok, '{"ok":true}'::jsonb);
    END LOOP;
    RETURN extract(epoch FROM clock_timestamp() - t0) * 1e6 / p_tasks;
END
\$\$;
EOF

echo "machine: $(nproc) cores, load average: $(cut -d' ' -f1-3 /proc/loadavg); $rounds rounds of $tasks tasks"
printf '%-6s %12s %12s %8s\n' round "v23 us/task" "v24 us/task" ratio
results=()
for r in $(seq 1 "$rounds"); do
    # ABBA over rounds: neither variant always runs first.
    if [ $((r % 2)) -eq 1 ]; then order="v23 v24"; else order="v24 v23"; fi
    declare -A us=()
    # One session per round: both variants compiled and warmed (200 tasks each) before either is
    # timed, so neither pays the first call's compile.
    read -r first second <<<"$order"
    mapfile -t out < <(psql <<SQL
SELECT $schema.bench_loop('v23', 200, 'w:c:v23-$r-') * 0;
SELECT $schema.bench_loop('v24', 200, 'w:c:v24-$r-') * 0;
SELECT round($schema.bench_loop('$first', $tasks, 'b:c:$first-$r-')::numeric, 2);
SELECT round($schema.bench_loop('$second', $tasks, 'b:c:$second-$r-')::numeric, 2);
SQL
)
    us[$first]=${out[2]}
    us[$second]=${out[3]}
    ratio=$(python3 -c "print('%.3f' % (${us[v23]} / ${us[v24]}))")
    printf '%-6s %12s %12s %8s\n' "$r" "${us[v23]}" "${us[v24]}" "$ratio"
    results+=("${us[v23]} ${us[v24]} $ratio")
    psql -c "TRUNCATE $schema.task_idempotency CASCADE; ANALYZE $schema.task_idempotency" >/dev/null
    unset us
done
printf '%s\n' "${results[@]}" | python3 -c '
import statistics, sys
rows = [list(map(float, l.split())) for l in sys.stdin if l.strip()]
a, b, q = (statistics.median(c) for c in zip(*rows))
print("median: v23 %.2f us/task, v24 %.2f us/task; throughput v24/v23 (paired median) %.3fx" % (a, b, q))'
