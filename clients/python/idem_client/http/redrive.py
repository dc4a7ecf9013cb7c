"""Re-driving an HTTP endpoint (schema v25): an operator's requeue with re-execute of a request
whose route is re-drivable (Route(redrive=True)) calls the same handler again, with the body the
first request stored, through the same claim, fence and finality as a live request."""

import json

from ..canonicaljson import canonical_json
from ..digest import CanonicalRequest
from ..key import TaskKey
from ..redriver import Redriver, finish_outcome
from ..runner import outcome_of_claim
from .core import Claimed, HttpRequest, HttpResponse, PoolExhausted, is_final


def stored_http_request(text, tenant):
    """The HttpRequest a stored request stands for: method, route template, headers (the
    fingerprint's, and Content-Type: application/json) and the JSON body as canonical bytes.
    None when the stored request has no JSON body."""
    doc = json.loads(text)
    body = doc.get("body") or {}
    if "json" not in body:
        return None
    headers = {"content-type": ["application/json"]}
    for name, value in (doc.get("headers") or {}).items():
        headers[name.lower()] = [value]
    return HttpRequest(doc["method"], doc["route"], headers, canonical_json(body["json"]).encode("utf-8"), tenant)


def http_redriver(idem, tenant, operation, handler, route, **options):
    pool = idem.pool

    def run_item(_conn, item):
        key = TaskKey.parse(item.key)
        request = stored_http_request(item.request, key.tenant)
        if request is None:
            return "failed", "the stored request has no JSON body to send the handler again"
        try:
            conn = pool.get()
        except PoolExhausted as e:  # the service is busy: the item waits, it did not fail
            return "later", str(e)
        try:
            store = idem.store(conn)
            store.redrivable[(key.tenant, key.operation)] = route.stored_request_bytes
            claim = store.claim(key, CanonicalRequest(item.request, item.request_hash))
            if not claim.may_execute:
                out = outcome_of_claim(claim)
                return finish_outcome(out.kind), out.error or claim.detail or None
            if route.atomic:
                with conn.pipeline():
                    conn.execute("BEGIN")
                    store.fence(conn, key, claim.token)
            else:
                pool.put(conn)
            held, conn = conn if route.atomic else None, None
        finally:
            if conn is not None:
                pool.put(conn)
        claimed = Claimed(idem, route, key, claim, held)
        try:
            response = handler(request, claimed.context)
            if not isinstance(response, HttpResponse):
                raise TypeError("the re-drive handler returns an HttpResponse, not %s" % type(response).__name__)
        except Exception as e:  # noqa: BLE001 - recorded as a live request's exception is
            reason = "re-driven handler raised %s: %s" % (type(e).__name__, str(e)[:200])
            claimed.abandon(reason)
            return "later", reason
        claimed.finish(response)
        if claimed.recorded:
            return "succeeded", "HTTP %d" % response.status
        if is_final(response.status) and len(response.body) > idem.max_response_bytes:
            return "failed", "HTTP %d: a response of %d bytes is too large to store" % (response.status,
                                                                                       len(response.body))
        if is_final(response.status):
            return "later", "HTTP %d, not recorded (the key was taken over)" % response.status
        return "later", "HTTP %d from the handler" % response.status

    return Redriver(idem.dsn, tenant, operation, run_item, schema=idem.schema,
                    register={"max_request_bytes": route.stored_request_bytes, "redact": tuple(route.redact)},
                    **options)
