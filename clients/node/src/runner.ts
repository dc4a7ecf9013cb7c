// The whole claim / fenced execute / complete-or-fail sequence, with core/runner.cpp's semantics.
import {
    DatabaseUnavailableError,
    InvalidArgumentError,
    LostOwnershipError,
    NotPrimaryError,
    TaskFailure,
    isConnectionError,
    translateError,
} from './errors';
import type { FailureClass } from './errors';
import type { CanonicalRequest } from './digest';
import type { TaskKey } from './key';
import type { ClaimResult, FailResult, Queryable, TaskStore } from './store';

export interface TaskContext {
    readonly key: TaskKey;
    /**
     * Pass this downstream as the request's idempotency key: a retry after an unknown outcome must
     * reach the downstream with the same key so that its own dedup keeps one effect.
     */
    readonly idempotencyKey: string;
    readonly token: string;
    readonly attempt: number;
    /** The last attempt's outcome is unknown (recorded as such, or its lease expired). */
    readonly previousOutcomeUnknown: boolean;
}

/** What happened: the same names as the C++ runOutcomeName. */
export type RunOutcomeKind =
    | 'succeeded' // this call executed the task and committed it
    | 'replayed' // an earlier execution succeeded; resultJson is its stored result
    | 'in_progress' // someone else is executing it; retry after claim.retryAfterMs
    | 'conflict' // the key was used with another request
    | 'retry_later' // in backoff; retry after claim.retryAfterMs
    | 'failed' // permanent or exhausted (now or earlier)
    | 'will_retry' // this attempt failed and was recorded as retryable
    | 'lost_ownership' // the lease was lost before commit: the business writes were rolled back
    | 'paused'; // an operator paused the key's tenant or operation: nothing ran, not a try; retry after claim.retryAfterMs

export interface RunOutcome {
    kind: RunOutcomeKind;
    claim: ClaimResult;
    /** succeeded / replayed: the result as JSON text. */
    resultJson: string;
    error: string;
    /** will_retry, and a failed that this call recorded. */
    failure?: FailResult;
}

/** The task body: runs inside the business transaction, after the fence; returns the result as JSON text. */
export type TaskFunction = (tx: Queryable, ctx: TaskContext) => Promise<string> | string;
/** A call to another service, made with no transaction open; returns what the service answered. */
export type DownstreamCall = (ctx: TaskContext) => Promise<string> | string;
/** Writes the local effects in a short fenced transaction; returns the result as JSON text. */
export type RecordFunction = (tx: Queryable, ctx: TaskContext, downstreamAnswer: string) => Promise<string> | string;

/** The outcome a claim that may not execute amounts to (replay, in progress, conflict, ...). */
export function outcomeOfClaim(c: ClaimResult): RunOutcome {
    const out: RunOutcome = { kind: 'in_progress', claim: c, resultJson: '', error: '' };
    switch (c.decision) {
        case 'replay':
            out.kind = 'replayed';
            out.resultJson = c.resultJson;
            break;
        case 'in_progress':
            break;
        case 'conflict':
            out.kind = 'conflict';
            out.error = c.storedDigest
                ? `key already used with request digest ${c.storedDigest}`
                : 'key already used with another request digest';
            break;
        case 'retry_later':
            out.kind = 'retry_later';
            out.error = c.errorMessage;
            break;
        case 'failed':
            out.kind = 'failed';
            out.error = c.errorMessage;
            break;
        case 'paused':
            out.kind = 'paused';
            out.error = `paused (${c.detail}): ${c.errorMessage}`;
            break;
        default:
            break;
    }
    return out;
}

async function rollbackQuietly(client: Queryable): Promise<void> {
    try {
        await client.query('ROLLBACK');
    } catch {
        // The connection is gone or no transaction is open: nothing to undo here.
    }
}

