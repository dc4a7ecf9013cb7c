"""run_task in both forms, with the semantics of core/runner.h's runTask."""

import threading
import time

import psycopg
import pytest

from idem_client import (DatabaseUnavailable, Decision, Outcome, RetryPolicy, TaskFailure, TaskKey, TaskStore,
                         request_digest, run_task)


def payments(conn, order):
    return conn.execute("SELECT count(*) FROM payments WHERE order_id = %s", (order,)).fetchone()[0]


def record_state(conn, key):
    return conn.execute("SELECT status, attempts, error_class FROM idem.task_idempotency WHERE idempotency_key = %s",
                        (str(key),)).fetchone()


def test_transaction_form_runs_once_then_replays(conn, other, unique):
    key = TaskKey("shop", "charge", unique)
    digest = request_digest({"order": unique, "amount_cents": 1250})
    seen = []

    def charge(tx, ctx):
        seen.append((ctx.idempotency_key, ctx.attempt, ctx.previous_outcome_unknown))
        tx.execute("INSERT INTO payments VALUES (%s, 1250)", (unique,))
        return {"receipt": "r-" + unique}

    first = run_task(TaskStore(conn), key, digest, charge)
    assert first.kind == Outcome.SUCCEEDED and first.result == {"receipt": "r-" + unique}
    again = run_task(TaskStore(other), key, digest, charge)
    assert again.kind == Outcome.REPLAYED and again.result == {"receipt": "r-" + unique}
    conflict = run_task(TaskStore(other), key, request_digest({"order": unique, "amount_cents": 1}), charge)
    assert conflict.kind == Outcome.CONFLICT and conflict.error == "key already used with another request digest"
    assert seen == [(str(key), 1, False)]
    assert payments(conn, unique) == 1


def test_failures_roll_back_and_are_classified(conn, unique):
    store = TaskStore(conn, retry=RetryPolicy(max_attempts=3, base_delay_ms=0, max_delay_ms=0))
    attempts = []

    def flaky(tx, ctx):
        attempts.append((ctx.attempt, ctx.previous_outcome_unknown))
        tx.execute("INSERT INTO payments VALUES (%s, 1)", (unique,))
        if ctx.attempt == 1:
            raise TaskFailure("unknown", "timeout after the request was sent")
        if ctx.attempt == 2:
            raise RuntimeError("connection reset by the provider")
        return {"ok": True}

    key = TaskKey("shop", "charge", unique)
    out = run_task(store, key, "v1:x", flaky)
    assert out.kind == Outcome.WILL_RETRY and out.failure.status == "retryable_failed"
    assert record_state(conn, key) == ("retryable_failed", 1, "unknown")
    out = run_task(store, key, "v1:x", flaky)
    assert out.kind == Outcome.WILL_RETRY and out.error == "connection reset by the provider"
    assert record_state(conn, key) == ("retryable_failed", 2, "retryable")
    out = run_task(store, key, "v1:x", flaky)
    assert out.kind == Outcome.SUCCEEDED
    assert attempts == [(1, False), (2, True), (3, False)]
    assert payments(conn, unique) == 1  # the failed attempts' inserts were rolled back


def test_permanent_and_bad_result(conn, unique):
    store = TaskStore(conn)
    declined = TaskKey("shop", "charge", unique + "-a")
    out = run_task(store, declined, "v1:x", lambda tx, ctx: (_ for _ in ()).throw(TaskFailure("permanent", "declined")))
    assert out.kind == Outcome.FAILED and out.failure.attempts == 1 and out.error == "declined"
    assert run_task(store, declined, "v1:x", lambda tx, ctx: 1).kind == Outcome.FAILED
    # A result that is not JSON will be just as bad next time: permanent, as C++'s invalid_argument.
    nan = TaskKey("shop", "charge", unique + "-b")
    out = run_task(store, nan, "v1:x", lambda tx, ctx: float("nan"))
    assert out.kind == Outcome.FAILED and record_state(conn, nan)[2] == "permanent"


def test_the_fence_holds_the_key_for_the_transaction(conn, other, unique):
    key = TaskKey("shop", "charge", unique)
    store = TaskStore(conn, lease_ms=100)
    during = []

    def slow(tx, ctx):
        tx.execute("INSERT INTO payments VALUES (%s, 1)", (unique,))
        time.sleep(0.2)  # past the lease: but the fence's row lock is held until the commit
        during.append(TaskStore(other).claim(key, "v1:x"))
        return {"late": True}

    out = run_task(store, key, "v1:x", slow)
    assert during[0].decision == Decision.IN_PROGRESS and during[0].detail == "locked"
    assert out.kind == Outcome.SUCCEEDED
    assert payments(conn, unique) == 1


