// Re-drivers (schema v25, docs/redrive.md): a worker that re-executes the keys an operator
// requeued with "re-execute", from the request their first claim stored. The same loop, SQL and
// outcome mapping as clients/python/idem_client/redriver.py and the C++ idem::Redriver:
//
//     const r = redrive(dsn, 'tenant-7', 'charge', charge, { worker: 'charge-1' });
//     ...
//     await r.stop();
//
// takes the operation's queued items a batch at a time (idem_redrive_take, SKIP LOCKED in the
// database: re-drivers share the work), runs each through the ordinary runTask with the stored
// request's digest and the SAME key (so a re-execution racing the original client's own retry still
// has one effect), and records the item's outcome (idem_redrive_finish). It reports itself online
// (idem_redriver_seen). Between batches it waits on LISTEN idem_redrive over a direct connection,
// or polls when the connection goes through a pooler (pooled: true; PgBouncer in transaction mode
// drops a session's LISTEN). A broken connection is made again with a growing pause; stop() ends
// the loop after the item in hand and puts the rest of its batch back.
import { hostname } from 'os';
import type { Client } from 'pg';

import type { JsonValue } from './canonicaljson';
import { connect } from './connect';
import type { OutcomeCounters } from './counters';
import { DatabaseUnavailableError, IdemError, NotPrimaryError, isConnectionError, translateError } from './errors';
import { TaskKey } from './key';
import { runTask } from './runner';
import type { DownstreamCall, RecordFunction, RunOutcomeKind, TaskContext } from './runner';
import { TaskStore, limits, quoteSchema } from './store';
import type { Queryable, StoreOptions } from './store';

export const redriveChannel = 'idem_redrive';
const maxBatch = 100; // idem_redrive_take's p_limit bound
const seenEveryMs = 5000; // online means seen within 30 s; the function writes at most every 5 s
const maxReconnectPauseMs = 5000;

/** idem_redrive_finish's outcome. */
export type FinishOutcome = 'succeeded' | 'failed' | 'conflict' | 'gone' | 'later';

/** The finish outcome of a run: in progress, retry later, paused, will retry and lost ownership are `later`. */
export function finishOutcome(kind: RunOutcomeKind): FinishOutcome {
    switch (kind) {
        case 'succeeded':
        case 'replayed':
            return 'succeeded';
        case 'failed':
            return 'failed';
        case 'conflict':
            return 'conflict';
        default:
            return 'later';
    }
}

export interface RedriveItem {
    /** bigint, as text. */
    itemId: string;
    key: string;
    /** The stored canonical JSON text. */
    request: string;
    requestHash: string;
    jobId: string | null;
}

/** What a re-driven task sees: the TaskContext plus the stored request (without the fields its digest ignores). */
export interface RedriveContext extends TaskContext {
    readonly request: JsonValue;
    readonly itemId: string;
}

export type RedriveTask = (tx: Queryable, ctx: RedriveContext) => Promise<string> | string;
export interface RedriveCallRecord {
    call: (ctx: RedriveContext) => Promise<string> | string;
    record: (tx: Queryable, ctx: RedriveContext, downstreamAnswer: string) => Promise<string> | string;
}

/** Runs one item on the re-driver's connection: the finish outcome and its detail. */
export type RunItem = (client: Client, item: RedriveItem) => Promise<[FinishOutcome, string | null]>;

export interface RedriverOptions {
    /** This re-driver's name (default host:pid), as the console lists it. */
    worker?: string;
    version?: string;
    schema?: string;
    /** Items per take, 1 to 100. Default 10. */
    batch?: number;
    /** How long a taken item is this re-driver's; then another may take it. Default 60 000 ms. */
    itemLeaseMs?: number;
    /** An item put back (later) is taken again when its key's lease or backoff ends, but after at most this long, 2000 to 3 600 000 ms (schema v27). Default 5000. */
    laterWaitMs?: number;
    /** The connection goes through a pooler: poll instead of LISTEN. Default false. */
    pooled?: boolean;
    /** Polling interval when pooled, 50 to 2000 ms. Default 2000. */
    pollIntervalMs?: number;
    /** Longest wait for a NOTIFY before taking anyway (items put back later send none). Default 5000. */
    listenIntervalMs?: number;
    /** Register the operation first (idem_redrive_register) with this bound and redact list; false: it must be registered. */
    register?: false | { maxRequestBytes?: number; redact?: readonly string[] };
    /** Called with each new connection, after registering, before the first take. */
    onOpen?: (client: Client) => Promise<void> | void;
}

function defaultWorker(): string {
    return `${hostname().slice(0, 100)}:${process.pid}`;
}

/** The loop for one (tenant, operation); redrive() and the HTTP middleware's redriver() make one. */
export class Redriver {
    readonly worker: string;
    readonly tally: Record<string, number> = {};
    private client: Client | null = null;
    private stopping = false;
    private woken = false;
    private putBack = false;
    private wake: (() => void) | null = null;
    private seenAt = 0;
    private running: Promise<Record<string, number>> | null = null;
    private readonly q: string;
    private readonly batch: number;
    private readonly itemLeaseMs: number;
    private readonly laterWaitMs: number;
    private readonly pollMs: number;
    private readonly listenMs: number;

