"""The HTTP contract of docs/http-idempotency.md, framework-free: the key from the header, the
fingerprint, the claim and what each decision answers, the finality of a response and how it is
recorded. The adapters (asgi, wsgi, decorator) only translate their framework's request and
response to and from the plain values used here.

Everything here is synchronous (psycopg 3 connections from a small pool); the ASGI adapter runs
it in a worker thread.
"""

import base64
import copy
import hashlib
import json
import math
import queue
import re
import threading
from dataclasses import dataclass, field

import psycopg
from psycopg import pq, sql

from .. import counters as _counters
from ..canonicaljson import MAX_DEPTH, JsonError, parse_strict
from ..digest import REQUEST_DIGEST_PREFIX, CanonicalRequest, canonical_request, request_digest, without_fields
from ..errors import IdemError, LostOwnership
from ..key import TaskKey, quote_for_message
from ..retrypolicy import RetryPolicy
from ..store import (DEFAULT_STORED_REQUEST_BYTES, LOCK_NOT_AVAILABLE, ClaimResult, Decision, FailureClass,
                     TaskStore, _claim_from_row, check_schema_name, translate)

MAX_KEY_CHARS = 255
DEFAULT_HEADER = "Idempotency-Key"
DEFAULT_METHODS = ("POST", "PATCH")
DEFAULT_REPLAY_HEADERS = ("content-type", "location", "content-location", "etag", "last-modified", "link")
# Never stored or replayed, whatever an allow-list says: they carry credentials or session state.
NEVER_REPLAYED = frozenset(["set-cookie", "set-cookie2", "authorization", "proxy-authorization",
                            "proxy-authenticate", "www-authenticate", "cookie"])
RETRYABLE_STATUSES = frozenset([408, 409, 425, 429])
PROBLEM_TYPE = "application/problem+json"
_PARAM = re.compile(r"<(?:[^:<>]+:)?([^<>]+)>|:([A-Za-z_][A-Za-z0-9_]*)")


def normalise_template(template):
    """The route template with every parameter spelled {name}: Flask's /orders/<int:id>, Express's
    /orders/:id and Starlette's /orders/{id} all become /orders/{id}."""
    return _PARAM.sub(lambda m: "{%s}" % (m.group(1) or m.group(2)), template)


def operation_of(method, template):
    """The Idem operation of a route: the method and the template, e.g. POST/orders/{id}/refunds."""
    return method.upper() + normalise_template(template)


class _NotPlain(Exception):
    pass


def _plain_int(text):
    value = int(text)
    if -_MAX_SAFE <= value <= _MAX_SAFE:
        return value
    raise _NotPlain()


def _not_plain(*_args):
    raise _NotPlain()


def _unique_members(pairs):
    out = dict(pairs)
    if len(out) != len(pairs):
        raise _NotPlain()  # a duplicate key: parse_strict says which
    return out


_MAX_SAFE = (1 << 53) - 1
_OUTSIDE_BMP = re.compile("[\U00010000-\U0010ffff]")
_SURROGATE_ESCAPE = re.compile(r"\\u[dD]")
_OUTSIDE_BMP_OR_SURROGATE = re.compile("[\ud800-\udfff\U00010000-\U0010ffff]")
_PLAIN_DECODER = json.JSONDecoder(object_pairs_hook=_unique_members, parse_float=_not_plain, parse_int=_plain_int,
                                  parse_constant=_not_plain)
_CANONICAL_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), sort_keys=True)


def fast_json(body):
    """The value of a JSON body whose RFC 8785 form json.dumps(sort_keys=True, ensure_ascii=False,
    separators=(",", ":")) writes byte for byte, read by the json module's C code; None for any other
    body (then parse_strict reads it and says why it is not JSON, if it is not). Plain means: strict
    UTF-8 without a byte order mark, no character outside the Basic Multilingual Plane (whose UTF-16
    order would sort keys differently) and no \\uD... escape (a surrogate), no number but integers
    within +-(2^53 - 1) (a fraction, an exponent or a larger integer is written by RFC 8785's
    number rules), no duplicate key, nesting below parse_strict's limit."""
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError:
        return None
    if text[:1] == "\ufeff" or (not text.isascii() and _OUTSIDE_BMP.search(text)) \
            or ("\\u" in text and _SURROGATE_ESCAPE.search(text)) or text.count("[") + text.count("{") >= MAX_DEPTH:
        return None
    try:
        return _PLAIN_DECODER.decode(text)
    except (_NotPlain, ValueError, RecursionError):
        return None