def test_fence_in_complete_refuses_a_stale_attempt(conn, other, unique):
    # Issue 45 item 2: without the fence nothing locks the row while the task runs, so the lease
    # that ran out is taken over (reacquired, where the fence answers "locked"); the stale
    # attempt's complete refuses its token and its write rolls back: one effect, the new owner's.
    key = TaskKey("shop", "charge", unique)
    store = TaskStore(conn, lease_ms=100)
    during = []

    def stale(tx, ctx):
        tx.execute("INSERT INTO payments VALUES (%s, 1)", (unique,))
        time.sleep(0.2)
        taker = TaskStore(other)
        claim = taker.claim(key, "v1:x")
        during.append(claim)
        if claim.may_execute:
            with other.transaction():
                other.execute("INSERT INTO payments VALUES (%s, 2)", (unique,))
                taker.complete(other, key, claim.token, '{"by":"other"}')
        return {"by": "stale"}

    out = run_task(store, key, "v1:x", stale, fence_in_complete=True)
    assert during[0].decision == Decision.REACQUIRED and during[0].detail == "lease_expired"
    assert out.kind == Outcome.LOST_OWNERSHIP
    assert conn.execute("SELECT array_agg(amount_cents) FROM payments WHERE order_id = %s", (unique,)).fetchone()[0] == [2]
    assert record_state(conn, key) == ("succeeded", 2, None)


def test_call_then_record_form(conn, other, unique):
    key = TaskKey("shop", "charge", unique)
    store = TaskStore(conn, lease_ms=100)
    calls = []
    taken = {}

    def call(ctx):
        # No transaction is open during the call.
        calls.append((ctx.idempotency_key, conn.info.transaction_status))
        if len(calls) == 1:
            time.sleep(0.2)  # the lease lapses; another executor takes the key over
            taken["claim"] = TaskStore(other).claim(key, "v1:x")
        return "receipt-for-" + ctx.idempotency_key

    def record(tx, ctx, answer):
        tx.execute("INSERT INTO payments VALUES (%s, 1)", (unique,))
        return {"receipt": answer}

    out = run_task(store, key, "v1:x", call=call, record=record)
    assert taken["claim"].decision == Decision.REACQUIRED
    assert out.kind == Outcome.LOST_OWNERSHIP
    assert payments(conn, unique) == 0
    assert calls == [(str(key), psycopg.pq.TransactionStatus.IDLE)]
    # The executor that took over completes; its record replays for everyone after.
    store2 = TaskStore(other)
    with other.transaction():
        store2.fence(other, key, taken["claim"].token)
        store2.complete(other, key, taken["claim"].token, '{"receipt":"second"}')
    assert run_task(store, key, "v1:x", call=call, record=record).result == {"receipt": "second"}
    assert len(calls) == 1


def test_downstream_connection_lost_is_unknown(conn, unique):
    key = TaskKey("shop", "charge", unique)

    def call(ctx):
        raise psycopg.OperationalError("server closed the connection unexpectedly")

    out = run_task(TaskStore(conn), key, "v1:x", call=call, record=lambda tx, ctx, a: a)
    assert out.kind == Outcome.WILL_RETRY and record_state(conn, key)[2] == "unknown"


def test_paused_outcome(conn, dsn, idemctl, unique):
    import subprocess
    tenant = "p" + unique[-8:]
    subprocess.run([idemctl, "pause", "--dsn", dsn, "--tenant", tenant, "--reason", "maintenance"], check=True,
                   stdout=subprocess.PIPE)
    out = run_task(TaskStore(conn), TaskKey(tenant, "charge", unique), "v1:x", lambda tx, ctx: 1)
    assert out.kind == Outcome.PAUSED and out.error == "paused (%s:*): maintenance" % tenant
    assert out.claim.paused_for_ms == 0  # until resumed


def test_broken_connection_is_database_unavailable(dsn, admin_dsn, unique):
    conn = psycopg.connect(dsn, autocommit=True)
    pid = conn.info.backend_pid

    def task(tx, ctx):
        with psycopg.connect(admin_dsn, autocommit=True) as admin:
            admin.execute("SELECT pg_terminate_backend(%s)", (pid,))
        tx.execute("SELECT 1")
        return 1

    with pytest.raises(DatabaseUnavailable):
        run_task(TaskStore(conn), TaskKey("shop", "charge", unique), "v1:x", task)
    conn.close()


def test_concurrent_duplicates_one_effect(dsn, unique):
    key = TaskKey("shop", "charge", unique)
    barrier = threading.Barrier(8)
    outcomes = []

    def worker():
        with psycopg.connect(dsn, autocommit=True) as c:
            barrier.wait()
            out = run_task(TaskStore(c), key, "v1:x",
                           lambda tx, ctx: tx.execute("INSERT INTO payments VALUES (%s, 1)", (unique,)) and {"n": 1})
            outcomes.append(out.kind)

    threads = [threading.Thread(target=worker) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert outcomes.count(Outcome.SUCCEEDED) == 1
    assert set(outcomes) <= {Outcome.SUCCEEDED, Outcome.IN_PROGRESS, Outcome.REPLAYED}
    with psycopg.connect(dsn) as c:
        assert payments(c, unique) == 1
