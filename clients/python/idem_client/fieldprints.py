"""Field fingerprints (schema v32): a short keyed hash per top-level field of the canonical request.

The same as core/fieldprints.h's fieldFingerprints, byte for byte (clients/corpus/fields.json holds
the vectors all three libraries check): for each top-level member, the first 8 bytes as 16
lowercase hex digits of HMAC-SHA256, keyed by the workers' field key, over the member's canonical
text (canonical JSON of the name, ':', canonical JSON of the value). At most 64 names of 1 to 256
UTF-8 bytes are fingerprinted, the first in UTF-8 byte order of the names; the rest are counted.
A reader of the database who lacks the key cannot try every value against a fingerprint.
"""

import hmac
import json
from collections import namedtuple

from .canonicaljson import canonical_json, parse_strict

MAX_FIELDS = 64
MAX_NAME_BYTES = 256
MIN_KEY_BYTES = 16
MAX_KEY_BYTES = 1024


class FieldPrints(namedtuple("FieldPrints", "json fields")):
    """json: the canonical JSON object name -> fingerprint; fields: how many top-level fields the
    request has (those not fingerprinted included)."""


def field_key_bytes(key):
    """The key as bytes (a str is taken as UTF-8); ValueError outside 16 to 1024 bytes."""
    data = key.encode("utf-8") if isinstance(key, str) else bytes(key)
    if not MIN_KEY_BYTES <= len(data) <= MAX_KEY_BYTES:
        raise ValueError("the field key must be 16 to 1024 bytes")
    return data


def _members(request):
    return {name: canonical_json(name) + ":" + canonical_json(value) for name, value in request.items()}


def _utf16(name):
    return name.encode("utf-16-be", "surrogatepass")


def field_fingerprints(canonical_request, key):
    """The fingerprints of a request given as its canonical JSON text (str)."""
    key = field_key_bytes(key)
    # Canonical text (what canonical_request made) is read by the standard reader, several times
    # faster than the strict one, and checked by joining the members written again: canonical text
    # is a fixed point. Anything else (other text, duplicate names, NaN) is read strictly, and
    # refused as the C++ library refuses it.
    request, members = None, None
    try:
        parsed = json.loads(canonical_request)
        if isinstance(parsed, dict):
            members = _members(parsed)
            if "{" + ",".join(members[n] for n in sorted(members, key=_utf16)) + "}" == canonical_request:
                request = parsed
        elif canonical_json(parsed) == canonical_request:
            request = parsed
    except (ValueError, RecursionError):
        pass
    if request is None:
        request = parse_strict(canonical_request)
        members = _members(request) if isinstance(request, dict) else None
    if not isinstance(request, dict):
        return FieldPrints("{}", 0)
    prints = {}
    for name in sorted(request, key=lambda n: n.encode("utf-8", "surrogatepass")):
        if len(prints) >= MAX_FIELDS:
            break
        size = len(name.encode("utf-8", "surrogatepass"))
        if not 1 <= size <= MAX_NAME_BYTES:
            continue
        prints[name] = hmac.digest(key, members[name].encode("utf-8"), "sha256")[:8].hex()
    return FieldPrints(canonical_json(prints), len(request))
