"""The digest agrees with the C++ library: the shared RFC 8785 vectors, the hostile corpus
whose expected answers the C++ library produced, refusal kinds, and `idemctl digest` itself."""

import base64
import hashlib
import json
import struct
import subprocess

import pytest

from conftest import corpus_path
from idem_client import (JsonError, canonical_json, canonical_json_from_text, es_number_to_string, parse_strict,
                         request_digest, request_digest_from_text, without_fields)
from idem_client import canonicaljson as cj
from idem_client.digest_batch import answer

with open(corpus_path("rfc8785.json"), encoding="utf-8") as f:
    RFC8785 = json.load(f)
with open(corpus_path("hostile.json"), encoding="utf-8") as f:
    HOSTILE = json.load(f)


def test_corpora_are_substantial():
    assert len(RFC8785) >= 70
    assert len(HOSTILE) >= 100
    kinds = {row["result"].get("error") for row in HOSTILE}
    assert set(cj.KINDS) <= kinds, "hostile.json covers every refusal kind"


@pytest.mark.parametrize("row", RFC8785, ids=[r["name"] for r in RFC8785])
def test_rfc8785_vectors(row):
    assert canonical_json_from_text(row["input"].encode("utf-8")) == row["canonical"]
    assert canonical_json_from_text(row["canonical"]) == row["canonical"]  # a fixed point
    if "bits" in row:
        value = struct.unpack(">d", bytes.fromhex(row["bits"]))[0]
        assert es_number_to_string(value) == row["canonical"]
        assert canonical_json(value) == row["canonical"]


@pytest.mark.parametrize("row", HOSTILE, ids=[r["name"] for r in HOSTILE])
def test_hostile_corpus_as_the_cpp_library_answered(row):
    document = base64.b64decode(row["input_b64"])
    result = row["result"]
    if "error" in result:
        with pytest.raises(JsonError) as e:
            canonical_json_from_text(document)
        assert e.value.kind == result["error"]
        assert answer(document) == "err " + result["error"]
    else:
        canonical = canonical_json_from_text(document).encode("utf-8")
        assert base64.b64encode(canonical).decode() == result["canonical_b64"]
        assert request_digest_from_text(document) == result["digest"]
        assert "v1:" + hashlib.sha256(canonical).hexdigest() == result["digest"]


@pytest.mark.parametrize("text,kind", [
    (b"", cj.EMPTY),
    (b"\xef\xbb\xbf \n", cj.EMPTY),
    (b"{\"a\":1,\"a\" 2}", cj.DUPLICATE_KEY),  # the duplicate is met before the missing ':'
    (b"[\"\xc3\"]", cj.INVALID_UTF8),
    (b"[\xc3\xa9]", cj.SYNTAX),  # outside a string any such byte is a syntax error
    (b"\"\\ud800", cj.LONE_SURROGATE),
    (b"\"\\ud800\\u12\"", cj.SYNTAX),
    (b"[1e400, x", cj.NUMBER_RANGE),
    (b"{1e400:1}", cj.SYNTAX),
    (b"[9007199254740993, x", cj.NUMBER_RANGE),
    (b"{9007199254740993:1}", cj.SYNTAX),
    (b"[1e-400, x", cj.NUMBER_RANGE),
    (b"[" * 512 + b"x", cj.SYNTAX),
    (b"[" * 513 + b"x", cj.DEPTH),
    (b"1.5.", cj.TRAILING_DATA),
    (b"1.", cj.SYNTAX),
    (b"{\"a\":1}\x00{\"b\":2}", cj.TRAILING_DATA),
])
def test_first_fault_decides_the_kind(text, kind):
    with pytest.raises(JsonError) as e:
        parse_strict(text)
    assert e.value.kind == kind


def test_python_values():
    # Integers are JCS numbers, written as their double; bool is not a number.
    assert canonical_json({"b": 9007199254740994, "a": True, "c": (1, 2.0, None)}) == \
        '{"a":true,"b":9007199254740994,"c":[1,2,null]}'
    assert canonical_json(-0.0) == "0"
    assert canonical_json(2 ** 53) == "9007199254740992"
    assert canonical_json(float(2 ** 53 + 1)) == "9007199254740992"  # a float is its double already
    assert canonical_json({"\ue000": 1, "\U00010000": 2}) == '{"\U00010000":2,"\ue000":1}'
    for bad, kind in [(float("nan"), cj.NUMBER_RANGE), (float("inf"), cj.NUMBER_RANGE), (10 ** 400, cj.NUMBER_RANGE),
                      (2 ** 53 + 1, cj.NUMBER_RANGE), (-(2 ** 53) - 1, cj.NUMBER_RANGE), (2 ** 63, cj.NUMBER_RANGE),
                      ("\ud800", cj.LONE_SURROGATE), ({1: 2}, cj.UNSUPPORTED), (object(), cj.UNSUPPORTED)]:
        with pytest.raises(JsonError) as e:
            canonical_json(bad)
        assert e.value.kind == kind
    deep = 1
    for _ in range(600):
        deep = [deep]
    with pytest.raises(JsonError) as e:
        canonical_json(deep)
    assert e.value.kind == cj.DEPTH


