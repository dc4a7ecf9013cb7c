"""Re-drivers (schema v25): keys an operator requeued with re-execute are run again from their
stored request, with exactly one business effect per key, while the original clients retry too,
after a re-driver is killed mid-batch, and through PgBouncer (polling); a request over the
operation's bound is refused with nothing stored; the same input is stored as the same bytes by
Python, TypeScript and C++; the HTTP middleware's re-drivable route calls its handler again."""

import base64
import json
import os
import secrets
import signal
import subprocess
import sys
import threading
import time

import pytest

from idem_client import (CanonicalRequest, InvalidArgument, Outcome, Refused, TaskFailure, TaskKey, TaskStore,
                         UsageError, canonical_request, connect, redrive, request_digest, run_task)
from idem_client.canonicaljson import JsonError, parse_strict

HERE = os.path.dirname(os.path.abspath(__file__))
CHILD = os.path.join(HERE, "redrive_child.py")
ROOT = os.path.abspath(os.path.join(HERE, "..", "..", ".."))


def wait_for(what, predicate, seconds=60):
    deadline = time.monotonic() + seconds
    while not predicate():
        assert time.monotonic() < deadline, "waited %d s for %s" % (seconds, what)
        time.sleep(0.05)


def request_of(key, i):
    # meta.trace_id is ignored: it is not stored, and the re-driven task does not see it.
    return canonical_request({"order": key.business_id, "amount_cents": 100 + i, "meta": {"trace_id": secrets.token_hex(4)}},
                             ["meta.trace_id"])


def pay(tx, ctx):
    """The business effect: one payment row per execution, written in the fenced transaction."""
    request = getattr(ctx, "request", None)
    amount = request["amount_cents"] if request is not None else None
    tx.execute("INSERT INTO payments (order_id, amount_cents) VALUES (%s, coalesce(%s, -1))",
               (ctx.key.business_id, amount))
    return {"order": ctx.key.business_id, "redriven": request is not None}


def fail_for_good(_tx, _ctx):
    raise TaskFailure("permanent", "gateway down")


def failed_keys(conn, tenant, operation, unique, n):
    """n keys of a re-drivable operation whose first run failed for good (their request stored)."""
    store = TaskStore(conn)
    assert store.register_redrivable(tenant, operation) in ("registered", "unchanged")
    keys = []
    for i in range(n):
        key = TaskKey(tenant, operation, "%s-%d" % (unique, i))
        request = request_of(key, i)
        assert run_task(store, key, request, fail_for_good).kind == Outcome.FAILED
        keys.append((key, request))
    return keys


def requeue_reexecute(conn, key):
    status, seen_us = conn.execute("SELECT status, (extract(epoch FROM updated_at) * 1000000)::bigint"
                                   " FROM idem.task_idempotency WHERE idempotency_key = %s", (str(key),)).fetchone()
    row = conn.execute("SELECT outcome, redrive_item_id FROM idem.idem_requeue_reexecute(%s, %s, %s, 3, %s, %s)",
                       (str(key), status, seen_us, "re-execute after the gateway outage", "pytest")).fetchone()
    assert row[0] == "applied" and row[1] is not None, row
    return row[1]


def open_items(conn, keys):
    return conn.execute("SELECT count(*) FROM idem.idem_redrive_items WHERE idempotency_key = ANY(%s)"
                        " AND state IN ('queued', 'running')", ([str(k) for k, _ in keys],)).fetchone()[0]


def item_states(conn, keys):
    return dict(conn.execute("SELECT state, count(*) FROM idem.idem_redrive_items WHERE idempotency_key = ANY(%s)"
                             " GROUP BY 1", ([str(k) for k, _ in keys],)).fetchall())


def assert_one_effect_each(conn, unique, keys):
    rows = dict(conn.execute("SELECT order_id, count(*) FROM payments WHERE order_id LIKE %s GROUP BY 1",
                             (unique + "-%",)).fetchall())
    assert rows == {k.business_id: 1 for k, _ in keys}
    statuses = conn.execute("SELECT status, count(*) FROM idem.task_idempotency WHERE idempotency_key = ANY(%s)"
                            " GROUP BY 1", ([str(k) for k, _ in keys],)).fetchall()
    assert statuses == [("succeeded", len(keys))]


