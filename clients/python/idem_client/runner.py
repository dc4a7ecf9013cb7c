"""run_task: claim, execute in a fenced transaction, complete or classify the failure; the whole
sequence with the semantics of core/runner.h's runTask, in both of its forms."""

import enum
import json
from dataclasses import dataclass, field

import psycopg

from .errors import DatabaseUnavailable, LostOwnership, NotPrimary
from .store import ClaimResult, Decision, FailResult, FailureClass, translate


class TaskFailure(Exception):
    """What a task raises to say how it failed. Anything else it raises counts as retryable
    (a ValueError as permanent: bad input or output is just as bad next time, as C++'s
    std::invalid_argument)."""

    def __init__(self, failure_class, message):
        super().__init__(message)
        self.failure_class = FailureClass(failure_class)


@dataclass(frozen=True)
class TaskContext:
    key: object  # the TaskKey
    # Pass this downstream as the request's idempotency key: a retry after an unknown outcome
    # must reach the downstream with the same key so that its own dedup keeps one effect.
    idempotency_key: str
    token: str
    attempt: int = 1
    # The last attempt's outcome is unknown (recorded as such, or its lease expired): the
    # downstream may already have acted on idempotency_key.
    previous_outcome_unknown: bool = False


class Outcome(str, enum.Enum):
    SUCCEEDED = "succeeded"  # this call executed the task and committed it
    REPLAYED = "replayed"  # an earlier execution succeeded; result is its stored result
    IN_PROGRESS = "in_progress"  # someone else is executing it; retry after claim.retry_after_ms
    CONFLICT = "conflict"  # the key was used with another request
    RETRY_LATER = "retry_later"  # in backoff; retry after claim.retry_after_ms
    FAILED = "failed"  # permanent or exhausted (now or earlier)
    WILL_RETRY = "will_retry"  # this attempt failed and was recorded as retryable
    LOST_OWNERSHIP = "lost_ownership"  # the lease was lost before commit: the business writes rolled back
    # An operator paused the key's tenant or operation: nothing ran; keep the request and retry
    # after claim.retry_after_ms without counting a try (error: "paused (scope): reason").
    PAUSED = "paused"


@dataclass
class RunOutcome:
    kind: Outcome
    claim: ClaimResult
    result_json: str = ""
    error: str = ""
    failure: FailResult = field(default_factory=FailResult)  # for WILL_RETRY and a FAILED this call recorded

    @property
    def result(self):
        """The result as a Python value (SUCCEEDED, REPLAYED)."""
        return json.loads(self.result_json) if self.result_json else None


def outcome_of_claim(c):
    """The outcome a claim that may not execute amounts to (replay, in progress, conflict, ...)."""
    out = RunOutcome(kind=Outcome.IN_PROGRESS, claim=c)
    if c.decision == Decision.REPLAY:
        out.kind = Outcome.REPLAYED
        out.result_json = c.result_json
    elif c.decision == Decision.IN_PROGRESS:
        out.kind = Outcome.IN_PROGRESS
    elif c.decision == Decision.CONFLICT:
        out.kind = Outcome.CONFLICT
        out.error = ("key already used with request digest " + c.stored_digest if c.stored_digest
                     else "key already used with another request digest")
    elif c.decision == Decision.RETRY_LATER:
        out.kind = Outcome.RETRY_LATER
        out.error = c.error_message
    elif c.decision == Decision.FAILED:
        out.kind = Outcome.FAILED
        out.error = c.error_message
    elif c.decision == Decision.PAUSED:
        out.kind = Outcome.PAUSED
        out.error = "paused (%s): %s" % (c.detail, c.error_message)
    return out


def _result_text(value):
    # The task returns a Python value, stored as jsonb. NaN / Infinity are not JSON.
    return json.dumps(value, ensure_ascii=False, allow_nan=False, separators=(",", ":"))


