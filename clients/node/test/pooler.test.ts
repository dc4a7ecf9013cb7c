// The client behind PgBouncer in transaction mode: every statement may run on another backend, so
// the client must leave nothing on one. node-pg's queries without a `name` use the unnamed
// statement, which lives until the next Parse inside the same Sync: nothing stays behind.
import { strict as assert } from 'assert';
import { ChildProcess, spawn } from 'child_process';
import { join } from 'path';
import { after, before, it } from 'node:test';

import { CounterFlusher, OutcomeCounters, TaskKey, TaskStore, canonicalRequest, connect, redrive, requestDigest, runTask } from '../src/index';
import type { Client } from 'pg';
import { Scratch, createScratch, requeueReexecute, testDsn } from './scratch';

const CLIENTS = 4;
const KEYS_PER_CLIENT = 8; // each key: a claim that executes, then one that replays: 16 claims per connection
const POOL_SIZE = 2;

let scratch: Scratch;
let admin: Client;
let bouncer: ChildProcess | undefined;
let port = 0;
let setupError: unknown;

// clients/python/tests/pgbouncer.py, the Python tests' PgBouncer, with the same configuration.
async function startBouncer(): Promise<void> {
    const script = join(__dirname, '..', '..', '..', 'python', 'tests', 'pgbouncer.py');
    const child = spawn(process.env.PYTHON || 'python3', [script, '--backend', testDsn(), '--pool-mode', 'transaction', '--pool-size', String(POOL_SIZE)], {
        stdio: ['ignore', 'pipe', 'pipe'],
    });
    bouncer = child;
    let out = '';
    let err = '';
    child.stderr!.on('data', (d) => (err += d));
    port = await new Promise<number>((resolve, reject) => {
        child.stdout!.on('data', (d) => {
            out += d;
            const m = /^port (\d+)\n/.exec(out);
            if (m) resolve(Number(m[1]));
        });
        child.on('exit', (code) => reject(new Error(`PgBouncer did not start (exit ${code}): ${err}`)));
    });
}

function pooledDsn(): string {
    return `host=127.0.0.1 port=${port} dbname=${scratch.name} user=postgres sslmode=disable connect_timeout=10`;
}

before(async () => {
    try {
        scratch = await createScratch();
        admin = await connect(scratch.dsn, 'idem-client pooler test admin');
        await admin.query('CREATE TABLE public.payments (order_id text NOT NULL, amount_cents bigint NOT NULL)');
        await startBouncer();
    } catch (e) {
        setupError = e;
    }
});

after(async () => {
    bouncer?.kill('SIGTERM');
    await admin?.end().catch(() => undefined);
    await scratch?.drop();
});