async function runClaimed(
    store: TaskStore,
    key: TaskKey,
    claim: ClaimResult,
    call: DownstreamCall | undefined,
    record: RecordFunction,
    fenceInComplete = false,
): Promise<RunOutcome> {
    const out: RunOutcome = { kind: 'succeeded', claim, resultJson: '', error: '' };
    // An executor whose lease ran out recorded nothing: its request may have left, as with a recorded unknown.
    const previousUnknown = claim.errorClass === 'unknown' || claim.detail === 'lease_expired';
    const ctx: TaskContext = Object.freeze({
        key,
        idempotencyKey: key.str(),
        token: claim.token,
        attempt: claim.attempts,
        previousOutcomeUnknown: previousUnknown,
    });
    const client = store.client;
    let cls: FailureClass = 'retryable';
    let message: string;
    let inTransaction = false;
    try {
        let answer = '';
        if (call) {
            try {
                answer = await call(ctx);
            } catch (e) {
                // The call's own connection: whether the other side acted is not known.
                if (!(e instanceof TaskFailure) && isConnectionError(e))
                    throw new TaskFailure('unknown', `downstream connection lost: ${(e as Error).message}`);
                throw e;
            }
        }
        await client.query('BEGIN');
        inTransaction = true;
        if (!fenceInComplete) await store.fence(client, key, claim.token);
        const result = await record(client, ctx, answer);
        await store.complete(client, key, claim.token, result);
        try {
            await client.query('COMMIT');
        } catch (e) {
            inTransaction = false;
            if (isConnectionError(e))
                throw new DatabaseUnavailableError(
                    `the connection to the database was lost during the commit: its outcome is unknown: ${(e as Error).message}`,
                );
            throw e;
        }
        inTransaction = false;
        store.countSucceeded(key);
        out.resultJson = result;
        return out;
    } catch (e) {
        if (inTransaction) await rollbackQuietly(client);
        if (e instanceof LostOwnershipError) {
            out.kind = 'lost_ownership';
            out.error = e.message;
            return out;
        }
        if (e instanceof DatabaseUnavailableError) throw e;
        if (isConnectionError(e))
            throw new DatabaseUnavailableError(`the connection to the database was lost: ${(e as Error).message}`);
        if (e instanceof TaskFailure) {
            cls = e.failureClass;
            message = e.message;
        } else if (e instanceof InvalidArgumentError) {
            // Bad output (an oversize result) will be just as bad next time.
            cls = 'permanent';
            message = e.message;
        } else {
            message = e instanceof Error ? e.message : String(e);
        }
    }

    // The business transaction is rolled back by now; record the failure on its own.
    return recordFailure(store, key, claim, { cls, message });
}

// A failed attempt recorded with the token of `claim`, after its transaction rolled back.
async function recordFailure(
    store: TaskStore,
    key: TaskKey,
    claim: ClaimResult,
    failure: { cls: FailureClass; message: string },
): Promise<RunOutcome> {
    const out: RunOutcome = { kind: 'will_retry', claim, resultJson: '', error: failure.message };
    try {
        out.failure = await store.fail(key, claim.token, claim.attempts, failure.cls, failure.message);
    } catch (e) {
        if (e instanceof LostOwnershipError) {
            out.kind = 'lost_ownership';
            out.error = `${failure.message}; and the lease was lost before the failure was recorded: ${e.message}`;
            return out;
        }
        throw e;
    }
    out.kind = out.failure.status === 'failed' ? 'failed' : 'will_retry';
    return out;
}

/** runTask's options for the transaction form. */
export interface RunOptions {
    /**
     * One transaction for local effects (docs/workers-guide.md): the claim, the task's writes and
     * the completion are one transaction and one commit. Only for a task whose every effect is a
     * write through `tx` to this database. A concurrent duplicate waits up to duplicateWaitMs for
     * the run to end, then replays its result (or answers in_progress); a crash or a lost
     * connection rolls all of it back, the claim included. A task that throws is rolled back and
     * its failure recorded after, on its own.
     */
    oneTransaction?: boolean;
    /** 1 .. 60000 ms; default 2000. */
    duplicateWaitMs?: number;
    /**
     * Record at commit (docs/workers-guide.md): the same mode without a claim before the task. The
     * task's writes run first, then one statement (idem_record_local) records the key succeeded with
     * the result, then the one commit. A concurrent duplicate's record waits up to duplicateWaitMs
     * for the first's commit and replays it (its writes rolled back), and so does a duplicate whose
     * own write met the first's uncommitted unique row (23505; 40P01 and 40001 likewise). A
     * failure is recorded as oneTransaction does. Not with oneTransaction.
     */
    recordAtCommit?: boolean;
    /**
     * With recordAtCommit (default true): read the key's row before the task (idem_peek_local), so
     * a replay, a conflict or a pause is answered without running the task.
     */
    checkFirst?: boolean;
    /**
     * Two steps only (issue 45 item 2): the business transaction without the fence before the
     * task (BEGIN, the task's writes, complete, COMMIT: one statement fewer). complete checks the
     * owner token under the row lock its UPDATE takes, so a stale attempt is refused there and its
     * writes roll back (lost_ownership), as with the fence; but the row is not locked while the
     * task runs, so a lease that runs out mid-task may be taken over and the next executor's task
     * may run beside this one until this one's complete refuses. For tasks well inside their lease.
     */
    fenceInComplete?: boolean;
}

function classify(e: unknown): { cls: FailureClass; message: string } {
    if (e instanceof TaskFailure) return { cls: e.failureClass, message: e.message };
    // Bad output (an oversize result) will be just as bad next time.
    if (e instanceof InvalidArgumentError) return { cls: 'permanent', message: e.message };
    return { cls: 'retryable', message: e instanceof Error ? e.message : String(e) };
}

