"""@idempotent for a plain function: the key and the payload are arguments.

    @idempotent(idem, operation="charge")
    def charge(tx, payload):                # runs in the transaction that records its result
        tx.execute("INSERT ...", ...)
        return {"charged": payload["amount_cents"]}

    charge("order-123", {"amount_cents": 500})   # runs once; the same call again replays
"""

import functools

from ..digest import request_digest
from ..key import TaskKey
from ..runner import Outcome, run_task


class NotRun(Exception):
    """The call did not run and has no stored result: outcome says why (in_progress, conflict,
    retry_later, paused, failed, will_retry, lost_ownership); retry_after_ms when to ask again."""

    def __init__(self, outcome):
        super().__init__("%s: %s" % (outcome.kind.value, outcome.error or outcome.claim.detail))
        self.outcome = outcome
        self.retry_after_ms = outcome.claim.retry_after_ms


def idempotent(idem, operation, tenant="default", ignore_fields=()):
    """idem: an HttpIdempotency (its pool, lease, retry policy and counters)."""
    TaskKey(tenant, operation, "x")  # a bad tenant or operation fails here, not at the first call

    def wrap(fn):
        @functools.wraps(fn)
        def call(key, payload):
            task_key = TaskKey(tenant, operation, key)
            digest = request_digest(payload, ignore_fields)
            conn = idem.pool.get()
            try:
                out = run_task(idem.store(conn), task_key, digest, lambda tx, ctx: fn(tx, payload))
            finally:
                idem.pool.put(conn)
            if out.kind in (Outcome.SUCCEEDED, Outcome.REPLAYED):
                return out.result
            raise NotRun(out)

        return call

    return wrap
