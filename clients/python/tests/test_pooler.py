"""The client behind PgBouncer in transaction mode: every statement may run on another backend, so
the client must leave nothing on one (psycopg prepares a statement on its fifth execution)."""

import threading

from idem_client import Outcome, OutcomeCounters, TaskKey, TaskStore, connect, request_digest, run_task
from idem_client.counters import CounterFlusher

THREADS = 4
KEYS_PER_THREAD = 8  # each key: a claim that executes, then one that replays: 16 claims per connection


def test_workers_through_pgbouncer_transaction_mode(bouncer, dsn, conn, unique):
    pooled = bouncer.dsn(dsn)
    counters = OutcomeCounters()
    outcomes, errors, lock = [], [], threading.Lock()

    def worker(index):
        try:
            with connect(pooled, application_name="idem python pooled worker %d" % index) as c:
                store = TaskStore(c, counters=counters)
                for i in range(KEYS_PER_THREAD):
                    order = "%s-%d-%d" % (unique, index, i)
                    key = TaskKey("pool", "charge", order)
                    digest = request_digest({"order": order, "amount_cents": 100 + i})

                    def charge(tx, ctx, order=order, i=i):
                        tx.execute("INSERT INTO payments VALUES (%s, %s)", (order, 100 + i))
                        return {"order": order}

                    first = run_task(store, key, digest, charge)
                    again = run_task(store, key, digest, charge)
                    with lock:
                        outcomes.append((order, first.kind, again.kind, again.result))
        except Exception as e:  # noqa: BLE001 - the assertion below names it
            with lock:
                errors.append("worker %d: %s: %s" % (index, type(e).__name__, e))

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert not any(t.is_alive() for t in threads), "a worker did not finish in 120 s"
    assert errors == []
    assert len(outcomes) == THREADS * KEYS_PER_THREAD
    for order, first, again, result in outcomes:
        assert (first, again, result) == (Outcome.SUCCEEDED, Outcome.REPLAYED, {"order": order})

    # The counters' flush (one function call per batch) through the pool too, more than 5 times.
    with CounterFlusher(pooled, counters, interval=3600) as flusher:
        for _ in range(7):
            counters.add("pool", "charge", "replayed")
            assert flusher.flush_now()

    # What the database holds: one payment and one succeeded record per key, no more.
    pattern = "pool:charge:%s-%%" % unique
    assert conn.execute("SELECT count(*), count(DISTINCT order_id), sum(amount_cents) FROM payments"
                        " WHERE order_id LIKE %s", (unique + "-%",)).fetchone() \
        == (THREADS * KEYS_PER_THREAD, THREADS * KEYS_PER_THREAD,
            THREADS * sum(100 + i for i in range(KEYS_PER_THREAD)))
    assert conn.execute("SELECT status, count(*) FROM idem.task_idempotency WHERE idempotency_key LIKE %s"
                        " GROUP BY 1", (pattern,)).fetchall() == [("succeeded", THREADS * KEYS_PER_THREAD)]
    assert conn.execute("SELECT coalesce(sum(n), 0) FROM idem.idem_counters WHERE tenant = 'pool'"
                        " AND operation = 'charge' AND outcome = 'replayed'").fetchone()[0] \
        == THREADS * KEYS_PER_THREAD + 7
    # Nothing left behind on the pooled backends.
    assert all(names == [] for names in bouncer.prepared_statements(dsn).values())