def _run_claimed(store, key, claim, call, record, fence_in_complete=False):
    out = RunOutcome(kind=Outcome.SUCCEEDED, claim=claim)
    # An executor whose lease ran out recorded nothing: its request may have left, just as with
    # a recorded unknown.
    previous_unknown = claim.error_class == "unknown" or claim.detail == "lease_expired"
    ctx = TaskContext(key=key, idempotency_key=str(key), token=claim.token, attempt=claim.attempts,
                      previous_outcome_unknown=previous_unknown)
    conn = store.conn
    failure_class = FailureClass.RETRYABLE
    try:
        answer = None
        if call is not None:
            try:
                answer = call(ctx)
            except psycopg.OperationalError as e:
                if isinstance(translate(e), DatabaseUnavailable):
                    # The call's own connection: whether the other side acted is not known.
                    raise TaskFailure(FailureClass.UNKNOWN, "downstream connection lost: %s" % e) from e
                raise
        try:
            with conn.transaction():
                if not fence_in_complete:
                    store.fence(conn, key, claim.token)
                result_json = _result_text(record(conn, ctx, answer))
                store.complete(conn, key, claim.token, result_json)
        except psycopg.Error as e:
            # The commit (or a statement) failed; a broken connection leaves the commit's
            # outcome unknown, and the next claim after the lease decides from the stored state.
            mapped = translate(e)
            if isinstance(mapped, DatabaseUnavailable) or conn.broken:
                raise DatabaseUnavailable("lost the connection to the database during the business transaction: "
                                          "its outcome is unknown (%s)" % e) from e
            if mapped is not None:
                raise mapped from e
            raise
        store.count_succeeded(key)
        out.result_json = result_json
        return out
    except LostOwnership as e:
        out.kind = Outcome.LOST_OWNERSHIP
        out.error = str(e)
        return out
    except (DatabaseUnavailable, NotPrimary):
        raise
    except TaskFailure as e:
        failure_class = e.failure_class
        message = str(e)
    except ValueError as e:
        failure_class = FailureClass.PERMANENT
        message = str(e)
    except Exception as e:  # noqa: BLE001 - anything else a task raises is retryable
        message = str(e) or type(e).__name__

    # The business transaction is gone (rolled back) by now; record the failure on its own.
    return _record_failure(store, key, claim, failure_class, message)


def _record_failure(store, key, claim, failure_class, message):
    """A failed attempt recorded with the token of `claim`, after its transaction rolled back."""
    out = RunOutcome(kind=Outcome.WILL_RETRY, claim=claim, error=message)
    try:
        out.failure = store.fail(key, claim.token, claim.attempts, failure_class, message)
    except LostOwnership as e:
        out.kind = Outcome.LOST_OWNERSHIP
        out.error = "%s; and the lease was lost before the failure was recorded: %s" % (message, e)
        return out
    out.kind = Outcome.FAILED if out.failure.status == "failed" else Outcome.WILL_RETRY
    return out


class _RolledBack(Exception):
    """Ends the one transaction without its commit, carrying the task's failure out of it."""

    def __init__(self, failure_class, message):
        super().__init__(message)
        self.failure_class = failure_class
        self.message = message


def _classify(error):
    if isinstance(error, TaskFailure):
        return error.failure_class, str(error)
    if isinstance(error, ValueError):
        return FailureClass.PERMANENT, str(error)
    return FailureClass.RETRYABLE, str(error) or type(error).__name__


def _run_in_one_transaction(store, key, request_digest, task, wait_ms):
    conn = store.conn
    try:
        try:
            with conn.transaction():
                claim = store.claim_in_transaction(conn, key, request_digest, wait_ms)
                if not claim.may_execute:
                    if claim.detail == "wait_timeout":
                        raise psycopg.Rollback()  # aborted by the wait's end; it holds nothing
                    # What claim wrote for such an answer (a conflict's record, an exhaustion) stands.
                    return outcome_of_claim(claim)
                previous_unknown = claim.error_class == "unknown" or claim.detail == "lease_expired"
                ctx = TaskContext(key=key, idempotency_key=str(key), token=claim.token, attempt=claim.attempts,
                                  previous_outcome_unknown=previous_unknown)
                try:
                    result_json = _result_text(task(conn, ctx))
                    store.complete(conn, key, claim.token, result_json)
                except (DatabaseUnavailable, NotPrimary, LostOwnership):
                    raise
                except psycopg.Error as e:
                    mapped = translate(e)
                    if isinstance(mapped, (DatabaseUnavailable, NotPrimary)) or conn.broken:
                        raise
                    raise _RolledBack(*_classify(e)) from e
                except Exception as e:  # noqa: BLE001 - a task's failure, classified as run_task does
                    raise _RolledBack(*_classify(e)) from e
            if claim.detail == "wait_timeout":
                return outcome_of_claim(claim)
        except psycopg.Error as e:
            mapped = translate(e)
            if isinstance(mapped, DatabaseUnavailable) or conn.broken:
                raise DatabaseUnavailable("lost the connection to the database during the one transaction: "
                                          "its outcome is unknown if the commit was sent (%s)" % e) from e
            if mapped is not None:
                raise mapped from e
            raise
    except LostOwnership as e:
        return RunOutcome(kind=Outcome.LOST_OWNERSHIP, claim=claim, error=str(e))
    except _RolledBack as failure:
        return _record_after_rollback(store, key, request_digest, failure.failure_class, failure.message)
    store.count_claim(key, claim)
    store.count_succeeded(key)
    return RunOutcome(kind=Outcome.SUCCEEDED, claim=claim, result_json=result_json)


