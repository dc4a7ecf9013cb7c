"""RFC 8785 canonical JSON, read and written exactly as Idem's C++ core does.

``parse_strict`` reads JSON text as ``core/canonicaljson.cpp`` does (one value, UTF-8, no
duplicate keys, no lone surrogate escapes, numbers within the double range, nesting at most
512 levels, a UTF-8 byte order mark at the start skipped, nothing after the value but JSON
whitespace) and refuses with a ``JsonError`` whose ``kind`` is the one ``idemctl digest
--batch`` prints. When text has several faults the kind is that of the first one met reading
left to right, in the order the C++ reader (nlohmann's lexer and parser) meets them.
``canonical_json`` writes the RFC 8785 form of a value.
"""

import decimal
import math
import re

MAX_DEPTH = 512

SYNTAX = "syntax"
DUPLICATE_KEY = "duplicate_key"
INVALID_UTF8 = "invalid_utf8"
LONE_SURROGATE = "lone_surrogate"
NUMBER_RANGE = "number_range"
DEPTH = "depth"
TRAILING_DATA = "trailing_data"
EMPTY = "empty"
UNSUPPORTED = "unsupported"

KINDS = (SYNTAX, DUPLICATE_KEY, INVALID_UTF8, LONE_SURROGATE, NUMBER_RANGE, DEPTH, TRAILING_DATA, EMPTY)


class JsonError(ValueError):
    """A text or value that has no canonical form; ``kind`` says why (one of ``KINDS``)."""

    def __init__(self, kind, message):
        super().__init__(message)
        self.kind = kind


_WHITESPACE = b" \t\n\r"
_BOM = b"\xef\xbb\xbf"
_HEX = frozenset(b"0123456789abcdefABCDEF")

# A run of string bytes that need no attention: printable ASCII but '"' and '\', DEL, and
# well-formed UTF-8 sequences (RFC 3629: no overlong forms, no surrogates, nothing past U+10FFFF).
_PLAIN = re.compile(
    rb"(?:[\x20\x21\x23-\x5b\x5d-\x7f]"
    rb"|[\xc2-\xdf][\x80-\xbf]"
    rb"|\xe0[\xa0-\xbf][\x80-\xbf]"
    rb"|[\xe1-\xec\xee\xef][\x80-\xbf]{2}"
    rb"|\xed[\x80-\x9f][\x80-\xbf]"
    rb"|\xf0[\x90-\xbf][\x80-\xbf]{2}"
    rb"|[\xf1-\xf3][\x80-\xbf]{3}"
    rb"|\xf4[\x80-\x8f][\x80-\xbf]{2})*"
)
_DIGITS = re.compile(rb"[0-9]*")
_SHORT_ESCAPES = {
    ord('"'): '"', ord("\\"): "\\", ord("/"): "/", ord("b"): "\b",
    ord("f"): "\f", ord("n"): "\n", ord("r"): "\r", ord("t"): "\t",
}

# Tokens
_EOF, _BEGIN_OBJECT, _END_OBJECT, _BEGIN_ARRAY, _END_ARRAY, _COLON, _COMMA, _VALUE, _NUMBER = range(9)
_PUNCTUATION = {
    ord("{"): _BEGIN_OBJECT, ord("}"): _END_OBJECT, ord("["): _BEGIN_ARRAY,
    ord("]"): _END_ARRAY, ord(":"): _COLON, ord(","): _COMMA,
}
_LITERALS = {ord("t"): (b"true", True), ord("f"): (b"false", False), ord("n"): (b"null", None)}


