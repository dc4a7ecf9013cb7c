"""Idem's worker protocol for Python: keys, the v1 request digest, claim / fence / complete /
heartbeat / fail over the SQL API, run_task and the outcome counters. The same behaviour as the
C++ core (core/), byte for byte where bytes are concerned."""

from .canonicaljson import JsonError, canonical_json, canonical_json_from_text, es_number_to_string, parse_strict
from .digest import (REQUEST_DIGEST_PREFIX, CanonicalRequest, canonical_bytes, canonical_request, request_digest,
                     request_digest_from_text, without_fields)
from .fieldprints import FieldPrints, field_fingerprints
from .errors import (DatabaseUnavailable, IdemError, InvalidArgument, LostOwnership, NoRecord, NotPrimary, Refused,
                     UsageError)
from .key import TaskKey
from .retrypolicy import RetryPolicy

# The database parts need psycopg; keys and digests do not (idem_client.digest_batch runs on any
# Python 3). They are imported on first use.
_LAZY = {
    "CounterFlusher": "counters", "OutcomeCounters": "counters",
    "Outcome": "runner", "RunOutcome": "runner", "TaskContext": "runner", "TaskFailure": "runner",
    "outcome_of_claim": "runner", "run_task": "runner",
    "ClaimResult": "store", "Decision": "store", "FailResult": "store", "FailureClass": "store",
    "TaskStore": "store", "connect": "store", "new_token": "store",
    "RedriveContext": "redriver", "RedriveItem": "redriver", "Redriver": "redriver", "finish_outcome": "redriver",
    "redrive": "redriver",
}


def __getattr__(name):
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError("module 'idem_client' has no attribute %r" % name)
    import importlib
    value = getattr(importlib.import_module("." + module, __name__), name)
    globals()[name] = value
    return value

__version__ = "0.1.0"

__all__ = [
    "JsonError", "canonical_json", "canonical_json_from_text", "es_number_to_string", "parse_strict",
    "CounterFlusher", "OutcomeCounters",
    "REQUEST_DIGEST_PREFIX", "CanonicalRequest", "canonical_bytes", "canonical_request", "request_digest", "request_digest_from_text", "without_fields",
    "FieldPrints", "field_fingerprints",
    "DatabaseUnavailable", "IdemError", "InvalidArgument", "LostOwnership", "NoRecord", "NotPrimary", "Refused",
    "UsageError",
    "TaskKey", "RetryPolicy",
    "Outcome", "RunOutcome", "TaskContext", "TaskFailure", "outcome_of_claim", "run_task",
    "ClaimResult", "Decision", "FailResult", "FailureClass", "TaskStore", "connect", "new_token",
    "RedriveContext", "RedriveItem", "Redriver", "finish_outcome", "redrive",
]