def _record_after_rollback(store, key, request_digest, failure_class, message):
    # The rolled-back claim left the key absent or as it was: claim it on its own and record the
    # failure with that token, so it counts an attempt as a two-step run's does.
    claim = store.claim(key, request_digest)
    if not claim.may_execute:
        out = outcome_of_claim(claim)
        out.error = "%s; not recorded: the key was %s when the failure was to be recorded" % (
            message, claim.decision.value)
        return out
    return _record_failure(store, key, claim, failure_class, message)


# A statement of the task met a concurrent transaction's write: a unique row another run of the
# same key inserted first (23505), or writes that crossed (40P01, 40001).
_COLLISIONS = ("23505", "40P01", "40001")
_MAX_RECORD_ROUNDS = 3


class _Collided(Exception):
    """Ends a record-at-commit transaction whose task met a concurrent duplicate's write."""

    def __init__(self, error):
        super().__init__(str(error))
        self.error = error


def _run_recording_at_commit(store, key, request_digest, task, wait_ms, check_first):
    """Record at commit (docs/workers-guide.md): the task's writes, then idem_record_local, one
    commit. A run whose record did not answer recorded is rolled back and idem_peek_local (on its
    own) decides; so does a collision of the task's writes with a concurrent duplicate's."""
    conn = store.conn
    collision = None
    round_ = 0
    while True:
        if check_first or round_ > 0:
            ahead = store.peek_local(key, request_digest)
            if not ahead.may_execute:
                store.count_claim(key, ahead)
                return outcome_of_claim(ahead)
            if collision is not None:
                error, collision = collision, None
                if getattr(error, "sqlstate", None) == "23505":
                    # The key is free: the unique row the task met is not a duplicate's.
                    return _record_after_rollback(store, key, request_digest, *_classify(error))
        else:
            ahead = ClaimResult(decision=Decision.ACQUIRED, detail="new")
        if round_ >= _MAX_RECORD_ROUNDS:
            busy = ClaimResult(decision=Decision.IN_PROGRESS, detail="contended", retry_after_ms=50,
                               max_attempts=ahead.max_attempts)
            store.count_claim(key, busy)
            return outcome_of_claim(busy)
        round_ += 1
        previous_unknown = ahead.error_class == "unknown" or ahead.detail == "lease_expired"
        ctx = TaskContext(key=key, idempotency_key=str(key), token="", attempt=ahead.attempts + 1,
                          previous_outcome_unknown=previous_unknown)
        recorded = None
        try:
            try:
                with conn.transaction():
                    try:
                        result_json = _result_text(task(conn, ctx))
                        recorded = store.record_in_transaction(conn, key, request_digest, result_json, wait_ms)
                    except (DatabaseUnavailable, NotPrimary):
                        raise
                    except psycopg.Error as e:
                        mapped = translate(e)
                        if isinstance(mapped, (DatabaseUnavailable, NotPrimary)) or conn.broken:
                            raise
                        if getattr(e, "sqlstate", None) in _COLLISIONS:
                            raise _Collided(e) from e
                        raise _RolledBack(*_classify(e)) from e
                    except Exception as e:  # noqa: BLE001 - a task's failure, classified as run_task does
                        raise _RolledBack(*_classify(e)) from e
                    if not recorded.may_execute:
                        raise psycopg.Rollback()  # nothing of the run may commit without its record
            except psycopg.Error as e:
                mapped = translate(e)
                if isinstance(mapped, DatabaseUnavailable) or conn.broken:
                    raise DatabaseUnavailable("lost the connection to the database during the one transaction: "
                                              "its outcome is unknown if the commit was sent (%s)" % e) from e
                if mapped is not None:
                    raise mapped from e
                raise
        except _Collided as c:
            collision = c.error
            continue
        except _RolledBack as failure:
            return _record_after_rollback(store, key, request_digest, failure.failure_class, failure.message)
        if recorded.may_execute:
            store.count_claim(key, recorded)
            store.count_succeeded(key)
            return RunOutcome(kind=Outcome.SUCCEEDED, claim=recorded, result_json=result_json)
        if recorded.decision == Decision.REPLAY or recorded.detail == "wait_timeout":
            store.count_claim(key, recorded)
            return outcome_of_claim(recorded)
        # Another answer from the stored row: the peek gives it, with claim's writes for it.


