"""Re-drivers (schema v25, docs/redrive.md): a worker that re-executes the keys an operator
requeued with "re-execute", from the request their first claim stored.

    idem.redrive(dsn, "tenant-7", "charge", charge, worker="charge-1")   # until stopped

takes the operation's queued re-drive items a batch at a time (idem_redrive_take, SKIP LOCKED in
the database: several re-drivers share the work), runs each through the ordinary run_task with the
stored request's digest and the SAME key, so a re-execution racing the original client's own retry
still has one effect, and records the item's outcome (idem_redrive_finish). It reports itself as
online (idem_redriver_seen) so the console can say "3 workers of charge are online". Between
batches it waits on LISTEN idem_redrive over a direct connection, or polls when the connection
goes through a pooler (pooled=True: PgBouncer in transaction mode drops a session's LISTEN). A
broken connection is made again with a growing pause; stop() ends the loop after the item in
hand, putting the rest of its batch back.

The same loop, with C++'s and TypeScript's outcome mapping: succeeded / replayed -> succeeded,
failed -> failed, conflict -> conflict; in progress, retry later, paused, will retry and lost
ownership -> later (the item is queued again; the key's own backoff and lease decide when).
"""

import dataclasses
import json
import logging
import os
import select
import socket
import threading
import time
from dataclasses import dataclass

import psycopg
from psycopg import sql

from . import __version__
from .digest import CanonicalRequest
from .errors import DatabaseUnavailable, IdemError, NotPrimary
from .key import TaskKey
from .runner import Outcome, TaskContext, run_task
from .store import DEFAULT_SCHEMA, DEFAULT_STORED_REQUEST_BYTES, TaskStore, check_schema_name, connect, translate

log = logging.getLogger("idem.redrive")

CHANNEL = "idem_redrive"
MAX_BATCH = 100  # idem_redrive_take's p_limit bound
SEEN_EVERY_S = 5.0  # presence; online means seen within 30 s, the function writes at most every 5 s
MAX_RECONNECT_PAUSE_S = 5.0

_FINISH = {Outcome.SUCCEEDED: "succeeded", Outcome.REPLAYED: "succeeded", Outcome.FAILED: "failed",
           Outcome.CONFLICT: "conflict"}


def finish_outcome(kind):
    """idem_redrive_finish's outcome for a run's Outcome: in progress, retry later, paused, will
    retry and lost ownership are `later` (queued again; the key's backoff and lease decide)."""
    return _FINISH.get(Outcome(kind), "later")


@dataclass(frozen=True)
class RedriveContext(TaskContext):
    """What a re-driven task sees: the TaskContext plus the stored request (as Python values,
    without the fields its digest ignores) and the re-drive item."""

    request: object = None
    item_id: int = 0


@dataclass(frozen=True)
class RedriveItem:
    item_id: int
    key: str
    request: str  # the stored canonical JSON text
    request_hash: str
    job_id: object = None


def default_worker_name():
    return "%s:%d" % (socket.gethostname()[:100], os.getpid())


