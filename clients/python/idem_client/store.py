"""The protocol on one connection: claim, fence, complete, heartbeat, fail (one round trip each).

The same calls, bounds and outcome counts as core/taskstore.h. A psycopg connection belongs to
one thread: use one TaskStore (and connection) per worker thread.
"""

import datetime
import enum
import json
import random
import re
import time
import uuid
from dataclasses import dataclass

import psycopg
from psycopg import pq, sql

from . import counters as _counters
from .digest import CanonicalRequest
from .fieldprints import field_fingerprints as _field_fingerprints
from .fieldprints import field_key_bytes as _field_key_bytes
from .errors import (INVALID_ARGUMENT, LOST_OWNERSHIP, NO_RECORD, READ_ONLY_SQL_TRANSACTION, REFUSED,
                     DatabaseUnavailable, InvalidArgument, LostOwnership, NoRecord, NotPrimary, Refused, UsageError)
from .retrypolicy import RetryPolicy

MAX_LEASE_MS = 86_400_000  # 24 h (claim, heartbeat)
MAX_RETRY_DELAY_MS = 604_800_000  # 7 days
MAX_AGE_MS = 31_536_000_000  # 365 days
MAX_ATTEMPTS = 1000
MAX_RESULT_BYTES = 64 << 20  # 64 MiB
MAX_DIGEST_BYTES = 256  # visible ASCII; a v1 digest is 67
MAX_DUPLICATE_WAIT_MS = 60_000  # idem_claim_local
LOCK_NOT_AVAILABLE = "55P03"  # lock_timeout ran out
# Schema v25: what a re-drivable operation's claims store (idem_redrive_register's bounds).
DEFAULT_STORED_REQUEST_BYTES = 65_536
MAX_STORED_REQUEST_BYTES = 1_048_576
MAX_REDACT_FIELDS = 64
DEFAULT_SCHEMA = "idem"

_CLAIM_ARGS = {6: "%s, %s, %s::uuid, %s, %s, %s", 7: "%s, %s, %s::uuid, %s, %s, %s, %s",
               9: "%s, %s, %s::uuid, %s, %s, %s, %s::jsonb, %s::integer, %s"}
_SCHEMA_NAME = re.compile(r"[a-z_][a-z0-9_]{0,62}\Z")
_TOKEN = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\Z")


class Decision(str, enum.Enum):
    """What claim decided (the `decision` column)."""

    ACQUIRED = "acquired"  # new key: this caller executes
    REACQUIRED = "reacquired"  # lease expired or retry due: this caller executes, attempts + 1
    REPLAY = "replay"  # succeeded before: the stored result is the answer
    IN_PROGRESS = "in_progress"  # someone else holds a live lease: ask again after retry_after_ms
    CONFLICT = "conflict"  # same key, different request digest: nothing stored changed
    RETRY_LATER = "retry_later"  # a retryable failure whose backoff has not elapsed
    FAILED = "failed"  # permanent or exhausted: only an operator can reopen it
    # Schema v15: an operator paused the key's tenant or operation; nothing changed, no attempt
    # counted; ask again after retry_after_ms (at most 5 s, never past the pause's end).
    PAUSED = "paused"


class FailureClass(str, enum.Enum):
    RETRYABLE = "retryable"  # definitely failed, safe to retry
    PERMANENT = "permanent"  # will never succeed: stop
    UNKNOWN = "unknown"  # the request left and the answer was lost: retry with the same key only


@dataclass
class ClaimResult:
    decision: Decision
    detail: str = ""  # new, lease_expired, retry_due, lease_live, locked, exhausted, ...; paused: its scope
    token: str = ""  # set when this caller may execute
    attempts: int = 0
    max_attempts: int = 0
    retry_after_ms: int = 0
    result_json: str = ""  # replay: the stored result as JSON text ("null" when none)
    stored_digest: str = ""  # conflict: empty since schema v13 (the stored digest is not revealed)
    error_class: str = ""  # failed / retry_later
    error_message: str = ""  # failed / retry_later: the last error; paused: the pause's reason
    paused_for_ms: int = 0  # paused: how long the pause has left by the server's clock; 0: until resumed

    @property
    def may_execute(self):
        return self.decision in (Decision.ACQUIRED, Decision.REACQUIRED)

    @property
    def result(self):
        """The replayed result as a Python value."""
        return json.loads(self.result_json) if self.result_json else None


