"""`python3 -m idem_client.digest_batch`: the batch protocol of `idemctl digest --batch`.

Standard input: one line per document, the base64 (standard, padded) of its bytes. Standard
output: one line per document, in order: "ok BASE64-OF-CANONICAL-JSON DIGEST" or "err KIND".
A line that is not base64 ends the run with exit status 1.
"""

import base64
import binascii
import hashlib
import sys

from .canonicaljson import JsonError, canonical_json, parse_strict
from .digest import REQUEST_DIGEST_PREFIX


def answer(document):
    try:
        canonical = canonical_json(parse_strict(document)).encode("utf-8")
    except JsonError as e:
        return "err " + e.kind
    return "ok %s %s%s" % (base64.b64encode(canonical).decode("ascii"), REQUEST_DIGEST_PREFIX,
                           hashlib.sha256(canonical).hexdigest())


def main(stdin=None, stdout=None):
    stdin = stdin or sys.stdin.buffer
    stdout = stdout or sys.stdout
    out = []
    for number, line in enumerate(stdin, 1):
        line = line.rstrip(b"\n")
        try:
            document = base64.b64decode(line, validate=True)
        except (binascii.Error, ValueError):
            sys.stderr.write("digest_batch: line %d is not base64\n" % number)
            stdout.write("".join(out))
            return 1
        out.append(answer(document) + "\n")
    stdout.write("".join(out))
    stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