    constructor(
        private readonly connectTo: string | (() => Promise<Client>),
        readonly tenant: string,
        readonly operation: string,
        private readonly runItem: RunItem,
        private readonly options: RedriverOptions = {},
    ) {
        new TaskKey(tenant, operation, 'x'); // a bad tenant or operation fails here
        this.worker = (options.worker ?? defaultWorker()).slice(0, 200);
        this.q = quoteSchema(options.schema ?? 'idem');
        this.batch = options.batch ?? 10;
        this.itemLeaseMs = options.itemLeaseMs ?? 60_000;
        this.laterWaitMs = options.laterWaitMs ?? 5000;
        this.pollMs = options.pollIntervalMs ?? 2000;
        this.listenMs = Math.max(this.pollMs, options.listenIntervalMs ?? 5000);
        if (!Number.isSafeInteger(this.batch) || this.batch < 1 || this.batch > maxBatch) throw new RangeError(`batch must be 1 to ${maxBatch}`);
        if (!Number.isSafeInteger(this.itemLeaseMs) || this.itemLeaseMs < 1000 || this.itemLeaseMs > 3_600_000)
            throw new RangeError('itemLeaseMs must be 1000 to 3600000 (1 h)');
        if (!Number.isSafeInteger(this.laterWaitMs) || this.laterWaitMs < 2000 || this.laterWaitMs > 3_600_000)
            throw new RangeError('laterWaitMs must be 2000 to 3600000 (1 h)');
        if (!(this.pollMs >= 50 && this.pollMs <= 2000)) throw new RangeError('pollIntervalMs must be 50 to 2000 (a pooled re-driver polls at least every 2 s)');
    }

    /** Starts the loop (once); the promise resolves with the tally after stop(). */
    start(): Promise<Record<string, number>> {
        if (!this.running) this.running = this.run();
        return this.running;
    }

    /** Ends the loop after the item in hand; resolves with the tally. */
    async stop(): Promise<Record<string, number>> {
        this.stopping = true;
        this.wake?.();
        return this.running ?? this.tally;
    }

    private async run(): Promise<Record<string, number>> {
        let pause = 100;
        while (!this.stopping) {
            try {
                if (!this.client) await this.open();
                const items = await this.take();
                if (items.length === 0) {
                    // An item put back (later) sends no NOTIFY: while one may be due soon, poll.
                    await this.waitForWork(this.options.pooled || this.putBack ? this.pollMs : this.listenMs);
                    this.putBack = false;
                    continue;
                }
                for (let i = 0; i < items.length; ++i) {
                    if (this.stopping) {
                        for (const rest of items.slice(i)) await this.finish(rest, 'later', 'the re-driver stopped');
                        break;
                    }
                    await this.seenIfDue();
                    const [outcome, detail] = await this.runOne(items[i]);
                    await this.finish(items[i], outcome, detail);
                }
                pause = 100;
            } catch (e) {
                const lost = e instanceof DatabaseUnavailableError || e instanceof NotPrimaryError || isConnectionError(e);
                // A refusal (not registered, no right, not online yet) is tried again as a lost connection is.
                const refused = e instanceof IdemError || typeof (e as { code?: unknown })?.code === 'string';
                if (!lost && !refused) {
                    await this.close();
                    throw e;
                }
                // Items taken and not finished come back when their lease ends.
                this.count(lost ? 'reconnects' : 'errors');
                await this.close();
                await this.pause(pause);
                pause = Math.min(pause * 2, maxReconnectPauseMs);
            }
        }
        await this.close();
        return { ...this.tally };
    }

    private async open(): Promise<void> {
        const client =
            typeof this.connectTo === 'string'
                ? await connect(this.connectTo, `idem re-driver ${this.operation.slice(0, 40)}`)
                : await this.connectTo();
        this.client = client;
        client.on('error', () => undefined);
        const register = this.options.register;
        if (register) {
            const store = new TaskStore(client, { schema: this.options.schema });
            await store.registerRedrivable(this.tenant, this.operation, register.maxRequestBytes, register.redact);
        }
        if (!this.options.pooled) {
            client.on('notification', (n) => {
                if (n.channel === redriveChannel && n.payload === `${this.tenant}:${this.operation}`) {
                    this.woken = true;
                    this.wake?.();
                }
            });
            await this.call(`LISTEN ${redriveChannel}`, []);
        }
        this.seenAt = 0;
        await this.seenIfDue();
        await this.options.onOpen?.(client);
    }

    private async close(): Promise<void> {
        const c = this.client;
        this.client = null;
        if (c) await c.end().catch(() => undefined);
    }

    private async call(text: string, values: unknown[]): Promise<any[]> {
        if (!this.client) throw new DatabaseUnavailableError('the re-driver has no connection');
        try {
            return (await this.client.query(text, values)).rows;
        } catch (e) {
            throw translateError(e);
        }
    }

