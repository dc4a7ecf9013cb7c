"""The v1 request digest: "v1:" + lowercase hex SHA-256 of the RFC 8785 canonical JSON.

The same digest as core/digest.h's requestDigest and `idemctl digest`, including the ignored
fields (trace ids, client timestamps) left out before canonicalising.
"""

import hashlib
from collections import namedtuple

from .canonicaljson import canonical_json, parse_strict

REQUEST_DIGEST_PREFIX = "v1:"


def _split_path(field):
    if not isinstance(field, str) or not field:
        raise ValueError("an ignored field name is empty")
    segments = field.split(".")
    if any(not s for s in segments):
        raise ValueError("ignored field '%s' has an empty path segment (a leading, trailing or doubled '.')" % field)
    return segments


def without_fields(request, ignore_fields=()):
    """The request without the named fields; the request itself is left unchanged.

    A name is a top-level key; a dotted name such as "meta.trace_id" reaches into nested
    objects. A top-level key spelled exactly like the whole name (dots included) is the one
    removed when it exists; otherwise the dotted path is followed. Names that match nothing
    change nothing. Raises ValueError for an empty name or an empty path segment, whatever the
    request is, so a typo fails on the first request.
    """
    ignore_fields = list(ignore_fields)
    paths = [_split_path(f) for f in ignore_fields]
    if not isinstance(request, dict):
        return request
    out = dict(request)
    for field, path in zip(ignore_fields, paths):
        if field in out:
            del out[field]
        elif len(path) > 1:
            _drop_path(out, path)
    return out


def _drop_path(obj, path):
    # Copies each object on the way so that the caller's nested objects stay as they were.
    at = obj
    for segment in path[:-1]:
        child = at.get(segment)
        if not isinstance(child, dict):
            return
        child = dict(child)
        at[segment] = child
        at = child
    at.pop(path[-1], None)


def canonical_bytes(request, ignore_fields=()):
    """The UTF-8 bytes of the canonical JSON that the digest hashes."""
    return canonical_json(without_fields(request, ignore_fields)).encode("utf-8")


def request_digest(request, ignore_fields=()):
    """The digest of a request given as Python values (dict, list, str, int, float, bool, None)."""
    return REQUEST_DIGEST_PREFIX + hashlib.sha256(canonical_bytes(request, ignore_fields)).hexdigest()


def request_digest_from_text(text, ignore_fields=()):
    """The digest of a request given as JSON text (bytes or str), read strictly (parse_strict)."""
    return request_digest(parse_strict(text), ignore_fields)


class CanonicalRequest(namedtuple("CanonicalRequest", "text digest")):
    """A request as a re-drivable operation's claim stores it: its canonical JSON text (ignored
    fields left out) and that text's v1 digest. Pass it to TaskStore.claim / run_task where a
    digest goes; the database checks that the digest is the text's before storing anything."""

    __slots__ = ()


def canonical_request(request, ignore_fields=()):
    """The CanonicalRequest of a request given as Python values: the text C++ and TypeScript
    store for the same input, byte for byte."""
    data = canonical_bytes(request, ignore_fields)
    return CanonicalRequest(data.decode("utf-8"), REQUEST_DIGEST_PREFIX + hashlib.sha256(data).hexdigest())
