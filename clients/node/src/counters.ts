// Per-minute outcome counts aggregated in the process and written in one add_counters() call per
// flush, as core/counters.cpp: counting on the claim path would make every claim of an operation
// update the same counter row; here a claim only increments a map entry.
import { InvalidArgumentError } from './errors';
import type { Queryable } from './store';
import { quoteSchema } from './store';

/** Outcome names as stored in idem_counters.outcome. */
export const outcomes = Object.freeze([
    'acquired', 'reacquired_lease', 'reacquired_retry', 'replayed', 'in_progress', 'conflict', 'retry_later',
    'rejected_failed', 'stale_token', 'succeeded', 'failed_retryable', 'failed_permanent', 'failed_unknown',
    'exhausted', 'retry_failed', 'paused',
] as const);
export type Outcome = (typeof outcomes)[number];

const known = new Set<string>(outcomes);

interface Entry {
    minute: number;
    tenant: string;
    operation: string;
    outcome: string;
    n: number;
}

function compareBytes(a: string, b: string): number {
    return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
}

/** The database refused the batch as out of bounds: it was dropped (it would be refused every time). */
export class CounterBatchRefused extends InvalidArgumentError {}

export class OutcomeCounters {
    static readonly maxNameBytes = 64;
    static readonly maxAdd = 1_000_000_000_000;
    static readonly maxBatchRows = 10_000;
    static readonly maxAgeMinutes = 30 * 24 * 60;

    private pending = new Map<string, Entry>();
    private sendRetryFailedFlag = true;

    /** Throws InvalidArgumentError for an unknown outcome, an empty or over-long name, or n outside 0 .. maxAdd. */
    add(tenant: string, operation: string, outcome: Outcome | string, n = 1, now: number = Date.now()): void {
        if (!known.has(outcome)) throw new InvalidArgumentError(`unknown outcome counter '${outcome}'`);
        const tb = Buffer.byteLength(String(tenant), 'utf8');
        const ob = Buffer.byteLength(String(operation), 'utf8');
        if (tb < 1 || tb > OutcomeCounters.maxNameBytes || ob < 1 || ob > OutcomeCounters.maxNameBytes)
            throw new InvalidArgumentError(
                `counter tenant and operation must be 1 to ${OutcomeCounters.maxNameBytes} bytes`,
            );
        if (!Number.isSafeInteger(n) || n < 0 || n > OutcomeCounters.maxAdd)
            throw new InvalidArgumentError(`an outcome count must be 0 to ${OutcomeCounters.maxAdd}`);
        const minute = Math.floor(now / 60_000);
        const id = `${minute}\u0000${tenant}\u0000${operation}\u0000${outcome}`;
        const e = this.pending.get(id);
        if (e) e.n += n;
        else this.pending.set(id, { minute, tenant, operation, outcome, n });
    }

    pendingRows(): number {
        return this.pending.size;
    }

    /** False once a schema older than v10 refused the retry_failed outcome. */
    get sendsRetryFailed(): boolean {
        return this.sendRetryFailedFlag;
    }

    private restore(batch: Entry[]): void {
        for (const b of batch) {
            const id = `${b.minute}\u0000${b.tenant}\u0000${b.operation}\u0000${b.outcome}`;
            const e = this.pending.get(id);
            if (e) e.n += b.n;
            else this.pending.set(id, { ...b });
        }
    }

