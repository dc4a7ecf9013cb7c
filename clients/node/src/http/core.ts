// The HTTP contract of docs/http-idempotency.md, framework-free: the key from the header, the
// fingerprint, the claim and what each decision answers, the finality of a response and how it is
// recorded. The adapters (express.ts, fastify.ts) only translate their framework's request and
// response to and from the plain values used here; clients/python/idem_client/http/core.py is
// the same core in Python, answer for answer.
import { createHash } from 'crypto';
import type { Pool, PoolClient } from 'pg';

import { JsonError, parseJsonStrict } from '../canonicaljson';
import { clientConfig } from '../conninfo';
import { CounterFlusher, OutcomeCounters } from '../counters';
import { connect } from '../connect';
import { canonicalJson } from '../canonicaljson';
import { canonicalRequest, requestDigest, withoutFields } from '../digest';
import type { CanonicalRequest } from '../digest';
import { LostOwnershipError, isConnectionError } from '../errors';
import type { FailureClass } from '../errors';
import { TaskKey } from '../key';
import type { RetryPolicy } from '../retrypolicy';
import { outcomeOfClaim } from '../runner';
import { Redriver, finishOutcome } from '../redrive';
import type { FinishOutcome, RedriverOptions } from '../redrive';
import { ClaimResult, TaskStore, claimColumns, claimFromRow, limits } from '../store';

export const maxKeyChars = 255;
export const defaultReplayHeaders = Object.freeze([
    'content-type', 'location', 'content-location', 'etag', 'last-modified', 'link',
]);
// Never stored or replayed, whatever an allow-list says: they carry credentials or session state.
const neverReplayed = new Set([
    'set-cookie', 'set-cookie2', 'authorization', 'proxy-authorization', 'proxy-authenticate', 'www-authenticate', 'cookie',
]);
const retryableStatuses = new Set([408, 409, 425, 429]);
export const problemType = 'application/problem+json';

/** /orders/<int:id> (Flask), /orders/:id (Express), /orders/{id} (Starlette, Fastify's :id too) -> /orders/{id}. */
export function normaliseTemplate(template: string): string {
    return template.replace(/<(?:[^:<>]+:)?([^<>]+)>|:([A-Za-z_][A-Za-z0-9_]*)/g, (_m, a, b) => `{${a ?? b}}`);
}

/** The Idem operation of a route: the method and the template, e.g. POST/orders/{id}/refunds. */
export function operationOf(method: string, template: string): string {
    return method.toUpperCase() + normaliseTemplate(template);
}

/** A response that is the request's answer for good: every status below 500 except 408, 409, 425, 429. */
export function isFinal(status: number): boolean {
    return status < 500 && !retryableStatuses.has(status);
}

export interface RouteOptions {
    /** A request without the header answers 400 (default true); false: it runs without Idem. */
    required?: boolean;
    /** The operation; default METHOD + template. */
    operation?: string;
    /** Body fields that do not change the request (trace ids, client timestamps), dotted paths allowed. */
    ignoreFields?: readonly string[];
    /** Request headers that are part of the fingerprint (none by default). */
    fingerprintHeaders?: readonly string[];
    /** The handler writes through req.idem.tx, committed with the stored response (default true). */
    atomic?: boolean;
    /**
     * Schema v25: the route's operation is re-drivable. Its requests with a JSON body are stored
     * (the fingerprint's canonical JSON, at most storedRequestBytes, default 64 KiB: a larger one
     * answers 413), so an operator's requeue can have HttpIdempotency.redriver() call the handler
     * again with that body.
     */
    redrive?: boolean;
    storedRequestBytes?: number;
    /** Top-level body fields shown as "[redacted]" to readers of stored requests. */
    redact?: readonly string[];
}

export interface HttpRequest {
    method: string;
    /** The route template as the framework spells it. */
    template: string;
    /** Lower-case name -> values. */
    headers: Map<string, string[]>;
    body: Buffer;
    tenant: string;
    /** The body as the framework already parsed it, when the bytes are gone (a JSON value). */
    parsedBody?: unknown;
}

export interface HttpResponse {
    status: number;
    headers: [string, string][];
    body: Buffer;
}

