"""Task keys: tenant:operation:business_id, validated as core/key.h does, before any I/O."""

MAX_NAME_BYTES = 64  # tenant and operation each
MAX_BUSINESS_ID_BYTES = 512


def quote_for_message(data, max_bytes=80):
    """Printable ASCII stays, every other byte becomes \\xNN; long input is cut."""
    if isinstance(data, str):
        data = data.encode("utf-8", "surrogatepass")
    out = "".join(chr(b) if 0x20 <= b < 0x7F else "\\x%02x" % b for b in data[:max_bytes])
    if len(data) > max_bytes:
        out += "... (%d bytes)" % len(data)
    return out


def _check_name(what, value):
    raw = value.encode("utf-8", "surrogatepass")
    if not raw:
        raise ValueError("task key %s is empty" % what)
    if len(raw) > MAX_NAME_BYTES:
        raise ValueError("task key %s is %d bytes, longer than the limit of %d: '%s'"
                         % (what, len(raw), MAX_NAME_BYTES, quote_for_message(raw)))
    for i, c in enumerate(raw):
        if c == 0x3A:
            raise ValueError("task key %s must not contain ':' (it separates the key's parts): '%s'"
                             % (what, quote_for_message(raw)))
        if c <= 0x20 or c >= 0x7F:
            raise ValueError("task key %s may hold only visible ASCII characters (no spaces, control or non-ASCII "
                             "bytes); byte %d is not: '%s'" % (what, i, quote_for_message(raw)))


def _check_business_id(value):
    try:
        raw = value.encode("utf-8")
    except UnicodeEncodeError as e:
        raise ValueError("task key business id is not valid UTF-8: a lone surrogate at character %d" % e.start) \
            from None
    if not raw:
        raise ValueError("task key business id is empty")
    if len(raw) > MAX_BUSINESS_ID_BYTES:
        raise ValueError("task key business id is %d bytes, longer than the limit of %d"
                         % (len(raw), MAX_BUSINESS_ID_BYTES))
    nul = raw.find(b"\0")
    if nul >= 0:
        raise ValueError("task key business id contains a NUL byte at offset %d" % nul)


def _text(part, what):
    if isinstance(part, bytes):
        try:
            return part.decode("utf-8")
        except UnicodeDecodeError as e:
            raise ValueError("task key %s is not valid UTF-8: ill-formed UTF-8 at byte %d" % (what, e.start)) from None
    if not isinstance(part, str):
        raise TypeError("task key %s must be str, not %s" % (what, type(part).__name__))
    return part


class TaskKey:
    """One business intent: tenant:operation:business_id (e.g. tenant-7:charge:order-123).

    Never a retry count, a timestamp or a random part: a retry must produce the same key.
    Tenant and operation are 1 to 64 bytes of visible ASCII without ':'; the business id is 1 to
    512 bytes of UTF-8 without NUL and may hold anything else, colons included. A breach raises
    ValueError saying which part is wrong and why.
    """

    __slots__ = ("tenant", "operation", "business_id")

    def __init__(self, tenant, operation, business_id):
        tenant = _text(tenant, "tenant")
        operation = _text(operation, "operation")
        business_id = _text(business_id, "business id")
        _check_name("tenant", tenant)
        _check_name("operation", operation)
        _check_business_id(business_id)
        object.__setattr__(self, "tenant", tenant)
        object.__setattr__(self, "operation", operation)
        object.__setattr__(self, "business_id", business_id)

    def __setattr__(self, name, value):
        raise AttributeError("TaskKey is immutable")

    @classmethod
    def parse(cls, key):
        """Splits at the first two ':' and validates the parts as the constructor does."""
        key = _text(key, "key")
        first = key.find(":")
        second = key.find(":", first + 1) if first >= 0 else -1
        if second < 0:
            raise ValueError("task key must have the form tenant:operation:business_id, got '%s'"
                             % quote_for_message(key))
        return cls(key[:first], key[first + 1:second], key[second + 1:])

    def __str__(self):
        return "%s:%s:%s" % (self.tenant, self.operation, self.business_id)

    def __repr__(self):
        return "TaskKey(%r, %r, %r)" % (self.tenant, self.operation, self.business_id)

    def __eq__(self, other):
        return isinstance(other, TaskKey) and str(self) == str(other)

    def __hash__(self):
        return hash(str(self))
