#!/usr/bin/env python3
"""Documents for the digest cross-check (clients/crosscheck.sh), as batch input: one line per
document, the base64 (standard, padded) of its raw bytes.

  generate.py --seed N --count C      C random documents, the same for the same seed: numbers at
                                      the double's edges, escapes, surrogate pairs, non-BMP text,
                                      control characters, nesting, keys that sort differently by
                                      UTF-16 than by UTF-8, and about one in eight damaged (cut,
                                      a stray byte, a duplicate key, a lone surrogate, invalid
                                      UTF-8, too deep, trailing bytes)
  generate.py --corpus                the inputs of rfc8785.json and hostile.json, in file order
  generate.py --write-hostile IDEMCTL rewrites hostile.json with the answers of
                                      `IDEMCTL digest --batch` (the C++ library is the reference)
"""

import argparse
import base64
import decimal
import json
import os
import random
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))

# Refusals and corners, each as raw bytes. Their expected answers in hostile.json come from the
# C++ implementation (--write-hostile) and are checked in; the cross-check holds all three
# implementations to them.
HOSTILE = [
    ("empty", b""),
    ("whitespace only", b" \t\r\n"),
    ("BOM only", b"\xef\xbb\xbf"),
    ("BOM then value", b"\xef\xbb\xbf{\"a\":1}"),
    ("half a BOM", b"\xef\xbb[]"),
    ("BOM after whitespace", b" \xef\xbb\xbf[]"),
    ("two BOMs", b"\xef\xbb\xbf\xef\xbb\xbf[]"),
    ("NUL alone", b"\x00"),
    ("NUL then a second document", b"{\"a\":1}\x00{\"b\":2}"),
    ("NUL at the end", b"[1]\x00"),
    ("NUL inside an object", b"{\"a\":\x00}"),
    ("NUL inside a string", b"\"a\x00\""),
    ("escaped NUL", b"\"a\\u0000b\""),
    ("truncated object", b"{\"a\":1"),
    ("truncated string", b"\"abc"),
    ("truncated escape", b"\"\\"),
    ("truncated unicode escape", b"\"\\u12"),
    ("bad escape", b"\"\\x41\""),
    ("uppercase U escape", b"\"\\U0041\""),
    ("trailing letter", b"{} x"),
    ("second object", b"{}{}"),
    ("number then number", b"1 2"),
    ("leading zero", b"012"),
    ("negative leading zero", b" -012"),
    ("leading zero in array", b"[01]"),
    ("number then dot", b"1.5."),
    ("dot without digit", b"1."),
    ("exponent without digit", b"1e"),
    ("exponent sign without digit", b"1e+"),
    ("minus alone", b"-"),
    ("plus sign", b"+1"),
    ("leading dot", b".5"),
    ("hex number", b"0x10"),
    ("form feed after", b"[]\x0c"),
    ("vertical tab before", b"\x0b[]"),
    ("trailing comma in array", b"[1,]"),
    ("trailing comma in object", b"{\"a\":1,}"),
    ("comment", b"// c\n1"),
    ("block comment", b"/* c */ 1"),
    ("single quotes", b"'a'"),
    ("NaN", b"NaN"),
    ("Infinity", b"[Infinity]"),
    ("True capitalised", b"True"),
    ("truncated literal", b"tru"),
    ("literal with extra", b"nulll"),
    ("raw control character", b"\"a\x01\""),
    ("raw tab in string", b"\"a\tb\""),
    ("raw DEL in string", b"\"a\x7fb\""),
    ("key not a string", b"{1:2}"),
    ("missing colon", b"{\"a\" 1}"),
    ("missing value", b"{\"a\":}"),
    ("duplicate key", b"{\"a\":1,\"a\":1}"),
    ("duplicate via escape", b"{\"a\":1,\"\\u0061\":2}"),
    ("nested duplicate", b"{\"x\":[0,{\"k~/\":{\"b\":1,\"b\":2}}]}"),
    ("duplicate before a bad colon", b"{\"a\":1,\"a\" 2}"),
    ("duplicate then the end", b"{\"a\":1,\"a\""),
    ("duplicate after a syntax error elsewhere", b"{\"a\":1,\"a\":[1,]}"),
    ("same key in sibling objects", b"[{\"a\":1},{\"a\":2}]"),
    ("lone high surrogate", b"\"\\ud800\""),
    ("lone low surrogate", b"\"\\udc00x\""),
    ("reversed pair", b"\"\\ude00\\ud83d\""),
    ("high then the end", b"\"\\ud800"),
    ("high then NUL", b"\"\\ud800\x00\""),
    ("high then backslash n", b"\"\\ud800\\n\""),
    ("high then bad hex", b"\"\\ud800\\u12\""),
    ("high then high", b"\"\\ud800\\ud800\""),
    ("high then letter", b"\"\\ud800a\""),
    ("surrogate pair uppercase hex", b"\"\\uD83D\\uDE00\""),
    ("lone surrogate in a key", b"{\"\\udfff\":1}"),
    ("invalid UTF-8 byte", b"\"\xff\""),
    ("overlong slash", b"\"\xc0\xaf\""),
    ("overlong three bytes", b"\"\xe0\x80\xaf\""),
    ("UTF-8 surrogate", b"\"\xed\xa0\x80\""),
    ("past U+10FFFF", b"\"\xf4\x90\x80\x80\""),
    ("F5 byte", b"\"\xf5\x80\x80\x80\""),
    ("lone continuation", b"\"\x80\""),
    ("cut sequence at quote", b"\"\xe2\x82\""),
    ("cut sequence at the end", b"\"\xe2\x82"),
    ("invalid UTF-8 in a key", b"{\"\xc3\":1}"),
    ("invalid UTF-8 outside a string", b"[\xc3\xa9]"),
    ("high byte after the value", b"null\xff"),
    ("largest double", b"1.7976931348623157e308"),
    ("overflow", b"[1e400]"),
    ("negative overflow", b"[-1e400]"),
    ("just past the largest double", b"1.7976931348623159e308"),
    ("huge integer", b"[1" + b"0" * 400 + b"]"),
    ("overflow then junk", b"[1e400, x"),
    ("overflow as a key", b"{1e400:1}"),
    ("overflow at the top then junk", b"1e400 x"),
    ("underflow", b"1e-400"),
    ("negative underflow", b"-1e-400"),
    ("smallest subnormal", b"4.9406564584124654e-324"),
    ("below half the smallest subnormal", b"2e-324"),
    ("above half the smallest subnormal", b"3e-324"),
    ("largest subnormal", b"2.2250738585072009e-308"),
    ("smallest normal", b"2.2250738585072014e-308"),
    ("long mantissa", b"0." + b"1" * 800),
    # Issue 40 item 9: an integer whose double RFC 8785 writes as another integer would share its
    # digest (number_range); a literal with a fraction or exponent rounds, unless it is not zero
    # and rounds to 0 (number_range); -0 is 0.
    ("2^53 + 1", b"9007199254740993"),
    ("-(2^53 + 1)", b"-9007199254740993"),
    ("2^53 + 1 in an object", b"{\"amount_cents\":9007199254740993}"),
    ("2^53 + 1 then junk", b"[9007199254740993, x"),
    ("2^53 + 1 as a key", b"{9007199254740993:1}"),
    ("2^53 + 1 in exponent form", b"9.007199254740993e15"),
    ("2^53 + 2", b"9007199254740994"),
    ("int64 max", b"9223372036854775807"),
    ("int64 min", b"-9223372036854775808"),
    ("2^63 exact but not as written", b"9223372036854775808"),
    ("2^63 as written", b"9223372036854776000"),
    ("uint64 max", b"18446744073709551615"),
    ("2^64", b"18446744073709551616"),
    ("-2^63 - 1", b"-9223372036854775809"),
    ("past uint64", b"123456789012345678901"),
    ("past uint64 as written", b"295147905179352830000"),
    ("30 digits", b"123456789012345678901234567890"),
    ("10^23 written out", b"100000000000000000000000"),
    ("negative zero", b"-0"),
    ("negative zero fraction", b"[-0.0, 0.0, -0e5]"),
    ("underflow then junk", b"[1e-400, x"),
    ("underflow with leading zeros", b"0.00001e-320"),
    ("zero below the subnormals", b"0.000e-400"),
    ("zero exponent", b"0e0"),
    ("big exponent of zero", b"0e999999999999"),
    ("depth 512", b"[" * 512 + b"]" * 512),
    ("depth 513", b"[" * 513 + b"]" * 513),
    ("depth 512 objects", b"{\"a\":" * 511 + b"{}" + b"}" * 511),
    ("depth 513 objects", b"{\"a\":" * 512 + b"{}" + b"}" * 512),
    ("depth 512 then junk", b"[" * 512 + b"x"),
    ("depth 513 then junk", b"[" * 513 + b"x"),
    ("U+2028 and U+2029", b"\"\xe2\x80\xa8\xe2\x80\xa9\""),
    ("BOM inside a string", b"\"\xef\xbb\xbf\""),
    ("noncharacter U+FFFF", b"\"\xef\xbf\xbf\""),
    ("keys by UTF-16", b"{\"\xee\x80\x80\":1,\"\xf0\x90\x80\x80\":2,\"\xef\xbf\xbf\":3,\"z\":4}"),
    ("empty key", b"{\"\":1}"),
]