def test_redrivers_reexecute_requeued_keys_once_while_clients_retry(dsn, conn, unique):
    keys = failed_keys(conn, "rd", "charge", unique, 40)
    for key, _ in keys:
        requeue_reexecute(conn, key)
    assert item_states(conn, keys) == {"queued": 40}
    stop = threading.Event()
    # Short leases: an item that met the client's run comes back after that run's lease.
    redrivers = [redrive(dsn, "rd", "charge", pay, worker="rd-%d" % i, batch=5, stop=stop, start=True,
                         store_options={"lease_ms": 3000}) for i in range(2)]
    outcomes, lock = [], threading.Lock()

    def original_client(part):
        # The client that sent the requests comes back and retries them with the same key and body.
        with connect(dsn) as c:
            store = TaskStore(c, lease_ms=3000)
            store.register_redrivable("rd", "charge")
            for i, key in part:
                while True:
                    out = run_task(store, key, request_of(key, i), pay)
                    if out.kind in (Outcome.SUCCEEDED, Outcome.REPLAYED):
                        break
                    assert out.kind in (Outcome.IN_PROGRESS, Outcome.RETRY_LATER), out
                    time.sleep(0.02)
                with lock:
                    outcomes.append(out.kind)

    numbered = [(i, key) for i, (key, _) in enumerate(keys)]
    clients = [threading.Thread(target=original_client, args=(numbered[i::2],)) for i in range(2)]
    for t in clients:
        t.start()
    try:
        wait_for("every re-drive item to end", lambda: open_items(conn, keys) == 0)
    finally:
        stop.set()
        for r in redrivers:
            r.stop(30)
        for t in clients:
            t.join(60)
    assert len(outcomes) == 40
    assert_one_effect_each(conn, unique, keys)
    # Every item ended succeeded: re-executed here, or replayed what the client's retry did.
    assert item_states(conn, keys) == {"succeeded": 40}
    tallies = [r.tally.get("succeeded", 0) for r in redrivers]
    assert sum(tallies) == 40
    # Both re-drivers reported themselves; the stored requests left out the ignored field.
    seen = conn.execute("SELECT worker FROM idem.idem_redrivers WHERE tenant = 'rd' AND operation = 'charge'"
                        " AND worker IN ('rd-0', 'rd-1') ORDER BY 1").fetchall()
    assert seen == [("rd-0",), ("rd-1",)]
    stored = conn.execute("SELECT request, request_hash FROM idem.idem_stored_requests WHERE idempotency_key = %s",
                          (str(keys[0][0]),)).fetchone()
    assert stored == (keys[0][1].text, keys[0][1].digest) and "trace_id" not in stored[0]


def test_a_redriver_killed_mid_batch_leaves_items_another_finishes(dsn, conn, unique):
    keys = failed_keys(conn, "rd", "refund", unique, 12)
    for key, _ in keys:
        requeue_reexecute(conn, key)
    child = subprocess.Popen([sys.executable, CHILD, dsn, "rd", "refund", "2000", "0.4"], stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT, text=True)
    try:
        # Killed once it has committed a few effects and is inside the next one's transaction.
        wait_for("the first re-driver's effects", lambda: conn.execute(
            "SELECT count(*) FROM payments WHERE order_id LIKE %s", (unique + "-%",)).fetchone()[0] >= 3)
        child.send_signal(signal.SIGKILL)
        child.wait(30)
    finally:
        if child.poll() is None:
            child.kill()
    done_before = conn.execute("SELECT count(*) FROM payments WHERE order_id LIKE %s", (unique + "-%",)).fetchone()[0]
    assert done_before < len(keys), "the killed re-driver had finished everything: nothing was left mid-batch"
    assert item_states(conn, keys).get("running", 0) > 0  # its batch, held by a lease nobody renews
    r = redrive(dsn, "rd", "refund", pay, worker="rd-after", batch=20, item_lease_ms=2000,
                store_options={"lease_ms": 2000}, start=True)
    try:
        wait_for("the second re-driver to finish the items", lambda: open_items(conn, keys) == 0)
    finally:
        r.stop(30)
    assert_one_effect_each(conn, unique, keys)
    assert item_states(conn, keys) == {"succeeded": len(keys)}