export function problem(status: number, title: string, detail: string, retryAfterMs?: number, extra?: object): HttpResponse {
    const body = Buffer.from(JSON.stringify({ type: 'about:blank', title, status, detail, ...(extra ?? {}) }), 'utf8');
    const headers: [string, string][] = [['content-type', problemType], ['content-length', String(body.length)]];
    if (retryAfterMs !== undefined) headers.push(['retry-after', String(Math.max(1, Math.ceil(retryAfterMs / 1000)))]);
    return { status, headers, body };
}

function quote(value: string, max = 64): string {
    let out = '';
    const bytes = Buffer.from(value, 'utf8');
    for (const b of bytes.subarray(0, max)) out += b >= 0x20 && b < 0x7f ? String.fromCharCode(b) : `\\x${b.toString(16).padStart(2, '0')}`;
    return bytes.length > max ? `${out}... (${bytes.length} bytes)` : out;
}

/** What the handler sees as req.idem: the key, the attempt, and in the atomic phase the transaction. */
export interface IdemContext {
    key: TaskKey;
    idempotencyKey: string;
    token: string;
    attempt: number;
    /** The transaction (BEGIN sent) that records the response; null outside the atomic phase. */
    tx: PoolClient | null;
}

export interface HttpIdempotencyOptions {
    schema?: string;
    header?: string;
    methods?: readonly string[];
    leaseMs?: number;
    retry?: Partial<RetryPolicy>;
    maxResponseBytes?: number;
    maxRequestBytes?: number;
    replayHeaders?: readonly string[];
    poolSize?: number;
    /** Counters to add to; default: its own, flushed every second on a connection of their own. */
    counters?: OutcomeCounters;
    /**
     * One transaction for local effects (docs/http-idempotency.md): an atomic route's claim, the
     * handler's writes and the stored response are one transaction and one commit; a duplicate
     * waits up to duplicateWaitMs (default 2000) for it, then replays it (or answers 409).
     */
    oneTransaction?: boolean;
    duplicateWaitMs?: number;
    /**
     * Record at commit (docs/http-idempotency.md): one transaction without a claim before the
     * handler: a read of the key (and a transaction-scoped advisory lock on it, so that a duplicate
     * in flight is seen) before it, one statement recording the response after it.
     */
    recordAtCommit?: boolean;
}

// Record at commit: the seed of the key's advisory lock (hashtextextended), so that the lock's
// 64-bit number is Idem's own, not a plain hash another application might take.
const lockSeed = 4343;

function waitTimeout(store: TaskStore, detail = 'wait_timeout'): ClaimResult {
    return claimFromRow({ decision: 'in_progress', detail, attempts: 0, max_attempts: store.retry.maxAttempts, retry_after_ms: '50' });
}

const contended = (store: TaskStore) => waitTimeout(store, 'contended');

/** An execution this request owns: finish() or abandon() it exactly once. */
export class Claimed {
    readonly context: IdemContext;
    /** finish() stored the response (the key succeeded). */
    recorded = false;
    private heartbeat: NodeJS.Timeout | undefined;

    constructor(
        private readonly core: HttpIdempotency,
        private readonly route: RouteOptions,
        readonly key: TaskKey,
        readonly claim: ClaimResult,
        private client: PoolClient | null,
        // One transaction: the claim is in client's transaction too, so nothing of it exists after
        // a rollback; a failure is recorded by a claim of its own (digest).
        private readonly digest = '',
        private readonly oneTransaction = false,
        // Record at commit: no claim before the handler; finish() records the key with the response.
        private readonly recordAtCommit = false,
    ) {
        const atomic = route.atomic !== false;
        this.context = { key, idempotencyKey: key.str(), token: claim.token, attempt: claim.attempts, tx: atomic ? client : null };
        if (!atomic) {
            // In the atomic phase the fence's row lock keeps every claimer out; outside it the
            // lease is kept alive while the handler runs.
            this.heartbeat = setInterval(() => void this.beat(), Math.max(50, Math.floor(core.leaseMs / 3)));
            this.heartbeat.unref();
        }
    }

    private async beat(): Promise<void> {
        await this.core.withClient((c) => this.core.store(c).heartbeat(this.key, this.claim.token)).catch(() => undefined);
    }

    private async end(): Promise<PoolClient> {
        if (this.heartbeat) clearInterval(this.heartbeat);
        this.heartbeat = undefined;
        const c = this.client ?? (await this.core.pool.connect());
        this.client = null;
        return c;
    }

