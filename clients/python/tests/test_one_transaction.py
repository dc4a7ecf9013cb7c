"""run_task(one_transaction=True): claim, the task's writes and the completion in one transaction,
with the semantics of core/runner.h's RunOptions::oneTransaction (tests/db/tst_onetransaction.cpp)."""

import threading
import time

import psycopg
import pytest

from idem_client import Outcome, RetryPolicy, TaskFailure, TaskKey, TaskStore, request_digest, run_task
from idem_client.errors import DatabaseUnavailable


def payments(conn, order):
    return conn.execute("SELECT count(*) FROM payments WHERE order_id = %s", (order,)).fetchone()[0]


def row(conn, key):
    return conn.execute("SELECT status, attempts, error_class FROM idem.task_idempotency WHERE idempotency_key = %s",
                        (str(key),)).fetchone()


def charge(order, meanwhile=None):
    def task(tx, ctx):
        tx.execute("INSERT INTO payments VALUES (%s, 1250)", (order,))
        if meanwhile:
            meanwhile()
        return {"receipt": "r-" + order}
    return task


def retry_due(conn, key, digest, max_attempts=5):
    """The row an earlier failed attempt left, due for a retry now."""
    c = TaskStore(conn, retry=RetryPolicy(max_attempts=max_attempts)).claim(key, digest)
    TaskStore(conn, retry=RetryPolicy(base_delay_ms=0, max_delay_ms=0)).fail(key, c.token, c.attempts, "retryable",
                                                                             "bank timeout")


def test_one_commit_holds_claim_writes_and_success(conn, other, unique):
    key = TaskKey("shop", "charge", unique)
    digest = request_digest({"order": unique})
    seen = {}

    def task(tx, ctx):
        seen["now"] = tx.execute("SELECT now()").fetchone()[0]
        return charge(unique)(tx, ctx)

    out = run_task(TaskStore(conn), key, digest, task, one_transaction=True)
    assert out.kind == Outcome.SUCCEEDED and out.result == {"receipt": "r-" + unique}
    # One transaction: the task row and the payment share their xmin, and the claim's now() is the
    # task's (two steps claim in a transaction of their own, earlier).
    same = other.execute(
        "SELECT t.xmin::text = (SELECT p.xmin::text FROM payments p WHERE p.order_id = %s),"
        " t.created_at = %s FROM idem.task_idempotency t WHERE t.idempotency_key = %s",
        (unique, seen["now"], str(key))).fetchone()
    assert same == (True, True)
    again = run_task(TaskStore(other), key, digest, charge(unique), one_transaction=True)
    assert again.kind == Outcome.REPLAYED and again.result == {"receipt": "r-" + unique}
    conflict = run_task(TaskStore(other), key, request_digest({"order": "x"}), charge(unique), one_transaction=True)
    assert conflict.kind == Outcome.CONFLICT
    # The conflict's record committed.
    assert other.execute("SELECT n FROM idem.task_idempotency_conflicts WHERE idempotency_key = %s",
                         (str(key),)).fetchone() == (1,)
    assert payments(conn, unique) == 1


@pytest.mark.parametrize("takeover", [False, True])
def test_failure_rolled_back_then_recorded(conn, unique, takeover):
    key = TaskKey("shop", "charge", unique)
    if takeover:
        retry_due(conn, key, "v1:x", max_attempts=2)
    store = TaskStore(conn, retry=RetryPolicy(max_attempts=2, base_delay_ms=0, max_delay_ms=0))

    def fails(tx, ctx):
        tx.execute("INSERT INTO payments VALUES (%s, 1)", (unique,))
        raise TaskFailure("retryable", "ledger refused")

    out = run_task(store, key, "v1:x", fails, one_transaction=True)
    assert out.error == "ledger refused"
    assert payments(conn, unique) == 0
    if takeover:  # the second of two attempts: exhausted, as in two steps
        assert out.kind == Outcome.FAILED and row(conn, key) == ("failed", 2, "retryable")
    else:
        assert out.kind == Outcome.WILL_RETRY and row(conn, key) == ("retryable_failed", 1, "retryable")


