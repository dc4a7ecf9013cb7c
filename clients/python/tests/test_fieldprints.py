"""Which field differed (schema v32): a Python worker opts an operation in to field fingerprints;
a second request with the same key and one field changed conflicts, and idemctl tasks show names
the field that differed and the ones that matched. Nothing of the values lands in the database."""

import json
import subprocess

import pytest

from idem_client import (Decision, InvalidArgument, Outcome, TaskKey, TaskStore, UsageError, canonical_request,
                         field_fingerprints, request_digest, run_task)

FIELD_KEY = "python-test-field-key-0123456789"


def pay(tx, ctx):
    return {"paid": True}


def stored_bytes(conn, key):
    """Every byte the database holds for the key's fingerprints and conflict record."""
    row = conn.execute("SELECT coalesce((SELECT fields::text || field_count FROM idem.idem_request_fields"
                       " WHERE idempotency_key = %s), '') || coalesce((SELECT last_fields::text || last_field_count"
                       " || last_digest FROM idem.task_idempotency_conflicts WHERE idempotency_key = %s), '')",
                       (key, key)).fetchone()
    return row[0]


def test_a_changed_field_is_named_and_no_value_is_stored(conn, dsn, idemctl, unique):
    store = TaskStore(conn, fingerprint_fields_of=["charge"], field_key=FIELD_KEY)
    key = TaskKey("fp", "charge", unique)
    first = {"order_id": unique, "amount_cents": 1250, "currency": "EUR"}
    assert run_task(store, key, canonical_request(first), pay).kind == Outcome.SUCCEEDED
    changed = dict(first, amount_cents=1300)
    c = store.claim(key, canonical_request(changed))
    assert c.decision == Decision.CONFLICT

    want = field_fingerprints(canonical_request(first).text, FIELD_KEY)
    got = conn.execute("SELECT fields::text, field_count FROM idem.idem_request_fields WHERE idempotency_key = %s",
                       (str(key),)).fetchone()
    assert json.loads(got[0]) == json.loads(want.json) and got[1] == 3
    last = conn.execute("SELECT last_fields, last_field_count FROM idem.task_idempotency_conflicts"
                        " WHERE idempotency_key = %s", (str(key),)).fetchone()
    assert last[0] == json.loads(field_fingerprints(canonical_request(changed).text, FIELD_KEY).json)
    assert last[1] == 3
    held = stored_bytes(conn, str(key))
    for value in ("1250", "1300", "EUR", unique):
        assert value not in held, value

    out = subprocess.run([idemctl, "tasks", "show", str(key), "--dsn", dsn], check=True, capture_output=True,
                         text=True).stdout
    assert "fields    amount_cents differs; currency, order_id same" in out, out
    doc = json.loads(subprocess.run([idemctl, "tasks", "show", str(key), "--dsn", dsn, "--json"], check=True,
                                    capture_output=True, text=True).stdout)
    assert doc["fields"]["differ"] == ["amount_cents"]
    assert doc["fields"]["same"] == ["currency", "order_id"]


def test_an_operation_not_opted_in_stores_nothing(conn, unique):
    store = TaskStore(conn, fingerprint_fields_of=["charge"], field_key=FIELD_KEY)
    key = TaskKey("fp", "refund", unique)
    assert run_task(store, key, request_digest({"amount_cents": 1}), pay).kind == Outcome.SUCCEEDED
    assert store.claim(key, request_digest({"amount_cents": 2})).decision == Decision.CONFLICT
    assert conn.execute("SELECT count(*) FROM idem.idem_request_fields WHERE idempotency_key = %s",
                        (str(key),)).fetchone()[0] == 0
    assert conn.execute("SELECT last_fields IS NULL FROM idem.task_idempotency_conflicts WHERE idempotency_key = %s",
                        (str(key),)).fetchone()[0]


def test_opting_in_needs_a_key_and_the_request(conn, unique):
    with pytest.raises(InvalidArgument):
        TaskStore(conn, fingerprint_fields_of=["charge"])
    with pytest.raises(InvalidArgument):
        TaskStore(conn, fingerprint_fields_of=["charge"], field_key="short")
    store = TaskStore(conn, fingerprint_fields_of=["charge"], field_key=FIELD_KEY)
    with pytest.raises(UsageError):
        store.claim(TaskKey("fp", "charge", unique), request_digest({"a": 1}))