    /** Records the response by the finality rule; returns what to send (the client gets it once even when not stored). */
    async finish(response: HttpResponse): Promise<HttpResponse> {
        const core = this.core;
        const atomic = this.route.atomic !== false;
        const c = await this.end();
        if (this.recordAtCommit) return this.finishRecord(c, response);
        const store = core.store(c);
        let broken: Error | undefined;
        try {
            if (!isFinal(response.status)) {
                if (atomic) await c.query('ROLLBACK');
                await this.record(store, 'retryable', `HTTP ${response.status} from the handler`);
                return response;
            }
            if (response.body.length > core.maxResponseBytes) {
                const message =
                    `response of ${response.body.length} bytes is larger than the ${core.maxResponseBytes} bytes stored ` +
                    `(HTTP ${response.status} sent once, not stored)`;
                if (atomic) {
                    // The handler's writes happened: they commit with the failure, not without it
                    // (the fence in begin() holds the row).
                    await c.query(`SELECT status FROM ${store.qualify('fail')}($1, $2::uuid, 'permanent', $3, 0, NULL)`, [
                        this.key.str(), this.claim.token, message,
                    ]);
                    await c.query('COMMIT');
                    if (this.oneTransaction) store.countClaim(this.key, this.claim);
                    core.counters.add(this.key.tenant, this.key.operation, 'failed_permanent');
                } else {
                    await this.fail(store, this.claim, 'permanent', message);
                }
                return response;
            }
            if (!atomic) {
                await c.query('BEGIN');
                await store.fence(c, this.key, this.claim.token);
            } // else the fence in begin() has held the row since
            await store.complete(c, this.key, this.claim.token, core.storedResult(response));
            await c.query('COMMIT');
            if (this.oneTransaction) store.countClaim(this.key, this.claim);
            store.countSucceeded(this.key);
            this.recorded = true;
            return response;
        } catch (e) {
            await c.query('ROLLBACK').catch((r) => (broken = r as Error));
            if (e instanceof LostOwnershipError) return response;
            throw e;
        } finally {
            c.release(broken);
        }
    }

    /**
     * The handler threw or the client's request ended without an answer: its writes roll back, the
     * outcome is unknown. Resolves to the answer to send instead of a 500 when another run of the key
     * succeeded meanwhile (its replay: a handler whose write met that run's, e.g. on a unique column).
     */
    async abandon(reason: string): Promise<HttpResponse | undefined> {
        const c = await this.end();
        let broken: Error | undefined;
        try {
            await c.query('ROLLBACK');
            return await this.record(this.core.store(c), 'unknown', reason);
        } catch (e) {
            broken = e as Error; // the lease runs out and a retry decides
            return undefined;
        } finally {
            c.release(broken);
        }
    }

    // Record at commit: the handler's writes are in c's transaction, nothing of the key yet. One
    // statement (idem_record_local) records the final response as the key's success, or answers what
    // another run left: then the writes roll back and that is the answer.
    private async finishRecord(c: PoolClient, response: HttpResponse): Promise<HttpResponse> {
        const core = this.core;
        const store = core.store(c);
        let broken: Error | undefined;
        try {
            if (!isFinal(response.status)) {
                await c.query('ROLLBACK');
                return (await this.record(store, 'retryable', `HTTP ${response.status} from the handler`)) ?? response;
            }
            if (response.body.length > core.maxResponseBytes) {
                // The handler's writes commit with the failure: the key is claimed in this transaction
                // (idem_claim_local) and failed in it, as in one transaction.
                const message =
                    `response of ${response.body.length} bytes is larger than the ${core.maxResponseBytes} bytes stored ` +
                    `(HTTP ${response.status} sent once, not stored)`;
                const claim = await store.claimInTransaction(c, this.key, this.digest, core.duplicateWaitMs);
                if (!claim.mayExecute) {
                    await c.query('ROLLBACK');
                    return core.answer(claim);
                }
                await c.query(`SELECT status FROM ${store.qualify('fail')}($1, $2::uuid, 'permanent', $3, 0, NULL)`, [
                    this.key.str(), claim.token, message,
                ]);
                await c.query('COMMIT');
                store.countClaim(this.key, claim);
                core.counters.add(this.key.tenant, this.key.operation, 'failed_permanent');
                return response;
            }
            let claim = await store.recordInTransaction(c, this.key, this.digest, core.storedResult(response), core.duplicateWaitMs);
            if (claim.mayExecute) {
                // Recorded: new, or a due retry / an expired lease taken over.
                await c.query('COMMIT');
                store.countClaim(this.key, claim);
                store.countSucceeded(this.key);
                this.recorded = true;
                return response;
            }
            await c.query('ROLLBACK');
            if (claim.decision !== 'replay' && claim.detail !== 'wait_timeout') {
                // The final answer from the row as it is now, with claim()'s writes for it (a
                // conflict's record, an exhaustion).
                claim = await store.peekLocal(this.key, this.digest);
                if (claim.mayExecute) claim = contended(store); // free again already: this one does not run
            }
            store.countClaim(this.key, claim);
            return core.answer(claim);
        } catch (e) {
            await c.query('ROLLBACK').catch((r) => (broken = r as Error));
            throw e;
        } finally {
            c.release(broken);
        }
    }

