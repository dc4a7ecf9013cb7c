#!/usr/bin/env python3
"""Python workers for `idemctl demo`'s keys: a mixed-language fleet on the same keys.

    idemctl demo --dsn DSN --run-id RUN --keys 200 --duration 20 &
    PYTHONPATH=clients/python python3 clients/python/examples/demo_worker.py --dsn DSN --run-id RUN --keys 200

Requests go to the keys the demo's C++ workers use (tenant-T:OPERATION:order-RUN-N), with the
same body for the same key (the demo derives it from the key) and the same ignored metadata,
so the request digest is the same whichever language sends it. Each execution, as the demo's
own, calls the "payment service" (demo_payments, idempotent by key, its own connection, no
transaction of ours open) and then writes the business effect (demo_orders_effects, no unique
key) in a short fenced transaction with the success. `idemctl demo`'s check at its end covers
these effects too: one effect and one payment per succeeded key. The effect rows of these
workers carry worker numbers from 1000 up, and so do their keys left processing with an expired
lease (the check names every such key of the run, whichever language claimed it).

Like the demo's own clients, a worker whose connection breaks (a switchover, a restart, a
terminated backend) connects both its connections again, with a growing pause until the server
is back, and asks again with the same key until it has a final answer (in progress, retry later,
a retryable failure and paused are asked again after the pause the answer names). At the stop a
key already sent gets 6 s more. Prints the tally of outcomes; exit 0.
"""

import argparse
import os
import random
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import psycopg  # noqa: E402
from psycopg import sql  # noqa: E402

import idem_client as idem  # noqa: E402

IGNORED = ["meta.trace_id", "meta.sent_at"]  # as the demo's ignoredFields()
CURRENCIES = ["EUR", "USD", "GBP", "CHF"]


def fnv1a(text):
    h = 14695981039346656037
    for b in text.encode("utf-8"):
        h ^= b
        h = (h * 1099511628211) & 0xFFFFFFFFFFFFFFFF
    return h


def body_for(key):
    """The demo's bodyFor(): the request's fields follow from the key."""
    h = fnv1a(str(key))
    return {"amount_cents": 100 + h % 99_900, "currency": CURRENCIES[(h >> 20) % 4],
            "target": "acct-%d" % ((h >> 32) % 10_000)}


def wait_for_tables(conn, schema, seconds=30):
    deadline = time.monotonic() + seconds
    while conn.execute("SELECT to_regclass(%s) IS NOT NULL AND to_regclass(%s) IS NOT NULL",
                       ("%s.demo_payments" % schema, "%s.demo_orders_effects" % schema)).fetchone()[0] is not True:
        if time.monotonic() > deadline:
            raise SystemExit("demo_worker: no demo tables in schema %s: start `idemctl demo` first" % schema)
        time.sleep(0.1)


class Stop(threading.Event):
    """The run's stop, and when it came (a key already sent gets GRACE seconds more)."""

    at = 0.0

    def set(self):
        self.at = time.monotonic()
        super().set()


class Connections:
    """The worker's two connections (its store's and the payment service's), made again after a
    switchover or a restart as the C++ demo's clients do: with a growing pause until the server
    is back, or until the run stops."""

    def __init__(self, args, stop):
        self.args, self.stop = args, stop
        self.conn = self.downstream = self.store = None

    def close(self):
        for c in (self.conn, self.downstream):
            if c is not None:
                c.close()
        self.conn = self.downstream = self.store = None

    def broken(self):
        return any(c is None or c.broken or c.closed for c in (self.conn, self.downstream))

    def ensure(self, grace):
        """True once both connections are up; False when the run stopped (and grace seconds
        passed since) first."""
        if self.store is not None and not self.broken():
            return True
        self.close()
        pause = 0.05
        while not self.stop.is_set() or time.monotonic() < self.stop.at + grace:
            try:
                self.conn = idem.connect(self.args.dsn, application_name="idem python demo worker")
                self.downstream = idem.connect(self.args.dsn, application_name="idem python demo payment service")
                store = idem.TaskStore(self.conn, schema=self.args.schema, lease_ms=5000)
                if self.args.redrive:
                    for tenant in range(1, self.args.tenants + 1):
                        for operation in self.args.operations.split(","):
                            store.register_redrivable("tenant-%d" % tenant, operation)
                self.store = store
                return True
            except (idem.DatabaseUnavailable, psycopg.OperationalError):
                self.close()
                time.sleep(pause)
                pause = min(pause * 2, 1.0)
        return False


