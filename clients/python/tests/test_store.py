"""claim / fence / complete / heartbeat / fail against the real database, and the typed errors."""

import json
import subprocess
import time

import psycopg
import pytest

from idem_client import (DatabaseUnavailable, Decision, FailureClass, InvalidArgument, LostOwnership, NoRecord,
                         NotPrimary, RetryPolicy, TaskKey, TaskStore, UsageError, new_token, request_digest)
from idem_client.store import connect as idem_connect, translate


def row(conn, key):
    r = conn.execute("SELECT status, attempts, result_json, error_class, error_message, request_hash"
                     " FROM idem.task_idempotency WHERE idempotency_key = %s", (str(key),)).fetchone()
    return r


def test_claim_fence_complete_replay_conflict(conn, other, unique):
    store = TaskStore(conn)
    key = TaskKey("shop", "charge", unique)
    digest = request_digest({"order": unique, "amount_cents": 1250})
    c = store.claim(key, digest)
    assert c.decision == Decision.ACQUIRED and c.detail == "new" and c.attempts == 1 and c.may_execute
    busy = TaskStore(other).claim(key, digest)
    assert busy.decision == Decision.IN_PROGRESS and busy.retry_after_ms > 0 and busy.token == ""
    with conn.transaction():
        store.fence(conn, key, c.token)
        conn.execute("INSERT INTO payments VALUES (%s, 1250)", (unique,))
        store.complete(conn, key, c.token, json.dumps({"receipt": "r-1"}))
    assert row(conn, key)[:3] == ("succeeded", 1, {"receipt": "r-1"})
    replay = TaskStore(other).claim(key, digest)
    assert replay.decision == Decision.REPLAY and replay.result == {"receipt": "r-1"}
    conflict = store.claim(key, request_digest({"order": unique, "amount_cents": 999}))
    assert conflict.decision == Decision.CONFLICT and conflict.stored_digest == ""
    assert conn.execute("SELECT count(*) FROM payments WHERE order_id = %s", (unique,)).fetchone()[0] == 1


def test_stale_token_is_lost_ownership_and_rolls_back(conn, other, unique):
    store = TaskStore(conn, lease_ms=50)
    key = TaskKey("shop", "charge", unique)
    first = store.claim(key, "v1:x")
    time.sleep(0.1)
    taken = TaskStore(other).claim(key, "v1:x")
    assert taken.decision == Decision.REACQUIRED and taken.detail == "lease_expired" and taken.attempts == 2
    with pytest.raises(LostOwnership):
        with conn.transaction():
            conn.execute("INSERT INTO payments VALUES (%s, 1)", (unique,))
            store.fence(conn, key, first.token)
    with pytest.raises(LostOwnership):
        store.heartbeat(key, first.token)
    with pytest.raises(LostOwnership):
        store.fail(key, first.token, 1, FailureClass.RETRYABLE, "late")
    assert conn.execute("SELECT count(*) FROM payments WHERE order_id = %s", (unique,)).fetchone()[0] == 0
    assert TaskStore(other).heartbeat(key, taken.token) is not None


def test_fence_without_record_is_no_record(conn, unique):
    store = TaskStore(conn)
    with pytest.raises(NoRecord) as e:
        with conn.transaction():
            store.fence(conn, TaskKey("shop", "charge", unique), new_token())
    assert isinstance(e.value, LostOwnership)


def test_bounds_refused_before_io_and_by_the_database(conn, unique):
    store = TaskStore(conn)
    key = TaskKey("shop", "charge", unique)
    for bad in ["", "v1: space", "x" * 257]:
        with pytest.raises(InvalidArgument):
            store.claim(key, bad)
    with pytest.raises(InvalidArgument) as e:
        with conn.transaction():
            store.fence(conn, key, "")
    assert "no owner token" in str(e.value)
    with pytest.raises(InvalidArgument):
        TaskStore(conn, lease_ms=0)
    with pytest.raises(InvalidArgument):
        TaskStore(conn, retry=RetryPolicy(max_attempts=1001))
    c = store.claim(key, "v1:x")
    with pytest.raises(InvalidArgument) as e:
        with conn.transaction():
            store.fence(conn, key, c.token)
            store.complete(conn, key, c.token, "{not json")
    assert "not valid JSON" in str(e.value)
    # The same bounds from the database itself: ID003.
    with pytest.raises(psycopg.Error) as raw:
        conn.execute("SELECT * FROM idem.claim(%s, 'v1:x', %s::uuid, 0)", (str(key), new_token()))
    assert isinstance(translate(raw.value), InvalidArgument)


def test_fence_outside_a_transaction_is_a_usage_error(conn, unique):
    store = TaskStore(conn)
    key = TaskKey("shop", "charge", unique)
    c = store.claim(key, "v1:x")
    with pytest.raises(UsageError):
        store.fence(conn, key, c.token)
    with conn.transaction():
        with pytest.raises(UsageError):
            store.claim(key, "v1:x")  # claim runs on its own, never inside a business transaction
        store.fence(conn, key, c.token)
        store.complete(conn, key, c.token, "null")
    assert store.claim(key, "v1:x").result_json == "null"