def test_redriver_through_pgbouncer_polls(bouncer, dsn, conn, unique):
    keys = failed_keys(conn, "rd", "ship", unique, 10)
    pooled = bouncer.dsn(dsn)
    stop = threading.Event()
    r = redrive(lambda: connect(pooled, application_name="idem pooled re-driver"), "rd", "ship", pay,
                worker="rd-pooled", pooled=True, poll_interval=0.2, stop=stop, start=True)
    try:
        time.sleep(0.5)  # not evidence: the re-driver is polling an empty queue when the requeue comes
        for key, _ in keys:
            requeue_reexecute(conn, key)
        wait_for("the pooled re-driver to finish the items", lambda: open_items(conn, keys) == 0)
    finally:
        r.stop(30)
    assert_one_effect_each(conn, unique, keys)
    assert item_states(conn, keys) == {"succeeded": 10}
    assert r.tally.get("reconnects", 0) == 0 and r.tally["succeeded"] == 10
    assert all(names == [] for names in bouncer.prepared_statements(dsn).values())


def test_redriver_connects_again_after_its_backend_is_terminated(dsn, conn, unique):
    keys = failed_keys(conn, "rd", "void", unique, 4)
    r = redrive(dsn, "rd", "void", pay, worker="rd-cut", start=True)
    try:
        def listening():
            return conn.execute("SELECT count(*) FROM pg_stat_activity WHERE application_name = 'idem re-driver void'"
                                " AND datname = current_database()").fetchone()[0] == 1
        wait_for("the re-driver's connection", listening)
        assert conn.execute("SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE application_name ="
                            " 'idem re-driver void' AND datname = current_database()").fetchone()[0] == 1
        for key, _ in keys:
            requeue_reexecute(conn, key)
        wait_for("the items after the reconnect", lambda: open_items(conn, keys) == 0)
    finally:
        r.stop(30)
    assert r.tally.get("reconnects", 0) >= 1 and r.tally["succeeded"] == 4, r.tally
    assert_one_effect_each(conn, unique, keys)


def test_request_over_the_bound_is_refused_with_nothing_stored(conn, unique):
    store = TaskStore(conn)
    assert store.register_redrivable("rd", "bounded", max_request_bytes=200) in ("registered", "unchanged")
    key = TaskKey("rd", "bounded", unique)
    big = canonical_request({"order": unique, "note": "x" * 300})
    small = canonical_request({"order": unique})

    def absent():
        return conn.execute("SELECT (SELECT count(*) FROM idem.task_idempotency WHERE idempotency_key = %s),"
                            " (SELECT count(*) FROM idem.idem_stored_requests WHERE idempotency_key = %s)",
                            (str(key), str(key))).fetchone() == (0, 0)

    with pytest.raises(InvalidArgument, match="more than the 200 bytes"):
        run_task(store, key, big, pay)
    assert absent()
    # The database's own check, for a store that does not know the bound.
    with pytest.raises(InvalidArgument):
        TaskStore(conn).claim(key, big)
    assert absent()
    # Not the text of its digest: refused too.
    with pytest.raises(InvalidArgument):
        TaskStore(conn).claim(key, CanonicalRequest(small.text, big.digest))
    assert absent()
    # A registered operation's claim without its request is a usage error, before any I/O.
    with pytest.raises(UsageError, match="re-drivable"):
        store.claim(key, small.digest)
    assert absent()
    # A claim that stores its request, of an operation nobody registered: the arguments are fine,
    # the state refuses it (ID004), and nothing is claimed or stored.
    unregistered = TaskKey("rd", "unregistered", unique)
    with pytest.raises(Refused, match="is not registered as re-drivable") as refused:
        TaskStore(conn).claim(unregistered, small)
    assert not isinstance(refused.value, InvalidArgument)
    assert conn.execute("SELECT count(*) FROM idem.task_idempotency WHERE idempotency_key = %s",
                        (str(unregistered),)).fetchone()[0] == 0
    assert run_task(store, key, small, pay).kind == Outcome.SUCCEEDED
    assert conn.execute("SELECT request, bytes FROM idem.idem_stored_requests WHERE idempotency_key = %s",
                        (str(key),)).fetchone() == (small.text, len(small.text))


