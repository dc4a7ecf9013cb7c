// The protocol's SQL functions, one round trip each (docs/workers-guide.md), with the semantics of
// core/taskstore.cpp: bounds checked before any I/O, typed errors, 40001/40P01 retried.
import { randomUUID } from 'crypto';

import { connectionBroken } from './connect';
import type { CanonicalRequest } from './digest';
import { fieldFingerprints, fieldKeyObject } from './fieldprints';
import type { KeyObject } from 'crypto';
import type { FieldPrints } from './fieldprints';
import type { OutcomeCounters } from './counters';
import { DatabaseUnavailableError, InvalidArgumentError, LostOwnershipError, translateError } from './errors';
import type { FailureClass } from './errors';
import { TaskKey } from './key';
import { RetryPolicy, defaultRetryPolicy, delayAfter, validateRetryPolicy } from './retrypolicy';

/** Anything that runs a parameterised query: a pg.Client, a pooled client. */
export interface Queryable {
    query(text: string, values?: unknown[]): Promise<{ rows: any[] }>;
}

/** The claim's decision. */
export type Decision =
    | 'acquired' // new key: this caller executes
    | 'reacquired' // lease expired or retry due: this caller executes, attempts + 1, new token
    | 'replay' // succeeded before: resultJson is the answer
    | 'in_progress' // someone else holds a live lease: ask again after retryAfterMs
    | 'conflict' // same key, another request digest: nothing changed
    | 'retry_later' // a retryable failure in backoff: ask again after retryAfterMs
    | 'failed' // permanent or exhausted: only an operator can reopen it
    | 'paused'; // schema v15: an operator paused the key's tenant or operation; not a try

export interface ClaimResult {
    decision: Decision;
    /** new, lease_expired, retry_due, lease_live, locked, succeeded, exhausted, ...; paused: the pause's tenant:operation ('*' for all). */
    detail: string;
    /** The owner token when this caller may execute, else ''. */
    token: string;
    attempts: number;
    maxAttempts: number;
    retryAfterMs: number;
    /** replay: the stored result as JSON text ("null" when none); else ''. */
    resultJson: string;
    /** conflict: '' since schema v13 (the stored digest is not revealed). */
    storedDigest: string;
    /** failed / retry_later: the last error's class and message; paused: errorMessage is the pause's reason. */
    errorClass: string;
    errorMessage: string;
    /** paused: how long the pause has left by the server's clock, in ms; 0 for a pause until resumed. */
    pausedForMs: number;
    /** acquired or reacquired. */
    mayExecute: boolean;
}

export interface FailResult {
    /** retryable_failed or failed */
    status: string;
    attempts: number;
    exhausted: boolean;
    retryDelayMs: number;
}

/** The bounds the SQL functions enforce (ID003 outside them). */
export const limits = Object.freeze({
    maxLeaseMs: 86_400_000,
    maxRetryDelayMs: 604_800_000,
    maxAgeMs: 31_536_000_000,
    maxAttempts: 1000,
    maxResultBytes: 64 << 20,
    maxDigestBytes: 256,
    maxDuplicateWaitMs: 60_000, // idem_claim_local
    /** Schema v25: a re-drivable operation's stored request, default and most (idem_redrive_register). */
    defaultStoredRequestBytes: 65_536,
    maxStoredRequestBytes: 1_048_576,
    maxRedactFields: 64,
});

export interface StoreOptions {
    /** The Idem schema (default "idem"): a lowercase identifier. */
    schema?: string;
    /** Lease per claim and heartbeat, 1 ms to 24 h. Default 30 000. */
    leaseMs?: number;
    retry?: Partial<RetryPolicy>;
    /** Largest result complete() sends, 1 to 64 MiB. Default 1 MiB. */
    maxResultBytes?: number;
    /** Retries of SQLSTATE 40001 / 40P01. Default 5. */
    maxSerializationRetries?: number;
    /**
     * Schema v32 (docs/workers-guide.md, "Which field differed"): operations whose claims keep a keyed
     * fingerprint per top-level field of the request (idem_claim_fields), keyed by fieldKey (16 to
     * 1024 bytes, the same for every worker of the operation, in any language). Their claims pass a
     * CanonicalRequest, not only the digest. Claims of other operations call claim() as before.
     */
    fingerprintFieldsOf?: readonly string[];
    fieldKey?: string | Uint8Array;
}

