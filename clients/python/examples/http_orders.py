"""The example order service of docs/http-idempotency.md: POST /orders (requires Idempotency-Key)
inserts one row into shop.orders in the atomic phase and answers 201 with Location; GET
/orders/<id> reads it back. X-Demo-Fail: <status> answers that status before writing;
X-Demo-Sleep-Ms: N waits N ms before writing.

    python3 http_orders.py --dsn DSN --listen 127.0.0.1:8001 [--framework fastapi|flask] [--bare]

fastapi runs the ASGI middleware under uvicorn, flask the WSGI middleware under werkzeug's
threaded server; --bare serves the same handler without the middleware (for bench/). --redrive
(schema v25) makes POST /orders re-drivable: its requests are stored and a re-driver calls the same
handler again with the stored body when an operator requeues one with "re-execute".
"""

import argparse
import json
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import psycopg  # noqa: E402

from idem_client.http import HttpIdempotency, HttpResponse, Route, operation_of  # noqa: E402

# The table's definition, shared with the TypeScript example. The schema is created only when
# missing: CREATE SCHEMA IF NOT EXISTS needs CREATE on the database even when the schema exists
# (scripts/run.sh creates it for the demo's login).
SCHEMA_FILE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "shop-orders.sql")


def ensure_schema(dsn):
    with psycopg.connect(dsn, autocommit=True, prepare_threshold=None) as c:
        with c.transaction():
            # Two services starting together would race on CREATE ... IF NOT EXISTS.
            c.execute("SELECT pg_advisory_xact_lock(hashtext('idem example shop.orders'))")
            if c.execute("SELECT to_regnamespace('shop')").fetchone()[0] is None:
                c.execute("CREATE SCHEMA shop")
            with open(SCHEMA_FILE, encoding="utf-8") as f:
                c.execute(f.read())


def parse_order(body):
    """The order, or an error message for a 400."""
    try:
        doc = json.loads(body)
    except ValueError:
        return None, "the body is not JSON"
    if not isinstance(doc, dict):
        return None, "the body is not a JSON object"
    order_id, amount, currency = doc.get("order_id"), doc.get("amount_cents"), doc.get("currency")
    if not isinstance(order_id, str) or not 1 <= len(order_id) <= 200:
        return None, "order_id must be a string of 1 to 200 characters"
    if isinstance(amount, bool) or not isinstance(amount, int) or not 0 < amount < 10**12:
        return None, "amount_cents must be a positive integer"
    if not isinstance(currency, str) or len(currency) != 3 or not currency.isalpha():
        return None, "currency must be three letters"
    return {"order_id": order_id, "amount_cents": amount, "currency": currency.upper()}, None


def demo_faults(header):
    """(fail status or None) after the X-Demo-Sleep-Ms wait."""
    sleep_ms = header("x-demo-sleep-ms")
    if sleep_ms and sleep_ms.isdigit():
        time.sleep(min(int(sleep_ms), 120_000) / 1000.0)
    fail = header("x-demo-fail")
    return int(fail) if fail and fail.isdigit() and 100 <= int(fail) <= 599 else None


def insert_order(tx, order, key):
    row = tx.execute("INSERT INTO shop.orders (order_id, amount_cents, currency, idempotency_key)"
                     " VALUES (%s, %s, %s, %s) RETURNING id",
                     (order["order_id"], order["amount_cents"], order["currency"], key)).fetchone()
    return dict(order, id=row[0])


def read_order(conn, order_id):
    row = conn.execute("SELECT id, order_id, amount_cents, currency FROM shop.orders WHERE id = %s",
                       (order_id,)).fetchone()
    return None if row is None else {"id": row[0], "order_id": row[1], "amount_cents": row[2], "currency": row[3]}


class BareTx:
    """--bare: the handler's own transaction on a pooled connection, as without Idem."""

    def __init__(self, pool):
        self.pool = pool

    def run(self, fn):
        conn = self.pool.get()
        try:
            conn.execute("BEGIN")
            out = fn(conn)
            conn.execute("COMMIT")
            return out
        finally:
            self.pool.put(conn)


def create_order(tx_runner, ctx, body, header):
    """The handler, framework-free: (status, headers, body dict)."""
    order, error = parse_order(body)
    if error:
        return 400, [], {"error": error}
    fail = demo_faults(header)
    if fail:
        return fail, [], {"error": "X-Demo-Fail asked for %d" % fail}
    if ctx is not None:
        saved = insert_order(ctx.tx, order, ctx.idempotency_key)
    else:
        saved = tx_runner.run(lambda tx: insert_order(tx, order, None))
    return 201, [("Location", "/orders/%d" % saved["id"])], saved


def redrive_order(pool):
    """The handler as a re-driver calls it: the stored request in, the response out (as
    JSONResponse writes it)."""
    bare = BareTx(pool)

    def handler(request, ctx):
        status, headers, doc = create_order(bare, ctx, request.body,
                                            lambda name: (request.header(name) or [None])[0])
        body = json.dumps(doc, ensure_ascii=False, allow_nan=False, separators=(",", ":")).encode("utf-8")
        return HttpResponse(status, [("content-type", "application/json")] + list(headers), body)

    return handler