def run_task(store, key, request_digest, task=None, *, call=None, record=None, one_transaction=False,
             duplicate_wait_ms=2000, fence_in_complete=False, record_at_commit=False, check_first=True):
    """Claims the key and, if this caller may execute, runs the task.

    Transaction form, for a task that only writes to this database:
        run_task(store, key, digest, task)  with  task(conn, ctx) -> result
    task runs inside the business transaction, after the fence: its writes on `conn` commit
    together with the success record or not at all. The result is a JSON-serialisable value.

    Call-then-record form, for a task that calls another service:
        run_task(store, key, digest, call=call, record=record)
          call(ctx) -> answer              with NO transaction open; pass ctx.idempotency_key
                                           downstream so the other service dedups a retry
          record(conn, ctx, answer) -> result   a short fenced transaction that also records
                                           the success
    If the lease lapsed during the call and another executor took the key over, the fence
    refuses and the outcome is LOST_OWNERSHIP: the other service saw the same key twice and
    kept one effect.

    One transaction for local effects (one_transaction=True, the transaction form only): the
    claim, the task's writes and the completion are one transaction and one commit. Only for a
    task whose every effect is a write through `conn` to this database (docs/workers-guide.md).
    A concurrent duplicate waits up to duplicate_wait_ms for the run to end and then replays its
    result (or answers IN_PROGRESS); a crash or a lost connection rolls all of it back, the claim
    included. A task that raises is rolled back and its failure recorded after, on its own.

    record_at_commit=True (the transaction form only; not with one_transaction): the same mode
    without a claim before the task. The task's writes run first, then one statement
    (idem_record_local) records the key succeeded with the result, then the one commit. A
    concurrent duplicate's record waits up to duplicate_wait_ms for the first's commit and replays
    it (its writes rolled back), and so does a duplicate whose own write met the first's
    uncommitted unique row (23505; 40P01 and 40001 likewise). check_first (default True) reads the
    key's row before the task (idem_peek_local), so a replay, a conflict or a pause is answered
    without running the task. A failure is recorded as one_transaction does.

    fence_in_complete=True (two steps only; issue 45 item 2): the business transaction without the
    fence before the task (BEGIN, the task's writes, complete, COMMIT: one statement fewer).
    complete checks the owner token under the row lock its UPDATE takes, so a stale attempt is
    refused there and its writes roll back (LOST_OWNERSHIP), as with the fence; but the row is not
    locked while the task runs, so a lease that runs out mid-task may be taken over and the next
    executor's task may run beside this one until this one's complete refuses. For tasks well
    inside their lease.

    Returns a RunOutcome. Raises DatabaseUnavailable when the connection breaks (the outcome is
    then decided by the next claim after the lease) and NotPrimary on a read-only server.
    """
    if task is not None and (call is not None or record is not None):
        raise TypeError("run_task takes a task, or call= and record=, not both")
    if task is None and (call is None or record is None):
        raise TypeError("run_task needs a task, or both call= and record=")
    if record_at_commit:
        if one_transaction:
            raise TypeError("one_transaction and record_at_commit are two forms of one transaction for local "
                            "effects: choose one")
        if task is None:
            raise TypeError("record_at_commit is only for a task whose effects are all in this database; a task "
                            "that calls another service runs in two steps (call= and record=)")
        return _run_recording_at_commit(store, key, request_digest, task, duplicate_wait_ms, check_first)
    if one_transaction:
        if task is None:
            raise TypeError("one_transaction is only for a task whose effects are all in this database; a task "
                            "that calls another service runs in two steps (call= and record=)")
        return _run_in_one_transaction(store, key, request_digest, task, duplicate_wait_ms)
    claim = store.claim(key, request_digest)
    if not claim.may_execute:
        return outcome_of_claim(claim)
    if task is not None:
        return _run_claimed(store, key, claim, None, lambda conn, ctx, _answer: task(conn, ctx), fence_in_complete)
    return _run_claimed(store, key, claim, call, record, fence_in_complete)