async function runInOneTransaction(
    store: TaskStore,
    key: TaskKey,
    requestDigest: string | CanonicalRequest,
    task: TaskFunction,
    waitMs: number,
): Promise<RunOutcome> {
    const client = store.client;
    let failure: { cls: FailureClass; message: string };
    await client.query('BEGIN');
    let claim: ClaimResult | undefined;
    try {
        claim = await store.claimInTransaction(client, key, requestDigest, waitMs);
        if (!claim.mayExecute) {
            // What claim wrote for such an answer (a conflict's record, an exhaustion) stands;
            // after a wait that ran out the transaction is aborted and rolls back.
            await client.query(claim.detail === 'wait_timeout' ? 'ROLLBACK' : 'COMMIT');
            return outcomeOfClaim(claim);
        }
        const previousUnknown = claim.errorClass === 'unknown' || claim.detail === 'lease_expired';
        const ctx: TaskContext = Object.freeze({
            key,
            idempotencyKey: key.str(),
            token: claim.token,
            attempt: claim.attempts,
            previousOutcomeUnknown: previousUnknown,
        });
        let result: string;
        try {
            result = await task(client, ctx);
            await store.complete(client, key, claim.token, result);
        } catch (e) {
            if (e instanceof DatabaseUnavailableError || e instanceof LostOwnershipError || isConnectionError(e)) throw e;
            const translated = translateError(e);
            if (translated instanceof NotPrimaryError) throw translated;
            failure = classify(e);
            await rollbackQuietly(client);
            return recordAfterRollback(store, key, requestDigest, failure);
        }
        try {
            await client.query('COMMIT');
        } catch (e) {
            if (isConnectionError(e))
                throw new DatabaseUnavailableError(
                    `the connection to the database was lost during the commit: its outcome is unknown: ${(e as Error).message}`,
                );
            throw e;
        }
        store.countClaim(key, claim);
        store.countSucceeded(key);
        return { kind: 'succeeded', claim, resultJson: result, error: '' };
    } catch (e) {
        await rollbackQuietly(client);
        if (e instanceof LostOwnershipError && claim)
            return { kind: 'lost_ownership', claim, resultJson: '', error: e.message };
        if (e instanceof DatabaseUnavailableError) throw e;
        if (isConnectionError(e))
            throw new DatabaseUnavailableError(`the connection to the database was lost: ${(e as Error).message}`);
        throw translateError(e);
    }
}

// A statement of the task met a concurrent transaction's write: a unique row another run of the
// same key inserted first (23505), or writes that crossed (40P01, 40001).
const collisions = new Set(['23505', '40P01', '40001']);
const maxRecordRounds = 3;

// Record at commit: the task's writes, then idem_record_local, one commit. A run whose record did
// not answer recorded is rolled back and idem_peek_local (on its own) decides; so does a collision
// of the task's writes with a concurrent duplicate's.
async function runRecordingAtCommit(
    store: TaskStore,
    key: TaskKey,
    request: string | CanonicalRequest,
    task: TaskFunction,
    waitMs: number,
    checkFirst: boolean,
): Promise<RunOutcome> {
    if (typeof request !== 'string')
        throw new InvalidArgumentError(
            `operation ${key.operation} of tenant ${key.tenant} is re-drivable: its claims store the request, ` +
                'which one transaction for local effects does not do yet; run it in two steps',
        );
    const client = store.client;
    let collision: unknown;
    for (let round = 0; ; ) {
        let ahead: ClaimResult;
        if (checkFirst || round > 0) {
            ahead = await store.peekLocal(key, request);
            if (!ahead.mayExecute) {
                store.countClaim(key, ahead);
                return outcomeOfClaim(ahead);
            }
            if (collision !== undefined) {
                const error = collision;
                collision = undefined;
                // The key is free: the unique row the task met is not a duplicate's.
                if ((error as { code?: unknown }).code === '23505')
                    return recordAfterRollback(store, key, request, classify(error));
            }
        } else {
            ahead = { decision: 'acquired', detail: 'new', token: '', attempts: 0, maxAttempts: store.retry.maxAttempts,
                retryAfterMs: 0, resultJson: '', storedDigest: '', errorClass: '', errorMessage: '', pausedForMs: 0,
                mayExecute: true };
        }
        if (round >= maxRecordRounds) {
            const busy: ClaimResult = { ...ahead, decision: 'in_progress', detail: 'contended', retryAfterMs: 50,
                mayExecute: false };
            store.countClaim(key, busy);
            return outcomeOfClaim(busy);
        }
        ++round;
        const ctx: TaskContext = Object.freeze({
            key,
            idempotencyKey: key.str(),
            token: '',
            attempt: ahead.attempts + 1,
            previousOutcomeUnknown: ahead.errorClass === 'unknown' || ahead.detail === 'lease_expired',
        });
        await client.query('BEGIN');
        let result: string;
        let recorded: ClaimResult;
        try {
            try {
                result = await task(client, ctx);
                recorded = await store.recordInTransaction(client, key, request, result, waitMs);
            } catch (e) {
                if (e instanceof DatabaseUnavailableError || isConnectionError(e)) throw e;
                const translated = translateError(e);
                if (translated instanceof NotPrimaryError) throw translated;
                await rollbackQuietly(client);
                if (collisions.has(String((e as { code?: unknown }).code))) {
                    collision = e;
                    continue;
                }
                return recordAfterRollback(store, key, request, classify(e));
            }
            if (!recorded.mayExecute) {
                await client.query('ROLLBACK');
                if (recorded.decision === 'replay' || recorded.detail === 'wait_timeout') {
                    store.countClaim(key, recorded);
                    return outcomeOfClaim(recorded);
                }
                continue; // another answer from the stored row: the peek gives it, with claim's writes
            }
            try {
                await client.query('COMMIT');
            } catch (e) {
                if (isConnectionError(e))
                    throw new DatabaseUnavailableError(
                        `the connection to the database was lost during the commit: its outcome is unknown: ${(e as Error).message}`,
                    );
                throw e;
            }
        } catch (e) {
            await rollbackQuietly(client);
            if (e instanceof DatabaseUnavailableError) throw e;
            if (isConnectionError(e))
                throw new DatabaseUnavailableError(`the connection to the database was lost: ${(e as Error).message}`);
            throw translateError(e);
        }
        store.countClaim(key, recorded);
        store.countSucceeded(key);
        return { kind: 'succeeded', claim: recorded, resultJson: result, error: '' };
    }
}