/** A schema name as core/identifier.cpp accepts it, double-quoted for splicing before an object name. */
export function quoteSchema(name: string): string {
    if (typeof name !== 'string' || name.length === 0) throw new InvalidArgumentError('schema name is empty');
    if (name.length > 63) throw new InvalidArgumentError('schema name is longer than 63 bytes');
    if (!/^[a-z_]/.test(name))
        throw new InvalidArgumentError(`schema name must start with a lowercase letter or '_': ${name}`);
    if (!/^[a-z_0-9]+$/.test(name))
        throw new InvalidArgumentError(`schema name may hold only a-z, 0-9 and '_': ${name}`);
    if (name.startsWith('pg_'))
        throw new InvalidArgumentError(`schema names starting with pg_ are reserved by PostgreSQL: ${name}`);
    return `"${name}"`;
}

function requireToken(token: string): void {
    if (typeof token !== 'string' || !/^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/.test(token))
        throw new InvalidArgumentError(
            !token
                ? 'no owner token: only a claim that acquired the key may fence, complete, heartbeat or fail it'
                : `owner token '${String(token).slice(0, 64)}' is not a UUID`,
        );
}

function requireDigest(digest: string): void {
    const n = typeof digest === 'string' ? Buffer.byteLength(digest, 'utf8') : 0;
    if (n < 1 || n > limits.maxDigestBytes)
        throw new InvalidArgumentError(`request digest must be 1 to ${limits.maxDigestBytes} bytes, not ${n}`);
    if (!/^[!-~]+$/.test(digest)) throw new InvalidArgumentError('request digest must be visible ASCII (no spaces)');
}

function requireKey(key: TaskKey): void {
    if (!(key instanceof TaskKey)) throw new InvalidArgumentError('the key must be a TaskKey (TaskKey.parse or new TaskKey)');
}

