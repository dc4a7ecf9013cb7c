"""The contract as WSGI middleware (Flask, or any WSGI application):

    app.wsgi_app = IdempotencyWSGI(app.wsgi_app, HttpIdempotency(dsn), flask_routes(app))

    @app.post("/orders")
    @idempotent_route()                       # opts the route in
    def create():
        request.environ["idem"].tx.execute(...)   # the atomic phase

route_of(environ) gives the (template, Route) a request reaches; flask_routes builds it from
Flask's URL map, so the template is the rule (/orders/<int:id>), never the raw path.
"""

import io
import logging

from .asgi import idempotent_route
from .core import HttpRequest, HttpResponse, error_response, problem

log = logging.getLogger("idem.http")

_REASONS = {200: "OK", 201: "Created", 204: "No Content", 400: "Bad Request", 404: "Not Found", 409: "Conflict",
            413: "Content Too Large", 422: "Unprocessable Content", 500: "Internal Server Error",
            503: "Service Unavailable"}


def flask_routes(flask_app, routes=None):
    """route_of for a Flask application: its URL rule and the @idempotent_route mark of its view
    (or routes={"METHOD template": Route})."""
    explicit = dict(routes or {})

    def route_of(environ):
        try:
            rule, _ = flask_app.url_map.bind_to_environ(environ).match(return_rule=True)
        except Exception:  # noqa: BLE001 - 404 / 405: Flask answers it
            return None, None
        opts = explicit.get("%s %s" % (environ["REQUEST_METHOD"].upper(), rule.rule))
        if opts is None:
            opts = getattr(flask_app.view_functions.get(rule.endpoint), "__idem_route__", None)
        return rule.rule, opts

    return route_of


def _start(start_response, response):
    start_response("%d %s" % (response.status, _REASONS.get(response.status, "Status")), response.headers)
    return [response.body]


class IdempotencyWSGI:
    """idem: an HttpIdempotency; route_of: environ -> (template, Route or None); tenant: environ
    -> tenant name (default "default")."""

    def __init__(self, app, idem, route_of, tenant=None):
        self.app = app
        self.idem = idem
        self.route_of = route_of
        self.tenant = tenant

    def __call__(self, environ, start_response):
        method = environ["REQUEST_METHOD"].upper()
        if method not in self.idem.methods:
            return self.app(environ, start_response)
        template, route = self.route_of(environ)
        if route is None:
            return self.app(environ, start_response)
        try:
            length = int(environ.get("CONTENT_LENGTH") or 0)
        except ValueError:
            length = 0
        body = environ["wsgi.input"].read(min(length, self.idem.max_request_bytes + 1)) if length > 0 else b""
        environ["wsgi.input"] = io.BytesIO(body)
        environ["CONTENT_LENGTH"] = str(len(body))
        headers = {}
        for name, value in environ.items():
            if name.startswith("HTTP_"):  # the server has joined repeated headers with ','
                headers.setdefault(name[5:].replace("_", "-").lower(), []).append(value)
        if environ.get("CONTENT_TYPE"):
            headers["content-type"] = [environ["CONTENT_TYPE"]]
        request = HttpRequest(method, template, headers, body, self.tenant(environ) if self.tenant else "default")
        try:
            begun = self.idem.begin(request, route)
        except Exception as e:  # noqa: BLE001 - the database is away: nothing ran
            log.warning("idempotency claim failed: %s", e)
            return _start(start_response, error_response(e))
        if isinstance(begun, HttpResponse):
            return _start(start_response, begun)
        if begun is None:
            return self.app(environ, start_response)

        environ["idem"] = begun.context
        captured = {}

        def capture(status, response_headers, exc_info=None):
            captured["status"] = int(status.split(" ", 1)[0])
            captured["headers"] = list(response_headers)
            return lambda data: captured.setdefault("written", []).append(data)

        try:
            result = self.app(environ, capture)
            try:
                chunks = captured.get("written", []) + [bytes(c) for c in result]
            finally:
                if hasattr(result, "close"):
                    result.close()
        except Exception as e:  # noqa: BLE001 - the outcome is unknown
            replay = begun.abandon("handler raised %s: %s" % (type(e).__name__, str(e)[:200]))
            if replay is not None:  # another run of the key succeeded meanwhile: its answer
                return _start(start_response, replay)
            log.exception("idempotent handler failed")
            return _start(start_response, problem(500, "Handler failed",
                                                  "the handler raised an error; the outcome is unknown and a retry "
                                                  "with the same key may run it again"))
        response = HttpResponse(captured.get("status", 500), captured.get("headers", []), b"".join(chunks))
        try:
            response = begun.finish(response)
        except Exception as e:  # noqa: BLE001 - not recorded: the lease expires and a retry decides
            log.warning("idempotent response not recorded: %s", e)
            return _start(start_response, error_response(e))
        return _start(start_response, response)


__all__ = ["IdempotencyWSGI", "flask_routes", "idempotent_route"]