def test_fail_retry_later_then_reacquired_then_exhausted(conn, unique):
    policy = RetryPolicy(max_attempts=2, base_delay_ms=30, max_delay_ms=30)
    store = TaskStore(conn, retry=policy)
    key = TaskKey("shop", "charge", unique)
    c = store.claim(key, "v1:x")
    f = store.fail(key, c.token, c.attempts, FailureClass.RETRYABLE, "gateway timeout")
    assert f.status == "retryable_failed" and f.attempts == 1 and not f.exhausted and 0 <= f.retry_delay_ms <= 30
    later = store.claim(key, "v1:x")
    if later.decision == Decision.RETRY_LATER:
        assert later.error_message == "gateway timeout"
        time.sleep(later.retry_after_ms / 1000 + 0.01)
        later = store.claim(key, "v1:x")
    assert later.decision == Decision.REACQUIRED and later.detail == "retry_due" and later.attempts == 2
    f = store.fail(key, later.token, later.attempts, FailureClass.UNKNOWN, "bad \0 bytes \ud800")
    assert f.status == "failed" and f.exhausted
    final = store.claim(key, "v1:x")
    assert final.decision == Decision.FAILED and final.attempts == 2
    assert final.error_message == "bad \\x00 bytes \\xed\\xa0\\x80"


def test_permanent_failure_stops(conn, unique):
    store = TaskStore(conn)
    key = TaskKey("shop", "charge", unique)
    c = store.claim(key, "v1:x")
    assert store.fail(key, c.token, 1, "permanent", "card declined").status == "failed"
    again = store.claim(key, "v1:x")
    assert again.decision == Decision.FAILED and again.error_message == "card declined"


def test_paused_is_a_decision_not_a_try(conn, dsn, idemctl, unique):
    store = TaskStore(conn)
    tenant = "t" + unique[-8:]
    key = TaskKey(tenant, "charge", unique)
    subprocess.run([idemctl, "pause", "--dsn", dsn, "--tenant", tenant, "--reason", "provider down", "--for", "1h"],
                   check=True, stdout=subprocess.PIPE)
    try:
        c = store.claim(key, "v1:x")
        assert c.decision == Decision.PAUSED and not c.may_execute
        assert c.detail == tenant + ":*" and c.error_message == "provider down"
        assert 0 < c.retry_after_ms <= 5000 and 0 < c.paused_for_ms <= 3_600_000
        assert row(conn, key) is None  # nothing stored, no attempt counted
    finally:
        subprocess.run([idemctl, "resume", "--dsn", dsn, "--tenant", tenant, "--reason", "provider back"],
                       check=True, stdout=subprocess.PIPE)
    assert store.claim(key, "v1:x").decision == Decision.ACQUIRED


def test_claim_outside_read_committed_is_refused(dsn, unique):
    # Schema v24: a claim under REPEATABLE READ could read the pauses with a snapshot older than a
    # pause; the database refuses it (ID003), raised as InvalidArgument, and nothing is written.
    with psycopg.connect(dsn, autocommit=True, options="-c default_transaction_isolation=repeatable\\ read") as rr:
        key = TaskKey("shop", "charge", unique)
        with pytest.raises(InvalidArgument) as e:
            TaskStore(rr).claim(key, "v1:x")
        assert "claim runs at READ COMMITTED, not REPEATABLE READ" in str(e.value)
        assert row(rr, key) is None


def test_read_only_server_is_not_primary(dsn, unique):
    with psycopg.connect(dsn, autocommit=True, options="-c default_transaction_read_only=on") as ro:
        with pytest.raises(NotPrimary) as e:
            TaskStore(ro).claim(TaskKey("shop", "charge", unique), "v1:x")
        assert "read-only" in str(e.value)


def test_terminated_backend_is_database_unavailable(dsn, conn, unique):
    """pg_terminate_backend (a switchover, an operator) answers the next statement with SQLSTATE
    57P01 before the socket closes: a lost connection, as the C++ and TypeScript clients see it."""
    with idem_connect(dsn, application_name="idem python test (terminated)") as victim:
        pid = victim.execute("SELECT pg_backend_pid()").fetchone()[0]
        assert conn.execute("SELECT pg_terminate_backend(%s)", (pid,)).fetchone()[0] is True
        with pytest.raises(DatabaseUnavailable):
            TaskStore(victim).claim(TaskKey("shop", "charge", unique), "v1:x")
    assert conn.execute("SELECT count(*) FROM idem.task_idempotency WHERE idempotency_key = %s",
                        ("shop:charge:" + unique,)).fetchone()[0] == 0
