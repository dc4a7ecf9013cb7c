#!/usr/bin/env bash
# bench/lease_claim.sh [ROUNDS] [TASKS]
#
# What recording the lease costs the claim path (issue 46 item 2; bench/README.md, "Session 19:
# lease recorded"), inside the backend (a PL/pgSQL loop: no network, no client), in two scratch
# schemas migrated by this checkout's idemctl (build/ci):
#   A  claim() of new keys plus complete(), as this checkout has them: the insert writes lease_ms
#      (schema v31)
#   B  the same in a second schema whose claim() is this checkout's without lease_ms (the column
#      dropped, the function re-created from resources/sql/functions/claim.sql with its two
#      lease_ms assignments taken out): the claim path as it was before v31
#   C, D  claim() taking over keys whose 1 ms lease ran out (claimed by an earlier statement, not
#      timed), plus complete(), in each schema (the takeover's update writes lease_ms too)
# Each round runs TASKS (default 2000) tasks of each variant, in one session, warmed first, in an
# order that rotates over the rounds; the figures are the paired medians over ROUNDS (default 9)
# with their spread: throughput of A over B (new keys) and of C over D (takeovers).
# Against this checkout's private cluster (scripts/idem-db) or IDEM_BENCH_DSN; drops its schemas.
set -euo pipefail

. "$(dirname "${BASH_SOURCE[0]}")/scratch.sh"
bench_init 9 2000 "$@"
a=idem_bench_lease_$$
b=idem_bench_nolease_$$
bench_schema "$a"
bench_schema "$b"
before_claim=$(python3 - resources/sql/functions/claim.sql <<'PY'
import re, sys
s = open(sys.argv[1]).read()
t, n1 = re.subn(r"attempt_started_at,\s*lease_ms\)", "attempt_started_at)", s)
t, n2 = re.subn(r"now\(\), p_lease_ms\)", "now())", t)
t, n3 = re.subn(r"attempt_started_at = now\(\),\s*lease_ms = p_lease_ms", "attempt_started_at = now()", t)
assert (n1, n2, n3) == (1, 1, 1), (n1, n2, n3)
code = "\n".join(l for l in t.splitlines() if not l.lstrip().startswith("--"))
assert "lease_ms" not in code.replace("p_lease_ms", ""), "claim.sql writes lease_ms elsewhere"
print(t)
PY
)
psql <<SQL
SET search_path = $b, pg_catalog;
$before_claim
ALTER TABLE $b.task_idempotency DROP COLUMN lease_ms;
RESET search_path;
SQL
for s in "$a" "$b"; do
    psql <<SQL
CREATE FUNCTION $s.bench_loop(p_variant text, p_tasks integer, p_prefix text) RETURNS double precision
LANGUAGE plpgsql AS \$\$
DECLARE
    t0 timestamptz;
    tok uuid;
    h text := 'v1:' || repeat('a', 64);
BEGIN
    IF p_variant = 'setup' THEN
        -- keys with a 1 ms lease, for a later statement (a later now()) to take over
        FOR i IN 1..p_tasks LOOP
            PERFORM $s.claim('b:tk:' || p_prefix || i, h, gen_random_uuid(), 1);
        END LOOP;
        RETURN 0;
    END IF;
    t0 := clock_timestamp();
    FOR i IN 1..p_tasks LOOP
        IF p_variant = 'takeover' THEN
            SELECT c.owner_token INTO tok FROM $s.claim('b:tk:' || p_prefix || i, h, gen_random_uuid(), 30000) c;
            PERFORM $s.complete('b:tk:' || p_prefix || i, tok, '{"ok":true}'::jsonb);
        ELSE
            SELECT c.owner_token INTO tok FROM $s.claim('b:pl:' || p_prefix || i, h, gen_random_uuid(), 30000) c;
            PERFORM $s.complete('b:pl:' || p_prefix || i, tok, '{"ok":true}'::jsonb);
        END IF;
    END LOOP;
    RETURN extract(epoch FROM clock_timestamp() - t0) * 1e6 / p_tasks;
END
\$\$;
SQL
done

echo "machine: $(nproc) cores, load average: $(cut -d' ' -f1-3 /proc/loadavg); $rounds rounds of $tasks tasks"
printf '%-6s %9s %9s %9s %9s %13s %13s\n' round "A us" "B us" "C us" "D us" "A/B" "C/D"
orders=("A B C D" "D C B A" "B D A C" "C A D B" "B A D C" "D B C A")
results=()
for r in $(seq 1 "$rounds"); do
    declare -A us=()
    sql="SELECT 'w', $a.bench_loop('plain', 200, 'w$r-') * 0; SELECT 'w', $b.bench_loop('plain', 200, 'w$r-') * 0;"
    for v in ${orders[$(( (r - 1) % 6 ))]}; do
        case $v in
            A) sql+="SELECT 'A', round($a.bench_loop('plain', $tasks, 'r$r-')::numeric, 2);" ;;
            B) sql+="SELECT 'B', round($b.bench_loop('plain', $tasks, 'r$r-')::numeric, 2);" ;;
            C) sql+="SELECT 'x', $a.bench_loop('setup', $tasks, 'r$r-'); SELECT 'x', pg_sleep(0.01);"
               sql+="SELECT 'C', round($a.bench_loop('takeover', $tasks, 'r$r-')::numeric, 2);" ;;
            D) sql+="SELECT 'x', $b.bench_loop('setup', $tasks, 'r$r-'); SELECT 'x', pg_sleep(0.01);"
               sql+="SELECT 'D', round($b.bench_loop('takeover', $tasks, 'r$r-')::numeric, 2);" ;;
        esac
    done
    while IFS='|' read -r k v; do
        us[$k]=$v
    done < <(psql <<<"$sql") # from stdin: one statement, one transaction (a later now()) each
    q1=$(python3 -c "print('%.3f' % (${us[B]} / ${us[A]}))")
    q2=$(python3 -c "print('%.3f' % (${us[D]} / ${us[C]}))")
    printf '%-6s %9s %9s %9s %9s %12sx %12sx\n' "$r" "${us[A]}" "${us[B]}" "${us[C]}" "${us[D]}" "$q1" "$q2"
    results+=("${us[A]} ${us[B]} ${us[C]} ${us[D]} $q1 $q2")
    psql -c "TRUNCATE $a.task_idempotency; TRUNCATE $b.task_idempotency;
             ANALYZE $a.task_idempotency; ANALYZE $b.task_idempotency" >/dev/null
    unset us
done
printf '%s\n' "${results[@]}" | python3 -c '
import statistics, sys
rows = [list(map(float, l.split())) for l in sys.stdin if l.strip()]
a, b, c, d, q1, q2 = (statistics.median(x) for x in zip(*rows))
print("median: A %.2f, B %.2f, C %.2f, D %.2f us/task; throughput (paired medians): new keys with the lease"
      " recorded %.3fx of before (rounds %.3f to %.3f), takeovers %.3fx (rounds %.3f to %.3f)"
      % (a, b, c, d, q1, min(r[4] for r in rows), max(r[4] for r in rows),
         q2, min(r[5] for r in rows), max(r[5] for r in rows)))'
