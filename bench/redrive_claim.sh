#!/usr/bin/env bash
# bench/redrive_claim.sh [ROUNDS] [TASKS]
#
# What storing requests costs the claim path (issue 42; bench/README.md, "Session 17" for schema
# v25, "Session 18" for v27, "Session 19: re-drive" for the backend's CPU and the prototype),
# inside the backend (a PL/pgSQL loop: no network, no client), in one scratch schema migrated by
# this checkout's idemctl (build/ci), with operation rd registered re-drivable:
#   stored  idem_claim_stored of new keys of rd with a 200-byte request, plus complete()
#   plain   claim() of new keys of another operation, plus complete(), in the same schema
#   v24     claim() + complete() in a second scratch schema without idem_stored_requests: the
#           claim path as v24 had it (since v27 the two schemas differ by an idle table)
#   inclaim (PROTOTYPE=1 only) a prototype of claim() taking the request itself: claim.sql of this
#           checkout with a p_request argument, storing it (through a helper with the wrapper's
#           checks) where the key is acquired; no wrapper call. Built in the scratch schema only.
# Each round runs TASKS (default 2000) tasks of each variant, in one session, warmed first, in an
# order that rotates over the rounds. Two figures per variant and round: the wall time per task
# and the backend's CPU per task (utime + stime of the session's backend from /proc, 10 ms ticks:
# keep TASKS * 200 us well above that; needs the server on this machine), which a loaded machine
# disturbs much less than the wall time. Medians over ROUNDS (default 9), and throughput ratios:
# stored/plain (a re-drivable operation's claims) and plain/v24 (every other operation's).
# Against this checkout's private cluster (scripts/idem-db) or IDEM_BENCH_DSN; drops its schemas.
set -euo pipefail

. "$(dirname "${BASH_SOURCE[0]}")/scratch.sh"
bench_init 9 2000 "$@"
a=idem_bench_rd_$$
b=idem_bench_rd24_$$
bench_schema "$a"
bench_schema "$b"
variants="stored plain v24"
proto=/tmp/idem_bench_inclaim_$$.sql
if [ "${PROTOTYPE:-0}" = 1 ]; then
    variants="$variants inclaim"
    python3 - > "$proto" <<'EOF'
import re
s = open("resources/sql/functions/claim.sql").read()
s = re.sub(r"^REVOKE .*$", "", s, flags=re.M)
s = s.replace("FUNCTION claim(", "FUNCTION claim_inclaim(", 1)
s = s.replace("p_max_age_ms bigint DEFAULT NULL)", "p_max_age_ms bigint DEFAULT NULL, p_request text DEFAULT NULL)", 1)
store = "IF p_request IS NOT NULL THEN PERFORM inclaim_store(p_key, p_request_hash, p_request, %s); END IF;\n"
for marker, new in (("RETURN QUERY SELECT 'acquired'::text", "true"), ("RETURN QUERY SELECT 'reacquired'::text", "false")):
    assert s.count(marker) == 1, marker
    s = s.replace(marker, store % new + marker)
