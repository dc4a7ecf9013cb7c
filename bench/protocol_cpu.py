#!/usr/bin/env python3
"""CPU per task of the protocol's statement sequences (issue 43 and issue 45 item 2), server and
client, on one psycopg connection (autocommit, no prepared statements, as the clients connect):

    bench/protocol_cpu.py --dsn DSN [--tasks 400] [--rounds 3] [--modes a,b,...] [--indexes]

DSN names a migrated database on this machine (the backend's CPU is read from /proc/<pid>/stat,
10 ms ticks: keep --tasks * the cost per task well above that) where the role may create
public.protocol_cpu_effects and public.protocol_cpu_article. Every task is a new key. Modes,
interleaved per round (each round starts one mode later), medians over the rounds:

  bare          BEGIN, INSERT the business row, COMMIT (the HTTP example's --bare handler)
  claim         BEGIN, claim(), COMMIT
  claim-local   BEGIN, idem_claim_local(), COMMIT
  local         BEGIN, idem_claim_local(), INSERT, complete(), COMMIT, one statement at a time
  local-pipe    the same, BEGIN + claim and complete + COMMIT each in one psycopg pipeline (the
                Python HTTP middleware's one-transaction form)
  two-step      claim() (autocommit); BEGIN, fence(), INSERT, complete(), COMMIT
  two-step-nofence  the same without fence() (RunOptions::fenceInComplete)
  record        record at commit: BEGIN, INSERT, idem_record_local(), COMMIT (issue 45 item 1)
  record-peek   the same after idem_peek_local() (autocommit), the libraries' default
  article       the article's steps by hand: BEGIN, INSERT ... ON CONFLICT DO NOTHING, COMMIT;
                BEGIN, SELECT ... FOR UPDATE, INSERT, UPDATE ... WHERE owner_token, COMMIT

--indexes: also every mode with the five partial indexes of task_idempotency that a new key never
enters (retried, retry_due, uncertain, failed_permanent, failed_exhausted) dropped, alternating
round by round, and put back at the end: what maintaining them costs the fresh path. It changes
the schema while it runs: only on a scratch database.
"""

import argparse
import itertools
import os
import statistics
import time
import uuid

import psycopg