class Redriver:
    """The loop, for one (tenant, operation). run_item(conn, item) runs one RedriveItem on the
    re-driver's connection and returns (finish outcome, detail); redrive() and
    HttpIdempotency.redriver() make one. run() blocks until stop(); start() runs it in a thread."""

    def __init__(self, connect_to, tenant, operation, run_item, *, worker=None, version=__version__,
                 schema=DEFAULT_SCHEMA, batch=10, item_lease_ms=60_000, pooled=False, poll_interval=2.0,
                 listen_interval=5.0, register=None, on_open=None, stop=None, later_wait_ms=5_000):
        TaskKey(tenant, operation, "x")  # a bad tenant or operation fails here
        if not 1 <= batch <= MAX_BATCH:
            raise ValueError("batch must be 1 to %d" % MAX_BATCH)
        if not 1000 <= item_lease_ms <= 3_600_000:
            raise ValueError("item_lease_ms must be 1000 to 3600000 (1 h)")
        # An item put back (later) is taken again when its key's lease or backoff ends, but after
        # at most later_wait_ms (schema v27): a holder that finishes early is not waited out.
        if not 2000 <= later_wait_ms <= 3_600_000:
            raise ValueError("later_wait_ms must be 2000 to 3600000 (1 h)")
        if not 0.05 <= poll_interval <= 2.0:
            raise ValueError("poll_interval must be 0.05 to 2 s (a pooled re-driver polls at least every 2 s)")
        self.connect_to = connect_to
        self.tenant, self.operation = tenant, operation
        self.run_item = run_item
        self.worker = (worker or default_worker_name())[:200]
        self.version = str(version)[:100]
        self.schema = check_schema_name(schema)
        self.batch, self.item_lease_ms, self.pooled = batch, item_lease_ms, pooled
        self.later_wait_ms = later_wait_ms
        self.poll_interval, self.listen_interval = poll_interval, max(poll_interval, listen_interval)
        self.register = register  # None, or the keyword arguments of TaskStore.register_redrivable
        self.on_open = on_open  # called with each new connection (after register, before the first take)
        self.stopping = stop if stop is not None else threading.Event()
        self.tally = {}
        self.conn = None
        self._woken = False
        self._put_back = False
        self._seen_at = 0.0
        self._thread = None

    # --- the loop ------------------------------------------------------------------------------

    def run(self):
        """Re-drives until stop(); returns the tally of finish outcomes (and reconnects)."""
        pause = 0.1
        while not self.stopping.is_set():
            try:
                if self.conn is None:
                    self._open()
                items = self._take()
                if not items:
                    # An item put back (later) sends no NOTIFY: while one may be due soon, poll.
                    self._wait(self.poll_interval if self.pooled or self._put_back else self.listen_interval)
                    self._put_back = False
                    continue
                for i, item in enumerate(items):
                    if self.stopping.is_set():
                        for rest in items[i:]:  # back to the queue for another re-driver
                            self._finish(rest, "later", "the re-driver stopped")
                        break
                    self._seen_if_due()
                    outcome, detail = self._run_one(item)
                    self._finish(item, outcome, detail)
                pause = 0.1
            except (DatabaseUnavailable, NotPrimary, psycopg.Error, IdemError) as e:
                # A broken connection, or a refusal (not registered, no right, not online yet): the
                # items taken and not finished come back when their lease ends; try again.
                lost = isinstance(e, (DatabaseUnavailable, NotPrimary, psycopg.OperationalError))
                self._count("reconnects" if lost else "errors")
                log.warning("re-driver %s of %s:%s: %s; connecting again in %.1f s", self.worker, self.tenant,
                            self.operation, e, pause)
                self._close()
                self.stopping.wait(pause)
                pause = min(pause * 2, MAX_RECONNECT_PAUSE_S)
        self._close()
        return dict(self.tally)

    def start(self):
        """run() in a daemon thread; stop() ends it."""
        self._thread = threading.Thread(target=self.run, name="idem re-driver %s" % self.operation, daemon=True)
        self._thread.start()
        return self

    def stop(self, timeout=None):
        self.stopping.set()
        if self._thread is not None:
            self._thread.join(timeout)

    # --- one connection ------------------------------------------------------------------------

    def _open(self):
        conn = self.connect_to() if callable(self.connect_to) else connect(
            self.connect_to, application_name="idem re-driver %s" % self.operation[:40])
        self.conn = conn
        if self.register is not None:
            TaskStore(conn, self.schema).register_redrivable(self.tenant, self.operation, **self.register)
        if not self.pooled:
            conn.add_notify_handler(self._notified)
            conn.execute(sql.SQL("LISTEN {}").format(sql.Identifier(CHANNEL)))
        self._seen_at = 0.0
        self._seen_if_due()
        if self.on_open is not None:
            self.on_open(conn)

    def _close(self):
        conn, self.conn = self.conn, None
        if conn is not None:
            try:
                conn.close()
            except psycopg.Error:
                pass

    def _call(self, name, args, params):
        try:
            return self.conn.execute(sql.SQL("SELECT * FROM {}.{}(%s)" % args).format(
                sql.Identifier(self.schema), sql.Identifier(name)), params).fetchall()
        except psycopg.Error as e:
            raise translate(e) or e from e

    def _seen_if_due(self):
        if time.monotonic() - self._seen_at >= SEEN_EVERY_S:
            self._call("idem_redriver_seen", "%s, %s, %s, %s", (self.tenant, self.operation, self.worker, self.version))
            self._seen_at = time.monotonic()

    def _take(self):
        self._seen_if_due()
        self._woken = False
        rows = self._call("idem_redrive_take", "%s, %s, %s, %s, %s",
                          (self.tenant, self.operation, self.worker, self.batch, self.item_lease_ms))
        return [RedriveItem(r[0], r[1], r[2], r[3], r[4]) for r in rows]

    def _finish(self, item, outcome, detail):
        row = self._call("idem_redrive_finish", "%s, %s, %s, %s, %s",
                         (item.item_id, self.worker, outcome, None if detail is None else str(detail)[:2000],
                          self.later_wait_ms))
        # stale: the item moved on meanwhile (its lease ran out and another re-driver took it)
        self._count(outcome if row and row[0][0] != "stale" else "stale")
        if outcome == "later":
            self._put_back = True

    def _run_one(self, item):
        try:
            return self.run_item(self.conn, item)
        except (DatabaseUnavailable, NotPrimary, psycopg.OperationalError):
            raise
        except (IdemError, ValueError, psycopg.Error) as e:
            # The stored request cannot run (refused by the database, not JSON, a bad key): no
            # later try will do better.
            return "failed", "%s: %s" % (type(e).__name__, e)

    def _notified(self, notify):
        if notify.channel == CHANNEL and notify.payload == "%s:%s" % (self.tenant, self.operation):
            self._woken = True

    def _wait(self, seconds):
        """Until a NOTIFY for this operation (direct connection), the stop, or seconds passed."""
        deadline = time.monotonic() + seconds
        while not self._woken and not self.stopping.is_set():
            left = deadline - time.monotonic()
            if left <= 0:
                return
            if self.pooled:
                self.stopping.wait(min(left, 0.25))
                continue
            self._seen_if_due()
            ready, _, _ = select.select([self.conn.fileno()], [], [], min(left, 0.25))
            if ready:
                self.conn.execute("SELECT 1")  # reads the notifications (or finds the socket closed)

    def _count(self, what):
        self.tally[what] = self.tally.get(what, 0) + 1