@pytest.mark.parametrize("takeover", [False, True])
def test_duplicate_waits_then_replays_and_nothing_shows_meanwhile(dsn, conn, unique, takeover):
    key = TaskKey("shop", "charge", unique)
    if takeover:
        retry_due(conn, key, "v1:x")
    before = row(conn, key)
    in_task, release = threading.Event(), threading.Event()
    results = {}

    def first():
        with psycopg.connect(dsn, autocommit=True) as c:
            results["first"] = run_task(TaskStore(c), key, "v1:x",
                                        charge(unique, lambda: (in_task.set(), release.wait(30))),
                                        one_transaction=True)

    def second():
        with psycopg.connect(dsn, autocommit=True) as c:
            results["second"] = run_task(TaskStore(c), key, "v1:x", charge(unique), one_transaction=True,
                                         duplicate_wait_ms=20000)

    a = threading.Thread(target=first)
    a.start()
    assert in_task.wait(30)
    assert row(conn, key) == before and payments(conn, unique) == 0  # nothing while in flight
    b = threading.Thread(target=second)
    b.start()
    b.join(0.3)
    assert b.is_alive()  # waiting for the first to commit
    release.set()
    a.join(30)
    b.join(30)
    assert results["first"].kind == Outcome.SUCCEEDED
    assert results["second"].kind == Outcome.REPLAYED and results["second"].result == {"receipt": "r-" + unique}
    assert payments(conn, unique) == 1


def test_wait_runs_out_in_progress(dsn, conn, unique):
    key = TaskKey("shop", "charge", unique)
    in_task, release = threading.Event(), threading.Event()
    results = {}

    def first():
        with psycopg.connect(dsn, autocommit=True) as c:
            results["first"] = run_task(TaskStore(c), key, "v1:x",
                                        charge(unique, lambda: (in_task.set(), release.wait(30))),
                                        one_transaction=True)

    a = threading.Thread(target=first)
    a.start()
    assert in_task.wait(30)
    started = time.monotonic()
    out = run_task(TaskStore(conn), key, "v1:x", charge(unique), one_transaction=True, duplicate_wait_ms=200)
    waited = time.monotonic() - started
    assert out.kind == Outcome.IN_PROGRESS and out.claim.detail == "wait_timeout" and out.claim.retry_after_ms > 0
    assert 0.15 <= waited < 10
    assert conn.execute("SELECT 1").fetchone() == (1,)  # the connection is usable again
    release.set()
    a.join(30)
    assert results["first"].kind == Outcome.SUCCEEDED and payments(conn, unique) == 1