    // A failure after the rollback. In one transaction the rollback took the claim with it: the key
    // is claimed again on its own (counting the attempt) and failed with that token, unless someone
    // else holds or finished it meanwhile (theirs is the answer: a replay is returned to send).
    private async record(store: TaskStore, cls: FailureClass, message: string): Promise<HttpResponse | undefined> {
        if (!this.oneTransaction) {
            await this.fail(store, this.claim, cls, message);
            return undefined;
        }
        const claim = await store.claim(this.key, this.digest);
        if (claim.mayExecute) await this.fail(store, claim, cls, message);
        else if (claim.decision === 'replay') return this.core.answer(claim);
        return undefined;
    }

    private async fail(store: TaskStore, claim: ClaimResult, cls: FailureClass, message: string): Promise<void> {
        try {
            await store.fail(this.key, claim.token, claim.attempts, cls, message);
        } catch (e) {
            if (!(e instanceof LostOwnershipError)) throw e;
        }
    }
}

/** The core every adapter shares. dsn: where Idem's schema lives (the handler's transaction is on the same database). */
export class HttpIdempotency {
    readonly pool: Pool;
    readonly header: string;
    readonly methods: Set<string>;
    readonly leaseMs: number;
    readonly maxResponseBytes: number;
    readonly maxRequestBytes: number;
    readonly counters: OutcomeCounters;
    readonly oneTransaction: boolean;
    readonly duplicateWaitMs: number;
    readonly recordAtCommit: boolean;
    private readonly sqlPeek: string;
    private readonly sqlPeekLock: string;
    private readonly replayHeaders: Set<string>;
    private readonly flusher: CounterFlusher | undefined;
    private readonly storeOptions: ConstructorParameters<typeof TaskStore>[1];
    private readonly registered = new Set<string>();

    constructor(readonly dsn: string, options: HttpIdempotencyOptions = {}) {
        // eslint-disable-next-line @typescript-eslint/no-var-requires
        const pg = require('pg') as typeof import('pg');
        // A bounded wait for a free connection: a 503 with Retry-After rather than a queue without end.
        this.pool = new pg.Pool({ ...clientConfig(dsn, 'idem http'), max: options.poolSize ?? 10, connectionTimeoutMillis: 10_000 });
        this.pool.on('error', () => undefined); // an idle client that broke is dropped by the pool
        this.header = options.header ?? 'Idempotency-Key';
        this.methods = new Set((options.methods ?? ['POST', 'PATCH']).map((m) => m.toUpperCase()));
        this.leaseMs = options.leaseMs ?? 30_000;
        this.maxResponseBytes = options.maxResponseBytes ?? 1 << 20;
        this.maxRequestBytes = options.maxRequestBytes ?? 1 << 20;
        this.oneTransaction = options.oneTransaction ?? false;
        this.duplicateWaitMs = options.duplicateWaitMs ?? 2000;
        this.recordAtCommit = options.recordAtCommit ?? false;
        this.replayHeaders = new Set((options.replayHeaders ?? defaultReplayHeaders).map((h) => h.toLowerCase()).filter((h) => !neverReplayed.has(h)));
        this.storeOptions = {
            schema: options.schema ?? 'idem',
            leaseMs: this.leaseMs,
            retry: options.retry,
            // The wrapper around a maxResponseBytes body (base64 at most 4/3 of it).
            maxResultBytes: Math.min(64 << 20, this.maxResponseBytes * 2 + 65536),
        };
        if (options.counters) {
            this.counters = options.counters;
        } else {
            this.counters = new OutcomeCounters();
            this.flusher = new CounterFlusher(() => connect(dsn, 'idem counters'), this.counters, this.storeOptions.schema);
        }
        const probe = new TaskStore({ query: async () => ({ rows: [] }) }, this.storeOptions); // validates the settings now
        this.sqlPeek = `${claimColumns} FROM ${probe.qualify('idem_peek_local')}($1, $2, $3, $4)`;
        this.sqlPeekLock =
            `SELECT pg_catalog.pg_try_advisory_xact_lock(pg_catalog.hashtextextended($1, ${lockSeed})) AS locked, ` +
            `${claimColumns.slice('SELECT '.length)} FROM ${probe.qualify('idem_peek_local')}($1, $2, $3, $4)`;
    }