NODE_STORE = r"""
const idem = require(process.argv[1]);
const lines = require('fs').readFileSync(0, 'utf8').split('\n').filter((l) => l);
(async () => {
    const c = await idem.connect(process.argv[2], 'idem node store check');
    const store = new idem.TaskStore(c);
    await store.registerRedrivable('xl', 'store');
    for (const line of lines) {
        const [n, b64] = line.split(' ');
        const key = new idem.TaskKey('xl', 'store', 'node-' + n);
        const out = await store.claim(key, idem.canonicalRequestFromText(Buffer.from(b64, 'base64')));
        if (!out.mayExecute) throw new Error('not claimed: ' + n);
    }
    await c.end();
})().catch((e) => { console.error(e); process.exit(1); });
"""


def test_python_typescript_and_cpp_store_the_same_bytes(conn, dsn, idemctl):
    """The corpora of the digest cross-check and generated documents, stored by a Python and a
    TypeScript claim: the same rows byte for byte, and the bytes C++ canonicalises to."""
    node_dist = os.path.join(ROOT, "clients", "node", "dist", "src", "index.js")
    assert os.path.exists(node_dist), "build the TypeScript client first (clients/node/build.sh)"
    generate = os.path.join(ROOT, "clients", "corpus", "generate.py")
    lines = subprocess.run([sys.executable, generate, "--corpus"], check=True, stdout=subprocess.PIPE).stdout.split() \
        + subprocess.run([sys.executable, generate, "--seed", "42", "--count", "300"], check=True,
                         stdout=subprocess.PIPE).stdout.split()
    docs = []
    for line in lines:
        raw = base64.b64decode(line)
        try:
            value = parse_strict(raw)
        except JsonError:
            continue
        if len(canonical_request(value).text.encode("utf-8")) <= 60_000:
            docs.append((line, value))
    assert len(docs) > 200
    store = TaskStore(conn)
    store.register_redrivable("xl", "store")
    for n, (_, value) in enumerate(docs):
        assert store.claim(TaskKey("xl", "store", "py-%d" % n), canonical_request(value)).may_execute
    share = subprocess.run([os.path.join(ROOT, "clients", "node", "share.sh")], check=True, text=True,
                           stdout=subprocess.PIPE).stdout.strip()  # where node-pg is, as test.sh finds it
    node = subprocess.run([os.environ.get("NODE", "node"), "-e", NODE_STORE, node_dist, dsn],
                          env=dict(os.environ, NODE_PATH=share), input="".join("%d %s\n" % (n, line.decode()) for n, (line, _) in enumerate(docs)),
                          text=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=120)
    assert node.returncode == 0, node.stdout
    cpp = subprocess.run([idemctl, "digest", "--batch"], input=b"\n".join(line for line, _ in docs) + b"\n",
                         stdout=subprocess.PIPE, check=True).stdout.decode().splitlines()
    rows = dict(conn.execute("SELECT split_part(idempotency_key, ':', 3), convert_to(request, 'UTF8')"
                             " FROM idem.idem_stored_requests WHERE idempotency_key LIKE 'xl:store:%'").fetchall())
    for n, (line, _) in enumerate(docs):
        python_bytes, node_bytes = bytes(rows["py-%d" % n]), bytes(rows["node-%d" % n])
        assert python_bytes == node_bytes, line
        answer = cpp[n].split()
        assert answer[0] == "ok" and base64.b64decode(answer[1]) == python_bytes, line


