"""The errors the client raises, by what the caller does about them. Idem's SQLSTATEs, and what a
caller does about each, are listed once in docs/development.md ("Errors the functions raise")."""

LOST_OWNERSHIP = "ID001"
NO_RECORD = "ID002"
INVALID_ARGUMENT = "ID003"
REFUSED = "ID004"
READ_ONLY_SQL_TRANSACTION = "25006"


class IdemError(Exception):
    """Base of the client's own errors."""


class LostOwnership(IdemError):
    """ID001: the token no longer owns the row (lease taken over or released, or the row already
    finished). Whatever the caller did in the same transaction must not commit, and cannot: the
    transaction is aborted."""


class NoRecord(LostOwnership):
    """ID002: there is no record for the key (fence). A kind of lost ownership, as in C++."""


class InvalidArgument(IdemError, ValueError):
    """ID003, or the same bound checked before any I/O: NULL or out of bounds; nothing changed."""


class Refused(IdemError):
    """ID004: the arguments are fine, but the database's state or a policy refuses the call (an
    operation not registered as re-drivable, a re-driver not reported online). Nothing changed;
    the same call succeeds once that state changes."""


class NotPrimary(IdemError):
    """SQLSTATE 25006: the server is read-only (a standby, or default_transaction_read_only on).
    Nothing was written; reconnect to the primary (target_session_attrs=read-write in the DSN
    lets libpq find it)."""


class DatabaseUnavailable(IdemError):
    """The connection broke. Whether the last statement took effect is unknown; the lease will
    expire and a later claim decides from the stored state."""


class UsageError(IdemError):
    """The client was called in a way that cannot work (a transaction left open, say)."""