RESULT = '{"status":201,"headers":[["content-type","application/json"]],"body":"{\\"id\\":1}"}'
IDLE_INDEXES = ["task_idempotency_retried_idx", "task_idempotency_retry_due_idx", "task_idempotency_uncertain_idx",
                "task_idempotency_failed_permanent_idx", "task_idempotency_failed_exhausted_idx"]


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--dsn", required=True)
    p.add_argument("--schema", default="idem")
    p.add_argument("--tasks", type=int, default=400)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--modes", default="bare,claim,claim-local,local,local-pipe,two-step,two-step-nofence,record,"
                                      "record-peek,article")
    p.add_argument("--indexes", action="store_true")
    a = p.parse_args()
    s = a.schema
    c = psycopg.connect(a.dsn, autocommit=True, prepare_threshold=None)
    c.execute("CREATE TABLE IF NOT EXISTS public.protocol_cpu_effects (k text PRIMARY KEY, amount int NOT NULL)")
    c.execute("CREATE TABLE IF NOT EXISTS public.protocol_cpu_article (k text PRIMARY KEY, request_hash text NOT NULL,"
              " status text NOT NULL, result_json jsonb, owner_token uuid, lease_until timestamptz,"
              " updated_at timestamptz NOT NULL DEFAULT now())")
    tick = os.sysconf("SC_CLK_TCK")
    pid = c.info.backend_pid

    def server_cpu():
        f = open("/proc/%d/stat" % pid).read().rsplit(")", 1)[1].split()
        return (int(f[11]) + int(f[12])) / tick

    counter = itertools.count()
    tag = "%x" % int(time.time())

    def key():
        return "cpu:fresh:%s-%d" % (tag, next(counter))

    insert = "INSERT INTO public.protocol_cpu_effects (k, amount) VALUES (%s, 5)"
    claim = "SELECT * FROM %s.claim(%%s, 'v1:abcdef', %%s::uuid, 30000, 5, NULL)" % s
    local = "SELECT * FROM %s.idem_claim_local(%%s, 'v1:abcdef', %%s::uuid, 30000, 5, NULL, 2000)" % s
    complete = "SELECT %s.complete(%%s, %%s::uuid, %%s::jsonb, 2162688)" % s
    fence = "SELECT * FROM %s.fence(%%s, %%s::uuid)" % s
    record_local = "SELECT * FROM %s.idem_record_local(%%s, 'v1:abcdef', %%s::jsonb, 5, NULL, 2000, 2162688)" % s
    peek_local = "SELECT * FROM %s.idem_peek_local(%%s, 'v1:abcdef', 5, NULL)" % s

    def bare():
        c.execute("BEGIN"); c.execute(insert, (key(),)); c.execute("COMMIT")

    def claim_tx():
        c.execute("BEGIN"); c.execute(claim, (key(), str(uuid.uuid4()))).fetchone(); c.execute("COMMIT")

    def claim_local_tx():
        c.execute("BEGIN"); c.execute(local, (key(), str(uuid.uuid4()))).fetchone(); c.execute("COMMIT")

    def local_seq():
        k = key()
        c.execute("BEGIN")
        token = c.execute(local, (k, str(uuid.uuid4()))).fetchone()[2]
        c.execute(insert, (k,))
        c.execute(complete, (k, token, RESULT))
        c.execute("COMMIT")

    def local_pipe():
        k = key()
        with c.pipeline():
            c.execute("BEGIN")
            token = c.execute(local, (k, str(uuid.uuid4()))).fetchone()[2]
        c.execute(insert, (k,))
        with c.pipeline():
            c.execute(complete, (k, token, RESULT))
            c.execute("COMMIT")

    def two_step(with_fence=True):
        k = key()
        token = c.execute(claim, (k, str(uuid.uuid4()))).fetchone()[2]
        c.execute("BEGIN")
        if with_fence:
            c.execute(fence, (k, token)).fetchone()
        c.execute(insert, (k,))
        c.execute(complete, (k, token, RESULT))
        c.execute("COMMIT")

    def record(peek=False):
        k = key()
        if peek:
            c.execute(peek_local, (k,)).fetchone()
        c.execute("BEGIN")
        c.execute(insert, (k,))
        c.execute(record_local, (k, RESULT)).fetchone()
        c.execute("COMMIT")

    def article():
        k, token = key(), str(uuid.uuid4())
        c.execute("BEGIN")
        c.execute("INSERT INTO public.protocol_cpu_article (k, request_hash, status, owner_token, lease_until)"
                  " VALUES (%s, 'v1:abcdef', 'processing', %s::uuid, now() + interval '30 s')"
                  " ON CONFLICT DO NOTHING", (k, token))
        c.execute("COMMIT")
        c.execute("BEGIN")
        c.execute("SELECT status, owner_token FROM public.protocol_cpu_article WHERE k = %s FOR UPDATE", (k,)).fetchone()
        c.execute(insert, (k,))
        c.execute("UPDATE public.protocol_cpu_article SET status = 'succeeded', result_json = %s::jsonb,"
                  " owner_token = NULL, lease_until = NULL, updated_at = now() WHERE k = %s AND owner_token = %s::uuid",
                  (RESULT, k, token))
        c.execute("COMMIT")

    every = {"bare": bare, "claim": claim_tx, "claim-local": claim_local_tx, "local": local_seq,
             "local-pipe": local_pipe, "two-step": two_step, "two-step-nofence": lambda: two_step(False),
             "record": record, "record-peek": lambda: record(True),
             "article": article}
    modes = {m: every[m] for m in a.modes.split(",")}
    index_defs = {}
    if a.indexes:
        index_defs = dict(c.execute(
            "SELECT c.relname, pg_get_indexdef(i.indexrelid) FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid"
            " WHERE i.indrelid = %s::regclass AND c.relname = ANY(%s)",
            ("%s.task_idempotency" % s, IDLE_INDEXES)).fetchall())
        if len(index_defs) != len(IDLE_INDEXES):
            raise SystemExit("protocol_cpu: the schema lacks some of " + ", ".join(IDLE_INDEXES))
    states = ["all indexes"] + (["without the 5 idle ones"] if a.indexes else [])
    figures = {(m, st): [] for st in states for m in modes}
    try:
        for r in range(a.rounds):
            for st in (states if r % 2 == 0 else states[::-1]):
                if st != "all indexes":
                    for name in IDLE_INDEXES:
                        c.execute("DROP INDEX %s.%s" % (s, name))
                order = list(modes)[r % len(modes):] + list(modes)[:r % len(modes)]
                for m in order:
                    for _ in range(20):
                        modes[m]()
                    s0, c0 = server_cpu(), time.process_time()
                    for _ in range(a.tasks):
                        modes[m]()
                    figures[(m, st)].append(((server_cpu() - s0) / a.tasks * 1e6,
                                             (time.process_time() - c0) / a.tasks * 1e6))
                if st != "all indexes":
                    for name in IDLE_INDEXES:
                        c.execute(index_defs[name])
    finally:
        for name, definition in index_defs.items():
            if c.execute("SELECT to_regclass(%s)", ("%s.%s" % (s, name),)).fetchone()[0] is None:
                c.execute(definition)
    print("| mode | indexes | server µs/task | client µs/task | server, each round |")
    print("|---|---|---:|---:|---|")
    for (m, st), v in figures.items():
        print("| %s | %s | %.0f | %.0f | %s |" % (m, st, statistics.median(x[0] for x in v),
                                                statistics.median(x[1] for x in v), " ".join("%.0f" % x[0] for x in v)))


if __name__ == "__main__":
    main()