def redrive(connect_to, tenant, operation, task=None, *, call=None, record=None, worker=None, schema=DEFAULT_SCHEMA,
            register=True, max_request_bytes=DEFAULT_STORED_REQUEST_BYTES, redact=(), store_options=None,
            counters=None, start=False, **options):
    """Re-drives the operation's requeued keys with run_task until stopped (see the module's text).

    connect_to: a DSN, or a function returning a psycopg connection (idem_client.connect makes
    one as the store wants it). task(conn, ctx), or call(ctx) and record(conn, ctx, answer), as
    run_task takes them; ctx is a RedriveContext whose .request is the stored request. register:
    registers the operation as re-drivable first (max_request_bytes, redact), as a worker that
    serves it does. options: Redriver's (batch, item_lease_ms, pooled, poll_interval, stop, ...).

    Blocks and returns the tally of outcomes, or with start=True returns the running Redriver."""
    if task is not None and (call is not None or record is not None):
        raise TypeError("redrive takes a task, or call= and record=, not both")
    if task is None and (call is None or record is None):
        raise TypeError("redrive needs a task, or both call= and record=")
    store_options = dict(store_options or {})

    def run_item(conn, item):
        key = TaskKey.parse(item.key)
        request = json.loads(item.request)
        store = TaskStore(conn, schema, counters=counters, **store_options)
        store.redrivable[(tenant, operation)] = max_request_bytes

        def with_request(ctx):
            fields = {f.name: getattr(ctx, f.name) for f in dataclasses.fields(TaskContext)}
            return RedriveContext(request=request, item_id=item.item_id, **fields)

        canonical = CanonicalRequest(item.request, item.request_hash)
        if task is not None:
            out = run_task(store, key, canonical, lambda c, ctx: task(c, with_request(ctx)))
        else:
            out = run_task(store, key, canonical, call=lambda ctx: call(with_request(ctx)),
                           record=lambda c, ctx, answer: record(c, with_request(ctx), answer))
        return finish_outcome(out.kind), out.error or None

    r = Redriver(connect_to, tenant, operation, run_item, worker=worker, schema=schema,
                 register={"max_request_bytes": max_request_bytes, "redact": tuple(redact)} if register else None,
                 **options)
    return r.start() if start else r.run()


__all__ = ["CHANNEL", "RedriveContext", "RedriveItem", "Redriver", "finish_outcome", "redrive"]