def is_final(status):
    """A response that is the request's answer for good (stored and replayed): every status below
    500 except 408, 409, 425 and 429."""
    return status < 500 and status not in RETRYABLE_STATUSES


@dataclass
class Route:
    """What a route opts into. operation defaults to METHOD + template; atomic: the handler gets the
    transaction that records its response (request.state.idem.tx / req.idem.tx); otherwise it
    runs outside one and its response is recorded afterwards."""

    required: bool = True
    operation: str = ""
    ignore_fields: tuple = ()
    fingerprint_headers: tuple = ()
    atomic: bool = True
    # Schema v25: the route's operation is re-drivable. Its requests with a JSON body are stored
    # (the fingerprint's canonical JSON, at most stored_request_bytes: a larger one answers 413),
    # so an operator's requeue can have HttpIdempotency.redriver() call the handler again with
    # that body. redact: top-level body fields shown as "[redacted]" to readers of stored requests.
    redrive: bool = False
    stored_request_bytes: int = DEFAULT_STORED_REQUEST_BYTES
    redact: tuple = ()


@dataclass
class HttpRequest:
    method: str
    template: str  # the route template, as the framework spells it
    headers: dict  # lower-case name -> list of values
    body: bytes = b""
    tenant: str = "default"

    def header(self, name):
        values = self.headers.get(name.lower(), [])
        return values


@dataclass
class HttpResponse:
    status: int
    headers: list = field(default_factory=list)  # [(name, value)] as str
    body: bytes = b""


def problem(status, title, detail, retry_after_ms=None, extra=None):
    """An error answer as application/problem+json (RFC 9457)."""
    doc = {"type": "about:blank", "title": title, "status": status, "detail": detail}
    if extra:
        doc.update(extra)
    body = json.dumps(doc, ensure_ascii=True).encode("ascii")
    headers = [("content-type", PROBLEM_TYPE), ("content-length", str(len(body)))]
    if retry_after_ms is not None:
        headers.append(("retry-after", str(max(1, math.ceil(retry_after_ms / 1000.0)))))
    return HttpResponse(status, headers, body)


# The columns the claim functions answer (claim, idem_claim_local, idem_peek_local, idem_record_local).
_CLAIM_COLUMNS = TaskStore._CLAIM_COLUMNS
# Record at commit: the seed of the key's advisory lock (hashtextextended), so that the lock's
# 64-bit number is Idem's own, not a plain hash another application might take.
_LOCK_SEED = 4343


class PoolExhausted(IdemError):
    """Every pooled connection stayed busy for the whole wait: answered 503 with Retry-After."""


class ConnectionPool:
    """A few psycopg connections in autocommit mode, never a named prepared statement (PgBouncer in
    transaction mode), handed out one request at a time."""

    def __init__(self, conninfo, size=10, application_name="idem http", wait_s=10.0):
        self.conninfo = conninfo
        # Bounded: a request waiting for a connection holds a worker thread, and the handlers that
        # would give connections back may need one (a 503 after wait_s rather than a deadlock).
        self.wait_s = wait_s
        self.application_name = application_name
        self._idle = queue.LifoQueue()
        self._slots = threading.BoundedSemaphore(size)

    def get(self):
        if not self._slots.acquire(timeout=self.wait_s):
            raise PoolExhausted("no database connection free within %.0f s (%s)" % (self.wait_s,
                                                                                   self.application_name))
        try:
            while True:
                try:
                    conn = self._idle.get_nowait()
                except queue.Empty:
                    return psycopg.connect(self.conninfo, autocommit=True, prepare_threshold=None,
                                           application_name=self.application_name)
                if not conn.closed and not conn.broken:
                    return conn
        except BaseException:
            self._slots.release()
            raise

    def put(self, conn):
        try:
            if not conn.closed and not conn.broken:
                if conn.info.transaction_status != pq.TransactionStatus.IDLE:
                    conn.execute("ROLLBACK")
                self._idle.put(conn)
            else:
                conn.close()
        except psycopg.Error:
            conn.close()
        finally:
            self._slots.release()

    def close(self):
        while True:
            try:
                self._idle.get_nowait().close()
            except queue.Empty:
                return