// The rolled-back claim left the key absent or as it was: claim it on its own and record the
// failure with that token, so it counts an attempt as a two-step run's does.
async function recordAfterRollback(
    store: TaskStore,
    key: TaskKey,
    requestDigest: string | CanonicalRequest,
    failure: { cls: FailureClass; message: string },
): Promise<RunOutcome> {
    const claim = await store.claim(key, requestDigest);
    if (!claim.mayExecute) {
        const out = outcomeOfClaim(claim);
        out.error = `${failure.message}; not recorded: the key was ${claim.decision} when the failure was to be recorded`;
        return out;
    }
    return recordFailure(store, key, claim, failure);
}

/**
 * Claims the key, and when this caller may execute: runs the task inside a fenced transaction on
 * the store's client, completes it in the same transaction, or records the failure. For a task that
 * only writes to this database; a task that calls another service takes the other form:
 *
 *     runTask(store, key, digest, task)
 *     runTask(store, key, digest, task, { oneTransaction: true })
 *     runTask(store, key, digest, call, record)
 *
 * In the third, `call` runs first with no transaction open (pass ctx.idempotencyKey downstream),
 * then `record` writes the local effects in a short fenced transaction that also records the
 * success. Throws DatabaseUnavailableError when the connection breaks.
 */
export async function runTask(
    store: TaskStore,
    key: TaskKey,
    requestDigest: string | CanonicalRequest,
    task: TaskFunction,
    options?: RunOptions,
): Promise<RunOutcome>;
export async function runTask(
    store: TaskStore,
    key: TaskKey,
    requestDigest: string | CanonicalRequest,
    call: DownstreamCall,
    record: RecordFunction,
): Promise<RunOutcome>;
export async function runTask(
    store: TaskStore,
    key: TaskKey,
    requestDigest: string | CanonicalRequest,
    taskOrCall: TaskFunction | DownstreamCall,
    recordOrOptions?: RecordFunction | RunOptions,
): Promise<RunOutcome> {
    const record = typeof recordOrOptions === 'function' ? recordOrOptions : undefined;
    const options = typeof recordOrOptions === 'object' && recordOrOptions !== null ? recordOrOptions : {};
    if (options.recordAtCommit) {
        if (options.oneTransaction)
            throw new InvalidArgumentError(
                'oneTransaction and recordAtCommit are two forms of one transaction for local effects: choose one',
            );
        return runRecordingAtCommit(store, key, requestDigest, taskOrCall as TaskFunction,
            options.duplicateWaitMs ?? 2000, options.checkFirst !== false);
    }
    if (options.oneTransaction)
        return runInOneTransaction(store, key, requestDigest, taskOrCall as TaskFunction, options.duplicateWaitMs ?? 2000);
    const claim = await store.claim(key, requestDigest);
    if (!claim.mayExecute) return outcomeOfClaim(claim);
    if (record) return runClaimed(store, key, claim, taskOrCall as DownstreamCall, record);
    const task = taskOrCall as TaskFunction;
    return runClaimed(store, key, claim, undefined, (tx, ctx) => task(tx, ctx), options.fenceInComplete === true);
}