it('runs workers through PgBouncer in transaction mode and leaves no statement on a pooled backend', async () => {
    if (setupError) throw setupError;
    const counters = new OutcomeCounters();
    const worker = async (index: number): Promise<string[]> => {
        const c = await connect(pooledDsn(), `idem-client pooled worker ${index}`);
        const seen: string[] = [];
        try {
            const store = new TaskStore(c, { schema: 'idem' }, counters);
            for (let i = 0; i < KEYS_PER_CLIENT; ++i) {
                const order = `pool-${index}-${i}`;
                const key = new TaskKey('pool', 'charge', order);
                const digest = requestDigest({ order, amount_cents: 100 + i });
                const charge = async (tx: any) => {
                    await tx.query('INSERT INTO public.payments VALUES ($1, $2)', [order, 100 + i]);
                    return JSON.stringify({ order });
                };
                const first = await runTask(store, key, digest, charge);
                const again = await runTask(store, key, digest, charge);
                seen.push(`${order} ${first.kind} ${again.kind} ${again.resultJson}`);
            }
        } finally {
            await c.end();
        }
        return seen;
    };
    const all = (await Promise.all(Array.from({ length: CLIENTS }, (_, i) => worker(i)))).flat();
    const expected: string[] = [];
    for (let index = 0; index < CLIENTS; ++index)
        for (let i = 0; i < KEYS_PER_CLIENT; ++i) expected.push(`pool-${index}-${i} succeeded replayed {"order": "pool-${index}-${i}"}`);
    assert.deepEqual(all, expected);

    // The counters' flush through the pool too, more than 5 times.
    const flusher = new CounterFlusher(() => connect(pooledDsn(), 'idem-client pooled counters'), counters, 'idem', 3_600_000);
    for (let i = 0; i < 7; ++i) {
        counters.add('pool', 'charge', 'replayed');
        assert.equal(await flusher.flushNow(), true);
    }
    assert.equal(await flusher.stop(), true);

    // What the database holds: one payment and one succeeded record per key.
    const n = CLIENTS * KEYS_PER_CLIENT;
    const payments = await admin.query("SELECT count(*)::int AS n, count(DISTINCT order_id)::int AS keys, sum(amount_cents)::int AS total FROM public.payments WHERE order_id LIKE 'pool-%'");
    assert.deepEqual(payments.rows[0], { n, keys: n, total: CLIENTS * (KEYS_PER_CLIENT * 100 + (KEYS_PER_CLIENT * (KEYS_PER_CLIENT - 1)) / 2) });
    const records = await admin.query("SELECT status, count(*)::int AS n FROM idem.task_idempotency WHERE idempotency_key LIKE 'pool:charge:%' GROUP BY 1");
    assert.deepEqual(records.rows, [{ status: 'succeeded', n }]);
    const replayed = await admin.query("SELECT sum(n)::int AS n FROM idem.idem_counters WHERE tenant = 'pool' AND operation = 'charge' AND outcome = 'replayed'");
    assert.equal(replayed.rows[0].n, n + 7);

    // Nothing left on the pooled backends: POOL_SIZE transactions held open at once, one per server connection.
    const held: Client[] = [];
    try {
        const found = new Map<number, string[]>();
        for (let i = 0; i < POOL_SIZE; ++i) {
            const c = await connect(pooledDsn(), 'idem-client pooled look');
            held.push(c);
            await c.query('BEGIN');
            const r = await c.query("SELECT pg_backend_pid() AS pid, coalesce(array_agg(name::text), '{}') AS names FROM pg_prepared_statements");
            found.set(r.rows[0].pid, r.rows[0].names);
        }
        assert.equal(found.size, POOL_SIZE, 'the held transactions shared a backend');
        for (const [pid, names] of found) assert.deepEqual(names, [], `backend ${pid} keeps prepared statements`);
    } finally {
        for (const c of held) await c.end().catch(() => undefined);
    }
});

it('re-drives requeued keys through PgBouncer by polling (no LISTEN), one effect each', async () => {
    if (setupError) throw setupError;
    const n = 8;
    const store = new TaskStore(admin);
    await store.registerRedrivable('pool', 'redrive');
    const keys: TaskKey[] = [];
    for (let i = 0; i < n; ++i) {
        const key = new TaskKey('pool', 'redrive', `rd-${i}`);
        keys.push(key);
        const out = await runTask(store, key, canonicalRequest({ order: `rd-${i}`, amount_cents: 300 + i }), () => {
            throw new Error('gateway down');
        });
        assert.equal(out.kind, 'will_retry');
        await requeueReexecute(admin, key.str());
    }
    const redriver = redrive(
        () => connect(pooledDsn(), 'idem-client pooled re-driver'),
        'pool',
        'redrive',
        async (tx, ctx) => {
            const request = ctx.request as { order: string; amount_cents: number };
            await tx.query('INSERT INTO public.payments VALUES ($1, $2)', [request.order, request.amount_cents]);
            return JSON.stringify({ order: request.order });
        },
        { worker: 'node-pooled', pooled: true, pollIntervalMs: 200 },
    );
    const deadline = Date.now() + 60_000;
    const open = async () =>
        (await admin.query("SELECT count(*)::int AS n FROM idem.idem_redrive_items WHERE idempotency_key LIKE 'pool:redrive:%' AND state IN ('queued', 'running')")).rows[0].n;
    while ((await open()) > 0) {
        assert.ok(Date.now() < deadline, 'the pooled re-driver did not finish the items in 60 s');
        await new Promise((r) => setTimeout(r, 50));
    }
    const tally = await redriver.stop();
    assert.equal(tally.succeeded, n);
    assert.equal(tally.reconnects, undefined);
    const payments = await admin.query("SELECT order_id, count(*)::int AS n, sum(amount_cents)::int AS total FROM public.payments WHERE order_id LIKE 'rd-%' GROUP BY 1 ORDER BY 1");
    assert.deepEqual(payments.rows, keys.map((_k, i) => ({ order_id: `rd-${i}`, n: 1, total: 300 + i })));
    const items = await admin.query("SELECT state, count(*)::int AS n FROM idem.idem_redrive_items WHERE idempotency_key LIKE 'pool:redrive:%' GROUP BY 1");
    assert.deepEqual(items.rows, [{ state: 'succeeded', n }]);
});