class _Lexer:
    def __init__(self, data):
        self.data = data
        self.pos = 0
        self.value = None
        self.number_text = b""  # the last number token as written

    def fail(self, kind, message):
        raise JsonError(kind, "invalid JSON: %s (at byte %d)" % (message, self.pos))

    def token(self):
        data = self.data
        n = len(data)
        pos = self.pos
        while pos < n and data[pos] in _WHITESPACE:
            pos += 1
        self.pos = pos
        if pos >= n:
            return _EOF
        c = data[pos]
        kind = _PUNCTUATION.get(c)
        if kind is not None:
            self.pos = pos + 1
            return kind
        if c == 0x22:
            self.value = self._string(pos + 1)
            return _VALUE
        if c == 0x2D or 0x30 <= c <= 0x39:
            self.value = self._number(pos)
            return _NUMBER
        literal = _LITERALS.get(c)
        if literal is not None:
            text, value = literal
            if data[pos:pos + len(text)] != text:
                self.fail(SYNTAX, "invalid literal")
            self.pos = pos + len(text)
            self.value = value
            return _VALUE
        # A NUL outside a string, a stray byte, a comment, a non-ASCII byte: none starts a token.
        self.fail(SYNTAX, "unexpected byte 0x%02x" % c)

    def _number(self, start):
        data = self.data
        n = len(data)
        pos = start
        if data[pos] == 0x2D:
            pos += 1
            if pos >= n or not 0x30 <= data[pos] <= 0x39:
                self.pos = pos
                self.fail(SYNTAX, "invalid number; expected digit after '-'")
        if data[pos] == 0x30:
            pos += 1
        else:
            pos = _DIGITS.match(data, pos).end()
        if pos < n and data[pos] == 0x2E:
            pos += 1
            if pos >= n or not 0x30 <= data[pos] <= 0x39:
                self.pos = pos
                self.fail(SYNTAX, "invalid number; expected digit after '.'")
            pos = _DIGITS.match(data, pos).end()
        if pos < n and data[pos] in b"eE":
            pos += 1
            if pos < n and data[pos] in b"+-":
                pos += 1
            if pos >= n or not 0x30 <= data[pos] <= 0x39:
                self.pos = pos
                self.fail(SYNTAX, "invalid number; expected digit after exponent sign")
            pos = _DIGITS.match(data, pos).end()
        self.pos = pos
        self.number_text = data[start:pos]
        # Correctly rounded, as strtod and an exact integer's conversion are; past the double
        # range it is infinite, which the parser refuses.
        return float(self.number_text)

    def _hex4(self, pos):
        quad = self.data[pos:pos + 4]
        if len(quad) != 4 or any(b not in _HEX for b in quad):
            self.pos = pos
            self.fail(SYNTAX, "invalid string: '\\u' must be followed by 4 hex digits")
        return int(quad, 16)

    def _string(self, pos):
        data = self.data
        n = len(data)
        parts = []
        while True:
            end = _PLAIN.match(data, pos).end()
            if end > pos:
                parts.append(data[pos:end].decode("utf-8"))
                pos = end
            if pos >= n:
                self.pos = pos
                self.fail(SYNTAX, "invalid string: missing closing quote")
            c = data[pos]
            if c == 0x22:
                self.pos = pos + 1
                return "".join(parts)
            if c == 0x5C:
                if pos + 1 >= n:
                    self.pos = pos + 1
                    self.fail(SYNTAX, "invalid string: missing closing quote")
                e = data[pos + 1]
                short = _SHORT_ESCAPES.get(e)
                if short is not None:
                    parts.append(short)
                    pos += 2
                    continue
                if e != 0x75:
                    self.pos = pos + 1
                    self.fail(SYNTAX, "invalid string: forbidden character after backslash")
                cp = self._hex4(pos + 2)
                pos += 6
                if 0xD800 <= cp <= 0xDBFF:
                    if data[pos:pos + 2] != b"\\u":
                        self.pos = pos
                        self.fail(LONE_SURROGATE, "surrogate U+D800..U+DBFF must be followed by U+DC00..U+DFFF")
                    low = self._hex4(pos + 2)
                    pos += 6
                    if not 0xDC00 <= low <= 0xDFFF:
                        self.pos = pos
                        self.fail(LONE_SURROGATE, "surrogate U+D800..U+DBFF must be followed by U+DC00..U+DFFF")
                    cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00)
                elif 0xDC00 <= cp <= 0xDFFF:
                    self.pos = pos
                    self.fail(LONE_SURROGATE, "surrogate U+DC00..U+DFFF must follow U+D800..U+DBFF")
                parts.append(chr(cp))
                continue
            self.pos = pos
            if c < 0x20:
                self.fail(SYNTAX, "invalid string: control character U+%04X must be escaped" % c)
            self.fail(INVALID_UTF8, "invalid string: ill-formed UTF-8 byte")


