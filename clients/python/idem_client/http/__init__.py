"""Idempotency-Key middleware for Python web services (docs/http-idempotency.md): one core
(core.py: key, fingerprint, claim, replay, finality) and thin adapters: asgi (Starlette,
FastAPI), wsgi (Flask) and decorator (a plain function)."""

from .core import (DEFAULT_REPLAY_HEADERS, ConnectionPool, HttpIdempotency, HttpRequest, HttpResponse, IdemContext,
                   Route, is_final, normalise_template, operation_of)

__all__ = ["DEFAULT_REPLAY_HEADERS", "ConnectionPool", "HttpIdempotency", "HttpRequest", "HttpResponse",
           "IdemContext", "Route", "is_final", "normalise_template", "operation_of"]