def fastapi_app(idem, pool, tenant="default", route=None):
    from fastapi import FastAPI, Request
    from fastapi.responses import JSONResponse
    from starlette.concurrency import run_in_threadpool

    from idem_client.http.asgi import IdempotencyMiddleware

    app = FastAPI()
    if idem is not None:
        app.add_middleware(IdempotencyMiddleware, idem=idem, routes={"POST /orders": route or Route()},
                           tenant=lambda request: tenant)
    bare = BareTx(pool)

    @app.post("/orders")
    async def post_order(request: Request):
        body = await request.body()
        ctx = getattr(request.state, "idem", None)
        status, headers, doc = await run_in_threadpool(create_order, bare, ctx, body, request.headers.get)
        return JSONResponse(doc, status_code=status, headers=dict(headers))

    @app.get("/orders/{order_id}")
    def get_order(order_id: int):
        conn = pool.get()
        try:
            doc = read_order(conn, order_id)
        finally:
            pool.put(conn)
        return JSONResponse(doc if doc else {"error": "no such order"}, status_code=200 if doc else 404)

    return app


def flask_app(idem, pool, tenant="default", route=None):
    from flask import Flask, Response, request

    from idem_client.http.wsgi import IdempotencyWSGI, flask_routes

    app = Flask("idem-orders")
    bare = BareTx(pool)

    @app.post("/orders")
    def post_order():
        ctx = request.environ.get("idem")
        status, headers, doc = create_order(bare, ctx, request.get_data(), request.headers.get)
        return Response(json.dumps(doc), status=status, headers=headers, content_type="application/json")

    @app.get("/orders/<int:order_id>")
    def get_order(order_id):
        conn = pool.get()
        try:
            doc = read_order(conn, order_id)
        finally:
            pool.put(conn)
        return Response(json.dumps(doc if doc else {"error": "no such order"}), status=200 if doc else 404,
                        content_type="application/json")

    if idem is not None:
        app.wsgi_app = IdempotencyWSGI(app.wsgi_app, idem, flask_routes(app, {"POST /orders": route or Route()}),
                                      tenant=lambda environ: tenant)
    return app


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dsn", required=True)
    parser.add_argument("--listen", default="127.0.0.1:8001")
    parser.add_argument("--framework", choices=["fastapi", "flask"], default="fastapi")
    parser.add_argument("--bare", action="store_true", help="the same handler without the middleware")
    parser.add_argument("--tenant", default="default", help="the tenant of every request (a real service "
                        "resolves it from the authenticated principal)")
    parser.add_argument("--redrive", action="store_true", help="POST /orders is re-drivable: its requests are "
                        "stored and a re-driver runs what an operator requeues with re-execute")
    parser.add_argument("--lease-ms", type=int, default=int(os.environ.get("IDEM_HTTP_LEASE_MS", "30000")))
    parser.add_argument("--one-transaction", action="store_true",
                        default=os.environ.get("IDEM_HTTP_ONE_TRANSACTION", "") == "1",
                        help="claim, the order's insert and the stored response in one transaction")
    parser.add_argument("--record-at-commit", action="store_true",
                        default=os.environ.get("IDEM_HTTP_RECORD_AT_COMMIT", "") == "1",
                        help="one transaction without a claim: the order's insert, then the key recorded with the "
                        "response in one statement, one commit")
    args = parser.parse_args()
    host, _, port = args.listen.rpartition(":")
    ensure_schema(args.dsn)
    from idem_client.http.core import ConnectionPool
    from idem_client.retrypolicy import RetryPolicy

    idem = None if args.bare else HttpIdempotency(
        args.dsn, lease_ms=args.lease_ms, one_transaction=args.one_transaction,
        record_at_commit=args.record_at_commit,
        duplicate_wait_ms=int(os.environ.get("IDEM_HTTP_DUPLICATE_WAIT_MS", "2000")),
        max_response_bytes=int(os.environ.get("IDEM_HTTP_MAX_RESPONSE_BYTES", str(1 << 20))), retry=RetryPolicy(base_delay_ms=200, max_delay_ms=2000))
    pool = ConnectionPool(args.dsn, 20, "idem example orders")
    route = Route(redrive=args.redrive)
    if idem is not None and args.redrive:
        # What an operator requeues with re-execute runs again here, in a thread of its own.
        idem.redriver(args.tenant, operation_of("POST", "/orders"), redrive_order(pool), route).start()
    if args.framework == "fastapi":
        import uvicorn

        uvicorn.run(fastapi_app(idem, pool, args.tenant, route), host=host, port=int(port), log_level="warning")
    else:
        from werkzeug.serving import run_simple

        run_simple(host, int(port), flask_app(idem, pool, args.tenant, route), threaded=True)


if __name__ == "__main__":
    main()
