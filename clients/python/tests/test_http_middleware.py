"""The HTTP middleware's paths the example service does not take (tests/http/test_http_conformance.py
drives that one over HTTP): a handler outside the atomic phase kept alive by the heartbeat, an
exception as an unknown outcome, an optional key, headers never replayed, the @idempotent
decorator. Starlette's TestClient runs the ASGI application in process."""

import json
import secrets
import threading
import time

import pytest
from starlette.applications import Starlette
from starlette.responses import JSONResponse, Response
from starlette.routing import Route as StarletteRoute
from starlette.testclient import TestClient

from idem_client.http import HttpIdempotency, Route
from idem_client.http.asgi import IdempotencyMiddleware
from idem_client.http.decorator import NotRun, idempotent
from idem_client.runner import Outcome


@pytest.fixture
def idem(dsn):
    core = HttpIdempotency(dsn, lease_ms=300)
    yield core
    core.close()


def status_of(conn, key):
    return conn.execute("SELECT status, attempts, error_class, error_message FROM idem.task_idempotency"
                        " WHERE idempotency_key = %s", (key,)).fetchone()


def app_with(idem, routes, handlers):
    app = Starlette(routes=[StarletteRoute(path, fn, methods=["POST"]) for path, fn in handlers])
    app.add_middleware(IdempotencyMiddleware, idem=idem, routes=routes, tenant=lambda request: "t-http")
    return app


def test_outside_the_atomic_phase_the_heartbeat_keeps_duplicates_out(idem, conn):
    effects = []

    async def slow(request):
        assert request.state.idem.tx is None
        effects.append(request.state.idem.idempotency_key)
        import anyio
        await anyio.sleep(1.5)  # five leases of 300 ms
        return JSONResponse({"ok": True}, status_code=201)

    app = app_with(idem, {"POST /slow": Route(atomic=False)}, [("/slow", slow)])
    key = secrets.token_hex(6)
    answers = {}

    def first():
        with TestClient(app) as c:
            answers["first"] = c.post("/slow", json={"a": 1}, headers={"Idempotency-Key": key})

    t = threading.Thread(target=first)
    t.start()
    deadline = time.monotonic() + 10
    while status_of(conn, "t-http:POST/slow:" + key) is None and time.monotonic() < deadline:
        time.sleep(0.02)
    time.sleep(0.8)  # past two leases: without the heartbeat the key would be taken over here
    with TestClient(app) as c:
        dup = c.post("/slow", json={"a": 1}, headers={"Idempotency-Key": key})
    t.join(10)
    assert dup.status_code == 409 and dup.headers["content-type"] == "application/problem+json"
    assert answers["first"].status_code == 201
    assert len(effects) == 1
    assert status_of(conn, "t-http:POST/slow:" + key)[:2] == ("succeeded", 1)


def test_an_exception_is_an_unknown_outcome_and_the_retry_runs(idem, conn):
    calls = []

    async def boom(request):
        calls.append(1)
        if len(calls) == 1:
            raise RuntimeError("downstream vanished")
        return JSONResponse({"n": len(calls)}, status_code=200)

    app = app_with(idem, {"POST /boom": Route()}, [("/boom", boom)])
    key = secrets.token_hex(6)
    with TestClient(app, raise_server_exceptions=False) as c:
        first = c.post("/boom", content=b"x", headers={"Idempotency-Key": key})
        assert first.status_code == 500 and json.loads(first.content)["title"] == "Handler failed"
        row = status_of(conn, "t-http:POST/boom:" + key)
        assert row[0] == "retryable_failed" and row[2] == "unknown" and "downstream vanished" in row[3]
        deadline = time.monotonic() + 10
        while True:
            again = c.post("/boom", content=b"x", headers={"Idempotency-Key": key})
            if again.status_code != 503 or time.monotonic() > deadline:
                break
            time.sleep(0.05)
    assert again.status_code == 200 and again.json() == {"n": 2}
    assert status_of(conn, "t-http:POST/boom:" + key)[:2] == ("succeeded", 2)


