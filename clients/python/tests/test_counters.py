"""The outcome counters: counted on the protocol's path, flushed in add_counters() batches."""

import json

import pytest

from idem_client import CounterFlusher, InvalidArgument, OutcomeCounters, TaskKey, TaskStore, run_task
from idem_client import counters as oc


def stored(conn, tenant):
    return dict(conn.execute("SELECT outcome, sum(n)::bigint FROM idem.idem_counters WHERE tenant = %s GROUP BY 1",
                             (tenant,)).fetchall())


def test_protocol_counts_then_flush(conn, unique):
    tenant = "c" + unique[-8:]
    counters = OutcomeCounters()
    store = TaskStore(conn, counters=counters)
    key = TaskKey(tenant, "charge", unique)
    assert run_task(store, key, "v1:x", lambda tx, ctx: 1).kind == "succeeded"
    run_task(store, key, "v1:x", lambda tx, ctx: 1)
    run_task(store, key, "v1:y", lambda tx, ctx: 1)
    assert counters.pending_rows() == 4
    assert counters.flush(conn) == 4
    assert counters.pending_rows() == 0
    assert stored(conn, tenant) == {"acquired": 1, "succeeded": 1, "replayed": 1, "conflict": 1}
    assert counters.flush(conn) == 0


def test_batch_format_and_bounds():
    counters = OutcomeCounters(clock=lambda: 1_700_000_000.5)
    counters.add("t", "op", oc.ACQUIRED, 2)
    counters.add("t", "op", oc.ACQUIRED)
    counters.add("a", "op", oc.PAUSED)
    batches = counters.batches(dict(counters._pending), True)
    minute = 1_700_000_000 // 60 * 60
    assert [json.loads(b) for b in batches] == [[{"m": minute, "t": "a", "o": "op", "w": "paused", "n": 1},
                                                 {"m": minute, "t": "t", "o": "op", "w": "acquired", "n": 3}]]
    for bad in [("t", "op", "nope", 1), ("", "op", oc.ACQUIRED, 1), ("t" * 65, "op", oc.ACQUIRED, 1),
                ("t", "op", oc.ACQUIRED, -1), ("t", "op", oc.ACQUIRED, 10 ** 12 + 1)]:
        with pytest.raises(ValueError):
            counters.add(*bad)
    many = OutcomeCounters()
    for i in range(10_001):
        many.add("t%d" % i, "op", oc.SUCCEEDED)
    assert [len(json.loads(b)) for b in many.batches(dict(many._pending), True)] == [10_000, 1]


def test_refused_batch_is_dropped(conn, unique):
    tenant = "r" + unique[-8:]
    # A clock two hours ahead of the server's: add_counters refuses the minute (ID003).
    import time
    counters = OutcomeCounters(clock=lambda: time.time() + 7200)
    counters.add(tenant, "op", oc.ACQUIRED)
    with pytest.raises(InvalidArgument):
        counters.flush(conn)
    assert counters.pending_rows() == 0 and stored(conn, tenant) == {}


def test_failed_flush_keeps_the_counts(dsn, unique):
    import psycopg
    counters = OutcomeCounters()
    counters.add("k" + unique[-8:], "op", oc.ACQUIRED)
    c = psycopg.connect(dsn, autocommit=True)
    c.close()
    with pytest.raises(psycopg.Error):
        counters.flush(c)
    assert counters.pending_rows() == 1


def test_flusher_thread(conn, dsn, unique):
    tenant = "f" + unique[-8:]
    counters = OutcomeCounters()
    with CounterFlusher(dsn, counters, interval=60) as flusher:
        counters.add(tenant, "op", oc.SUCCEEDED, 5)
        assert flusher.flush_now()
        counters.add(tenant, "op", oc.SUCCEEDED, 2)
    assert stored(conn, tenant) == {"succeeded": 7}  # the last flush on close