@dataclass
class FailResult:
    status: str = ""  # retryable_failed or failed
    attempts: int = 0
    exhausted: bool = False
    retry_delay_ms: int = 0


def check_schema_name(name):
    if not isinstance(name, str) or not _SCHEMA_NAME.match(name) or name.startswith("pg_"):
        raise ValueError("schema name must be a plain lowercase identifier of at most 63 bytes, not "
                         "starting with pg_: %r" % (name,))
    return name


def _require_token(token):
    if not isinstance(token, str) or not _TOKEN.match(token):
        if not token:
            raise InvalidArgument("no owner token: only a claim that acquired the key may fence, complete, "
                                  "heartbeat or fail it")
        raise InvalidArgument("owner token '%s' is not a UUID" % str(token)[:64])


def _require_digest(digest):
    if not isinstance(digest, str) or not digest or len(digest.encode("utf-8")) > MAX_DIGEST_BYTES:
        raise InvalidArgument("request digest must be 1 to %d bytes, not %d"
                              % (MAX_DIGEST_BYTES, len(digest.encode("utf-8")) if isinstance(digest, str) else 0))
    if any(not "!" <= c <= "~" for c in digest):
        raise InvalidArgument("request digest must be visible ASCII (no spaces)")


def translate(error):
    """The client's exception for a psycopg error (returns it; the caller raises it)."""
    state = getattr(error, "sqlstate", None)
    if state == NO_RECORD:
        return NoRecord(str(error))
    if state == LOST_OWNERSHIP:
        return LostOwnership(str(error))
    if state == INVALID_ARGUMENT:
        return InvalidArgument(str(error))
    if state == REFUSED:
        return Refused(str(error))
    if state == READ_ONLY_SQL_TRANSACTION:
        return NotPrimary("the server is read-only (not the primary): " + str(error))
    # No SQLSTATE (the socket closed), a connection exception (08) or an operator's intervention
    # (57P01..57P03: pg_terminate_backend, a shutdown or crash, a server not accepting
    # connections yet), as the TypeScript client decides it.
    if isinstance(error, psycopg.OperationalError) and (state is None or state.startswith("08")
                                                         or state in ("57P01", "57P02", "57P03")):
        return DatabaseUnavailable("lost the connection to the database: " + str(error))
    return None


def connect(conninfo="", **kwargs):
    """A connection as the store wants it: autocommit, so that claim, heartbeat and fail are one
    statement each and the business transaction is an explicit `with conn.transaction():`.

    No server-side prepared statements (prepare_threshold=None): psycopg otherwise prepares a
    statement on its fifth execution (`_pg3_0`), a session object that a pooler in transaction
    mode (PgBouncer) leaves on whichever backend ran it, so the next transaction on another
    backend fails with "prepared statement does not exist" or "already exists". Every statement
    is one round trip either way; the planning it saves is not worth a worker that dies there."""
    kwargs.setdefault("application_name", "idem python worker")
    kwargs.setdefault("prepare_threshold", None)
    try:
        return psycopg.connect(conninfo, autocommit=True, **kwargs)
    except psycopg.Error as e:
        raise translate(e) or e from e