def b64(data):
    return base64.b64encode(data).decode("ascii")


# --- random documents ---------------------------------------------------------------------

NUMBER_TEXTS = [
    "0", "-0", "0.0", "-0.0", "1", "-1", "1e308", "-1e308", "1.7976931348623157e308", "5e-324", "-5e-324",
    "4.9e-324", "2.2250738585072014e-308", "2.225073858507201e-308", "9007199254740992", "9007199254740993",
    "-9007199254740993", "9223372036854775807", "9223372036854775808", "-9223372036854775808",
    "18446744073709551615", "18446744073709551616", "1e21", "1e20", "999999999999999999999", "1e-7", "1e-6",
    "0.000001", "0.0000001", "1E+2", "1e-0", "0.1", "0.2", "0.30000000000000004", "123456789012345678901234567890",
    "1e400", "-1e400", "1e-400", "333333333.33333329", "1424953923781206.25", "4.50", "100", "1e2", "12.5E-3",
]


def random_number(rng):
    r = rng.random()
    if r < 0.35:
        return rng.choice(NUMBER_TEXTS)
    if r < 0.45:
        return str(rng.randint(-(2 ** 53), 2 ** 53))
    if r < 0.5:
        return str(rng.randint(-(2 ** 70), 2 ** 70))  # past 2^53 mostly refused
    if r < 0.55:
        # An integral double past 2^53 written out as RFC 8785 writes it: accepted.
        x = rng.choice([1, -1]) * float(rng.randint(2 ** 53, 2 ** 69))
        return str(int(decimal.Decimal(repr(x))))
    if r < 0.75:
        return repr(rng.uniform(-1e6, 1e6) * 10 ** rng.randint(-30, 30))
    if r < 0.9:
        # Random digits and exponent, spelled in any legal way.
        mantissa = str(rng.randint(0, 10 ** rng.randint(1, 25)))
        if rng.random() < 0.5 and len(mantissa) > 1:
            cut = rng.randint(1, len(mantissa) - 1)
            mantissa = mantissa[:cut] + "." + mantissa[cut:]
        exponent = rng.choice(["", "e%d" % rng.randint(-330, 300), "E+%d" % rng.randint(0, 300),
                               "e-%d" % rng.randint(0, 340)])
        return rng.choice(["", "-"]) + mantissa + exponent
    return repr(rng.choice([1, -1]) * 2.0 ** rng.randint(-1074, 1023) * rng.choice([1, 1.5, 1.9999999999999998]))