    // Record at commit, before the handler: BEGIN, then in one statement the key's row read
    // (idem_peek_local) and the key's transaction-scoped advisory lock taken without waiting. A
    // duplicate in flight holds that lock: this one waits for it up to duplicateWaitMs (then 409)
    // and reads the row again, so it replays the first one's answer.
    private async beginRecord(c: PoolClient, store: TaskStore, key: TaskKey, digest: string, route: RouteOptions): Promise<HttpResponse | Claimed> {
        await c.query('BEGIN');
        const maxAge = store.retry.maxAgeMs;
        const params = [key.str(), digest, store.retry.maxAttempts, maxAge > 0 ? String(maxAge) : null];
        let { rows: [row] } = await c.query(this.sqlPeekLock, params);
        if (row.decision === 'run' && !row.locked) {
            let prev: string;
            try {
                ({ rows: [{ prev }] } = await c.query(
                    "SELECT pg_catalog.current_setting('lock_timeout') AS prev, pg_catalog.set_config('lock_timeout', $1, true)," +
                        ` pg_catalog.pg_advisory_xact_lock(pg_catalog.hashtextextended($2, ${lockSeed}))`,
                    [String(this.duplicateWaitMs), key.str()],
                ));
            } catch (e) {
                await c.query('ROLLBACK');
                if ((e as { code?: unknown }).code !== '55P03') throw e;
                this.counters.add(key.tenant, key.operation, 'in_progress');
                return this.answer(waitTimeout(store));
            }
            ({ rows: [row] } = await c.query(
                `SELECT pg_catalog.set_config('lock_timeout', $5, true), ${this.sqlPeek.slice('SELECT '.length)}`, [...params, prev]));
        }
        const claim = claimFromRow(row); // run [new] is acquired, run [retry_due, lease_expired] reacquired
        if (!claim.mayExecute) {
            // A replay, a conflict (its record), an exhaustion (marked): committed, nothing else ran.
            await c.query('COMMIT');
            store.countClaim(key, claim);
            return this.answer(claim);
        }
        claim.attempts += 1;
        return new Claimed(this, route, key, claim, c, digest, true, true);
    }

    async close(): Promise<void> {
        if (this.flusher) await this.flusher.stop();
        await this.pool.end();
    }

    store(client: PoolClient): TaskStore {
        return new TaskStore(client, this.storeOptions, this.counters);
    }

    async withClient<T>(fn: (c: PoolClient) => Promise<T>): Promise<T> {
        const c = await this.pool.connect();
        let broken: Error | undefined;
        try {
            return await fn(c);
        } catch (e) {
            if (!(e instanceof LostOwnershipError)) broken = e as Error;
            throw e;
        } finally {
            c.release(broken);
        }
    }