@pytest.mark.parametrize("takeover", [False, True])
def test_concurrent_duplicates_behind_a_barrier(dsn, conn, unique, takeover):
    key = TaskKey("shop", "charge", unique)
    if takeover:
        retry_due(conn, key, "v1:x")
    n = 8
    barrier = threading.Barrier(n)
    kinds = []
    lock = threading.Lock()

    def run():
        with psycopg.connect(dsn, autocommit=True) as c:
            store = TaskStore(c)
            barrier.wait(30)
            out = run_task(store, key, "v1:x", charge(unique, lambda: time.sleep(0.05)), one_transaction=True,
                           duplicate_wait_ms=20000)
            with lock:
                kinds.append(out.kind)

    threads = [threading.Thread(target=run) for _ in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert sorted(k.value for k in kinds) == ["replayed"] * (n - 1) + ["succeeded"]
    assert payments(conn, unique) == 1


@pytest.mark.parametrize("takeover", [False, True])
def test_killed_mid_transaction_leaves_nothing(dsn, conn, unique, takeover):
    key = TaskKey("shop", "charge", unique)
    if takeover:
        retry_due(conn, key, "v1:x")
    before = row(conn, key)
    victim = psycopg.connect(dsn, autocommit=True)
    pid = victim.info.backend_pid

    def killed():
        conn.execute("SELECT pg_terminate_backend(%s)", (pid,))
        time.sleep(0.1)

    with pytest.raises(DatabaseUnavailable):
        run_task(TaskStore(victim, lease_ms=60000), key, "v1:x", charge(unique, killed), one_transaction=True)
    victim.close()
    assert row(conn, key) == before and payments(conn, unique) == 0
    # No lease to wait out: the next run executes at once.
    assert run_task(TaskStore(conn), key, "v1:x", charge(unique), one_transaction=True).kind == Outcome.SUCCEEDED
    assert payments(conn, unique) == 1


def test_call_then_record_refused(conn, unique):
    with pytest.raises(TypeError):
        run_task(TaskStore(conn), TaskKey("shop", "charge", unique), "v1:x", call=lambda ctx: 1,
                 record=lambda tx, ctx, a: a, one_transaction=True)


# Record at commit (record_at_commit=True): the task's writes, then one Idem statement, one commit
# (tests/db/tst_onetransaction.cpp's record* tests).

def test_record_at_commit_one_commit_and_answers_from_the_read(conn, other, unique):
    key = TaskKey("shop", "charge", unique)
    digest = request_digest({"order": unique})
    calls = []

    def task(tx, ctx):
        calls.append(ctx.token)
        return charge(unique)(tx, ctx)

    out = run_task(TaskStore(conn), key, digest, task, record_at_commit=True)
    assert out.kind == Outcome.SUCCEEDED and out.claim.detail == "new" and out.claim.token == ""
    assert other.execute(
        "SELECT t.xmin::text = (SELECT p.xmin::text FROM payments p WHERE p.order_id = %s),"
        " t.status, t.attempts, t.owner_token IS NULL FROM idem.task_idempotency t WHERE t.idempotency_key = %s",
        (unique, str(key))).fetchone() == (True, "succeeded", 1, True)
    again = run_task(TaskStore(other), key, digest, task, record_at_commit=True)
    assert again.kind == Outcome.REPLAYED and again.result == {"receipt": "r-" + unique}
    conflict = run_task(TaskStore(other), key, request_digest({"order": "x"}), task, record_at_commit=True)
    assert conflict.kind == Outcome.CONFLICT
    assert other.execute("SELECT n FROM idem.task_idempotency_conflicts WHERE idempotency_key = %s",
                         (str(key),)).fetchone() == (1,)
    # The read before the task answered both: the task ran once. Without it, the replay runs the
    # task, learns at the record, and rolls its writes back.
    assert calls == [""]
    late = run_task(TaskStore(other), key, digest, task, record_at_commit=True, check_first=False)
    assert late.kind == Outcome.REPLAYED and len(calls) == 2
    assert payments(conn, unique) == 1


@pytest.mark.parametrize("takeover", [False, True])
def test_record_at_commit_failure_rolled_back_then_recorded(conn, unique, takeover):
    key = TaskKey("shop", "charge", unique)
    if takeover:
        retry_due(conn, key, "v1:x", max_attempts=2)
    store = TaskStore(conn, retry=RetryPolicy(max_attempts=2, base_delay_ms=0, max_delay_ms=0))

    def fails(tx, ctx):
        tx.execute("INSERT INTO payments VALUES (%s, 1)", (unique,))
        raise TaskFailure("retryable", "ledger refused")

    out = run_task(store, key, "v1:x", fails, record_at_commit=True)
    assert out.error == "ledger refused"
    assert payments(conn, unique) == 0
    assert row(conn, key) == (("failed", 2, "retryable") if takeover else ("retryable_failed", 1, "retryable"))


@pytest.mark.parametrize("takeover,check_first", [(False, True), (True, True), (False, False), (True, False)])
def test_record_at_commit_concurrent_duplicates_behind_a_barrier(dsn, conn, unique, takeover, check_first):
    key = TaskKey("shop", "charge", unique)
    if takeover:
        retry_due(conn, key, "v1:x")
    n = 8
    barrier = threading.Barrier(n)
    kinds = []
    lock = threading.Lock()

    def run():
        with psycopg.connect(dsn, autocommit=True) as c:
            store = TaskStore(c)
            barrier.wait(30)
            out = run_task(store, key, "v1:x", charge(unique, lambda: time.sleep(0.05)), record_at_commit=True,
                           check_first=check_first, duplicate_wait_ms=20000)
            with lock:
                kinds.append(out.kind)

    threads = [threading.Thread(target=run) for _ in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert sorted(k.value for k in kinds) == ["replayed"] * (n - 1) + ["succeeded"]
    assert payments(conn, unique) == 1
    assert row(conn, key)[:2] == ("succeeded", 2 if takeover else 1)


def test_record_at_commit_business_collision_replays(dsn, conn, unique):
    conn.execute("CREATE TABLE IF NOT EXISTS orders (order_id text PRIMARY KEY)")
    key = TaskKey("shop", "charge", unique)
    in_task, release = threading.Event(), threading.Event()
    results = {}

    def order(meanwhile=None):
        def task(tx, ctx):
            tx.execute("INSERT INTO orders VALUES (%s)", (unique,))
            if meanwhile:
                meanwhile()
            return {"order": unique}
        return task

    def first():
        with psycopg.connect(dsn, autocommit=True) as c:
            results["first"] = run_task(TaskStore(c), key, "v1:x",
                                        order(lambda: (in_task.set(), release.wait(30))), record_at_commit=True)

    def second():
        with psycopg.connect(dsn, autocommit=True) as c:
            results["second"] = run_task(TaskStore(c), key, "v1:x", order(), record_at_commit=True)

    t1 = threading.Thread(target=first)
    t1.start()
    assert in_task.wait(30)
    t2 = threading.Thread(target=second)
    t2.start()
    deadline = time.monotonic() + 10
    while conn.execute("SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'"
                       " AND query LIKE 'INSERT INTO orders%%'").fetchone()[0] != 1:
        assert time.monotonic() < deadline, "the second task never waited on the first's order row"
        time.sleep(0.02)
    release.set()
    t1.join(30)
    t2.join(30)
    assert results["first"].kind == Outcome.SUCCEEDED
    assert results["second"].kind == Outcome.REPLAYED and results["second"].result == {"order": unique}
    assert conn.execute("SELECT count(*) FROM orders WHERE order_id = %s", (unique,)).fetchone()[0] == 1


def test_record_at_commit_pause_committed_mid_flight(conn, other, unique):
    key = TaskKey("pytenant", "charge", unique)

    def pause():
        other.execute("SELECT * FROM idem.idem_pause('pytenant', 'charge', 'ledger maintenance', 'test')")

    try:
        out = run_task(TaskStore(conn), key, "v1:x", charge(unique, pause), record_at_commit=True)
    finally:
        other.execute("SELECT * FROM idem.idem_resume('pytenant', 'charge', 'done', 'test')")
    assert out.kind == Outcome.PAUSED and out.claim.detail == "pytenant:charge"
    assert payments(conn, unique) == 0 and row(conn, key) is None


def test_record_at_commit_refuses_the_other_forms(conn, unique):
    key = TaskKey("shop", "charge", unique)
    with pytest.raises(TypeError):
        run_task(TaskStore(conn), key, "v1:x", charge(unique), record_at_commit=True, one_transaction=True)
    with pytest.raises(TypeError):
        run_task(TaskStore(conn), key, "v1:x", call=lambda ctx: 1, record=lambda tx, ctx, a: a,
                 record_at_commit=True)
