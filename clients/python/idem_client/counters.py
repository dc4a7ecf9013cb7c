"""Per-minute outcome counts, aggregated in memory and flushed in one add_counters() call per
batch, as core/counters.h does: counting on the claim path would make every claim of an
operation update the same counter row."""

import json
import threading
import time

import psycopg
from psycopg import sql

from .errors import INVALID_ARGUMENT, InvalidArgument

ACQUIRED = "acquired"
REACQUIRED_LEASE = "reacquired_lease"
REACQUIRED_RETRY = "reacquired_retry"
REPLAYED = "replayed"
IN_PROGRESS = "in_progress"
CONFLICT = "conflict"
RETRY_LATER = "retry_later"
REJECTED_FAILED = "rejected_failed"
STALE_TOKEN = "stale_token"
SUCCEEDED = "succeeded"
FAILED_RETRYABLE = "failed_retryable"
FAILED_PERMANENT = "failed_permanent"
FAILED_UNKNOWN = "failed_unknown"
EXHAUSTED = "exhausted"
RETRY_FAILED = "retry_failed"  # a failure of attempt 2 or later (schema v10)
PAUSED = "paused"  # a claim turned away by a pause (schema v15)

OUTCOMES = frozenset([ACQUIRED, REACQUIRED_LEASE, REACQUIRED_RETRY, REPLAYED, IN_PROGRESS, CONFLICT, RETRY_LATER,
                      REJECTED_FAILED, STALE_TOKEN, SUCCEEDED, FAILED_RETRYABLE, FAILED_PERMANENT, FAILED_UNKNOWN,
                      EXHAUSTED, RETRY_FAILED, PAUSED])

MAX_NAME_BYTES = 64
MAX_ADD = 1_000_000_000_000
MAX_BATCH_ROWS = 10_000
MAX_AGE_MINUTES = 30 * 24 * 60


class OutcomeCounters:
    """Thread-safe; add() on the claim path takes a lock for a dict increment."""

    def __init__(self, clock=time.time):
        self._lock = threading.Lock()
        self._pending = {}
        self._clock = clock
        self.sends_retry_failed = True

    def add(self, tenant, operation, outcome, n=1):
        """Raises ValueError for an unknown outcome, an empty or over-long tenant or operation,
        or n outside 0 .. MAX_ADD (the bounds add_counters() enforces, refused here rather
        than at the flush)."""
        if outcome not in OUTCOMES:
            raise ValueError("unknown outcome counter '%s'" % outcome)
        for name in (tenant, operation):
            if not isinstance(name, str) or not 1 <= len(name.encode("utf-8")) <= MAX_NAME_BYTES:
                raise ValueError("counter tenant and operation must be 1 to %d bytes" % MAX_NAME_BYTES)
        if isinstance(n, bool) or not isinstance(n, int) or not 0 <= n <= MAX_ADD:
            raise ValueError("an outcome count must be 0 to %d" % MAX_ADD)
        minute = int(self._clock() // 60)
        key = (minute, tenant, operation, outcome)
        with self._lock:
            self._pending[key] = self._pending.get(key, 0) + n

    def pending_rows(self):
        with self._lock:
            return len(self._pending)

    def _restore(self, batch):
        with self._lock:
            for key, n in batch.items():
                self._pending[key] = self._pending.get(key, 0) + n

    def batches(self, batch, with_retry_failed):
        """The add_counters() arguments for a batch: JSON arrays of at most MAX_BATCH_ROWS
        {"m": minute as Unix seconds, "t", "o", "w": outcome, "n"} rows, in key order (two
        flushers lock counter rows in the same order), without minutes older than 30 days."""
        oldest = int(self._clock() // 60) - MAX_AGE_MINUTES
        chunks = []
        for key in sorted(batch):
            minute, tenant, operation, outcome = key
            if minute < oldest:
                continue
            if outcome == RETRY_FAILED and not with_retry_failed:
                continue
            if not chunks or len(chunks[-1]) >= MAX_BATCH_ROWS:
                chunks.append([])
            chunks[-1].append({"m": minute * 60, "t": tenant, "o": operation, "w": outcome, "n": batch[key]})
        return [json.dumps(rows, separators=(",", ":"), ensure_ascii=False) for rows in chunks]

    def flush(self, conn, schema="idem"):
        """Writes and clears what has accumulated, in one transaction; returns the number of
        counter rows written. On failure the counts are kept for the next try, except a batch
        the database refuses as out of bounds (ID003, raised as InvalidArgument), which would be
        refused every time. A schema before v10 refuses retry_failed: the batch goes again
        without it, and this object leaves it out from then on."""
        with self._lock:
            batch, self._pending = self._pending, {}
        if not batch:
            return 0
        has_retry_failed = any(key[3] == RETRY_FAILED for key in batch)
        call = sql.SQL("SELECT {}.{}(%s::jsonb)").format(sql.Identifier(schema), sql.Identifier("add_counters"))

        def send(chunks):
            with conn.transaction():
                for rows in chunks:
                    conn.execute(call, (rows,))

        try:
            try:
                send(self.batches(batch, self.sends_retry_failed))
            except psycopg.Error as e:
                if getattr(e, "sqlstate", None) != INVALID_ARGUMENT or not has_retry_failed \
                        or not self.sends_retry_failed:
                    raise
                send(self.batches(batch, False))
                self.sends_retry_failed = False
        except psycopg.Error as e:
            if getattr(e, "sqlstate", None) == INVALID_ARGUMENT:
                raise InvalidArgument("counter batch refused, dropped: %s" % e) from e
            self._restore(batch)
            raise
        except BaseException:
            self._restore(batch)
            raise
        return len(batch)


class CounterFlusher:
    """Flushes an OutcomeCounters on its own connection and thread every interval, and once
    more on close(). A failed flush (database away) is retried at the next interval."""

    def __init__(self, conninfo, counters, schema="idem", interval=1.0):
        self._conninfo = conninfo
        self._counters = counters
        self._schema = schema
        self._interval = interval
        self._conn = None
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="idem counters", daemon=True)
        self._thread.start()

    def _flush_once(self):
        try:
            if self._conn is None or self._conn.closed:
                from .store import connect  # store imports this module
                self._conn = connect(self._conninfo, application_name="idem counters")
            self._counters.flush(self._conn, self._schema)
            return True
        except Exception:
            # The counts stay pending; a dashboard gap is better than a worker that stops.
            if self._conn is not None:
                self._conn.close()
            self._conn = None
            return False

    def flush_now(self):
        """Flushes now and waits for it; True when everything pending was written."""
        with self._lock:
            return self._flush_once()

    def _loop(self):
        while not self._stop.wait(self._interval):
            with self._lock:
                self._flush_once()

    def close(self):
        self._stop.set()
        self._thread.join()
        with self._lock:
            self._flush_once()
            if self._conn is not None:
                self._conn.close()
                self._conn = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