SPECIAL_CHARS = [
    "\"", "\\", "/", "\b", "\f", "\n", "\r", "\t", "\x00", "\x01", "\x1f", "\x7f", "\u0080", "\u00e9", "\u2028",
    "\u2029", "\ufeff", "\ue000", "\uffff", "\ufb33", "\u20ac", "\U00010000", "\U0001f600", "\U0010ffff", "~", " ",
]


def random_char(rng):
    r = rng.random()
    if r < 0.5:
        return chr(rng.randint(0x20, 0x7e))
    if r < 0.75:
        return rng.choice(SPECIAL_CHARS)
    if r < 0.9:
        cp = rng.randint(0x80, 0xffff)
        while 0xd800 <= cp <= 0xdfff:
            cp = rng.randint(0x80, 0xffff)
        return chr(cp)
    return chr(rng.randint(0x10000, 0x10ffff))


def encode_char(rng, ch):
    """One character as JSON string text: verbatim where allowed, or one of its escapes."""
    o = ord(ch)
    short = {0x22: '\\"', 0x5c: "\\\\", 0x08: "\\b", 0x0c: "\\f", 0x0a: "\\n", 0x0d: "\\r", 0x09: "\\t"}
    must = o < 0x20 or o in (0x22, 0x5c)
    if not must and rng.random() < 0.7:
        return ch
    if o in short and rng.random() < 0.6:
        return short[o]
    if ch == "/" and rng.random() < 0.5:
        return "\\/"
    hexfmt = rng.choice(["\\u%04x", "\\u%04X"])
    if o >= 0x10000:
        v = o - 0x10000
        return hexfmt % (0xd800 + (v >> 10)) + hexfmt % (0xdc00 + (v & 0x3ff))
    return hexfmt % o


def random_string(rng, length=None):
    if length is None:
        length = rng.choice([0, 1, 1, 2, 3, 5, 8, 13])
    chars = [random_char(rng) for _ in range(length)]
    return '"' + "".join(encode_char(rng, c) for c in chars) + '"'


