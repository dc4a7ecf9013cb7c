#!/usr/bin/env python3
"""fields.py [--write]: the field-fingerprint vectors (fields.json), computed here with nothing but
hashlib and hmac over the canonical text of each member, so that the C++ library, the Python client
and the TypeScript client are all checked against a fourth, plain reading of the rule. Without
--write it prints the file it would write."""

import hashlib
import hmac
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
from idem_client.canonicaljson import canonical_json, parse_strict  # noqa: E402

KEY = "idem-field-key-for-tests-only"
CASES = [
    ("three fields", '{"order_id":"o-1","amount_cents":1250,"currency":"EUR"}'),
    ("amount changed", '{"order_id":"o-1","amount_cents":1300,"currency":"EUR"}'),
    ("number spelling does not matter", '{"order_id":"o-1","amount_cents":1.25e3,"currency":"EUR"}'),
    ("nested values", '{"b":{"y":[1,2,{"z":null}],"x":true},"a":[]}'),
    ("non-ASCII names and values", '{"\u00e9t\u00e9":"\u20ac","\U0001f600":"x","z":"\u00fc"}'),
    ("a name with control characters", '{"a\\u0000b\\n\\u001b[31m":1,"ok":2}'),
    ("a name of 256 bytes is kept", json.dumps({"n" * 256: 1, "a": 2})),
    ("a name of 257 bytes is counted only", json.dumps({"n" * 257: 1, "a": 2})),
    ("the empty name is counted only", '{"":1,"a":2}'),
    ("seventy fields: the first 64 by UTF-8 bytes", json.dumps({"f%02d" % i: i for i in range(70)})),
    ("UTF-8 order, not UTF-16", json.dumps({"\uff61": 1, "\U0001f600": 2, "a": 3})),
    ("__proto__ is a field", '{"__proto__":{"a":1},"constructor":2}'),
    ("an array is not an object", "[1,2,3]"),
    ("a string", '"x"'),
    ("an empty object", "{}"),
]


def prints(text, key):
    request = parse_strict(text)
    if not isinstance(request, dict):
        return "{}", 0
    out = {}
    for name in sorted(request, key=lambda n: n.encode("utf-8")):
        if len(out) == 64:
            break
        if not 1 <= len(name.encode("utf-8")) <= 256:
            continue
        member = canonical_json(name)
        message = (member + ":" + canonical_json(request[name])).encode("utf-8")
        out[name] = hmac.new(key.encode("utf-8"), message, hashlib.sha256).digest()[:8].hex()
    return canonical_json(out), len(request)


def main(argv):
    rows = []
    for name, text in CASES:
        canonical = canonical_json(parse_strict(text))
        doc, fields = prints(canonical, KEY)
        rows.append({"name": name, "key": KEY, "canonical": canonical, "fingerprints": doc, "fields": fields})
    rows.append({"name": "another key", "key": "another key of the workers",
                 "canonical": rows[0]["canonical"],
                 "fingerprints": prints(rows[0]["canonical"], "another key of the workers")[0], "fields": 3})
    text = json.dumps(rows, indent=1, ensure_ascii=True) + "\n"
    if "--write" in argv:
        with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "fields.json"), "w", encoding="ascii") as f:
            f.write(text)
    else:
        sys.stdout.write(text)


if __name__ == "__main__":
    main(sys.argv[1:])