# Answers after which the client asks again with the same key (someone else holds it, it is in
# backoff, this attempt failed and will be retried, or intake is paused), as the demo's clients do.
ASK_AGAIN = {idem.Outcome.IN_PROGRESS, idem.Outcome.RETRY_LATER, idem.Outcome.WILL_RETRY, idem.Outcome.PAUSED}
GRACE = 6.0  # seconds after the stop to settle a key already sent: a lease (5 s) and a second


def worker(index, args, tally, lock, stop):
    rng = random.Random()
    links = Connections(args, stop)
    table = lambda name: sql.Identifier(args.schema, name)  # noqa: E731
    operations = args.operations.split(",")
    key = None
    pause = 0.0

    def count(name):
        with lock:
            tally[name] = tally.get(name, 0) + 1

    while True:
        if key is None:
            if stop.is_set():
                break
            key = idem.TaskKey("tenant-%d" % rng.randint(1, args.tenants), rng.choice(operations),
                               "order-%s-%d" % (args.run_id, rng.randrange(args.keys)))
        elif stop.is_set() and time.monotonic() > stop.at + GRACE:
            count("given_up_at_stop")
            break
        # A key already sent is asked again until it has a final answer: one that got no answer
        # (the connection broke, the server is no longer the primary) must not be left
        # processing when its lease runs out.
        if not links.ensure(grace=GRACE):
            count("given_up_at_stop")
            break
        body = body_for(key)
        sent = dict(body, meta={"trace_id": str(rng.getrandbits(63)), "sent_at": int(time.time() * 1000)})
        # A re-drivable operation's claim stores the request (without the ignored metadata).
        digest = idem.canonical_request(sent, IGNORED) if args.redrive else idem.request_digest(sent, IGNORED)

        call = payment_call(links.downstream, table, body)

        def record(tx, ctx, _answer):
            tx.execute(sql.SQL("INSERT INTO {} (idempotency_key, run_id, worker, attempt, amount_cents, currency,"
                               " target) VALUES (%s, %s, %s, %s, %s, %s, %s)").format(table("demo_orders_effects")),
                       (ctx.idempotency_key, args.run_id, 1000 + index, ctx.attempt, body["amount_cents"],
                        body["currency"], body["target"]))
            return {"payment": ctx.idempotency_key, "amount_cents": body["amount_cents"], "currency": body["currency"],
                    "worker": 1000 + index, "attempt": ctx.attempt, "execution": ctx.token[:12]}

        try:
            outcome = idem.run_task(links.store, key, digest, call=call, record=record)
            count(outcome.kind.value)
            if outcome.kind in ASK_AGAIN:
                pause = min(max(outcome.claim.retry_after_ms, outcome.failure.retry_delay_ms, 10), 1000) / 1000.0
            else:
                key, pause = None, (args.workers / args.rate if args.rate > 0 else 0)
        except (idem.DatabaseUnavailable, idem.NotPrimary):
            count("database_errors")
            links.close()
            pause = 0.05
        except Exception as e:  # noqa: BLE001 - the thread goes on, as the demo's own workers do
            # Unexpected: the request is dropped unanswered (the demo's check names its key if
            # it is left processing) and the worker carries on with fresh connections.
            count("errors")
            sys.stderr.write("demo_worker %d: %s: %s\n" % (index, type(e).__name__, e))
            links.close()
            key, pause = None, 0.05
        if pause and key is None:
            stop.wait(pause)  # the next key: the stop cuts the pause short
        elif pause:
            time.sleep(pause)
    links.close()