def ws(rng):
    return "" if rng.random() < 0.7 else "".join(rng.choice(" \t\r\n") for _ in range(rng.randint(1, 3)))


def random_value(rng, depth):
    r = rng.random()
    if depth < 6 and r < 0.25:
        n = rng.randint(0, 6)
        keys = set()
        members = []
        for _ in range(n):
            key = random_string(rng, rng.choice([0, 1, 1, 2, 3]))
            if key in keys:
                continue
            keys.add(key)
            members.append(ws(rng) + key + ws(rng) + ":" + ws(rng) + random_value(rng, depth + 1) + ws(rng))
        return "{" + ",".join(members) + ws(rng) + "}"
    if depth < 6 and r < 0.45:
        n = rng.randint(0, 6)
        return "[" + ",".join(ws(rng) + random_value(rng, depth + 1) + ws(rng) for _ in range(n)) + ws(rng) + "]"
    if r < 0.7:
        return random_number(rng)
    if r < 0.9:
        return random_string(rng)
    return rng.choice(["true", "false", "null"])


def damage(rng, data):
    """One fault in an otherwise valid document."""
    r = rng.random()
    if r < 0.15 and data:
        return data[:rng.randint(0, len(data) - 1)]
    if r < 0.3:
        at = rng.randint(0, len(data))
        return data[:at] + bytes([rng.randint(0, 255)]) + data[at:]
    if r < 0.4:
        return data + rng.choice([b"x", b"\x00", b"{}", b" 1", b"\xff", b"\x0c", b","])
    if r < 0.5:
        return b"{\"k\":" + data + b",\"k\":" + data + b"}"
    if r < 0.6:
        return b"[\"" + rng.choice([b"\\ud800", b"\\udfff", b"\\ud83d\\u0041", b"\\ude00\\ud83d", b"\\ud800\\u00"]) \
            + b"\"," + data + b"]"
    if r < 0.7:
        return b"[\"" + rng.choice([b"\xc3", b"\xe2\x82", b"\xed\xa0\x80", b"\xc0\x80", b"\xf8\x88\x80\x80\x80",
                                    b"\x80", b"\xf4\x90\x80\x80"]) + b"\"," + data + b"]"
    if r < 0.8:
        depth = rng.randint(505, 520)
        return b"[" * depth + data + b"]" * depth
    if r < 0.9:
        return b"\xef\xbb\xbf" + data
    return data.replace(b":", b"", 1) if b":" in data else data + b"]"


def random_document(rng):
    data = (ws(rng) + random_value(rng, 0) + ws(rng)).encode("utf-8")
    if rng.random() < 0.125:
        data = damage(rng, data)
    return data


def corpus_inputs():
    with open(os.path.join(HERE, "rfc8785.json"), encoding="utf-8") as f:
        for row in json.load(f):
            yield row["input"].encode("utf-8")
    with open(os.path.join(HERE, "hostile.json"), encoding="utf-8") as f:
        for row in json.load(f):
            yield base64.b64decode(row["input_b64"])


def write_hostile(idemctl):
    batch = "".join(b64(data) + "\n" for _, data in HOSTILE)
    answers = subprocess.run([idemctl, "digest", "--batch"], input=batch.encode("ascii"), stdout=subprocess.PIPE,
                             check=True).stdout.decode("ascii").splitlines()
    if len(answers) != len(HOSTILE):
        sys.exit("%s digest --batch answered %d lines for %d documents" % (idemctl, len(answers), len(HOSTILE)))
    rows = []
    for (name, data), line in zip(HOSTILE, answers):
        parts = line.split(" ")
        if parts[0] == "ok":
            result = {"canonical_b64": parts[1], "digest": parts[2]}
        else:
            result = {"error": parts[1]}
        rows.append({"name": name, "input_b64": b64(data), "result": result})
    with open(os.path.join(HERE, "hostile.json"), "w", encoding="utf-8") as f:
        json.dump(rows, f, indent=1)
        f.write("\n")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seed", type=int, default=30)
    parser.add_argument("--count", type=int)
    parser.add_argument("--corpus", action="store_true")
    parser.add_argument("--write-hostile", metavar="IDEMCTL")
    args = parser.parse_args()
    if args.write_hostile:
        write_hostile(args.write_hostile)
        return
    out = sys.stdout
    if args.corpus:
        for data in corpus_inputs():
            out.write(b64(data) + "\n")
    if args.count is not None:
        rng = random.Random(args.seed)
        for _ in range(args.count):
            out.write(b64(random_document(rng)) + "\n")


if __name__ == "__main__":
    main()