def _describe(token):
    return {
        _EOF: "end of input", _BEGIN_OBJECT: "'{'", _END_OBJECT: "'}'", _BEGIN_ARRAY: "'['",
        _END_ARRAY: "']'", _COLON: "':'", _COMMA: "','", _VALUE: "a value", _NUMBER: "a number",
    }[token]


def parse_strict(text):
    """Parses JSON text (bytes, or str which is encoded as UTF-8) strictly for canonicalisation.

    Returns dict / list / str / float / bool / None. Raises JsonError.
    """
    data = text.encode("utf-8", "surrogatepass") if isinstance(text, str) else bytes(text)
    lexer = _Lexer(data)
    if data[:1] == b"\xef":
        if data[:3] != _BOM:
            lexer.fail(SYNTAX, "invalid BOM; must be 0xEF 0xBB 0xBF if given")
        lexer.pos = 3

    # The parser walks the tokens as nlohmann's SAX parser does, so that of two faults the
    # first one it meets decides the kind (a duplicate key is seen before the ':' after it, a
    # container too deep before whatever follows its bracket).
    stack = []  # (container, is_array, pending key)
    token = lexer.token()
    if token == _EOF:
        raise JsonError(EMPTY, "invalid JSON: the text holds no value")
    result = None
    top_is_number = False
    while True:
        # A value starts with `token`.
        if token == _BEGIN_OBJECT or token == _BEGIN_ARRAY:
            if len(stack) >= MAX_DEPTH:
                lexer.fail(DEPTH, "nested deeper than %d levels" % MAX_DEPTH)
            is_object = token == _BEGIN_OBJECT
            container = {} if is_object else []
            if stack:
                _place(stack, container)
            else:
                result = container
            token = lexer.token()
            if is_object and token != _END_OBJECT:
                if token != _VALUE or not isinstance(lexer.value, str):
                    lexer.fail(SYNTAX, "expected a string as an object key, got %s" % _describe(token))
                key = _key(lexer, container)
                if lexer.token() != _COLON:
                    lexer.fail(SYNTAX, "expected ':' after an object key")
                stack.append([container, False, key])
                token = lexer.token()
                continue
            if not is_object and token != _END_ARRAY:
                stack.append([container, True, None])
                continue
        elif token == _VALUE or token == _NUMBER:
            value = lexer.value
            if token == _NUMBER:
                if math.isinf(value):
                    lexer.fail(NUMBER_RANGE, "number overflow")
                problem = _literal_problem(lexer.number_text.decode("ascii"), value)
                if problem:
                    lexer.fail(NUMBER_RANGE, problem)
            if stack:
                _place(stack, value)
            else:
                result = value
                top_is_number = token == _NUMBER
        else:
            lexer.fail(SYNTAX, "unexpected %s; expected a value" % _describe(token))

        # After a value: close containers or go on to the next member.
        while True:
            if not stack:
                return _finish(lexer, result, top_is_number)
            level = stack[-1]
            token = lexer.token()
            if level[1]:
                if token == _COMMA:
                    token = lexer.token()
                    break
                if token == _END_ARRAY:
                    stack.pop()
                    continue
                lexer.fail(SYNTAX, "unexpected %s; expected ']' or ','" % _describe(token))
            else:
                if token == _COMMA:
                    token = lexer.token()
                    if token != _VALUE or not isinstance(lexer.value, str):
                        lexer.fail(SYNTAX, "expected a string as an object key, got %s" % _describe(token))
                    level[2] = _key(lexer, level[0])
                    if lexer.token() != _COLON:
                        lexer.fail(SYNTAX, "expected ':' after an object key")
                    token = lexer.token()
                    break
                if token == _END_OBJECT:
                    stack.pop()
                    continue
                lexer.fail(SYNTAX, "unexpected %s; expected '}' or ','" % _describe(token))