REDRIVER_WORKER = 1999  # the effect rows of re-driven executions


def payment_call(downstream, table, body):
    def call(ctx):
        downstream.execute(
            sql.SQL("INSERT INTO {} (idempotency_key, amount_cents, currency, target)"
                    " VALUES (%s, %s, %s, %s) ON CONFLICT (idempotency_key) DO NOTHING").format(table("demo_payments")),
            (ctx.idempotency_key, body["amount_cents"], body["currency"], body["target"]))
    return call


def start_redrivers(args, stop):
    """One re-driver per tenant and operation: the demo's execution (the payment call, then the
    effect with the success), its body the stored request's."""
    table = lambda name: sql.Identifier(args.schema, name)  # noqa: E731
    downstream = {}

    def payments():
        # The payment service's connection, shared by the re-drivers one call at a time.
        c = downstream.get("conn")
        if c is None or c.broken or c.closed:
            c = downstream["conn"] = idem.connect(args.dsn, application_name="idem re-driver payment service")
        return c

    lock = threading.Lock()

    def call(ctx):
        with lock:
            payment_call(payments(), table, ctx.request)(ctx)

    def record(tx, ctx, _answer):
        body = ctx.request
        tx.execute(sql.SQL("INSERT INTO {} (idempotency_key, run_id, worker, attempt, amount_cents, currency,"
                           " target) VALUES (%s, %s, %s, %s, %s, %s, %s)").format(table("demo_orders_effects")),
                   (ctx.idempotency_key, args.run_id, REDRIVER_WORKER, ctx.attempt, body["amount_cents"],
                    body["currency"], body["target"]))
        return {"payment": ctx.idempotency_key, "amount_cents": body["amount_cents"], "currency": body["currency"],
                "worker": REDRIVER_WORKER, "attempt": ctx.attempt, "execution": ctx.token[:12], "redriven": True}

    return [idem.redrive(args.dsn, "tenant-%d" % tenant, operation, call=call, record=record, schema=args.schema,
                         worker="python-demo-%d" % os.getpid(), store_options={"lease_ms": 5000}, stop=stop,
                         start=True)
            for tenant in range(1, args.tenants + 1) for operation in args.operations.split(",")]


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dsn", default=os.environ.get("IDEM_DSN", ""))
    parser.add_argument("--schema", default="idem")
    parser.add_argument("--run-id", required=True, help="the run id `idemctl demo` printed (or was given)")
    parser.add_argument("--keys", type=int, required=True, help="business ids per tenant and operation, as the demo's")
    parser.add_argument("--tenants", type=int, default=3)
    parser.add_argument("--operations", default="charge,refund,ship")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--rate", type=float, default=50, help="requests per second over all workers; 0: no pause")
    parser.add_argument("--duration", type=float, default=10)
    parser.add_argument("--no-redrive", dest="redrive", action="store_false",
                        help="no re-drivers, and the operations' requests are not stored")
    args = parser.parse_args()
    with idem.connect(args.dsn) as c:
        wait_for_tables(c, args.schema)
    tally, lock, stop = {}, threading.Lock(), Stop()
    threads = [threading.Thread(target=worker, args=(i, args, tally, lock, stop)) for i in range(args.workers)]
    for t in threads:
        t.start()
    redrive_stop = threading.Event()
    redrivers = start_redrivers(args, redrive_stop) if args.redrive else []
    time.sleep(args.duration)
    stop.set()
    for t in threads:
        t.join()
    redrive_stop.set()
    redriven = {}
    for r in redrivers:
        r.stop()
        for k, v in r.tally.items():
            redriven[k] = redriven.get(k, 0) + v
    print("python demo workers: " + ", ".join("%s %d" % (k, v) for k, v in sorted(tally.items())))
    if redrivers:
        print("python demo re-drivers (%d): " % len(redrivers)
              + (", ".join("%s %d" % (k, v) for k, v in sorted(redriven.items())) or "nothing requeued"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