    private async seenIfDue(): Promise<void> {
        if (Date.now() - this.seenAt < seenEveryMs) return;
        await this.call(`SELECT * FROM ${this.q}.idem_redriver_seen($1, $2, $3, $4)`, [
            this.tenant, this.operation, this.worker, (this.options.version ?? '0.1.0').slice(0, 100),
        ]);
        this.seenAt = Date.now();
    }

    private async take(): Promise<RedriveItem[]> {
        await this.seenIfDue();
        this.woken = false;
        const rows = await this.call(
            'SELECT item_id::text AS item_id, idempotency_key, request, request_hash, job_id::text AS job_id' +
                ` FROM ${this.q}.idem_redrive_take($1, $2, $3, $4, $5)`,
            [this.tenant, this.operation, this.worker, this.batch, String(this.itemLeaseMs)],
        );
        return rows.map((r) => ({ itemId: r.item_id, key: r.idempotency_key, request: r.request, requestHash: r.request_hash, jobId: r.job_id }));
    }

    private async finish(item: RedriveItem, outcome: FinishOutcome, detail: string | null): Promise<void> {
        const rows = await this.call(`SELECT outcome FROM ${this.q}.idem_redrive_finish($1, $2, $3, $4, $5)`, [
            item.itemId, this.worker, outcome, detail === null ? null : detail.slice(0, 2000), this.laterWaitMs,
        ]);
        // stale: the item moved on meanwhile (its lease ran out and another re-driver took it)
        this.count(rows[0]?.outcome === 'stale' ? 'stale' : outcome);
        if (outcome === 'later') this.putBack = true;
    }

    private async runOne(item: RedriveItem): Promise<[FinishOutcome, string | null]> {
        try {
            return await this.runItem(this.client!, item);
        } catch (e) {
            if (e instanceof DatabaseUnavailableError || e instanceof NotPrimaryError || isConnectionError(e)) throw e;
            if (e instanceof IdemError || e instanceof SyntaxError || e instanceof RangeError || (e as { code?: unknown }).code)
                // The stored request cannot run (refused by the database, not JSON, a bad key): no later try does better.
                return ['failed', `${(e as Error).name}: ${(e as Error).message}`];
            throw e;
        }
    }

    // Until a NOTIFY for this operation (direct connection), the stop, or ms passed.
    private async waitForWork(ms: number): Promise<void> {
        if (this.woken || this.stopping) return;
        const deadline = Date.now() + ms;
        while (!this.woken && !this.stopping && Date.now() < deadline) {
            await this.seenIfDue();
            await this.pause(Math.min(1000, deadline - Date.now()));
        }
    }

    private pause(ms: number): Promise<void> {
        return new Promise<void>((resolve) => {
            const t = setTimeout(done, ms);
            function done(): void {
                clearTimeout(t);
                resolve();
            }
            this.wake = () => {
                this.wake = null;
                done();
            };
        });
    }

    private count(what: string): void {
        this.tally[what] = (this.tally[what] ?? 0) + 1;
    }
}

export interface RedriveOptions extends RedriverOptions {
    storeOptions?: StoreOptions;
    counters?: OutcomeCounters;
    /** The stored request's bound registered for the operation. Default 65 536. */
    maxRequestBytes?: number;
    redact?: readonly string[];
}

/**
 * Re-drives the operation's requeued keys with runTask until stop() (see the file's head). task(tx,
 * ctx), or { call, record } as runTask takes them; ctx.request is the stored request. Registers the
 * operation as re-drivable first (maxRequestBytes, redact) unless options.register is false. Returns
 * the started Redriver.
 */
export function redrive(
    connectTo: string | (() => Promise<Client>),
    tenant: string,
    operation: string,
    handler: RedriveTask | RedriveCallRecord,
    options: RedriveOptions = {},
): Redriver {
    const maxRequestBytes = options.maxRequestBytes ?? limits.defaultStoredRequestBytes;
    const runItem: RunItem = async (client, item) => {
        const key = TaskKey.parse(item.key);
        const request = JSON.parse(item.request) as JsonValue;
        const store = new TaskStore(client, { schema: options.schema, ...(options.storeOptions ?? {}) }, options.counters);
        store.redrivable.set(`${tenant}:${operation}`, maxRequestBytes);
        const withRequest = (ctx: TaskContext): RedriveContext => Object.freeze({ ...ctx, request, itemId: item.itemId });
        const canonical = { text: item.request, digest: item.requestHash };
        const out =
            typeof handler === 'function'
                ? await runTask(store, key, canonical, (tx, ctx) => handler(tx, withRequest(ctx)))
                : await runTask(
                      store,
                      key,
                      canonical,
                      ((ctx) => handler.call(withRequest(ctx))) as DownstreamCall,
                      ((tx, ctx, answer) => handler.record(tx, withRequest(ctx), answer)) as RecordFunction,
                  );
        return [finishOutcome(out.kind), out.error || null];
    };
    const register = options.register === false ? false : { maxRequestBytes, redact: options.redact ?? [] };
    const r = new Redriver(connectTo, tenant, operation, runItem, { ...options, register });
    void r.start().catch(() => undefined);
    return r;
}