def _key(lexer, container):
    # A string token is _VALUE with a str value; literals are never str.
    key = lexer.value
    if key in container:
        lexer.fail(DUPLICATE_KEY, "duplicate key %r (RFC 8785 requires unique keys)" % key)
    return key


def _place(stack, value):
    container, is_array, key = stack[-1]
    if is_array:
        container.append(value)
    else:
        container[key] = value


def _finish(lexer, result, top_is_number):
    data = lexer.data
    for i in range(lexer.pos, len(data)):
        if data[i] not in _WHITESPACE:
            raise JsonError(TRAILING_DATA, "invalid JSON: unexpected byte 0x%02x at offset %d after the JSON document"
                            % (data[i], i))
    return result


def _integer_problem(written, d):
    """Why an integer (its decimal text) cannot be a request's number, or None. RFC 8785 writes
    every number as its double: an integer whose double's form names another integer
    (9007199254740993 would be written 9007199254740992) would share a digest with that one."""
    if d == 0:
        return None  # "0" and "-0" are zero (RFC 8785 writes -0 as 0)
    canonical = es_number_to_string(d)
    if int(decimal.Decimal(canonical)) == int(written):
        return None
    return ("integer %s is not a double's value: RFC 8785 would write it as %s, as another integer (send "
            "integers past 2^53 as strings)" % (written if len(written) <= 64 else written[:61] + "...", canonical))


def _literal_problem(text, d):
    """As core/canonicaljson.cpp judges a finite number literal: an integer literal (no fraction,
    no exponent) as _integer_problem; any other is rounded to the nearest double, as RFC 8785
    does, unless it is not zero but rounds to 0 (1e-400)."""
    if not any(c in text for c in ".eE"):
        return _integer_problem(text, d)
    if d == 0 and any(c in "123456789" for c in re.split("[eE]", text)[0]):
        return "number %s is not zero but rounds to 0 as a double (below 2.5e-324)" % (
            text if len(text) <= 64 else text[:61] + "...")
    return None


def es_number_to_string(x):
    """ECMAScript Number.prototype.toString for a finite double (RFC 8785 section 3.2.2.3)."""
    if not math.isfinite(x):
        raise JsonError(NUMBER_RANGE, "NaN and Infinity have no JSON form (RFC 8785 section 3.2.2.3)")
    if x == 0:
        return "0"
    sign = ""
    if x < 0:
        sign = "-"
        x = -x
    # repr gives the shortest digits that read back as the same double, the closest of them to
    # the exact value: ECMA-262's digit string s. Take it apart into digits and exponent.
    text = repr(x)
    mantissa, _, exp = text.partition("e")
    whole, _, fraction = mantissa.partition(".")
    # x = int(whole + fraction) * 10^(exponent - len(fraction)); as ECMA-262 writes it,
    # x = digits * 10^(n - k) with k digits and no zero at either end.
    exponent = (int(exp) if exp else 0) - len(fraction)
    digits = (whole + fraction).lstrip("0")
    trailing = len(digits) - len(digits.rstrip("0"))
    digits = digits.rstrip("0")
    exponent += trailing
    k = len(digits)
    n = exponent + k
    if k <= n <= 21:
        out = digits + "0" * (n - k)
    elif 0 < n <= 21:
        out = digits[:n] + "." + digits[n:]
    elif -6 < n <= 0:
        out = "0." + "0" * (-n) + digits
    else:
        out = digits[0] + ("." + digits[1:] if k > 1 else "") + "e" + ("+" if n - 1 >= 0 else "-") + str(abs(n - 1))
    return sign + out