class TaskStore:
    """claim / fence / complete / heartbeat / fail on one connection.

    The connection should be in autocommit mode (``connect`` makes one). claim, heartbeat and
    fail run on their own and refuse a connection with a transaction open (UsageError); fence
    and complete run inside the caller's business transaction.
    """

    def __init__(self, conn, schema=DEFAULT_SCHEMA, lease_ms=30_000, retry=None, max_result_bytes=1 << 20,
                 counters=None, max_serialization_retries=5, fingerprint_fields_of=(), field_key=None):
        """fingerprint_fields_of names the operations whose claims keep a keyed fingerprint per
        top-level field of the request (schema v32, idem_claim_fields; docs/workers-guide.md, "Which
        field differed"), keyed by field_key (16 to 1024 bytes, the same for every worker of the
        operation, in any language). Their claims pass the request (canonical_request), not only
        its digest. Claims of other operations call claim() as before."""
        self.conn = conn
        self.schema = check_schema_name(schema)
        self.retry = retry or RetryPolicy()
        self.retry.validate()
        if not 1 <= int(lease_ms) <= MAX_LEASE_MS:
            raise InvalidArgument("lease must be 1 to %d ms" % MAX_LEASE_MS)
        if not 1 <= max_result_bytes <= MAX_RESULT_BYTES:
            raise InvalidArgument("max_result_bytes must be 1 to %d" % MAX_RESULT_BYTES)
        if self.retry.max_attempts > MAX_ATTEMPTS:
            raise InvalidArgument("retry policy: max_attempts must be at most %d" % MAX_ATTEMPTS)
        if self.retry.max_delay_ms > MAX_RETRY_DELAY_MS:
            raise InvalidArgument("retry policy: max_delay_ms must be at most %d ms" % MAX_RETRY_DELAY_MS)
        if self.retry.max_age_ms > MAX_AGE_MS:
            raise InvalidArgument("retry policy: max_age_ms must be at most %d ms" % MAX_AGE_MS)
        self.lease_ms = int(lease_ms)
        self.max_result_bytes = max_result_bytes
        self.counters = counters
        self.max_serialization_retries = max_serialization_retries
        self._rng = random.SystemRandom()
        # (tenant, operation) -> the stored request's bound, for the operations this store
        # registered as re-drivable: their claims must send the request (CanonicalRequest).
        self.redrivable = {}
        self.fingerprint_fields_of = frozenset(fingerprint_fields_of)
        self.field_key = None
        if self.fingerprint_fields_of:
            if field_key is None:
                raise InvalidArgument("fingerprint_fields_of needs field_key (16 to 1024 bytes)")
            try:
                self.field_key = _field_key_bytes(field_key)
            except ValueError as e:
                raise InvalidArgument(str(e)) from None

    def _fn(self, name):
        return sql.SQL("{}.{}").format(sql.Identifier(self.schema), sql.Identifier(name))

    def _count(self, key, outcome):
        if self.counters is not None:
            self.counters.add(key.tenant, key.operation, outcome)

    def _max_age(self):
        return self.retry.max_age_ms if self.retry.max_age_ms > 0 else None

    # One statement as its own transaction (no BEGIN / COMMIT round trips in autocommit mode),
    # retried on serialization failures and deadlocks as the C++ store does.
    def _single(self, query, params):
        conn = self.conn
        if conn.info.transaction_status != pq.TransactionStatus.IDLE:
            raise UsageError("claim, heartbeat and fail run on their own: the connection has a transaction open")
        attempt = 0
        while True:
            try:
                row = conn.execute(query, params).fetchone()
                if not conn.autocommit:
                    conn.commit()
                return row
            except psycopg.Error as e:
                if not conn.autocommit and not conn.closed:
                    try:
                        conn.rollback()
                    except psycopg.Error:
                        pass
                if getattr(e, "sqlstate", None) in ("40001", "40P01") and attempt < self.max_serialization_retries:
                    time.sleep((1 << min(attempt, 6)) / 1000.0)
                    attempt += 1
                    continue
                raise translate(e) or e from e

    _CLAIM_COLUMNS = ("SELECT decision, detail, owner_token::text, attempts, max_attempts, retry_after_ms,"
                      " result_json::text, request_hash, error_class, error_message,"
                      " CASE WHEN decision = 'paused' AND lease_until IS NOT NULL"
                      "      THEN GREATEST(1, ceil(extract(epoch FROM lease_until - now()) * 1000))::bigint"
                      " END FROM ")

    def register_redrivable(self, tenant, operation, max_request_bytes=DEFAULT_STORED_REQUEST_BYTES, redact=()):
        """Registers the operation as re-drivable (schema v25, idem_redrive_register): from now on
        its claims store the canonical request beside the key, so that an operator's requeue can
        have a re-driver run it again. redact: top-level request fields shown as "[redacted]" to
        those who may read stored requests. Returns registered, unchanged or updated. Claims of the
        operation on this store must then pass a CanonicalRequest (canonical_request(...))."""
        from .key import TaskKey

        TaskKey(tenant, operation, "x")  # a bad tenant or operation fails here, before any I/O
        if isinstance(max_request_bytes, bool) or not isinstance(max_request_bytes, int) \
                or not 1 <= max_request_bytes <= MAX_STORED_REQUEST_BYTES:
            raise InvalidArgument("max_request_bytes must be 1 to %d, not %r" % (MAX_STORED_REQUEST_BYTES,
                                                                                 max_request_bytes))
        redact = list(redact)
        if len(redact) > MAX_REDACT_FIELDS or any(not isinstance(f, str) or not 1 <= len(f) <= 200 for f in redact):
            raise InvalidArgument("redact names at most %d top-level fields of 1 to 200 characters" % MAX_REDACT_FIELDS)
        row = self._single(sql.SQL("SELECT outcome FROM {}(%s, %s, %s, %s::text[])").format(
            self._fn("idem_redrive_register")), (tenant, operation, max_request_bytes, redact))
        self.redrivable[(tenant, operation)] = max_request_bytes
        return row[0]

    def claim(self, key, request_digest):
        """Decides, from the stored state, what this caller does with the key. request_digest is the
        digest (str), or for a re-drivable operation a CanonicalRequest: its claim stores the request
        when it acquires the key (idem_claim_stored), refused whole above the operation's bound."""
        stored = request_digest if isinstance(request_digest, CanonicalRequest) else None
        if stored is not None:
            request_digest = stored.digest
        _require_digest(request_digest)
        bound = self.redrivable.get((key.tenant, key.operation), self.redrivable.get(("*", key.operation)))
        if stored is None and bound is not None:
            raise UsageError("operation %s of tenant %s is re-drivable: its claims pass the request "
                             "(canonical_request(request, ignore_fields)), not only its digest"
                             % (key.operation, key.tenant))
        prints = None
        if key.operation in self.fingerprint_fields_of:
            if stored is None:
                raise UsageError("operation %s fingerprints its fields: its claims pass the request "
                                 "(canonical_request(request, ignore_fields)), not only its digest" % key.operation)
            prints = _field_fingerprints(stored.text, self.field_key)
        token = new_token()
        function, params = "claim", (str(key), request_digest, token, self.lease_ms, self.retry.max_attempts,
                                     self._max_age())
        if stored is not None and (prints is None or bound is not None):
            if not isinstance(stored.text, str):
                raise InvalidArgument("the stored request is JSON text (str)")
            size = len(stored.text.encode("utf-8", "surrogatepass"))
            limit = bound if bound is not None else MAX_STORED_REQUEST_BYTES
            if size > limit:
                raise InvalidArgument("request of %s is %d bytes, more than the %d bytes its operation stores for "
                                      "re-execution: nothing was claimed or stored" % (key, size, limit))
            function, params = "idem_claim_stored", params + (stored.text,)
        if prints is not None:
            # A request is stored only for an operation this store registered as re-drivable.
            function, params = "idem_claim_fields", params[:6] + (prints.json, prints.fields,
                                                                  stored.text if bound is not None else None)
        row = self._single(
            sql.SQL(self._CLAIM_COLUMNS + "{}({})").format(self._fn(function), sql.SQL(_CLAIM_ARGS[len(params)])),
            params)
        c = _claim_from_row(row)
        self.count_claim(key, c)
        return c

    def claim_in_transaction(self, tx, key, request_digest, wait_ms=2000):
        """One transaction for local effects (docs/workers-guide.md): the claim inside the
        caller's business transaction (READ COMMITTED), through idem_claim_local. Another
        transaction holding the key is waited for up to wait_ms (1 .. 60000), then the answer is
        what it left (a replay, or the key). When the wait runs out the answer is IN_PROGRESS
        [wait_timeout] and the transaction is aborted (roll it back: it holds nothing); after any
        other answer that does not execute, commit it (it keeps a conflict's or an exhaustion's
        record). An acquisition is counted with count_claim once the transaction committed. A
        re-drivable operation's claims store the request, which this does not do yet: they run in
        two steps."""
        if isinstance(request_digest, CanonicalRequest) or \
                self.redrivable.get((key.tenant, key.operation), self.redrivable.get(("*", key.operation))) is not None:
            raise UsageError("operation %s of tenant %s is re-drivable: its claims store the request, which one "
                             "transaction for local effects does not do yet; run it in two steps"
                             % (key.operation, key.tenant))
        if key.operation in self.fingerprint_fields_of:
            raise UsageError("operation %s fingerprints its fields, which one transaction for local effects does not "
                             "do yet; run it in two steps" % key.operation)
        _require_digest(request_digest)
        if not isinstance(wait_ms, int) or not 1 <= wait_ms <= MAX_DUPLICATE_WAIT_MS:
            raise InvalidArgument("the wait for a duplicate must be 1 to %d ms" % MAX_DUPLICATE_WAIT_MS)
        self._in_transaction(tx, "claim_in_transaction")
        try:
            row = tx.execute(
                sql.SQL(self._CLAIM_COLUMNS + "{}(%s, %s, %s::uuid, %s, %s, %s, %s)").format(
                    self._fn("idem_claim_local")),
                (str(key), request_digest, new_token(), self.lease_ms, self.retry.max_attempts, self._max_age(),
                 wait_ms)).fetchone()
            c = _claim_from_row(row)
        except psycopg.Error as e:
            if getattr(e, "sqlstate", None) != LOCK_NOT_AVAILABLE:
                raise translate(e) or e from e
            c = ClaimResult(decision=Decision.IN_PROGRESS, detail="wait_timeout", retry_after_ms=50,
                            max_attempts=self.retry.max_attempts)
        if not c.may_execute:
            self.count_claim(key, c)
        return c

    def peek_local(self, key, request_digest):
        """Record at commit (docs/workers-guide.md), idem_peek_local: what the stored row says a run
        of request_digest should do, in a statement of its own, without taking the key: ACQUIRED
        [new] / REACQUIRED [retry_due, lease_expired] with no token (run the task, then
        record_in_transaction), or claim's other answers (and its writes for them: a conflict's
        record, an exhaustion). Not counted: the caller counts the answer it returns."""
        _require_digest(request_digest)
        row = self._single(sql.SQL(self._CLAIM_COLUMNS + "{}(%s, %s, %s, %s)").format(self._fn("idem_peek_local")),
                           (str(key), request_digest, self.retry.max_attempts, self._max_age()))
        return _claim_from_row(row)

    def record_in_transaction(self, tx, key, request_digest, result_json, wait_ms=2000):
        """Record at commit, idem_record_local inside the caller's business transaction (READ
        COMMITTED), after the task's writes: records the key succeeded with result_json (checked as
        complete checks it). ACQUIRED [new] / REACQUIRED [retry_due, lease_expired] (no token):
        commit. Any other answer wrote nothing: roll back (IN_PROGRESS [wait_timeout] after a wait
        that ran out aborted the transaction), then ask peek_local for the final answer (a
        replay's result is in this one already). Not counted here."""
        if isinstance(request_digest, CanonicalRequest) or \
                self.redrivable.get((key.tenant, key.operation), self.redrivable.get(("*", key.operation))) is not None:
            raise UsageError("operation %s of tenant %s is re-drivable: its claims store the request, which one "
                             "transaction for local effects does not do yet; run it in two steps"
                             % (key.operation, key.tenant))
        _require_digest(request_digest)
        if not isinstance(wait_ms, int) or not 1 <= wait_ms <= MAX_DUPLICATE_WAIT_MS:
            raise InvalidArgument("the wait for a duplicate must be 1 to %d ms" % MAX_DUPLICATE_WAIT_MS)
        self._require_result(result_json)
        self._in_transaction(tx, "record_in_transaction")
        try:
            row = tx.execute(
                sql.SQL(self._CLAIM_COLUMNS + "{}(%s, %s, %s::jsonb, %s, %s, %s, %s)").format(
                    self._fn("idem_record_local")),
                (str(key), request_digest, result_json, self.retry.max_attempts, self._max_age(), wait_ms,
                 self.max_result_bytes)).fetchone()
            return _claim_from_row(row)
        except psycopg.Error as e:
            if getattr(e, "sqlstate", None) != LOCK_NOT_AVAILABLE:
                raise translate(e) or e from e
            return ClaimResult(decision=Decision.IN_PROGRESS, detail="wait_timeout", retry_after_ms=50,
                               max_attempts=self.retry.max_attempts)

    def count_claim(self, key, c):
        """Counts what a claim decided (claim does so itself)."""
        d = c.decision
        if d == Decision.ACQUIRED:
            self._count(key, _counters.ACQUIRED)
        elif d == Decision.REACQUIRED:
            self._count(key, _counters.REACQUIRED_LEASE if c.detail == "lease_expired" else _counters.REACQUIRED_RETRY)
        elif d == Decision.REPLAY:
            self._count(key, _counters.REPLAYED)
        elif d == Decision.IN_PROGRESS:
            self._count(key, _counters.IN_PROGRESS)
        elif d == Decision.CONFLICT:
            self._count(key, _counters.CONFLICT)
        elif d == Decision.RETRY_LATER:
            self._count(key, _counters.RETRY_LATER)
        elif d == Decision.FAILED:
            self._count(key, _counters.EXHAUSTED if c.detail == "exhausted" else _counters.REJECTED_FAILED)
        elif d == Decision.PAUSED:
            self._count(key, _counters.PAUSED)

    def _in_transaction(self, tx, what):
        conn = getattr(tx, "connection", tx)
        if conn.autocommit and conn.info.transaction_status == pq.TransactionStatus.IDLE:
            raise UsageError("%s runs inside the business transaction (with conn.transaction(): ...)" % what)
        return tx

    def fence(self, tx, key, token):
        """In the caller's business transaction, before its writes: locks the row and checks the
        token. Raises LostOwnership (the transaction is then aborted)."""
        _require_token(token)
        self._in_transaction(tx, "fence")
        try:
            tx.execute(sql.SQL("SELECT 1 FROM {}(%s, %s::uuid)").format(self._fn("fence")), (str(key), token))
        except psycopg.Error as e:
            mapped = translate(e)
            if isinstance(mapped, LostOwnership):
                self._count(key, _counters.STALE_TOKEN)
            raise mapped or e from e

    def complete(self, tx, key, token, result_json):
        """In the same transaction, after the business writes: marks the key succeeded with the
        result (JSON text). Raises LostOwnership, or InvalidArgument for a result that is not
        JSON or is larger than max_result_bytes, before any I/O."""
        _require_token(token)
        self._require_result(result_json)
        self._in_transaction(tx, "complete")
        try:
            tx.execute(sql.SQL("SELECT {}(%s, %s::uuid, %s::jsonb, %s)").format(self._fn("complete")),
                       (str(key), token, result_json, self.max_result_bytes))
        except psycopg.Error as e:
            mapped = translate(e)
            if isinstance(mapped, LostOwnership):
                self._count(key, _counters.STALE_TOKEN)
            raise mapped or e from e

    def _require_result(self, result_json):
        if not isinstance(result_json, str):
            raise InvalidArgument("the result is JSON text (str); use json.dumps for a value")
        size = len(result_json.encode("utf-8", "surrogatepass"))
        if size > self.max_result_bytes:
            raise InvalidArgument("result is %d bytes, more than the %d allowed" % (size, self.max_result_bytes))
        nul = result_json.find("\0")
        if nul >= 0:
            raise InvalidArgument("result is not valid JSON: unexpected byte 0x00 at offset %d" % nul)
        try:
            json.loads(result_json)
        except ValueError:
            raise InvalidArgument("result is not valid JSON") from None

    def count_succeeded(self, key):
        """Counts a success once the caller's transaction has committed (run_task does this)."""
        self._count(key, _counters.SUCCEEDED)

    def heartbeat(self, key, token):
        """Extends the lease; returns its new end (aware datetime). Raises LostOwnership."""
        _require_token(token)
        try:
            row = self._single(sql.SQL("SELECT {}(%s, %s::uuid, %s)").format(self._fn("heartbeat")),
                               (str(key), token, self.lease_ms))
        except LostOwnership:
            self._count(key, _counters.STALE_TOKEN)
            raise
        value = row[0]
        return value if isinstance(value, datetime.datetime) else None

    def fail(self, key, token, attempt, failure_class, message):
        """Records a failed attempt (`attempt` as the claim returned it); the retry delay is drawn
        from the policy's jitter window for that attempt. Raises LostOwnership."""
        _require_token(token)
        failure_class = FailureClass(failure_class)
        message = str(message)
        # PostgreSQL text holds neither NUL nor lone surrogates: escape such a message rather
        # than lose the failure it describes.
        try:
            message.encode("utf-8")
            storable = "\0" not in message
        except UnicodeEncodeError:
            storable = False
        if not storable:
            from .key import quote_for_message
            message = quote_for_message(message, 8192)
        out = FailResult(retry_delay_ms=self.retry.delay_after(attempt, self._rng))
        try:
            row = self._single(
                sql.SQL("SELECT status, attempts, exhausted FROM {}(%s, %s::uuid, %s, %s, %s, %s)").format(
                    self._fn("fail")),
                (str(key), token, failure_class.value, message, out.retry_delay_ms, self._max_age()))
        except LostOwnership:
            self._count(key, _counters.STALE_TOKEN)
            raise
        out.status, out.attempts, out.exhausted = row[0], row[1], row[2]
        self._count(key, {FailureClass.RETRYABLE: _counters.FAILED_RETRYABLE,
                          FailureClass.PERMANENT: _counters.FAILED_PERMANENT,
                          FailureClass.UNKNOWN: _counters.FAILED_UNKNOWN}[failure_class])
        if out.attempts >= 2:
            self._count(key, _counters.RETRY_FAILED)
        if out.exhausted:
            self._count(key, _counters.EXHAUSTED)
        return out


