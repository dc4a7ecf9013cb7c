"""The contract as ASGI middleware (Starlette, FastAPI):

    app.add_middleware(IdempotencyMiddleware, idem=HttpIdempotency(dsn))

    @app.post("/orders")
    @idempotent_route()                   # opts the route in (or routes={"POST /orders": Route()})
    def create(order: Order, request: Request):
        request.state.idem.tx.execute(...)  # the atomic phase: commits with the stored response

The route template comes from the application's router (scope["app"]), never from the raw path.
The core is synchronous: it runs in a worker thread, off the event loop.
"""

import logging

import anyio

from .core import HttpRequest, HttpResponse, Route, error_response, problem

log = logging.getLogger("idem.http")


def idempotent_route(**options):
    """Marks an endpoint function as idempotent with Route(**options)."""
    route = Route(**options)

    def mark(fn):
        fn.__idem_route__ = route
        return fn

    return mark


def _route_of(scope, explicit):
    """(template, Route) of the route this request reaches, or (None, None)."""
    app = scope.get("app")
    router = getattr(app, "router", None)
    routes = getattr(router, "routes", None) or []
    from starlette.routing import Match

    for r in routes:
        try:
            match, _ = r.matches(scope)
        except Exception:  # noqa: BLE001 - a route kind that cannot match plain HTTP
            continue
        if match != Match.FULL:
            continue
        template = getattr(r, "path", None)
        if template is None:
            return None, None
        opts = explicit.get("%s %s" % (scope["method"], template))
        if opts is None:
            opts = getattr(getattr(r, "endpoint", None), "__idem_route__", None)
        return template, opts
    return None, None


async def _send_response(send, response):
    await send({"type": "http.response.start", "status": response.status,
                "headers": [(n.encode("latin-1"), v.encode("latin-1")) for n, v in response.headers]})
    await send({"type": "http.response.body", "body": response.body})


class IdempotencyMiddleware:
    """idem: an HttpIdempotency; tenant: a function of the Starlette Request giving the tenant
    (default "default"); routes: {"METHOD template": Route} besides the @idempotent_route marks."""

    def __init__(self, app, idem, tenant=None, routes=None):
        self.app = app
        self.idem = idem
        self.tenant = tenant
        self.routes = dict(routes or {})

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http" or scope["method"].upper() not in self.idem.methods:
            return await self.app(scope, receive, send)
        template, route = _route_of(scope, self.routes)
        if route is None:
            return await self.app(scope, receive, send)

        # The body, up to one byte past the limit (the core answers 413 past it).
        chunks, size, more = [], 0, True
        while more and size <= self.idem.max_request_bytes:
            message = await receive()
            if message["type"] == "http.disconnect":
                return
            chunk = message.get("body", b"")
            chunks.append(chunk)
            size += len(chunk)
            more = message.get("more_body", False)
        body = b"".join(chunks)

        headers = {}
        for n, v in scope.get("headers", []):
            headers.setdefault(n.decode("latin-1").lower(), []).append(v.decode("latin-1"))
        tenant = "default"
        if self.tenant is not None:
            from starlette.requests import Request

            tenant = self.tenant(Request(scope))
        request = HttpRequest(scope["method"].upper(), template, headers, body, tenant)
        try:
            begun = await anyio.to_thread.run_sync(self.idem.begin, request, route)
        except Exception as e:  # noqa: BLE001 - the database is away: nothing ran
            log.warning("idempotency claim failed: %s", e)
            return await _send_response(send, error_response(e))
        if isinstance(begun, HttpResponse):
            return await _send_response(send, begun)

        sent_body = False

        async def replay_receive():
            nonlocal sent_body
            if not sent_body:
                sent_body = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        if begun is None:  # the key is optional here and none came
            return await self.app(scope, replay_receive, send)

        scope.setdefault("state", {})["idem"] = begun.context
        captured = {"status": 500, "headers": [], "body": []}

        async def capture(message):
            if message["type"] == "http.response.start":
                captured["status"] = message["status"]
                captured["headers"] = [(n.decode("latin-1"), v.decode("latin-1")) for n, v in message.get("headers", [])]
            elif message["type"] == "http.response.body":
                captured["body"].append(message.get("body", b""))

        try:
            await self.app(scope, replay_receive, capture)
        except BaseException as e:
            # An exception, or the task cancelled (the server gave up on a client that hung up).
            reason = "handler raised %s: %s" % (type(e).__name__, str(e)[:200])
            with anyio.CancelScope(shield=True):
                replay = await anyio.to_thread.run_sync(begun.abandon, reason)
            if not isinstance(e, Exception):
                raise
            if replay is not None:  # another run of the key succeeded meanwhile: its answer
                return await _send_response(send, replay)
            log.exception("idempotent handler failed")
            return await _send_response(send, problem(500, "Handler failed",
                                                      "the handler raised an error; the outcome is unknown and a "
                                                      "retry with the same key may run it again"))
        response = HttpResponse(captured["status"], captured["headers"], b"".join(captured["body"]))
        try:
            response = await anyio.to_thread.run_sync(begun.finish, response)
        except Exception as e:  # noqa: BLE001 - not recorded: the lease expires and a retry decides
            log.warning("idempotent response not recorded: %s", e)
            return await _send_response(send, error_response(e))
        await _send_response(send, response)