    /** The TaskKey, null when the route does not require one and none came, or a 400 answer. */
    keyOf(request: HttpRequest, route: RouteOptions): TaskKey | HttpResponse | null {
        const values = request.headers.get(this.header.toLowerCase()) ?? [];
        if (values.length === 0) {
            if (route.required === false) return null;
            return problem(400, 'Idempotency key missing',
                `this endpoint requires an ${this.header} header (1 to ${maxKeyChars} visible ASCII characters)`);
        }
        if (values.length > 1) return problem(400, 'Idempotency key repeated', `send one ${this.header} header, not ${values.length}`);
        const value = values[0];
        if (value.length < 1 || value.length > maxKeyChars || !/^[!-~]+$/.test(value))
            return problem(400, 'Idempotency key invalid',
                `the ${this.header} header must be 1 to ${maxKeyChars} visible ASCII characters (no spaces, control or ` +
                    `non-ASCII bytes), got '${quote(value)}'`);
        try {
            return new TaskKey(request.tenant, route.operation || operationOf(request.method, request.template), value);
        } catch (e) {
            return problem(400, 'Idempotency key invalid', (e as Error).message);
        }
    }

    /**
     * What the fingerprint hashes: method, template, the canonical JSON body (irrelevant fields
     * dropped) or its bytes and content type, and chosen headers. For a re-drivable route this
     * document (with a JSON body) is the stored request.
     */
    fingerprintDoc(request: HttpRequest, route: RouteOptions): { method: string; route: string; body: Record<string, unknown>; headers: Record<string, string> } {
        const contentType = (request.headers.get('content-type') ?? []).join(',');
        let body: Record<string, unknown> | undefined;
        if (request.parsedBody !== undefined && !Buffer.isBuffer(request.parsedBody) && typeof request.parsedBody !== 'string') {
            body = { json: withoutFields(request.parsedBody, route.ignoreFields ?? []) };
        } else if (request.body.length > 0) {
            try {
                body = { json: withoutFields(parseJsonStrict(request.body), route.ignoreFields ?? []) };
            } catch (e) {
                if (!(e instanceof JsonError) && !(e instanceof RangeError) && !(e instanceof TypeError)) throw e;
            }
        }
        if (body === undefined) body = { content_type: contentType, sha256: createHash('sha256').update(request.body).digest('hex') };
        const headers: Record<string, string> = {};
        for (const h of route.fingerprintHeaders ?? []) headers[h.toLowerCase()] = (request.headers.get(h.toLowerCase()) ?? []).join(',');
        return { method: request.method.toUpperCase(), route: normaliseTemplate(request.template), body, headers };
    }

    /** The v1 digest of fingerprintDoc. */
    fingerprint(request: HttpRequest, route: RouteOptions): string {
        return requestDigest(this.fingerprintDoc(request, route));
    }

    // The digest, or for a re-drivable route's JSON request the CanonicalRequest to store (the
    // operation registered first, once per process); a 413 answer when it is too large to store.
    private async claimRequest(store: TaskStore, key: TaskKey, request: HttpRequest, route: RouteOptions): Promise<string | CanonicalRequest | HttpResponse> {
        const doc = this.fingerprintDoc(request, route);
        // A body that is not JSON cannot be given to the handler again: its key is not re-drivable.
        if (!route.redrive || !('json' in doc.body)) return requestDigest(doc);
        const canonical = canonicalRequest(doc);
        const size = Buffer.byteLength(canonical.text, 'utf8');
        const bound = route.storedRequestBytes ?? limits.defaultStoredRequestBytes;
        if (size > bound)
            return problem(413, 'Request too large to store',
                `this endpoint stores its requests for re-execution, at most ${bound} bytes of them; this one is ${size}`);
        const scope = `${key.tenant}:${key.operation}`;
        if (!this.registered.has(scope)) {
            await store.registerRedrivable(key.tenant, key.operation, bound, route.redact ?? []);
            this.registered.add(scope);
        }
        return canonical;
    }