// A message PostgreSQL text can hold: no NUL, no lone surrogate (node-pg would send U+FFFD), at most 8192 characters.
function storableMessage(message: string): string {
    let out = '';
    for (let i = 0; i < message.length && out.length < 8192; ++i) {
        const c = message.charCodeAt(i);
        if (c === 0) out += '\\x00';
        else if (c >= 0xd800 && c <= 0xdbff && i + 1 < message.length && (message.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
            out += message[i] + message[i + 1];
            ++i;
        } else if (c >= 0xd800 && c <= 0xdfff) out += '\\u' + c.toString(16);
        else out += message[i];
    }
    return out;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * The protocol on one connection. Every call is one round trip to one SQL function. A connection
 * runs one statement at a time: use one store (and one client) per concurrent worker.
 */
// The columns claim() and idem_claim_local() answer, as the store reads them.
export const claimColumns =
    'SELECT decision, detail, owner_token::text AS owner_token, attempts, max_attempts,' +
    ' retry_after_ms::text AS retry_after_ms, result_json::text AS result_json, request_hash,' +
    ' error_class, error_message,' +
    " CASE WHEN decision = 'paused' AND lease_until IS NOT NULL" +
    '      THEN GREATEST(1, ceil(extract(epoch FROM lease_until - now()) * 1000))::bigint::text' +
    ' END AS paused_for_ms';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export function claimFromRow(row: any): ClaimResult {
    let decision = row.decision as string;
    // Record at commit (idem_record_local, idem_peek_local): the key recorded, or free to be; as
    // an acquisition (new) or a takeover, with no token.
    if (decision === 'recorded' || decision === 'run') decision = row.detail === 'new' ? 'acquired' : 'reacquired';
    const c: ClaimResult = {
        decision: 'in_progress',
        detail: row.detail ?? '',
        token: '',
        attempts: Number(row.attempts),
        maxAttempts: Number(row.max_attempts),
        retryAfterMs: Number(row.retry_after_ms ?? 0),
        resultJson: '',
        storedDigest: '',
        errorClass: row.error_class ?? '',
        errorMessage: row.error_message ?? '',
        pausedForMs: 0,
        mayExecute: false,
    };
    switch (decision) {
        case 'acquired':
        case 'reacquired':
            c.token = row.owner_token ?? ''; // none for record at commit
            break;
        case 'replay':
            c.resultJson = row.result_json ?? 'null';
            break;
        case 'conflict':
            c.storedDigest = row.request_hash ?? '';
            break;
        case 'paused':
            if (row.paused_for_ms !== null && row.paused_for_ms !== undefined) c.pausedForMs = Number(row.paused_for_ms);
            break;
        case 'in_progress':
        case 'retry_later':
        case 'failed':
            break;
        default:
            throw new Error(`claim returned an unknown decision '${decision}'; is the schema newer?`);
    }
    c.decision = decision as Decision;
    c.mayExecute = decision === 'acquired' || decision === 'reacquired';
    return c;
}

export class TaskStore {
    readonly client: Queryable;
    readonly schema: string;
    readonly leaseMs: number;
    readonly retry: Readonly<RetryPolicy>;
    readonly maxResultBytes: number;
    readonly maxSerializationRetries: number;
    /**
     * "tenant:operation" -> the stored request's bound, for the operations this store registered as
     * re-drivable: their claims must send the request (a CanonicalRequest).
     */
    readonly redrivable = new Map<string, number>();
    private readonly fingerprintFieldsOf: Set<string>;
    private fieldKey: KeyObject | undefined;
    private readonly q: string;

    constructor(client: Queryable, options: StoreOptions = {}, private readonly counters?: OutcomeCounters) {
        this.client = client;
        this.schema = options.schema ?? 'idem';
        this.q = quoteSchema(this.schema);
        this.leaseMs = options.leaseMs ?? 30_000;
        this.retry = Object.freeze({ ...defaultRetryPolicy, ...(options.retry ?? {}) });
        this.maxResultBytes = options.maxResultBytes ?? 1 << 20;
        this.maxSerializationRetries = options.maxSerializationRetries ?? 5;
        this.fingerprintFieldsOf = new Set(options.fingerprintFieldsOf ?? []);
        if (this.fingerprintFieldsOf.size > 0) {
            try {
                this.fieldKey = fieldKeyObject(options.fieldKey ?? '');
            } catch {
                throw new InvalidArgumentError('fingerprintFieldsOf needs fieldKey (16 to 1024 bytes)');
            }
        }
        validateRetryPolicy(this.retry);
        if (!Number.isSafeInteger(this.leaseMs) || this.leaseMs <= 0 || this.leaseMs > limits.maxLeaseMs)
            throw new InvalidArgumentError(`lease must be 1 to ${limits.maxLeaseMs} ms`);
        if (!Number.isSafeInteger(this.maxResultBytes) || this.maxResultBytes < 1 || this.maxResultBytes > limits.maxResultBytes)
            throw new InvalidArgumentError(`maxResultBytes must be 1 to ${limits.maxResultBytes}`);
        if (this.retry.maxAttempts > limits.maxAttempts)
            throw new InvalidArgumentError(`retry policy: maxAttempts must be at most ${limits.maxAttempts}`);
        if (this.retry.maxDelayMs > limits.maxRetryDelayMs)
            throw new InvalidArgumentError(`retry policy: maxDelay must be at most ${limits.maxRetryDelayMs} ms`);
        if (this.retry.maxAgeMs > limits.maxAgeMs)
            throw new InvalidArgumentError(`retry policy: maxAge must be at most ${limits.maxAgeMs} ms`);
    }

    /** A new owner token (a version 4 UUID): made here so that a claim can be retried. */
    static newToken(): string {
        return randomUUID();
    }

    /** The schema-qualified name of one of Idem's functions. */
    qualify(object: string): string {
        return `${this.q}.${object}`;
    }

    private count(key: TaskKey, outcome: string): void {
        this.counters?.add(key.tenant, key.operation, outcome);
    }

    // A statement that is its own transaction: retried on 40001 / 40P01, errors typed.
    private async withRetry<T>(fn: () => Promise<T>): Promise<T> {
        for (let attempt = 0; ; ++attempt) {
            if (connectionBroken(this.client))
                throw new DatabaseUnavailableError('the connection to the database was lost: it has ended; connect again');
            try {
                return await fn();
            } catch (e) {
                const code = (e as { code?: unknown }).code;
                const transient = code === '40001' || code === '40P01';
                if (!transient || attempt >= this.maxSerializationRetries) throw translateError(e);
            }
            await sleep(1 << Math.min(attempt, 6));
        }
    }

    /**
     * Registers the operation as re-drivable (schema v25, idem_redrive_register): from now on its
     * claims store the canonical request beside the key, so that an operator's requeue can have a
     * re-driver run it again. redact: top-level request fields shown as "[redacted]" to those who
     * may read stored requests. Returns registered, unchanged or updated. Claims of the operation on
     * this store must then pass a CanonicalRequest (canonicalRequest(...)).
     */
    async registerRedrivable(
        tenant: string,
        operation: string,
        maxRequestBytes: number = limits.defaultStoredRequestBytes,
        redact: readonly string[] = [],
    ): Promise<string> {
        new TaskKey(tenant, operation, 'x'); // a bad tenant or operation fails here, before any I/O
        if (!Number.isSafeInteger(maxRequestBytes) || maxRequestBytes < 1 || maxRequestBytes > limits.maxStoredRequestBytes)
            throw new InvalidArgumentError(`maxRequestBytes must be 1 to ${limits.maxStoredRequestBytes}, not ${maxRequestBytes}`);
        if (redact.length > limits.maxRedactFields || redact.some((f) => typeof f !== 'string' || f.length < 1 || f.length > 200))
            throw new InvalidArgumentError(`redact names at most ${limits.maxRedactFields} top-level fields of 1 to 200 characters`);
        const { rows } = await this.withRetry(() =>
            this.client.query(`SELECT outcome FROM ${this.qualify('idem_redrive_register')}($1, $2, $3, $4::text[])`, [
                tenant, operation, maxRequestBytes, [...redact],
            ]),
        );
        this.redrivable.set(`${tenant}:${operation}`, maxRequestBytes);
        return rows[0].outcome as string;
    }

    /**
     * Decides, from the stored state, what this caller does with the key. A digest that is not 1 to
     * 256 bytes of visible ASCII is an InvalidArgumentError, before any I/O. For a re-drivable
     * operation pass a CanonicalRequest: the claim stores the request when it acquires the key
     * (idem_claim_stored), refused whole above the operation's bound.
     */
    async claim(key: TaskKey, request: string | CanonicalRequest): Promise<ClaimResult> {
        requireKey(key);
        const stored = typeof request === 'string' ? undefined : request;
        const requestDigest = typeof request === 'string' ? request : request?.digest;
        requireDigest(requestDigest);
        const bound = this.redrivable.get(`${key.tenant}:${key.operation}`) ?? this.redrivable.get(`*:${key.operation}`);
        if (stored === undefined && bound !== undefined)
            throw new InvalidArgumentError(
                `operation ${key.operation} of tenant ${key.tenant} is re-drivable: its claims pass the request ` +
                    '(canonicalRequest(request, ignoreFields)), not only its digest',
            );
        let prints: FieldPrints | undefined;
        if (this.fingerprintFieldsOf.has(key.operation)) {
            if (stored === undefined)
                throw new InvalidArgumentError(
                    `operation ${key.operation} fingerprints its fields: its claims pass the request ` +
                        '(canonicalRequest(request, ignoreFields)), not only its digest',
                );
            prints = fieldFingerprints(stored.text, this.fieldKey as KeyObject);
        }
        const token = TaskStore.newToken();
        const maxAge = this.retry.maxAgeMs;
        const params: unknown[] = [key.str(), requestDigest, token, String(this.leaseMs), this.retry.maxAttempts, maxAge > 0 ? String(maxAge) : null];
        let fn = 'claim';
        if (prints !== undefined) {
            // A request is stored only for an operation this store registered as re-drivable.
            fn = 'idem_claim_fields';
            params.push(prints.json, prints.fields, bound !== undefined ? stored!.text : null);
        } else if (stored !== undefined) {
            if (typeof stored.text !== 'string') throw new InvalidArgumentError('the stored request is JSON text (a string)');
            const size = Buffer.byteLength(stored.text, 'utf8');
            const limit = bound ?? limits.maxStoredRequestBytes;
            if (size > limit)
                throw new InvalidArgumentError(
                    `request of ${key.str()} is ${size} bytes, more than the ${limit} bytes its operation stores for ` +
                        're-execution: nothing was claimed or stored',
                );
            fn = 'idem_claim_stored';
            params.push(stored.text);
        }
        const args = params.map((_v, i) => (i === 2 ? `$${i + 1}::uuid` : i === 6 && prints !== undefined ? `$${i + 1}::jsonb` : `$${i + 1}`)).join(', ');
        const { rows } = await this.withRetry(() =>
            this.client.query(
                claimColumns + ` FROM ${this.qualify(fn)}(${args})`,
                params,
            ),
        );
        const c = claimFromRow(rows[0]);
        this.countClaim(key, c);
        return c;
    }

    /**
     * One transaction for local effects (docs/workers-guide.md): the claim inside the caller's
     * business transaction (BEGIN sent on `tx`, READ COMMITTED), through idem_claim_local. Another
     * transaction holding the key is waited for up to waitMs (1 .. 60000), then the answer is what
     * it left (a replay, or the key). When the wait runs out the answer is in_progress
     * [wait_timeout] and the transaction is aborted (roll it back: it holds nothing); after any
     * other answer that does not execute, commit it (it keeps a conflict's or an exhaustion's
     * record). An acquisition is counted with countClaim once the transaction committed.
     */
    async claimInTransaction(tx: Queryable, key: TaskKey, request: string | CanonicalRequest, waitMs = 2000): Promise<ClaimResult> {
        requireKey(key);
        if (typeof request !== 'string' || this.redrivable.has(`${key.tenant}:${key.operation}`) ||
            this.redrivable.has(`*:${key.operation}`))
            throw new InvalidArgumentError(
                `operation ${key.operation} of tenant ${key.tenant} is re-drivable: its claims store the request, ` +
                    'which one transaction for local effects does not do yet; run it in two steps',
            );
        if (this.fingerprintFieldsOf.has(key.operation))
            throw new InvalidArgumentError(
                `operation ${key.operation} fingerprints its fields, which one transaction for local effects does not do yet; ` +
                    'run it in two steps',
            );
        const requestDigest = request;
        requireDigest(requestDigest);
        if (!Number.isSafeInteger(waitMs) || waitMs < 1 || waitMs > limits.maxDuplicateWaitMs)
            throw new InvalidArgumentError(`the wait for a duplicate must be 1 to ${limits.maxDuplicateWaitMs} ms`);
        const maxAge = this.retry.maxAgeMs;
        let c: ClaimResult;
        try {
            const { rows } = await tx.query(
                claimColumns + ` FROM ${this.qualify('idem_claim_local')}($1, $2, $3::uuid, $4, $5, $6, $7)`,
                [key.str(), requestDigest, TaskStore.newToken(), String(this.leaseMs), this.retry.maxAttempts,
                    maxAge > 0 ? String(maxAge) : null, waitMs],
            );
            c = claimFromRow(rows[0]);
        } catch (e) {
            if ((e as { code?: unknown }).code !== '55P03') throw translateError(e);
            // Another transaction held the key for the whole wait; tx is aborted (it holds nothing).
            c = claimFromRow({ decision: 'in_progress', detail: 'wait_timeout', attempts: 0,
                max_attempts: this.retry.maxAttempts, retry_after_ms: '50' });
        }
        if (!c.mayExecute) this.countClaim(key, c);
        return c;
    }

    /**
     * Record at commit (docs/workers-guide.md), idem_peek_local: what the stored row says a run of
     * requestDigest should do, in a statement of its own, without taking the key: acquired [new] /
     * reacquired [retry_due, lease_expired] with no token (run the task, then
     * recordInTransaction), or claim's other answers (and its writes for them: a conflict's record,
     * an exhaustion). Not counted: the caller counts the answer it returns.
     */
    async peekLocal(key: TaskKey, requestDigest: string): Promise<ClaimResult> {
        requireKey(key);
        requireDigest(requestDigest);
        const maxAge = this.retry.maxAgeMs;
        const { rows } = await this.withRetry(() =>
            this.client.query(claimColumns + ` FROM ${this.qualify('idem_peek_local')}($1, $2, $3, $4)`,
                [key.str(), requestDigest, this.retry.maxAttempts, maxAge > 0 ? String(maxAge) : null]),
        );
        return claimFromRow(rows[0]);
    }

    /**
     * Record at commit, idem_record_local inside the caller's business transaction (BEGIN sent on
     * `tx`, READ COMMITTED), after the task's writes: records the key succeeded with resultJson
     * (checked as complete checks it). acquired [new] / reacquired [retry_due, lease_expired] (no
     * token): commit. Any other answer wrote nothing: roll back (in_progress [wait_timeout] after a
     * wait that ran out aborted the transaction), then ask peekLocal for the final answer (a
     * replay's result is in this one already). Not counted here.
     */
    async recordInTransaction(tx: Queryable, key: TaskKey, request: string | CanonicalRequest, resultJson: string,
        waitMs = 2000): Promise<ClaimResult> {
        requireKey(key);
        if (typeof request !== 'string' || this.redrivable.has(`${key.tenant}:${key.operation}`) ||
            this.redrivable.has(`*:${key.operation}`))
            throw new InvalidArgumentError(
                `operation ${key.operation} of tenant ${key.tenant} is re-drivable: its claims store the request, ` +
                    'which one transaction for local effects does not do yet; run it in two steps',
            );
        requireDigest(request);
        if (!Number.isSafeInteger(waitMs) || waitMs < 1 || waitMs > limits.maxDuplicateWaitMs)
            throw new InvalidArgumentError(`the wait for a duplicate must be 1 to ${limits.maxDuplicateWaitMs} ms`);
        this.requireResult(resultJson);
        const maxAge = this.retry.maxAgeMs;
        try {
            const { rows } = await tx.query(
                claimColumns + ` FROM ${this.qualify('idem_record_local')}($1, $2, $3::jsonb, $4, $5, $6, $7)`,
                [key.str(), request, resultJson, this.retry.maxAttempts, maxAge > 0 ? String(maxAge) : null, waitMs,
                    this.maxResultBytes],
            );
            return claimFromRow(rows[0]);
        } catch (e) {
            if ((e as { code?: unknown }).code !== '55P03') throw translateError(e);
            return claimFromRow({ decision: 'in_progress', detail: 'wait_timeout', attempts: 0,
                max_attempts: this.retry.maxAttempts, retry_after_ms: '50' });
        }
    }

    private requireResult(resultJson: string): void {
        if (typeof resultJson !== 'string') throw new InvalidArgumentError('the result must be JSON text (a string)');
        const size = Buffer.byteLength(resultJson, 'utf8');
        if (size > this.maxResultBytes)
            throw new InvalidArgumentError(`result is ${size} bytes, more than the ${this.maxResultBytes} allowed`);
        const nul = resultJson.indexOf('\0');
        if (nul >= 0) throw new InvalidArgumentError(`result is not valid JSON: unexpected byte 0x00 at offset ${nul}`);
        try {
            JSON.parse(resultJson);
        } catch {
            throw new InvalidArgumentError('result is not valid JSON');
        }
    }

    /** Counts what a claim decided (claim does so itself). */
    countClaim(key: TaskKey, c: ClaimResult): void {
        switch (c.decision) {
            case 'acquired':
                return this.count(key, 'acquired');
            case 'reacquired':
                return this.count(key, c.detail === 'lease_expired' ? 'reacquired_lease' : 'reacquired_retry');
            case 'replay':
                return this.count(key, 'replayed');
            case 'in_progress':
                return this.count(key, 'in_progress');
            case 'conflict':
                return this.count(key, 'conflict');
            case 'retry_later':
                return this.count(key, 'retry_later');
            case 'failed':
                return this.count(key, c.detail === 'exhausted' ? 'exhausted' : 'rejected_failed');
            case 'paused':
                return this.count(key, 'paused');
        }
    }

    /**
     * In the caller's business transaction (BEGIN sent on `tx`), before its writes: locks the row
     * and checks the token. Throws LostOwnershipError (NoRecordError for a key with no record); the
     * transaction is then aborted.
     */
    async fence(tx: Queryable, key: TaskKey, token: string): Promise<void> {
        requireKey(key);
        requireToken(token);
        try {
            await tx.query(`SELECT 1 FROM ${this.qualify('fence')}($1, $2::uuid)`, [key.str(), token]);
        } catch (e) {
            const t = translateError(e);
            if (t instanceof LostOwnershipError) this.count(key, 'stale_token');
            throw t;
        }
    }

    /**
     * In the same transaction, after the business writes: marks the key succeeded with the result
     * (JSON text). InvalidArgumentError for a result that is not JSON or is larger than
     * maxResultBytes (before any I/O); LostOwnershipError when the token no longer owns the key.
     */
    async complete(tx: Queryable, key: TaskKey, token: string, resultJson: string): Promise<void> {
        requireKey(key);
        requireToken(token);
        this.requireResult(resultJson);
        try {
            await tx.query(`SELECT ${this.qualify('complete')}($1, $2::uuid, $3::jsonb, $4)`, [
                key.str(),
                token,
                resultJson,
                this.maxResultBytes,
            ]);
        } catch (e) {
            const t = translateError(e);
            if (t instanceof LostOwnershipError) this.count(key, 'stale_token');
            throw t;
        }
    }

    /** Counts a success once the caller's transaction has committed (runTask does this). */
    countSucceeded(key: TaskKey): void {
        this.count(key, 'succeeded');
    }

    /** Extends the lease by leaseMs; returns the new end. Throws LostOwnershipError. */
    async heartbeat(key: TaskKey, token: string): Promise<Date> {
        requireKey(key);
        requireToken(token);
        try {
            const { rows } = await this.withRetry(() =>
                this.client.query(
                    `SELECT (extract(epoch FROM ${this.qualify('heartbeat')}($1, $2::uuid, $3)) * 1000)::float8 AS ms`,
                    [key.str(), token, String(this.leaseMs)],
                ),
            );
            return new Date(Number(rows[0].ms));
        } catch (e) {
            if (e instanceof LostOwnershipError) this.count(key, 'stale_token');
            throw e;
        }
    }

    /**
     * Records a failed attempt (`attempt` as the claim returned it); the retry delay is drawn from
     * the policy's jitter window for that attempt. Throws LostOwnershipError.
     */
    async fail(key: TaskKey, token: string, attempt: number, cls: FailureClass, message: string): Promise<FailResult> {
        requireKey(key);
        requireToken(token);
        if (cls !== 'retryable' && cls !== 'permanent' && cls !== 'unknown')
            throw new InvalidArgumentError(`unknown failure class '${String(cls)}' (retryable, permanent or unknown)`);
        const text = storableMessage(String(message ?? ''));
        const retryDelayMs = delayAfter(this.retry, attempt);
        const maxAge = this.retry.maxAgeMs;
        let row: { status: string; attempts: number; exhausted: boolean };
        try {
            const { rows } = await this.withRetry(() =>
                this.client.query(
                    `SELECT status, attempts, exhausted FROM ${this.qualify('fail')}($1, $2::uuid, $3, $4, $5, $6)`,
                    [key.str(), token, cls, text, String(retryDelayMs), maxAge > 0 ? String(maxAge) : null],
                ),
            );
            row = rows[0];
        } catch (e) {
            if (e instanceof LostOwnershipError) this.count(key, 'stale_token');
            throw e;
        }
        this.count(key, cls === 'permanent' ? 'failed_permanent' : cls === 'unknown' ? 'failed_unknown' : 'failed_retryable');
        // The row's attempts are this attempt's number: past the first, the failure is a failed retry.
        if (row.attempts >= 2) this.count(key, 'retry_failed');
        if (row.exhausted) this.count(key, 'exhausted');
        return { status: row.status, attempts: Number(row.attempts), exhausted: Boolean(row.exhausted), retryDelayMs };
    }
}
