"""The HTTP idempotency contract (docs/http-idempotency.md) against all four adapters: the example
order service (scripts/example-service) under FastAPI (ASGI), Flask (WSGI), Express and Fastify,
driven over real HTTP, each case asserting the answer and the rows in the database.

Needs IDEM_TEST_DSN (a superuser DSN of the test cluster) and IDEMCTL_PATH (to migrate a scratch
database): ctest -R tst_http_conformance, or scripts/test.sh. Nothing is skipped.
"""

import http.client
import json
import os
import secrets
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

import psycopg
import pytest
from psycopg.conninfo import make_conninfo

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
SERVICE = os.path.join(ROOT, "scripts", "example-service")
ADAPTERS = ["python", "python-flask", "node", "node-fastify"]
# The same contract with one transaction for local effects (claim, the order's insert and the stored
# response in one commit): a service per language's core, "-1tx" after the adapter's name.
SERVICES = ADAPTERS + ["python-1tx", "node-1tx"]
# Record at commit (no claim before the handler: the order's insert, then the key recorded with the
# response in one statement): the contract as in one transaction, "-rec" after the adapter's name.
SERVICES += ["python-rec", "node-rec"]
DUPLICATE_WAIT_MS = 1000  # how long a one-transaction duplicate waits for the first request's commit
LEASE_MS = 3000  # short, so that a killed server's key is taken over within the test
MAX_RESPONSE = 200  # bytes stored per response in these services: a long order_id goes past it
OPERATION = "POST/orders"


def wait_for(what, check, timeout=30.0, interval=0.05):
    """check() until it returns something truthy, bounded by the clock."""
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            pytest.fail("timed out after %.0f s waiting for %s" % (timeout, what), pytrace=False)
        time.sleep(interval)


@pytest.fixture(scope="session")
def dsn():
    admin = os.environ.get("IDEM_TEST_DSN")
    idemctl = os.environ.get("IDEMCTL_PATH")
    if not admin or not idemctl:
        pytest.fail("IDEM_TEST_DSN and IDEMCTL_PATH must be set (ctest -R tst_http_conformance or scripts/test.sh)",
                    pytrace=False)
    name = "idem_http_%d_%s" % (os.getpid(), secrets.token_hex(4))
    with psycopg.connect(admin, autocommit=True) as c:
        c.execute('CREATE DATABASE "%s"' % name)
    scratch = make_conninfo(admin, dbname=name)
    try:
        subprocess.run([idemctl, "migrate", "--dsn", scratch], check=True, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE)
        yield scratch
    finally:
        with psycopg.connect(admin, autocommit=True) as c:
            c.execute('DROP DATABASE IF EXISTS "%s" WITH (FORCE)' % name)


@pytest.fixture(scope="session")
def db(dsn):
    c = psycopg.connect(dsn, autocommit=True)
    yield c
    c.close()


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Service:
    """One example service process; kill() and start() again on the same port."""

    def __init__(self, kind, dsn, tenant, extra=()):
        self.record = kind.endswith("-rec")
        self.one_tx = kind.endswith("-1tx") or self.record
        self.kind = kind[:-len("-1tx")] if self.one_tx else kind
        self.dsn, self.tenant, self.extra = dsn, tenant, list(extra)
        self.port = free_port()
        self.proc = None
        self.log = tempfile.TemporaryFile()

    def start(self):
        env = dict(os.environ, IDEM_HTTP_LEASE_MS=str(LEASE_MS), IDEM_HTTP_MAX_RESPONSE_BYTES=str(MAX_RESPONSE),
                   IDEM_HTTP_ONE_TRANSACTION="1" if self.one_tx and not self.record else "",
                   IDEM_HTTP_RECORD_AT_COMMIT="1" if self.record else "",
                   IDEM_HTTP_DUPLICATE_WAIT_MS=str(DUPLICATE_WAIT_MS))
        self.proc = subprocess.Popen([SERVICE, self.kind, "--dsn", self.dsn, "--listen", "127.0.0.1:%d" % self.port,
                                      "--tenant", self.tenant] + self.extra, stdout=self.log, stderr=subprocess.STDOUT, env=env,
                                     start_new_session=True)

        def up():
            if self.proc.poll() is not None:
                self.log.seek(0)
                pytest.fail("%s service ended at start: %s" % (self.kind, self.log.read().decode()[-2000:]),
                            pytrace=False)
            try:
                return request(self.port, "GET", "/orders/0", timeout=2)[0] == 404
            except OSError:
                return False

        wait_for("the %s service to answer" % self.kind, up, timeout=60)
        return self

    def kill(self):
        os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait()

    def stop(self):
        if self.proc and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.kill()
        self.log.close()