class IdemContext:
    """What the handler sees as request.state.idem (ASGI), environ['idem'] (WSGI): the key, the
    attempt, and in the atomic phase the transaction (a psycopg connection inside BEGIN) that will
    record its response."""

    def __init__(self, key, token, attempt, tx):
        self.key = key
        self.idempotency_key = str(key)
        self.token = token
        self.attempt = attempt
        self.tx = tx


class Claimed:
    """An execution this request owns: finish() or abandon() it exactly once."""

    def __init__(self, core, route, key, claim, conn, digest=None, one_transaction=False, record_at_commit=False):
        self.core = core
        # Record at commit: no claim before the handler; finish() records the key with the response.
        self.record_at_commit = record_at_commit
        self.route = route
        self.key = key
        self.claim = claim
        self.conn = conn
        # One transaction for local effects: the claim is in conn's transaction too, so nothing of
        # it exists after a rollback; a failure is recorded by a claim of its own (digest).
        self.digest = digest
        self.one_transaction = one_transaction
        self.context = IdemContext(key, claim.token, claim.attempts, conn if route.atomic else None)
        self._stop = threading.Event()
        self._heartbeat = None
        self.recorded = False  # finish() stored the response (the key succeeded)
        if not route.atomic:
            # In the atomic phase the fence's row lock keeps every claimer out (they answer
            # in_progress); outside it the lease must be kept alive while the handler runs.
            self._heartbeat = threading.Thread(target=self._beat, name="idem heartbeat", daemon=True)
            self._heartbeat.start()

    def _beat(self):
        interval = max(0.05, self.core.lease_ms / 3000.0)
        while not self._stop.wait(interval):
            conn = None
            try:
                conn = self.core.pool.get()
                self.core.store(conn).heartbeat(self.key, self.claim.token)
            except LostOwnership:
                return
            except Exception:  # noqa: BLE001 - the next beat tries again; the lease is long
                pass
            finally:
                if conn is not None:
                    self.core.pool.put(conn)

    def _end(self):
        self._stop.set()
        if self._heartbeat is not None:
            self._heartbeat.join()
        conn, self.conn = self.conn, None
        # Outside the atomic phase the response is recorded on a connection taken now.
        return conn if conn is not None else self.core.pool.get()

    def finish(self, response):
        """Records the handler's response by the finality rule and returns what to send (the
        response itself; the client gets it once even when it could not be stored)."""
        core = self.core
        conn = self._end()
        if self.record_at_commit:
            return self._finish_record(conn, response)
        store = core.store(conn)
        try:
            if not is_final(response.status):
                self._rollback(conn)
                self._record(store, FailureClass.RETRYABLE, "HTTP %d from the handler" % response.status)
                return response
            too_big = len(response.body) > core.max_response_bytes
            if too_big:
                message = ("response of %d bytes is larger than the %d bytes stored (HTTP %d sent once, not "
                           "stored)" % (len(response.body), core.max_response_bytes, response.status))
                if self.route.atomic:
                    # The handler's writes happened: they commit with the failure, not without it
                    # (the fence in begin() holds the row).
                    conn.execute(sql.SQL("SELECT status FROM {}(%s, %s::uuid, 'permanent', %s, 0, NULL)").format(
                        store._fn("fail")), (str(self.key), self.claim.token, message))
                    conn.execute("COMMIT")
                    if self.one_transaction:
                        store.count_claim(self.key, self.claim)
                    core.count(self.key, _counters.FAILED_PERMANENT)
                else:
                    self._fail(store, FailureClass.PERMANENT, message)
                return response
            stored = core.stored_result(response)
            if not self.route.atomic:
                conn.execute("BEGIN")
                store.fence(conn, self.key, self.claim.token)
            # complete and COMMIT in one round trip (the atomic phase's fence has held the row
            # since begin()).
            with conn.pipeline():
                store.complete(conn, self.key, self.claim.token, stored)
                conn.execute("COMMIT")
            if self.one_transaction:
                store.count_claim(self.key, self.claim)
            store.count_succeeded(self.key)
            self.recorded = True
            return response
        except LostOwnership:
            self._rollback(conn)
            return response
        except psycopg.Error as e:
            # In a pipeline the fence's or complete's refusal arrives here, untranslated.
            self._rollback(conn)
            mapped = translate(e)
            if isinstance(mapped, LostOwnership):
                core.count(self.key, _counters.STALE_TOKEN)
                return response
            raise mapped or e from e
        finally:
            core.pool.put(conn)

    def abandon(self, reason):
        """The handler raised or was cancelled: its writes roll back and the outcome is unknown.
        Returns the answer to send instead of a 500 when another run of the key succeeded
        meanwhile (its replay: a handler whose write met that run's, e.g. on a unique column),
        else None."""
        conn = self._end()
        try:
            self._rollback(conn)
            return self._record(self.core.store(conn), FailureClass.UNKNOWN, reason)
        except Exception:  # noqa: BLE001 - the lease runs out and a retry decides
            return None
        finally:
            self.core.pool.put(conn)

    def _finish_record(self, conn, response):
        """Record at commit: the handler's writes are in conn's transaction, nothing of the key
        yet. One statement (idem_record_local) records the final response as the key's success, or
        answers what another run left: then the writes roll back and that is the answer."""
        core = self.core
        store = core.store(conn)
        try:
            if not is_final(response.status):
                self._rollback(conn)
                answer = self._record(store, FailureClass.RETRYABLE, "HTTP %d from the handler" % response.status)
                return answer or response
            if len(response.body) > core.max_response_bytes:
                # The handler's writes commit with the failure: the key is claimed in this transaction
                # (idem_claim_local) and failed in it, as in one transaction.
                message = ("response of %d bytes is larger than the %d bytes stored (HTTP %d sent once, not "
                           "stored)" % (len(response.body), core.max_response_bytes, response.status))
                claim = store.claim_in_transaction(conn, self.key, self.digest, core.duplicate_wait_ms)
                if not claim.may_execute:
                    self._rollback(conn)
                    return core.answer(self.key, claim)
                conn.execute(core.sql_fail_permanent, (str(self.key), claim.token, message))
                conn.execute("COMMIT")
                store.count_claim(self.key, claim)
                core.count(self.key, _counters.FAILED_PERMANENT)
                return response
            claim = store.record_in_transaction(conn, self.key, self.digest, core.stored_result(response),
                                                core.duplicate_wait_ms)
            if claim.may_execute:  # recorded: new, or a due retry / an expired lease taken over
                conn.execute("COMMIT")
                store.count_claim(self.key, claim)
                store.count_succeeded(self.key)
                self.recorded = True
                return response
            self._rollback(conn)
            if claim.decision != Decision.REPLAY and claim.detail != "wait_timeout":
                # The final answer from the row as it is now, with claim()'s writes for it (a
                # conflict's record, an exhaustion).
                claim = store.peek_local(self.key, self.digest)
                if claim.may_execute:  # free again already: this request does not run; ask again
                    claim = ClaimResult(decision=Decision.IN_PROGRESS, detail="contended", retry_after_ms=50)
            store.count_claim(self.key, claim)
            return core.answer(self.key, claim)
        except BaseException:
            self._rollback(conn)
            raise
        finally:
            core.pool.put(conn)

    def _rollback(self, conn):
        if not conn.closed and conn.info.transaction_status != pq.TransactionStatus.IDLE:
            conn.execute("ROLLBACK")

    def _record(self, store, failure_class, message):
        """Records a failure after the rollback. In one transaction the rollback took the claim
        with it: the key is claimed again on its own (counting the attempt) and failed with that
        token, unless someone else holds or finished it meanwhile (theirs is the answer)."""
        if not self.one_transaction:
            self._fail(store, failure_class, message)
            return None
        claim = store.claim(self.key, self.digest)
        if claim.may_execute:
            self.claim = claim
            self._fail(store, failure_class, message)
        elif claim.decision == Decision.REPLAY:
            return self.core.answer(self.key, claim)
        return None

    def _fail(self, store, failure_class, message):
        try:
            store.fail(self.key, self.claim.token, self.claim.attempts, failure_class, message)
        except LostOwnership:
            pass