def test_digest_ignores_fields_as_cpp():
    request = {"order": "o-1", "amount_cents": 1250, "trace_id": "t-9", "meta": {"at": 5, "who": "x"},
               "meta.at": "top-level key spelled like the path"}
    digest = request_digest(request, ["trace_id", "meta.at", "meta.who"])
    # A top-level key spelled exactly like the whole name is the one removed.
    assert digest == request_digest({"order": "o-1", "amount_cents": 1250, "meta": {"at": 5}})
    assert request["trace_id"] == "t-9" and request["meta"] == {"at": 5, "who": "x"}  # the caller's value is kept
    assert without_fields([1], ["x"]) == [1]
    for bad in ["", "a..b", ".a", "a."]:
        with pytest.raises(ValueError):
            without_fields({}, [bad])


def test_digest_equals_idemctl_digest(idemctl, tmp_path):
    cases = [
        (b'{"order":"o-1","amount_cents":1250,"trace_id":"t-1","meta":{"trace":"x","n":1.0}}', ["trace_id", "meta.trace"]),
        ("{\"\u20ac\":[1e21,1e-7,-0,\"\\ud83d\\ude00\"],\"a\":\"\\u001F\"}".encode("utf-8"), []),
        (b"\xef\xbb\xbf[9007199254740994, 5e-324, 1.7976931348623157e308, -0]\n", []),
    ]
    for text, ignore in cases:
        path = tmp_path / "request.json"
        path.write_bytes(text)
        args = [idemctl, "digest", str(path)]
        for field in ignore:
            args += ["--ignore", field]
        expected = subprocess.run(args, check=True, stdout=subprocess.PIPE).stdout.decode().strip()
        assert request_digest_from_text(text, ignore) == expected
        canonical = subprocess.run([idemctl, "digest", "--canonical", str(path)] + args[3:], check=True,
                                   stdout=subprocess.PIPE).stdout
        assert canonical_json(without_fields(parse_strict(text), ignore)).encode("utf-8") == canonical


def test_digest_batch_module_protocol():
    import io
    import sys
    from idem_client import digest_batch
    lines = [base64.b64encode(b) + b"\n" for b in (b'{"b":1,"a":2}', b"", b"[1,]")]
    out = io.StringIO()
    assert digest_batch.main(io.BytesIO(b"".join(lines)), out) == 0
    got = out.getvalue().splitlines()
    canonical = b'{"a":2,"b":1}'
    assert got == ["ok %s v1:%s" % (base64.b64encode(canonical).decode(), hashlib.sha256(canonical).hexdigest()),
                   "err empty", "err syntax"]
    err = sys.stderr
    try:
        sys.stderr = io.StringIO()
        assert digest_batch.main(io.BytesIO(b"!!!\n"), io.StringIO()) == 1
    finally:
        sys.stderr = err


def test_numbers_a_double_cannot_tell_apart_are_refused():
    """Issue 40 item 9: 9007199254740993 and 9007199254740992 digested alike, so a retry with the
    amount changed there was answered `replay`; 1e-400 digested as 0. Refused as number_range,
    as the C++ library and the TypeScript client refuse them; -0 stays 0 (RFC 8785)."""
    base = {"order": "o-1", "amount_cents": 9007199254740992}
    for text in (b'{"order":"o-1","amount_cents":9007199254740993}', b'{"amount_cents":-9007199254740993}',
                 b"[9223372036854775807]", b"9223372036854775808", b"123456789012345678901", b"1e-400",
                 b"[-2e-324]", b"0.00001e-320"):
        with pytest.raises(JsonError) as e:
            request_digest_from_text(text)
        assert e.value.kind == cj.NUMBER_RANGE, text
    with pytest.raises(JsonError) as e:
        request_digest(dict(base, amount_cents=9007199254740993))
    assert e.value.kind == cj.NUMBER_RANGE
    assert "RFC 8785 would write it as 9007199254740992" in str(e.value)
    assert request_digest_from_text(b'{"order":"o-1","amount_cents":9007199254740992}') == request_digest(base)
    assert request_digest_from_text(b'{"order":"o-1","amount_cents":9007199254740994}') != request_digest(base)
    for text, canonical in ((b"-0", "0"), (b"[-0.0,0e-400]", "[0,0]"), (b"295147905179352830000", "295147905179352830000"),
                            (b"100000000000000000000000", "1e+23"), (b"333333333.33333329", "333333333.3333333"),
                            (b"3e-324", "5e-324")):
        assert canonical_json_from_text(text) == canonical
    assert request_digest({"n": -0.0}) == request_digest({"n": 0})


with open(corpus_path("fields.json"), encoding="utf-8") as f:
    FIELD_VECTORS = json.load(f)


@pytest.mark.parametrize("row", FIELD_VECTORS, ids=[r["name"] for r in FIELD_VECTORS])
def test_field_fingerprint_vectors(row):
    # The vectors the C++ library (tst_digest) and the TypeScript client check too.
    from idem_client import field_fingerprints
    got = field_fingerprints(row["canonical"], row["key"])
    assert got.json == row["fingerprints"]
    assert got.fields == row["fields"]


def test_field_key_is_bounded():
    from idem_client import field_fingerprints
    with pytest.raises(ValueError):
        field_fingerprints("{}", "k" * 15)
    with pytest.raises(ValueError):
        field_fingerprints("{}", "k" * 1025)