@pytest.fixture(scope="module", params=SERVICES)
def svc(request, dsn):
    s = Service(request.param, dsn, "conf-" + request.param).start()
    yield s
    s.stop()


def request(port, method, path, body=b"", headers=(), timeout=20):
    """(status, {lower-case name: value}, body bytes). headers: (name, str or bytes) pairs, sent as given."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        conn.putrequest(method, path, skip_accept_encoding=True)
        for name, value in headers:
            conn.putheader(name, value)
        if method != "GET":
            conn.putheader("Content-Length", str(len(body)))
        conn.endheaders(body if method != "GET" else None)
        r = conn.getresponse()
        return r.status, {k.lower(): v for k, v in r.getheaders()}, r.read()
    finally:
        conn.close()


def order(order_id="o-1", amount=1250, currency="eur", **extra):
    return dict(order_id=order_id, amount_cents=amount, currency=currency, **extra)


def post(svc, key, doc, extra=(), raw=None, timeout=20):
    body = raw if raw is not None else json.dumps(doc).encode()
    headers = [("Content-Type", "application/json")] + ([("Idempotency-Key", key)] if key is not None else [])
    return request(svc.port, "POST", "/orders", body, headers + list(extra), timeout)


def new_key():
    return "k-" + secrets.token_hex(8)


def full_key(svc, key):
    return "%s:%s:%s" % (svc.tenant, OPERATION, key)


def rows(db, svc, key):
    return db.execute("SELECT count(*) FROM shop.orders WHERE idempotency_key = %s", (full_key(svc, key),)).fetchone()[0]


def task(db, svc, key):
    return db.execute("SELECT status, attempts, error_class, error_message FROM idem.task_idempotency"
                      " WHERE idempotency_key = %s", (full_key(svc, key),)).fetchone()


def in_flight(db, svc, key):
    """The first request has claimed the key and its handler runs. In one transaction the claim is
    invisible until the commit: what shows is a transaction holding a write lock on the task table;
    recording at commit, a transaction holding an advisory lock (the key's, taken before the handler)."""
    if not svc.one_tx:
        return task(db, svc, key) is not None
    if svc.record:
        return db.execute("SELECT count(*) FROM pg_locks l JOIN pg_stat_activity a USING (pid)"
                          " WHERE l.locktype = 'advisory' AND l.granted AND l.database ="
                          " (SELECT oid FROM pg_database WHERE datname = current_database())"
                          "   AND a.state = 'idle in transaction'").fetchone()[0] > 0
    return db.execute("SELECT count(*) FROM pg_locks l JOIN pg_stat_activity a USING (pid)"
                      " WHERE l.relation = 'idem.task_idempotency'::regclass AND l.granted"
                      "   AND l.mode = 'RowExclusiveLock' AND a.state = 'idle in transaction'").fetchone()[0] > 0


def all_orders(db):
    return db.execute("SELECT count(*) FROM shop.orders").fetchone()[0]


def all_tasks(db):
    return db.execute("SELECT count(*) FROM idem.task_idempotency").fetchone()[0]


def assert_problem(answer, status):
    code, headers, body = answer
    assert code == status, (code, body)
    assert headers["content-type"].startswith("application/problem+json"), headers
    doc = json.loads(body)
    assert doc["status"] == status and doc["detail"], doc
    return doc


def until_not(svc, key, doc, statuses, extra=(), timeout=20):
    """Posts until the answer is not one of statuses (409 / 503 while in flight or in backoff)."""
    last = {}

    def attempt():
        last["a"] = post(svc, key, doc, extra)
        return last["a"][0] not in statuses

    wait_for("an answer other than %s" % (statuses,), attempt, timeout, 0.1)
    return last["a"]


def test_first_request_then_byte_for_byte_replay(svc, db):
    key = new_key()
    status, headers, body = post(svc, key, order())
    assert status == 201, body
    assert "idempotent-replayed" not in headers
    created = json.loads(body)
    assert headers["location"] == "/orders/%d" % created["id"]
    # Key order and whitespace do not change the fingerprint: the same answer, replayed.
    again = post(svc, key, None, raw=b'{ "currency" : "eur", "amount_cents": 1250.0, "order_id": "o-1" }')
    assert again[0] == 201 and again[2] == body
    assert again[1]["location"] == headers["location"]
    assert again[1]["content-type"] == headers["content-type"]
    assert again[1]["idempotent-replayed"] == "true"
    assert "set-cookie" not in again[1]
    assert rows(db, svc, key) == 1
    assert task(db, svc, key)[0] == "succeeded"
    got = request(svc.port, "GET", headers["location"])
    assert got[0] == 200 and json.loads(got[2])["order_id"] == "o-1"


def test_missing_and_hostile_keys_answer_400_and_write_nothing(svc, db):
    before = (all_orders(db), all_tasks(db))
    assert_problem(post(svc, None, order()), 400)
    for bad in ["x" * 256, "has space", "tab\there", b"caf\xc3\xa9", b"nul\x01byte", ""]:
        status, headers, body = post(svc, bad, order())
        assert status == 400, (bad, status, body)
    assert (all_orders(db), all_tasks(db)) == before
    # 255 visible characters, colons and all, are a key.
    key = "k:" + secrets.token_hex(4) + "~" * 243
    assert post(svc, key, order())[0] == 201
    assert rows(db, svc, key) == 1


def test_same_key_other_body_is_422_and_changes_nothing(svc, db):
    key = new_key()
    first = post(svc, key, order(amount=500))
    assert first[0] == 201
    assert_problem(post(svc, key, order(amount=501)), 422)
    assert_problem(post(svc, key, order(amount=500, currency="usd")), 422)
    again = post(svc, key, order(amount=500))
    assert again[0] == 201 and again[2] == first[2] and again[1]["idempotent-replayed"] == "true"
    assert rows(db, svc, key) == 1


def test_in_flight_duplicate_is_409_with_retry_after(svc, db):
    key = new_key()
    out = {}
    t = threading.Thread(target=lambda: out.setdefault("a", post(svc, key, order(), [("X-Demo-Sleep-Ms", "2500")])))
    t.start()
    wait_for("the first request to claim", lambda: in_flight(db, svc, key))
    if svc.one_tx:
        assert task(db, svc, key) is None  # nothing shows of a one-transaction request in flight
    doc = assert_problem(post(svc, key, order()), 409)
    assert "in progress" in doc["title"].lower()
    t.join(30)
    assert out["a"][0] == 201
    second = post(svc, key, order())
    assert second[0] == 201 and second[1]["idempotent-replayed"] == "true" and second[2] == out["a"][2]
    assert rows(db, svc, key) == 1


def test_conflicting_409_has_retry_after(svc, db):
    key = new_key()
    t = threading.Thread(target=lambda: post(svc, key, order(), [("X-Demo-Sleep-Ms", "2000")]))
    t.start()
    wait_for("the first request to claim", lambda: in_flight(db, svc, key))
    status, headers, _ = post(svc, key, order())
    t.join(30)
    assert status == 409 and int(headers["retry-after"]) >= 1


def test_duplicate_behind_a_short_handler(svc, db):
    """A duplicate of a request whose handler takes 150 ms: in two steps 409 (the claim is seen at
    once; a replay if the first was quicker than the second's claim); in one transaction it waits
    for the first to commit and replays its answer."""
    key = new_key()
    out = {}
    t = threading.Thread(target=lambda: out.setdefault("a", post(svc, key, order(), [("X-Demo-Sleep-Ms", "150")])))
    t.start()
    wait_for("the first request to claim", lambda: in_flight(db, svc, key))
    second = post(svc, key, order())
    t.join(30)
    assert out["a"][0] == 201 and "idempotent-replayed" not in out["a"][1]
    if svc.one_tx:
        assert second[0] == 201 and second[1]["idempotent-replayed"] == "true" and second[2] == out["a"][2]
    elif second[0] != 201:
        assert_problem(second, 409)
    assert rows(db, svc, key) == 1


def test_5xx_is_a_retryable_failure_then_the_retry_runs(svc, db):
    key = new_key()
    failed = post(svc, key, order(), [("X-Demo-Fail", "500")])
    assert failed[0] == 500
    assert rows(db, svc, key) == 0
    status, attempts, error_class, message = task(db, svc, key)
    assert (status, attempts, error_class) == ("retryable_failed", 1, "retryable") and "HTTP 500" in message
    # In backoff the key answers 503 with Retry-After; once due, the retry runs.
    answer = until_not(svc, key, order(), (503,))
    assert answer[0] == 201 and "idempotent-replayed" not in answer[1]
    assert rows(db, svc, key) == 1
    assert task(db, svc, key)[:2] == ("succeeded", 2)


def test_backoff_answers_503_with_retry_after(svc, db):
    key = new_key()
    for code in ("504", "429", "408"):
        answer = until_not(svc, key, order(), (503,), [("X-Demo-Fail", code)])
        assert answer[0] == int(code)
    assert task(db, svc, key)[:2] == ("retryable_failed", 3)
    # The next backoff is at least this long often enough; look for one 503 within a few tries.
    seen = None
    for _ in range(5):
        a = post(svc, key, order(), [("X-Demo-Fail", "500")])
        if a[0] == 503:
            seen = a
            break
    if seen is not None:
        assert_problem(seen, 503)
        assert int(seen[1]["retry-after"]) >= 1
    assert rows(db, svc, key) == 0


def test_exhausted_key_answers_its_recorded_failure(svc, db):
    key = new_key()
    for _ in range(5):
        until_not(svc, key, order(), (503,), [("X-Demo-Fail", "502")])
    assert task(db, svc, key)[0] == "failed"
    doc = assert_problem(post(svc, key, order()), 502)
    assert "HTTP 502" in doc["detail"]
    assert rows(db, svc, key) == 0


def test_final_4xx_is_stored_and_replayed(svc, db):
    key = new_key()
    first = post(svc, key, order(amount=-5))
    assert first[0] == 400
    again = post(svc, key, order(amount=-5))
    assert again[0] == 400 and again[2] == first[2] and again[1]["idempotent-replayed"] == "true"
    assert task(db, svc, key)[0] == "succeeded" and rows(db, svc, key) == 0


def test_twenty_concurrent_duplicates_make_one_effect(svc, db):
    key = new_key()
    barrier = threading.Barrier(20)
    answers = []
    lock = threading.Lock()

    def one():
        barrier.wait()
        a = post(svc, key, order(order_id="race"), [("X-Demo-Sleep-Ms", "300")])
        with lock:
            answers.append(a)

    threads = [threading.Thread(target=one) for _ in range(20)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    statuses = sorted(a[0] for a in answers)
    fresh = [a for a in answers if a[0] == 201 and "idempotent-replayed" not in a[1]]
    assert len(answers) == 20 and len(fresh) == 1, statuses
    for a in answers:
        assert a[0] == 409 or (a[0] == 201 and a[2] == fresh[0][2]), (a[0], a[2])
    assert rows(db, svc, key) == 1


def test_non_json_and_hostile_bodies(svc, db):
    before = all_orders(db)
    key = new_key()
    binary = b"\x00\xff\xfe" + os.urandom(64)
    first = post(svc, key, None, raw=binary)
    assert first[0] == 400
    again = post(svc, key, None, raw=binary)
    assert again[0] == 400 and again[2] == first[2] and again[1]["idempotent-replayed"] == "true"
    assert_problem(post(svc, key, None, raw=binary[:-1]), 422)
    deep = post(svc, new_key(), None, raw=b"[" * 600 + b"]" * 600)
    assert deep[0] == 400
    assert post(svc, new_key(), None, raw=b'{"order_id": "\xff\xfe", "amount_cents": 1, "currency": "eur"}')[0] == 400
    assert_problem(post(svc, new_key(), None, raw=b"{" + b" " * (2 << 20) + b"}"), 413)
    assert all_orders(db) == before


def test_response_too_large_is_sent_once_and_the_key_failed(svc, db):
    key = new_key()
    first = post(svc, key, order(order_id="L" * 190))
    assert first[0] == 201 and len(first[2]) > MAX_RESPONSE
    status, _, error_class, message = task(db, svc, key)
    assert (status, error_class) == ("failed", "permanent") and "larger than the %d bytes" % MAX_RESPONSE in message
    assert rows(db, svc, key) == 1
    doc = assert_problem(post(svc, key, order(order_id="L" * 190)), 500)
    assert "larger than" in doc["detail"]
    assert rows(db, svc, key) == 1


def test_paused_operation_answers_503(svc, db):
    idemctl = os.environ["IDEMCTL_PATH"]
    dsn = svc.dsn
    subprocess.run([idemctl, "pause", "--tenant", svc.tenant, "--operation", OPERATION, "--reason", "conformance",
                    "--dsn", dsn], check=True, stdout=subprocess.PIPE)
    key = new_key()
    try:
        doc = assert_problem(post(svc, key, order()), 503)
        assert "paused" in doc["detail"]
        assert rows(db, svc, key) == 0
    finally:
        subprocess.run([idemctl, "resume", "--tenant", svc.tenant, "--operation", OPERATION, "--reason", "done",
                        "--dsn", dsn], check=True, stdout=subprocess.PIPE)
    assert post(svc, key, order())[0] == 201
    assert rows(db, svc, key) == 1


def test_client_disconnect_mid_handler_then_retry(svc, db):
    key = new_key()
    with pytest.raises(socket.timeout):
        post(svc, key, order(), [("X-Demo-Sleep-Ms", "700")], timeout=0.2)
    answer = until_not(svc, key, order(), (409, 503))
    assert answer[0] == 201
    assert rows(db, svc, key) == 1


def test_server_killed_mid_handler_then_retry(svc, db):
    key = new_key()
    def doomed():
        try:
            post(svc, key, order(), [("X-Demo-Sleep-Ms", "30000")])
        except OSError:
            pass

    t = threading.Thread(target=doomed)
    t.start()
    wait_for("the handler to start", lambda: in_flight(db, svc, key))
    svc.kill()
    t.join(10)
    svc.start()
    if svc.one_tx:
        # The claim rolled back with the rest: nothing is left, no lease to wait out.
        wait_for("the killed transaction to end", lambda: not in_flight(db, svc, key))
        assert task(db, svc, key) is None
        answer = post(svc, key, order())
        assert answer[0] == 201 and "idempotent-replayed" not in answer[1]
        assert rows(db, svc, key) == 1 and task(db, svc, key)[:2] == ("succeeded", 1)
        return
    # Its transaction rolled back with the process; the lease runs out and the retry takes over.
    answer = until_not(svc, key, order(), (409, 503), timeout=LEASE_MS / 1000 + 20)
    assert answer[0] == 201 and "idempotent-replayed" not in answer[1]
    assert rows(db, svc, key) == 1
    assert task(db, svc, key)[:2] == ("succeeded", 2)


def test_counters_show_http_traffic(svc, db):
    key = new_key()
    assert post(svc, key, order())[0] == 201
    assert post(svc, key, order())[0] == 201
    assert post(svc, key, order(amount=1))[0] == 422

    def counted():
        got = dict(db.execute("SELECT outcome, sum(n) FROM idem.idem_counters WHERE tenant = %s AND operation = %s"
                              " GROUP BY outcome", (svc.tenant, OPERATION)).fetchall())
        return got if all(got.get(o, 0) > 0 for o in ("replayed", "conflict", "in_progress", "succeeded")) else None

    wait_for("the counters to be flushed", counted, timeout=10)


def test_one_contract_across_adapters(dsn, db):
    """The same tenant's key sent to each adapter in turn: the same operation name and fingerprint
    everywhere, so the first answer is replayed by all the others, byte for byte, and another body
    is a 422 from each."""
    services = [Service(kind, dsn, "conf-shared") for kind in ADAPTERS]
    try:
        for s in services:
            s.start()
        key = new_key()
        first = post(services[0], key, order(order_id="shared"))
        assert first[0] == 201
        for s in services[1:]:
            again = post(s, key, None, raw=b'{"currency":"eur","order_id":"shared","amount_cents":1250}')
            assert again[0] == 201 and again[2] == first[2], (s.kind, again)
            assert again[1]["location"] == first[1]["location"] and again[1]["idempotent-replayed"] == "true"
            assert_problem(post(s, key, order(order_id="other")), 422)
        assert rows(db, services[0], key) == 1
    finally:
        for s in services:
            if s.proc is not None:
                s.stop()


@pytest.mark.parametrize("kind", ["python", "node"])
def test_requeue_with_reexecute_runs_the_handler_again(kind, dsn, db):
    """--redrive (schema v25): a request that failed with a 500 is stored; an operator's requeue with
    re-execute has the service's re-driver call the handler with the stored body (one order row),
    and the client's retry replays that response."""
    s = Service(kind, dsn, "rd-" + kind, ["--redrive"]).start()
    try:
        key, doc = new_key(), order(order_id="redriven-" + kind, amount=4321)
        assert post(s, key, doc, [("X-Demo-Fail", "500")])[0] == 500  # the handler's own answer
        assert rows(db, s, key) == 0
        stored = db.execute("SELECT request FROM idem.idem_stored_requests WHERE idempotency_key = %s",
                            (full_key(s, key),)).fetchone()
        assert stored is not None and json.loads(stored[0])["body"]["json"] == doc
        status, seen_us = db.execute("SELECT status, (extract(epoch FROM updated_at) * 1000000)::bigint FROM"
                                     " idem.task_idempotency WHERE idempotency_key = %s", (full_key(s, key),)).fetchone()
        assert db.execute("SELECT outcome FROM idem.idem_requeue_reexecute(%s, %s, %s, 1, 'after the 500', 'test')",
                          (full_key(s, key), status, seen_us)).fetchone()[0] == "applied"
        wait_for("the re-driven request", lambda: db.execute(
            "SELECT state FROM idem.idem_redrive_items WHERE idempotency_key = %s", (full_key(s, key),)).fetchone()[0]
            == "succeeded")
        assert db.execute("SELECT order_id, amount_cents FROM shop.orders WHERE idempotency_key = %s",
                          (full_key(s, key),)).fetchall() == [("redriven-" + kind, 4321)]
        code, headers, body = post(s, key, doc)
        assert code == 201 and headers["idempotent-replayed"] == "true" and headers["location"].startswith("/orders/")
        assert json.loads(body)["order_id"] == "redriven-" + kind
    finally:
        s.stop()


if __name__ == "__main__":
    sys.exit(pytest.main([__file__, "-q"]))