def test_http_route_redriven_calls_the_handler_again(dsn, conn, unique):
    """A re-drivable route stores the fingerprint's document; the re-driver rebuilds the request
    from it and the handler's response is recorded as a live one's."""
    from starlette.applications import Starlette
    from starlette.responses import JSONResponse
    from starlette.routing import Route as StarletteRoute
    from starlette.testclient import TestClient

    from idem_client.http import HttpIdempotency, HttpResponse, Route, operation_of
    from idem_client.http.asgi import IdempotencyMiddleware

    idem = HttpIdempotency(dsn, lease_ms=2000)
    route = Route(redrive=True, stored_request_bytes=2000)
    fail = {"on": True}

    def handle(body, ctx):
        if fail["on"]:
            return 503, {"error": "downstream away"}
        ctx.tx.execute("INSERT INTO payments (order_id, amount_cents) VALUES (%s, %s)",
                       (body["order_id"], body["amount_cents"]))
        return 201, {"order_id": body["order_id"]}

    async def create(request):
        status, doc = handle(json.loads(await request.body()), request.state.idem)
        return JSONResponse(doc, status_code=status)

    app = Starlette(routes=[StarletteRoute("/orders", create, methods=["POST"])])
    app.add_middleware(IdempotencyMiddleware, idem=idem, routes={"POST /orders": route}, tenant=lambda r: "rd-http")
    client = TestClient(app)
    try:
        answer = client.post("/orders", json={"order_id": unique, "amount_cents": 700},
                             headers={"Idempotency-Key": unique})
        assert answer.status_code == 503  # recorded as a retryable failure; the request is stored
        too_big = client.post("/orders", json={"order_id": unique, "pad": "x" * 3000},
                              headers={"Idempotency-Key": unique + "-big"})
        assert too_big.status_code == 413 and "re-execution" in too_big.json()["detail"]
        key = TaskKey("rd-http", operation_of("POST", "/orders"), unique)
        assert conn.execute("SELECT count(*) FROM idem.task_idempotency WHERE idempotency_key = %s",
                            (str(key) + "-big",)).fetchone()[0] == 0
        fail["on"] = False
        requeue_reexecute(conn, key)

        def handler(request, ctx):
            status, doc = handle(json.loads(request.body), ctx)
            return HttpResponse(status, [("content-type", "application/json")], json.dumps(doc).encode())

        r = idem.redriver("rd-http", operation_of("POST", "/orders"), handler, route, worker="rd-http-1").start()
        try:
            wait_for("the re-driven request", lambda: open_items(conn, [(key, None)]) == 0)
        finally:
            r.stop(30)
        assert item_states(conn, [(key, None)]) == {"succeeded": 1}
        assert conn.execute("SELECT amount_cents FROM payments WHERE order_id = %s", (unique,)).fetchall() == [(700,)]
        # The client's retry replays what the re-driver recorded.
        replay = client.post("/orders", json={"order_id": unique, "amount_cents": 700},
                             headers={"Idempotency-Key": unique})
        assert replay.status_code == 201 and replay.headers["idempotent-replayed"] == "true"
        assert replay.json() == {"order_id": unique}
    finally:
        idem.close()


def test_redriver_under_a_worker_login(dsn, conn, unique):
    """A worker login (idem_worker) registers, stores and re-drives: the grants a re-driving
    service needs, and nothing more (it cannot read the stored requests' table)."""
    import psycopg
    from psycopg import sql
    from psycopg.conninfo import make_conninfo

    role, password = "rd_worker_" + secrets.token_hex(4), secrets.token_hex(16)
    conn.execute(sql.SQL("CREATE ROLE {} LOGIN PASSWORD {} IN ROLE idem_worker").format(sql.Identifier(role),
                                                                                         sql.Literal(password)))
    conn.execute(sql.SQL("GRANT INSERT ON payments TO {}").format(sql.Identifier(role)))
    worker_dsn = make_conninfo(dsn, user=role, password=password)
    tenant = "rdw-" + secrets.token_hex(3)
    # An operation of its own: another login (idemctl demo's, of every tenant) may own "charge".
    operation = "wlcharge"
    try:
        with connect(worker_dsn) as w:
            keys = failed_keys(w, tenant, operation, unique, 3)
            with pytest.raises(psycopg.errors.InsufficientPrivilege):
                w.execute("SELECT count(*) FROM idem.idem_stored_requests")
        for key, _ in keys:
            requeue_reexecute(conn, key)
        r = redrive(worker_dsn, tenant, operation, pay, worker="rd-login", start=True)
        try:
            wait_for("the worker login's re-driver", lambda: open_items(conn, keys) == 0)
        finally:
            r.stop(30)
        assert_one_effect_each(conn, unique, keys)
        assert conn.execute("SELECT db_role FROM idem.idem_redrivers WHERE tenant = %s", (tenant,)).fetchall() \
            == [(role,)]
    finally:
        conn.execute(sql.SQL("DROP OWNED BY {}").format(sql.Identifier(role)))
        conn.execute(sql.SQL("DROP ROLE {}").format(sql.Identifier(role)))


def test_plain_digest_of_an_unregistered_operation_is_unchanged(conn, unique):
    # Operations nobody registered keep the plain claim, and store nothing.
    key = TaskKey("rd", "plain", unique)
    assert run_task(TaskStore(conn), key, request_digest({"order": unique}), pay).kind == Outcome.SUCCEEDED
    assert conn.execute("SELECT count(*) FROM idem.idem_stored_requests WHERE idempotency_key = %s",
                        (str(key),)).fetchone()[0] == 0