    /**
     * A Redriver that re-executes this service's requeued requests of a re-drivable route: handler
     * is called with an HttpRequest rebuilt from the stored request (method, template, the JSON
     * body, the fingerprint's headers) and the IdemContext (ctx.tx in the atomic phase), and returns
     * the HttpResponse, recorded as a live request's would be. start() runs it, stop() ends it.
     */
    redriver(
        tenant: string,
        operation: string,
        handler: (request: HttpRequest, ctx: IdemContext) => Promise<HttpResponse> | HttpResponse,
        route: RouteOptions = { redrive: true },
        options: RedriverOptions = {},
    ): Redriver {
        const bound = route.storedRequestBytes ?? limits.defaultStoredRequestBytes;
        const runItem = async (_client: unknown, item: { key: string; request: string; requestHash: string }): Promise<[FinishOutcome, string | null]> => {
            const key = TaskKey.parse(item.key);
            const request = storedHttpRequest(item.request, key.tenant);
            if (!request) return ['failed', 'the stored request has no JSON body to send the handler again'];
            const atomic = route.atomic !== false;
            let claimed: Claimed;
            let c: PoolClient;
            try {
                c = await this.pool.connect();
            } catch (e) {
                if (isConnectionError(e)) throw e;
                return ['later', `no database connection free: ${(e as Error).message}`]; // busy: the item waits
            }
            let keep = false;
            let broken: Error | undefined;
            try {
                const store = this.store(c);
                store.redrivable.set(`${key.tenant}:${key.operation}`, bound);
                const claim = await store.claim(key, { text: item.request, digest: item.requestHash });
                if (!claim.mayExecute) {
                    const out = outcomeOfClaim(claim);
                    return [finishOutcome(out.kind), out.error || claim.detail || null];
                }
                if (atomic) {
                    await c.query('BEGIN');
                    await store.fence(c, key, claim.token);
                    keep = true;
                }
                claimed = new Claimed(this, route, key, claim, atomic ? c : null);
            } catch (e) {
                broken = e as Error;
                keep = false;
                throw e;
            } finally {
                if (!keep) c.release(broken);
            }
            let response: HttpResponse;
            try {
                response = await handler(request, claimed.context);
            } catch (e) {
                const reason = `re-driven handler threw ${(e as Error)?.name ?? 'Error'}: ${String((e as Error)?.message ?? e).slice(0, 200)}`;
                await claimed.abandon(reason);
                return ['later', reason];
            }
            await claimed.finish(response);
            if (claimed.recorded) return ['succeeded', `HTTP ${response.status}`];
            if (isFinal(response.status) && response.body.length > this.maxResponseBytes)
                return ['failed', `HTTP ${response.status}: a response of ${response.body.length} bytes is too large to store`];
            if (isFinal(response.status)) return ['later', `HTTP ${response.status}, not recorded (the key was taken over)`];
            return ['later', `HTTP ${response.status} from the handler`];
        };
        return new Redriver(this.dsn, tenant, operation, runItem, {
            schema: this.storeOptions?.schema,
            ...options,
            register: { maxRequestBytes: bound, redact: route.redact ?? [] },
        });
    }

    /** Before the handler: an answer to send instead, a Claimed when this request runs the handler, or null (no key, not required). */
    /** 413 for a body past maxRequestBytes (the adapters read at most one byte more), else null. */
    tooLarge(size: number): HttpResponse | null {
        if (size <= this.maxRequestBytes) return null;
        return problem(413, 'Request body too large', `the body is more than the ${this.maxRequestBytes} bytes this endpoint reads`);
    }

    async begin(request: HttpRequest, route: RouteOptions): Promise<HttpResponse | Claimed | null> {
        const tooLarge = this.tooLarge(request.body.length);
        if (tooLarge) return tooLarge;
        const key = this.keyOf(request, route);
        if (key === null || !(key instanceof TaskKey)) return key;
        const c = await this.pool.connect();
        let keep = false;
        let broken: Error | undefined;
        try {
            const store = this.store(c);
            const digest = await this.claimRequest(store, key, request, route);
            if (!(typeof digest === 'string' || 'text' in digest)) return digest;
            // A re-drivable route's claim stores the request, which one transaction does not do yet: it runs
            // in two steps.
            if (route.atomic !== false && this.recordAtCommit && typeof digest === 'string') {
                const out = await this.beginRecord(c, store, key, digest, route);
                keep = out instanceof Claimed;
                return out;
            }
            if (route.atomic !== false && this.oneTransaction && typeof digest === 'string') {
                await c.query('BEGIN');
                const claim = await store.claimInTransaction(c, key, digest, this.duplicateWaitMs);
                if (!claim.mayExecute) {
                    // After a wait that ran out the transaction is aborted; otherwise it keeps what
                    // the claim recorded (a conflict, an exhaustion).
                    await c.query(claim.detail === 'wait_timeout' ? 'ROLLBACK' : 'COMMIT');
                    return this.answer(claim);
                }
                keep = true;
                return new Claimed(this, route, key, claim, c, digest, true);
            }
            const claim = await store.claim(key, digest);
            if (!claim.mayExecute) return this.answer(claim);
            if (route.atomic !== false) {
                await c.query('BEGIN');
                await store.fence(c, key, claim.token);
                keep = true;
                return new Claimed(this, route, key, claim, c);
            }
            return new Claimed(this, route, key, claim, null);
        } catch (e) {
            broken = e as Error;
            if (keep) keep = false;
            throw e;
        } finally {
            if (!keep) c.release(broken);
        }
    }