def test_optional_key_and_headers_never_replayed(idem, conn):
    async def cookie(request):
        r = Response(b"\x00\x01binary", status_code=200, media_type="application/octet-stream")
        r.set_cookie("session", "secret")
        r.headers["ETag"] = '"v1"'
        r.headers["X-Internal"] = "no"
        return r

    app = app_with(idem, {"POST /c": Route(required=False)}, [("/c", cookie)])
    before = conn.execute("SELECT count(*) FROM idem.task_idempotency").fetchone()[0]
    with TestClient(app) as c:
        plain = c.post("/c", content=b"{}")
        assert plain.status_code == 200 and "idempotent-replayed" not in plain.headers
        assert conn.execute("SELECT count(*) FROM idem.task_idempotency").fetchone()[0] == before
        key = secrets.token_hex(6)
        first = c.post("/c", content=b"{}", headers={"Idempotency-Key": key})
        again = c.post("/c", content=b"{}", headers={"Idempotency-Key": key})
    assert first.headers.get("set-cookie") and again.headers.get("idempotent-replayed") == "true"
    assert again.content == b"\x00\x01binary" and again.headers["etag"] == '"v1"'
    assert "set-cookie" not in again.headers and "x-internal" not in again.headers
    stored = conn.execute("SELECT result_json::text FROM idem.task_idempotency WHERE idempotency_key = %s",
                          ("t-http:POST/c:" + key,)).fetchone()[0]
    assert "secret" not in stored and "body_b64" in stored


def test_idempotent_decorator_runs_once_and_replays(idem, conn):
    @idempotent(idem, operation="charge", tenant="t-deco")
    def charge(tx, payload):
        tx.execute("INSERT INTO public.payments (order_id, amount_cents) VALUES (%s, %s)",
                   (payload["order_id"], payload["amount_cents"]))
        return {"charged": payload["amount_cents"]}

    order_id = "o-" + secrets.token_hex(6)
    assert charge(order_id, {"order_id": order_id, "amount_cents": 500}) == {"charged": 500}
    assert charge(order_id, {"amount_cents": 500, "order_id": order_id}) == {"charged": 500}
    with pytest.raises(NotRun) as refused:
        charge(order_id, {"order_id": order_id, "amount_cents": 501})
    assert refused.value.outcome.kind == Outcome.CONFLICT
    assert conn.execute("SELECT count(*) FROM public.payments WHERE order_id = %s", (order_id,)).fetchone()[0] == 1


def test_plain_json_fingerprint_is_the_strict_one():
    """fingerprint() canonicalises a plain JSON body with the json module's C code (fast_json): the
    digest must be the one parse_strict and canonical_json give, for every body, plain or not."""
    import random

    from idem_client.counters import OutcomeCounters
    from idem_client.digest import request_digest
    from idem_client.http.core import HttpRequest, fast_json

    core = HttpIdempotency("host=/nonexistent", counters=OutcomeCounters())
    bodies = [b'{"order_id":"o-1","amount_cents":1250,"currency":"eur"}',
              b'{ "currency" : "eur", "amount_cents": 1250.0, "order_id": "o-1" }', b'[1,2,{"b":1,"a":[true,false,null]}]',
              b'"str"', b"5", b"-0", b"9007199254740991", b"9007199254740993", b"-9007199254740993", b'{"a":1,"a":2}',
              '{"\u00e9":"\u2028","e":"\x7f","\u00ff":1,"\ufffd":2,"\ue000":3}'.encode(),
              '{"\U0001F600":1,"\ue000":2}'.encode(), b'{"\\ud83d\\ude00":1,"\\ue000":2}', b'{"a":"\\ud800"}',
              b'{"a":"\\u0000\\n\\t\\u001f\\"\\\\/\\u00e9"}', b'\xef\xbb\xbf{"a":1}', b'{"a":NaN}', b'{"a":Infinity}',
              b'{"a":1} x', b"[" * 600 + b"]" * 600, b"[" * 300 + b"]" * 300, b'{"a":1e400}', b'{"a":1e-400}',
              b'{"a":"\xff"}', b'{"a":"\xed\xa0\x80"}', b'  {"a" :\n1}\r\n', b'{"a":"\x01"}', b"[1,]", b"{'a':1}",
              b'{"k":{"z":1,"y":{"x":[1,"2"]}}}', b"[]", b"{}", b"null", b"true", b"\x00\xff", b"1 2", b" "]
    rng = random.Random(43)
    for _ in range(300):
        doc = {rng.choice(["", "a", "Z", "\u00e9", "\u4e2d", "\ue000", "\U0001F600", "k.y"]) + str(rng.randint(0, 9)):
               rng.choice([rng.randint(-10 ** 6, 10 ** 6), "x\u00e9\n\u2028", None, True, [1, {"q": "w"}], 0.5])
               for _ in range(rng.randint(0, 6))}
        bodies.append(json.dumps(doc, ensure_ascii=rng.choice([True, False])).encode())
    plain = 0
    for body in bodies:
        plain += fast_json(body) is not None
        for route in (Route(), Route(ignore_fields=("a", "k.y"), fingerprint_headers=("x-h",))):
            request = HttpRequest("POST", "/orders/<int:id>", {"content-type": ["application/json"], "x-h": ["v\u00e9"]},
                                  body, "t")
            assert core.fingerprint(request, route) == request_digest(core.fingerprint_doc(request, route)), body[:80]
    assert plain > 100  # the fast path is taken, not only the strict one
