// Typed errors, one per thing a worker does something different about. Idem's SQLSTATEs, and what a
// caller does about each, are listed once in docs/development.md ("Errors the functions raise").

/** Base class of the errors this library throws about the protocol and the database. */
export class IdemError extends Error {
    /** The SQLSTATE the server raised, when the error came from the server. */
    readonly sqlstate?: string;
    constructor(message: string, sqlstate?: string) {
        super(message);
        this.name = new.target.name;
        if (sqlstate !== undefined) this.sqlstate = sqlstate;
    }
}

/**
 * ID001: the token no longer owns the row (its lease was taken over or released, or the row already
 * finished). The business transaction it was used in is aborted: nothing of it may commit.
 */
export class LostOwnershipError extends IdemError {}

/** ID002: fence found no record for the key. A kind of lost ownership, as the C++ library treats it. */
export class NoRecordError extends LostOwnershipError {}

/**
 * ID003, or the same refusal made here before any I/O: an argument outside the protocol's bounds
 * (a NULL or malformed token, an unknown failure class, an oversize result, a bad key or digest).
 */
export class InvalidArgumentError extends IdemError {}

/**
 * ID004: the arguments are fine, but the database's state or a policy refuses the call (an operation
 * not registered as re-drivable, a re-driver not reported online). Nothing changed; the same call
 * succeeds once that state changes.
 */
export class RefusedError extends IdemError {}

/** 25006 (read-only SQL transaction): the server is a standby or read-only, not the primary. */
export class NotPrimaryError extends IdemError {}

/**
 * The connection broke. Whether the last statement took effect is unknown; the lease will expire
 * and a later claim decides from the stored state.
 */
export class DatabaseUnavailableError extends IdemError {}

/** How a task failed; see TaskFailure. */
export type FailureClass = 'retryable' | 'permanent' | 'unknown';

/**
 * What a task throws to say how it failed: 'retryable' (definitely failed, safe to retry),
 * 'permanent' (will never succeed), 'unknown' (the request left and the answer was lost: retried
 * only with the same key). Anything else a task throws counts as retryable.
 */
export class TaskFailure extends Error {
    readonly failureClass: FailureClass;
    constructor(failureClass: FailureClass, message: string) {
        super(message);
        this.name = 'TaskFailure';
        this.failureClass = failureClass;
    }
}

const connectionCodes = new Set([
    'ECONNRESET', 'ECONNREFUSED', 'EPIPE', 'ETIMEDOUT', 'ENOTCONN', 'EHOSTUNREACH', 'ENETUNREACH', 'ECONNABORTED',
]);

/** Whether an error from node-pg means the connection is gone (rather than a statement failing). */
export function isConnectionError(e: unknown): boolean {
    if (!(e instanceof Error)) return false;
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string') {
        if (connectionCodes.has(code)) return true;
        // Connection exception (08) and operator intervention (57P01..57P03: shutdown, crash, cannot connect now).
        if (/^08[0-9A-Z]{3}$/.test(code) || /^57P0[1-3]$/.test(code)) return true;
    }
    return /Connection terminated|connection error and is not queryable|Client was closed and is not queryable|not connected/i.test(
        e.message,
    );
}

/**
 * The typed error for an error node-pg raised: ID001, ID002, ID003, ID004, 25006 and a broken
 * connection become the classes above; anything else is returned as it is.
 */
export function translateError(e: unknown): unknown {
    if (e instanceof IdemError || !(e instanceof Error)) return e;
    const code = (e as { code?: unknown }).code;
    switch (code) {
        case 'ID001':
            return new LostOwnershipError(e.message, code);
        case 'ID002':
            return new NoRecordError(e.message, code);
        case 'ID003':
            return new InvalidArgumentError(e.message, code);
        case 'ID004':
            return new RefusedError(e.message, code);
        case '25006':
            return new NotPrimaryError(
                `the server is read-only (a standby, or default_transaction_read_only): not the primary: ${e.message}`,
                code,
            );
    }
    if (isConnectionError(e))
        return new DatabaseUnavailableError(
            `the connection to the database was lost: ${e.message}`,
            typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) ? code : undefined,
        );
    return e;
}