def _escape_string(s, out):
    out.append('"')
    for ch in s:
        o = ord(ch)
        if o == 0x22:
            out.append('\\"')
        elif o == 0x5C:
            out.append("\\\\")
        elif o < 0x20:
            out.append(_CONTROL_ESCAPES[o])
        else:
            out.append(ch)
    out.append('"')


_CONTROL_ESCAPES = ["\\u%04x" % i for i in range(0x20)]
for _c, _e in ((8, "\\b"), (12, "\\f"), (10, "\\n"), (13, "\\r"), (9, "\\t")):
    _CONTROL_ESCAPES[_c] = _e
_NEEDS_ESCAPE = re.compile('["\\\\\x00-\x1f]')
_SURROGATE = re.compile("[\ud800-\udfff]")


def _string(s, out, what):
    if _SURROGATE.search(s):
        raise JsonError(LONE_SURROGATE, "%s holds a lone surrogate, which UTF-8 cannot carry" % what)
    if _NEEDS_ESCAPE.search(s):
        _escape_string(s, out)
    else:
        out.append('"')
        out.append(s)
        out.append('"')


def _utf16_key(name):
    return name.encode("utf-16-be", "surrogatepass")


def _write(value, out, depth):
    if value is None:
        out.append("null")
    elif value is True:
        out.append("true")
    elif value is False:
        out.append("false")
    elif isinstance(value, str):
        _string(value, out, "string")
    elif isinstance(value, float):
        out.append(es_number_to_string(value))
    elif isinstance(value, int):
        # JCS knows only doubles: an integer is written as its double, as a JavaScript peer
        # would see it; one whose double names another integer is refused.
        try:
            as_double = float(value)
        except OverflowError:
            raise JsonError(NUMBER_RANGE, "integer %d is beyond the double range" % value) from None
        problem = _integer_problem(str(value), as_double)
        if problem:
            raise JsonError(NUMBER_RANGE, problem)
        out.append(es_number_to_string(as_double))
    elif isinstance(value, dict):
        if depth >= MAX_DEPTH:
            raise JsonError(DEPTH, "nested deeper than %d levels" % MAX_DEPTH)
        members = []
        for name, member in value.items():
            if not isinstance(name, str):
                raise JsonError(UNSUPPORTED, "object member names must be strings, not %s" % type(name).__name__)
            members.append((_utf16_key(name), name, member))
        # RFC 8785 section 3.2.3: by UTF-16 code units (big-endian bytes compare the same way).
        members.sort(key=lambda m: m[0])
        out.append("{")
        first = True
        for _, name, member in members:
            if not first:
                out.append(",")
            first = False
            _string(name, out, "member name")
            out.append(":")
            _write(member, out, depth + 1)
        out.append("}")
    elif isinstance(value, (list, tuple)):
        if depth >= MAX_DEPTH:
            raise JsonError(DEPTH, "nested deeper than %d levels" % MAX_DEPTH)
        out.append("[")
        for i, item in enumerate(value):
            if i:
                out.append(",")
            _write(item, out, depth + 1)
        out.append("]")
    else:
        raise JsonError(UNSUPPORTED, "%s has no JSON form" % type(value).__name__)


def canonical_json(value):
    """The RFC 8785 form of a value (dict, list, tuple, str, int, float, bool, None) as str."""
    out = []
    _write(value, out, 0)
    return "".join(out)


def canonical_json_from_text(text):
    """parse_strict then canonical_json; returns str (encode as UTF-8 for the bytes hashed)."""
    return canonical_json(parse_strict(text))