    /** What a claim that may not run the handler answers. */
    answer(claim: ClaimResult): HttpResponse {
        switch (claim.decision) {
            case 'replay':
                return this.replay(claim.resultJson);
            case 'in_progress':
                return problem(409, 'Request in progress',
                    'a request with this idempotency key is still being processed; retry after the time in Retry-After', claim.retryAfterMs);
            case 'conflict':
                return problem(422, 'Idempotency key reused',
                    'this idempotency key was used with a different request (method, route, body or headers); nothing ran and the stored answer is unchanged');
            case 'retry_later':
                return problem(503, 'Retry later',
                    `the last attempt failed (${claim.errorMessage || claim.errorClass}); the next one may start after Retry-After`, claim.retryAfterMs);
            case 'paused':
                return problem(503, 'Operation paused', `an operator paused ${claim.detail}: ${claim.errorMessage}`, claim.retryAfterMs);
            default: {
                const m = /^HTTP (\d{3}) /.exec(claim.errorMessage);
                const status = m && !isFinal(Number(m[1])) ? Number(m[1]) : 500;
                return problem(status, 'Request failed', `this idempotency key failed for good (${claim.detail}): ${claim.errorMessage}`,
                    undefined, { attempts: claim.attempts });
            }
        }
    }

    storedResult(response: HttpResponse): string {
        const headers = response.headers.filter(([n]) => this.replayHeaders.has(n.toLowerCase())).map(([n, v]) => [n.toLowerCase(), v]);
        const doc: Record<string, unknown> = { status: response.status, headers };
        const text = response.body.toString('utf8');
        if (Buffer.from(text, 'utf8').equals(response.body) && !text.includes('\0')) doc.body = text;
        else doc.body_b64 = response.body.toString('base64');
        return JSON.stringify(doc);
    }

    replay(resultJson: string): HttpResponse {
        const doc = JSON.parse(resultJson) as { status: number; headers?: [string, string][]; body?: string; body_b64?: string };
        const body = doc.body_b64 !== undefined ? Buffer.from(doc.body_b64, 'base64') : Buffer.from(doc.body ?? '', 'utf8');
        const headers: [string, string][] = [...(doc.headers ?? []), ['content-length', String(body.length)], ['idempotent-replayed', 'true']];
        return { status: Number(doc.status), headers, body };
    }
}

/** The answer when Idem itself could not be reached: 503, the handler not run. */
export function errorResponse(e: unknown): HttpResponse {
    return problem(503, 'Idempotency store unavailable', `${(e as Error)?.name ?? 'Error'}: ${String((e as Error)?.message ?? e).slice(0, 300)}`, 1000);
}

/**
 * The HttpRequest a stored request stands for: method, route template, headers (the fingerprint's,
 * and Content-Type: application/json) and the JSON body as canonical bytes; null when it has no JSON body.
 */
export function storedHttpRequest(text: string, tenant: string): HttpRequest | null {
    const doc = JSON.parse(text) as { method: string; route: string; body?: { json?: unknown }; headers?: Record<string, string> };
    if (!doc.body || !('json' in doc.body)) return null;
    const headers = new Map<string, string[]>([['content-type', ['application/json']]]);
    for (const [name, value] of Object.entries(doc.headers ?? {})) headers.set(name.toLowerCase(), [value]);
    const json = doc.body.json;
    return { method: doc.method, template: doc.route, headers, body: Buffer.from(canonicalJson(json as never), 'utf8'), tenant, parsedBody: json };
}

/** The request's headers as the core wants them (lower-case name -> values). */
export function headerMap(raw: string[]): Map<string, string[]> {
    const out = new Map<string, string[]>();
    for (let i = 0; i + 1 < raw.length; i += 2) {
        const n = raw[i].toLowerCase();
        const list = out.get(n);
        if (list) list.push(raw[i + 1]);
        else out.set(n, [raw[i + 1]]);
    }
    return out;
}