    /**
     * Writes and clears what has accumulated, in one transaction on `client` (which must not be in
     * a transaction of its own). On failure the counts are kept for the next try, except a batch the
     * database refuses as out of bounds (ID003): it is dropped and CounterBatchRefused thrown. A
     * schema older than v10 refuses retry_failed: the batch goes again without it, and later flushes
     * leave it out. Returns the number of counter rows flushed.
     */
    async flush(client: Queryable, schema = 'idem', now: number = Date.now()): Promise<number> {
        const fn = `${quoteSchema(schema)}.add_counters`;
        const batch = [...this.pending.values()];
        this.pending = new Map();
        if (batch.length === 0) return 0;
        // Key order, so two flushers lock counter rows in the same order and cannot deadlock.
        batch.sort(
            (a, b) =>
                a.minute - b.minute ||
                compareBytes(a.tenant, b.tenant) ||
                compareBytes(a.operation, b.operation) ||
                compareBytes(a.outcome, b.outcome),
        );
        const oldest = Math.floor(now / 60_000) - OutcomeCounters.maxAgeMinutes;
        let hasRetryFailed = false;
        const chunksOf = (withRetryFailed: boolean) => {
            const chunks: object[][] = [];
            for (const e of batch) {
                if (e.minute < oldest) continue;
                if (e.outcome === 'retry_failed') {
                    hasRetryFailed = true;
                    if (!withRetryFailed) continue;
                }
                if (chunks.length === 0 || chunks[chunks.length - 1].length >= OutcomeCounters.maxBatchRows) chunks.push([]);
                chunks[chunks.length - 1].push({ m: e.minute * 60, t: e.tenant, o: e.operation, w: e.outcome, n: e.n });
            }
            return chunks;
        };
        const send = async (chunks: object[][]) => {
            await client.query('BEGIN');
            try {
                for (const rows of chunks) await client.query(`SELECT ${fn}($1::jsonb)`, [JSON.stringify(rows)]);
                await client.query('COMMIT');
            } catch (e) {
                try {
                    await client.query('ROLLBACK');
                } catch {
                    // connection gone
                }
                throw e;
            }
        };
        const refused = (e: unknown) => (e as { code?: unknown }).code === 'ID003';
        try {
            try {
                await send(chunksOf(this.sendRetryFailedFlag));
            } catch (e) {
                if (!refused(e) || !hasRetryFailed || !this.sendRetryFailedFlag) throw e;
                // Refused: perhaps only for retry_failed, which schemas before v10 do not know.
                await send(chunksOf(false));
                this.sendRetryFailedFlag = false;
            }
        } catch (e) {
            if (refused(e)) throw new CounterBatchRefused(`counter batch refused, dropped: ${(e as Error).message}`, 'ID003');
            this.restore(batch);
            throw e;
        }
        return batch.length;
    }
}

/**
 * Flushes an OutcomeCounters every interval on a connection of its own, made by `connect` (and made
 * again after a failure), and once more at stop(). A failed flush is retried at the next interval:
 * a gap in the charts is better than a worker that stops.
 */
export class CounterFlusher {
    private timer: NodeJS.Timeout | undefined;
    private client: (Queryable & { end(): Promise<void> }) | undefined;
    private running: Promise<boolean> = Promise.resolve(true);

    constructor(
        private readonly connect: () => Promise<Queryable & { end(): Promise<void> }>,
        private readonly counters: OutcomeCounters,
        private readonly schema = 'idem',
        intervalMs = 1000,
    ) {
        quoteSchema(schema);
        this.timer = setInterval(() => void this.flushNow(), intervalMs);
        this.timer.unref();
    }

    /** Flushes now (after any flush under way); true when everything pending was written. */
    flushNow(): Promise<boolean> {
        this.running = this.running.then(() => this.flushOnce());
        return this.running;
    }

    private async flushOnce(): Promise<boolean> {
        try {
            if (!this.client) this.client = await this.connect();
            await this.counters.flush(this.client, this.schema);
            return true;
        } catch (e) {
            if (e instanceof CounterBatchRefused) return false; // dropped; the connection is fine
            const c = this.client;
            this.client = undefined;
            if (c) await c.end().catch(() => undefined);
            return false;
        }
    }

    /** Stops the timer, flushes once more and closes the connection. */
    async stop(): Promise<boolean> {
        if (this.timer) clearInterval(this.timer);
        this.timer = undefined;
        const ok = await this.flushNow();
        const c = this.client;
        this.client = undefined;
        if (c) await c.end().catch(() => undefined);
        return ok;
    }
}