class HttpIdempotency:
    """The core every adapter shares. dsn: where Idem's schema lives (the handler's transaction is
    on the same database); tenant: request -> tenant name (default: "default")."""

    def __init__(self, dsn, *, schema="idem", header=DEFAULT_HEADER, methods=DEFAULT_METHODS, lease_ms=30_000,
                 retry=None, max_response_bytes=1 << 20, max_request_bytes=1 << 20,
                 replay_headers=DEFAULT_REPLAY_HEADERS, pool_size=10, counters=None, flush_interval=1.0,
                 one_transaction=False, duplicate_wait_ms=2000, record_at_commit=False):
        self.dsn = dsn
        self.schema = schema
        self.header = header
        self.methods = frozenset(m.upper() for m in methods)
        self.lease_ms = lease_ms
        self.retry = retry or RetryPolicy()
        self.max_response_bytes = max_response_bytes
        self.max_request_bytes = max_request_bytes
        self.replay_headers = frozenset(h.lower() for h in replay_headers) - NEVER_REPLAYED
        self.pool = ConnectionPool(dsn, pool_size)
        # One transaction for local effects (docs/http-idempotency.md): an atomic route's claim,
        # the handler's writes and the stored response are one transaction and one commit; a
        # duplicate waits up to duplicate_wait_ms for it, then replays (or answers 409).
        self.one_transaction = bool(one_transaction)
        self.duplicate_wait_ms = duplicate_wait_ms
        # Record at commit (docs/http-idempotency.md): one transaction without a claim before the
        # handler; a read of the key (and a transaction-scoped advisory lock on it, so that a
        # duplicate in flight is seen) before it, one statement recording the response after it.
        self.record_at_commit = bool(record_at_commit)
        self.lock_seed = _LOCK_SEED
        q = '"%s".' % check_schema_name(schema)  # a plain identifier: quoting it is enough
        self.sql_peek = _CLAIM_COLUMNS + q + "idem_peek_local(%s, %s, %s, %s)"
        self.sql_peek_lock = ("SELECT pg_catalog.pg_try_advisory_xact_lock(pg_catalog.hashtextextended(%s, " +
                              str(_LOCK_SEED) + ")), " + _CLAIM_COLUMNS[len("SELECT "):] + q +
                              "idem_peek_local(%s, %s, %s, %s)")
        self.sql_fail_permanent = "SELECT status FROM " + q + "fail(%s, %s::uuid, 'permanent', %s, 0, NULL)"
        if counters is None:
            counters = _counters.OutcomeCounters()
            self._flusher = _counters.CounterFlusher(dsn, counters, schema, flush_interval)
        else:
            self._flusher = None
        self.counters = counters
        self._registered = set()
        self._lock = threading.Lock()
        # Validates the settings now, not at the first request. Result bound: the wrapper around a
        # max_response_bytes body (base64 at most 4/3 of it).
        self._store = TaskStore(None, schema, lease_ms, self.retry,
                                max_result_bytes=min(64 << 20, self.max_response_bytes * 2 + 65536), counters=self.counters)

    def redriver(self, tenant, operation, handler, route=None, **options):
        """A Redriver that re-executes this service's requeued requests of a re-drivable route:
        handler(request, ctx) is called with an HttpRequest rebuilt from the stored request (method,
        template, the JSON body, the fingerprint's headers) and the IdemContext (ctx.tx in the
        atomic phase), and returns the HttpResponse, recorded as a live request's would be.
        operation: the route's (operation_of(method, template) unless the Route names one);
        route: its Route (atomic, redrive bound). .start() runs it in a thread, .stop() ends it."""
        from .redrive import http_redriver

        return http_redriver(self, tenant, operation, handler, route or Route(redrive=True), **options)

    def close(self):
        if self._flusher is not None:
            self._flusher.close()
        self.pool.close()

    def store(self, conn):
        # A copy of one store made and checked once (its settings never change), on conn.
        store = copy.copy(self._store)
        store.conn = conn
        store.redrivable = {}
        return store

    def count(self, key, outcome):
        self.counters.add(key.tenant, key.operation, outcome)

    def applies(self, method, route):
        return route is not None and method.upper() in self.methods

    # --- before the handler ------------------------------------------------------------------

    def key_of(self, request, route):
        """The TaskKey, None when the route does not require one and none came, or an answer (400)."""
        values = request.header(self.header)
        if not values:
            if route.required:
                return problem(400, "Idempotency key missing",
                               "this endpoint requires an %s header (1 to %d visible ASCII characters)"
                               % (self.header, MAX_KEY_CHARS))
            return None
        if len(values) > 1:
            return problem(400, "Idempotency key repeated", "send one %s header, not %d" % (self.header, len(values)))
        value = values[0]
        if not 1 <= len(value) <= MAX_KEY_CHARS or any(not "!" <= c <= "~" for c in value):
            return problem(400, "Idempotency key invalid",
                           "the %s header must be 1 to %d visible ASCII characters (no spaces, control or non-ASCII "
                           "bytes), got '%s'" % (self.header, MAX_KEY_CHARS, quote_for_message(value, 64)))
        operation = route.operation or operation_of(request.method, request.template)
        try:
            return TaskKey(request.tenant, operation, value)
        except ValueError as e:
            return problem(400, "Idempotency key invalid", str(e))

    def fingerprint_doc(self, request, route):
        """What the fingerprint hashes: method, route template, the canonical JSON body (the route's
        irrelevant fields dropped) or the body's bytes and content type, and the chosen headers.
        For a re-drivable route this document (with a JSON body) is the stored request."""
        content_type = ",".join(request.header("content-type"))
        doc = {"method": request.method.upper(), "route": normalise_template(request.template)}
        body = None
        if request.body:
            try:
                body = {"json": without_fields(parse_strict(request.body), route.ignore_fields)}
            except (JsonError, ValueError):
                body = None
        if body is None:
            body = {"content_type": content_type, "sha256": hashlib.sha256(request.body).hexdigest()}
        doc["body"] = body
        doc["headers"] = {h.lower(): ",".join(request.header(h)) for h in route.fingerprint_headers}
        return doc

    def fingerprint(self, request, route):
        """The v1 digest of fingerprint_doc. A plain JSON body (fast_json) is canonicalised by the
        json module's C code; any other goes through parse_strict and canonical_json."""
        value = fast_json(request.body) if request.body else None
        if value is None:
            return request_digest(self.fingerprint_doc(request, route))
        doc = {"method": request.method.upper(), "route": normalise_template(request.template),
               "body": {"json": without_fields(value, route.ignore_fields)},
               "headers": {h.lower(): ",".join(request.header(h)) for h in route.fingerprint_headers}}
        text = _CANONICAL_ENCODER.encode(doc)
        if _OUTSIDE_BMP_OR_SURROGATE.search(doc["method"] + doc["route"] + "".join(doc["headers"]) +
                                            "".join(doc["headers"].values())):
            return request_digest(self.fingerprint_doc(request, route))
        return REQUEST_DIGEST_PREFIX + hashlib.sha256(text.encode("utf-8")).hexdigest()

    def _claim_request(self, store, key, request, route):
        """The digest, or for a re-drivable route's JSON request the CanonicalRequest to store (the
        operation registered first, once per process); an answer (413) when it is too large."""
        doc = self.fingerprint_doc(request, route)
        if not route.redrive or "json" not in doc["body"]:
            # A body that is not JSON cannot be given to the handler again: its key is not re-drivable.
            return request_digest(doc)
        canonical = canonical_request(doc)
        size = len(canonical.text.encode("utf-8"))
        if size > route.stored_request_bytes:
            return problem(413, "Request too large to store",
                           "this endpoint stores its requests for re-execution, at most %d bytes of them; this one "
                           "is %d" % (route.stored_request_bytes, size))
        self.register_redrivable(store, key.tenant, key.operation, route)
        return canonical

    def register_redrivable(self, store, tenant, operation, route):
        """Registers the operation as re-drivable (idem_redrive_register), once per process."""
        scope = (tenant, operation)
        if scope in self._registered:
            return
        store.register_redrivable(tenant, operation, route.stored_request_bytes, route.redact)
        with self._lock:
            self._registered.add(scope)

    def begin(self, request, route):
        """Before the handler: an HttpResponse to send instead of running it, a Claimed when this
        request runs the handler, or None when the route does not apply (no key, not required)."""
        if len(request.body) > self.max_request_bytes:
            return problem(413, "Request body too large",
                           "the body is more than the %d bytes this endpoint reads" % self.max_request_bytes)
        key = self.key_of(request, route)
        if key is None or isinstance(key, HttpResponse):
            return key
        if route.atomic and (self.one_transaction or self.record_at_commit) and not route.redrive:
            # A re-drivable route's claim stores the request, which one transaction does not do
            # yet: it runs in two steps.
            if self.record_at_commit:
                return self._begin_record(key, self.fingerprint(request, route), route)
            return self._begin_one_transaction(key, self.fingerprint(request, route), route)
        conn = self.pool.get()
        try:
            store = self.store(conn)
            digest = self._claim_request(store, key, request, route)
            if isinstance(digest, HttpResponse):
                self.pool.put(conn)
                return digest
            claim = store.claim(key, digest)
            if not claim.may_execute:
                self.pool.put(conn)
                return self.answer(key, claim)
            if route.atomic:
                with conn.pipeline():  # one round trip
                    conn.execute("BEGIN")
                    store.fence(conn, key, claim.token)
            else:
                self.pool.put(conn)
                conn = None
            return Claimed(self, route, key, claim, conn)
        except BaseException:
            if conn is not None:
                self.pool.put(conn)
            raise

    def _begin_one_transaction(self, key, digest, route):
        conn = self.pool.get()
        try:
            store = self.store(conn)
            with conn.pipeline():  # BEGIN and the claim in one round trip
                conn.execute("BEGIN")
                claim = store.claim_in_transaction(conn, key, digest, self.duplicate_wait_ms)
            if not claim.may_execute:
                # After a wait that ran out the transaction is aborted; otherwise it keeps what the
                # claim recorded (a conflict, an exhaustion).
                conn.execute("ROLLBACK" if claim.detail == "wait_timeout" else "COMMIT")
                self.pool.put(conn)
                conn = None
                return self.answer(key, claim)
            return Claimed(self, route, key, claim, conn, digest=digest, one_transaction=True)
        except BaseException:
            if conn is not None:
                self.pool.put(conn)
            raise

    def _begin_record(self, key, digest, route):
        """Record at commit, before the handler: BEGIN, then in one statement the key's row read
        (idem_peek_local) and the key's transaction-scoped advisory lock taken without waiting. A
        duplicate in flight holds that lock: this one waits for it up to duplicate_wait_ms (then 409)
        and reads the row again, so it replays the first one's answer."""
        conn = self.pool.get()
        try:
            conn.execute("BEGIN")
            params = (str(key), digest, self.retry.max_attempts, self.retry.max_age_ms or None)
            row = conn.execute(self.sql_peek_lock, (str(key),) + params).fetchone()
            locked, row = row[0], row[1:]
            if row[0] == "run" and not locked:
                try:
                    prev = conn.execute(
                        "SELECT pg_catalog.current_setting('lock_timeout'), pg_catalog.set_config('lock_timeout', %s, true),"
                        " pg_catalog.pg_advisory_xact_lock(pg_catalog.hashtextextended(%s, " + str(self.lock_seed) + "))",
                        (str(self.duplicate_wait_ms), str(key))).fetchone()[0]
                except psycopg.Error as e:
                    conn.execute("ROLLBACK")
                    if getattr(e, "sqlstate", None) != LOCK_NOT_AVAILABLE:
                        raise translate(e) or e from e
                    self.count(key, _counters.IN_PROGRESS)
                    return self.answer(key, ClaimResult(decision=Decision.IN_PROGRESS, detail="wait_timeout",
                                                        retry_after_ms=50))
                row = conn.execute("SELECT pg_catalog.set_config('lock_timeout', %s, true), " +
                                   self.sql_peek[len("SELECT "):], (prev,) + params).fetchone()[1:]
            claim = _claim_from_row(row)  # run [new] is ACQUIRED, run [retry_due, lease_expired] REACQUIRED
            if not claim.may_execute:
                # A replay, a conflict (its record), an exhaustion (marked): committed, nothing else ran.
                conn.execute("COMMIT")
                self.pool.put(conn)
                conn = None
                self.store(None).count_claim(key, claim)
                return self.answer(key, claim)
            claim.attempts += 1
            return Claimed(self, route, key, claim, conn, digest=digest, one_transaction=True, record_at_commit=True)
        except BaseException:
            if conn is not None:
                self.pool.put(conn)
            raise

    def answer(self, key, claim):
        """What a claim that may not run the handler answers."""
        d = claim.decision
        if d == Decision.REPLAY:
            return self.replay(claim.result_json)
        if d == Decision.IN_PROGRESS:
            return problem(409, "Request in progress",
                           "a request with this idempotency key is still being processed; retry after the time "
                           "in Retry-After", claim.retry_after_ms)
        if d == Decision.CONFLICT:
            return problem(422, "Idempotency key reused",
                           "this idempotency key was used with a different request (method, route, body or "
                           "headers); nothing ran and the stored answer is unchanged")
        if d == Decision.RETRY_LATER:
            return problem(503, "Retry later",
                           "the last attempt failed (%s); the next one may start after Retry-After"
                           % (claim.error_message or claim.error_class), claim.retry_after_ms)
        if d == Decision.PAUSED:
            return problem(503, "Operation paused",
                           "an operator paused %s: %s" % (claim.detail, claim.error_message), claim.retry_after_ms)
        # failed: permanent or exhausted; answer with the recorded failure
        m = re.match(r"HTTP (\d{3}) ", claim.error_message or "")
        status = int(m.group(1)) if m and not is_final(int(m.group(1))) else 500
        return problem(status, "Request failed",
                       "this idempotency key failed for good (%s): %s" % (claim.detail, claim.error_message),
                       extra={"attempts": claim.attempts})

    # --- the stored response -----------------------------------------------------------------

    def stored_result(self, response):
        headers = [[n.lower(), v] for n, v in response.headers if n.lower() in self.replay_headers]
        doc = {"status": response.status, "headers": headers}
        try:
            text = response.body.decode("utf-8")
            if "\0" in text:
                raise UnicodeDecodeError("utf-8", response.body, 0, 1, "NUL")
            doc["body"] = text
        except UnicodeDecodeError:
            doc["body_b64"] = base64.b64encode(response.body).decode("ascii")
        return json.dumps(doc, ensure_ascii=False, separators=(",", ":"))

    def replay(self, result_json):
        doc = json.loads(result_json)
        if "body_b64" in doc:
            body = base64.b64decode(doc["body_b64"])
        else:
            body = doc.get("body", "").encode("utf-8")
        headers = [(n, v) for n, v in doc.get("headers", [])]
        headers += [("content-length", str(len(body))), ("idempotent-replayed", "true")]
        return HttpResponse(int(doc["status"]), headers, body)


def error_response(e):
    """The answer when Idem itself could not be reached or refused: 503, the handler not run."""
    title = "Idempotency store unavailable" if not isinstance(e, IdemError) else "Idempotency store error"
    return problem(503, title, "%s: %s" % (type(e).__name__, str(e)[:300]), 1000)