print("""
CREATE FUNCTION inclaim_store(p_key text, p_request_hash text, p_request text, p_new boolean) RETURNS void
LANGUAGE plpgsql AS $st$
DECLARE
    v_max integer;
BEGIN
    IF NOT p_new AND EXISTS (SELECT FROM idem_stored_requests q WHERE q.idempotency_key = p_key) THEN
        RETURN;
    END IF;
    SELECT o.max_request_bytes INTO v_max FROM idem_redrive_operations o
     WHERE o.operation = split_part(p_key, ':', 2) AND o.tenant IN (split_part(p_key, ':', 1), '*')
     ORDER BY o.tenant = '*' LIMIT 1;
    IF NOT FOUND OR octet_length(p_request) > v_max
       OR 'v1:' || encode(sha256(convert_to(p_request, 'UTF8')), 'hex') <> p_request_hash THEN
        RAISE EXCEPTION 'refused' USING ERRCODE = 'ID003';
    END IF;
    INSERT INTO idem_stored_requests AS q (idempotency_key, request, request_hash, bytes, stored_at)
    VALUES (p_key, p_request, p_request_hash, octet_length(p_request), now())
    ON CONFLICT (idempotency_key) DO UPDATE
        SET request = excluded.request, request_hash = excluded.request_hash, bytes = excluded.bytes,
            stored_at = excluded.stored_at;
END
$st$;""")
print(s)
EOF
fi
psql <<EOF
DROP TABLE $b.idem_stored_requests;
SELECT * FROM $a.idem_redrive_register('b', 'rd');
SELECT * FROM $a.idem_redrive_register('b', 'ri');
SET search_path = $a;
$( [ -s "$proto" ] && cat "$proto" )
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
        ELSIF p_variant = 'inclaim' THEN
            SELECT c.owner_token INTO tok FROM $a.claim_inclaim('b:ri:' || p_prefix || i, h, gen_random_uuid(), 30000, 5,
                                                                NULL, req) c;
            PERFORM $a.complete('b:ri:' || p_prefix || i, tok, '{"ok":true}'::jsonb);
        ELSE
            SELECT c.owner_token INTO tok FROM $b.claim('b:pl:' || p_prefix || i, h, gen_random_uuid(), 30000) c;
            PERFORM $b.complete('b:pl:' || p_prefix || i, tok, '{"ok":true}'::jsonb);
        END IF;
    END LOOP;
    RETURN extract(epoch FROM clock_timestamp() - t0) * 1e6 / p_tasks;
END
\$\$;
EOF
rm -f "$proto"

echo "machine: $(nproc) cores, load average: $(cut -d' ' -f1-3 /proc/loadavg); $rounds rounds of $tasks tasks"
# psycopg, as bench/protocol_cpu.py uses it (Debian's python3-psycopg).
/usr/bin/python3 - "$dsn" "$a" "$b" "$rounds" "$tasks" $variants <<'EOF'
import statistics, sys
import psycopg
dsn, a, b, rounds, tasks, variants = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5]), sys.argv[6:]
conn = psycopg.connect(dsn, autocommit=True)
pid = conn.execute("SELECT pg_backend_pid()").fetchone()[0]

def cpu_us():
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) * 1e6 / 100  # utime + stime, in 10 ms ticks

rows = {v: [] for v in variants}
print("%-6s %s" % ("round", "  ".join("%-8s wall/cpu us" % v for v in variants)))
for r in range(rounds):
    for v in variants:
        conn.execute(f"SELECT {a}.bench_loop(%s, 200, %s)", (v, f"w{r}-"))
    k = r % len(variants)
    for v in variants[k:] + variants[:k]:
        c0 = cpu_us()
        wall = conn.execute(f"SELECT {a}.bench_loop(%s, %s, %s)", (v, tasks, f"r{r}-")).fetchone()[0]
        rows[v].append((wall, (cpu_us() - c0) / tasks))
    print("%-6d %s" % (r + 1, "  ".join("%8.0f / %-8.0f" % rows[v][-1] for v in variants)), flush=True)
    conn.execute(f"TRUNCATE {a}.task_idempotency, {a}.idem_stored_requests; TRUNCATE {b}.task_idempotency")
    conn.execute(f"ANALYZE {a}.task_idempotency; ANALYZE {b}.task_idempotency")

def ratio(x, y, i):  # throughput of x over y: the inverse of the time ratio, paired by round
    return statistics.median(rows[y][n][i] / rows[x][n][i] for n in range(rounds))

med = {v: (statistics.median(w for w, _ in rows[v]), statistics.median(c for _, c in rows[v])) for v in variants}
print("median us/task (wall, backend cpu): " + "; ".join("%s %.0f, %.0f" % (v, *med[v]) for v in variants))
pairs = [("stored", "plain", "a re-drivable operation storing its request, of a plain claim"),
         ("plain", "v24", "other operations, of v24")]
if "inclaim" in variants:
    pairs.append(("inclaim", "plain", "the prototype claim() taking the request, of a plain claim"))
for x, y, what in pairs:
    lo = min(rows[y][n][1] / rows[x][n][1] for n in range(rounds))
    hi = max(rows[y][n][1] / rows[x][n][1] for n in range(rounds))
    print("%s/%s: wall %.3fx, backend cpu %.3fx (rounds %.2f-%.2fx): %s"
          % (x, y, ratio(x, y, 0), ratio(x, y, 1), lo, hi, what))
EOF