def _claim_from_row(row):
    decision_text = row[0]
    if decision_text in ("recorded", "run"):
        # Record at commit (idem_record_local, idem_peek_local): the key recorded, or free to be;
        # as an acquisition (new) or a takeover, with no token.
        decision_text = "acquired" if row[1] == "new" else "reacquired"
    try:
        decision = Decision(decision_text)
    except ValueError:
        raise IdemProtocolError("claim returned an unknown decision '%s'; is the schema newer?" % decision_text) \
            from None
    c = ClaimResult(decision=decision, detail=row[1] or "", attempts=row[3], max_attempts=row[4],
                    retry_after_ms=row[5], error_class=row[8] or "", error_message=row[9] or "")
    if decision in (Decision.ACQUIRED, Decision.REACQUIRED):
        c.token = row[2] or ""  # none for record at commit
    elif decision == Decision.REPLAY:
        c.result_json = row[6] if row[6] is not None else "null"
    elif decision == Decision.CONFLICT:
        c.stored_digest = row[7] or ""
    elif decision == Decision.PAUSED:
        c.paused_for_ms = row[10] or 0
    return c


class IdemProtocolError(Exception):
    """The database answered something this client does not know (a newer schema)."""


def new_token():
    """A random (version 4) UUID in its 8-4-4-4-12 form: tokens are made by the client, so the
    statement that claims can be retried."""
    return str(uuid.uuid4())


__all__ = ["TaskStore", "ClaimResult", "FailResult", "Decision", "FailureClass", "connect", "new_token",
           "check_schema_name", "translate", "IdemProtocolError"]
