// Re-drivers (schema v25) in TypeScript: requeued keys re-executed from their stored request with
// one effect each while the original client retries too; a request over the operation's bound
// refused with nothing stored; a re-driver SIGKILLed mid-batch whose items another finishes. (Through
// PgBouncer: pooler.test.ts; the bytes the three languages store: clients/python/tests/test_redrive.py.)
import { strict as assert } from 'assert';
import { spawn } from 'child_process';
import { join } from 'path';
import { after, before, it } from 'node:test';

import { InvalidArgumentError, RefusedError, TaskKey, TaskStore, canonicalRequest, connect, redrive, requestDigest, runTask } from '../src/index';
import type { Queryable, RedriveContext } from '../src/index';
import type { Client } from 'pg';
import { Scratch, createScratch, requeueReexecute as requeueAs } from './scratch';

let scratch: Scratch;
let admin: Client;
let setupError: unknown;

before(async () => {
    try {
        scratch = await createScratch();
        admin = await connect(scratch.dsn, 'idem-client redrive test admin');
        await admin.query('CREATE TABLE public.payments (order_id text NOT NULL, amount_cents bigint NOT NULL)');
    } catch (e) {
        setupError = e;
    }
});

after(async () => {
    await admin?.end().catch(() => undefined);
    await scratch?.drop();
});

const requestOf = (i: number) => canonicalRequest({ order: `o-${i}`, amount_cents: 100 + i, meta: { trace_id: String(Math.random()) } }, ['meta.trace_id']);

async function pay(tx: Queryable, ctx: { key: TaskKey; request?: unknown }): Promise<string> {
    const amount = (ctx.request as { amount_cents?: number } | undefined)?.amount_cents ?? -1;
    await tx.query('INSERT INTO public.payments VALUES ($1, $2)', [ctx.key.businessId, amount]);
    return JSON.stringify({ order: ctx.key.businessId });
}

async function requeueReexecute(key: TaskKey): Promise<void> {
    await requeueAs(admin, key.str());
}

async function waitFor(what: string, check: () => Promise<boolean>, ms = 60_000): Promise<void> {
    const deadline = Date.now() + ms;
    while (!(await check())) {
        assert.ok(Date.now() < deadline, `waited ${ms} ms for ${what}`);
        await new Promise((r) => setTimeout(r, 50));
    }
}

async function openItems(pattern: string): Promise<number> {
    const r = await admin.query(
        "SELECT count(*)::int AS n FROM idem.idem_redrive_items WHERE idempotency_key LIKE $1 AND state IN ('queued', 'running')",
        [pattern],
    );
    return r.rows[0].n;
}

it('re-executes requeued keys once while the original client retries them', async () => {
    if (setupError) throw setupError;
    const n = 20;
    const store = new TaskStore(admin);
    assert.ok(['registered', 'unchanged'].includes(await store.registerRedrivable('nd', 'charge')));
    const keys = Array.from({ length: n }, (_, i) => new TaskKey('nd', 'charge', `o-${i}`));
    for (let i = 0; i < n; ++i) {
        const out = await runTask(store, keys[i], requestOf(i), () => {
            throw new Error('gateway down');
        });
        assert.equal(out.kind, 'will_retry');
        await requeueReexecute(keys[i]);
    }
    const redrivers = [0, 1].map((w) =>
        // Short leases: an item that met the client's run comes back after that run's lease.
        redrive(scratch.dsn, 'nd', 'charge', (tx, ctx: RedriveContext) => pay(tx, ctx), { worker: `nd-${w}`, batch: 4, storeOptions: { leaseMs: 3000 } }),
    );
    // The original client, back, retrying each key with the same request.
    const client = await connect(scratch.dsn, 'idem-client original client');
    try {
        const own = new TaskStore(client, { leaseMs: 3000 });
        await own.registerRedrivable('nd', 'charge');
        for (let i = 0; i < n; ++i) {
            for (;;) {
                const out = await runTask(own, keys[i], requestOf(i), (tx, ctx) => pay(tx, ctx));
                if (out.kind === 'succeeded' || out.kind === 'replayed') break;
                assert.ok(out.kind === 'in_progress' || out.kind === 'retry_later', out.kind);
                await new Promise((r) => setTimeout(r, 20));
            }
        }
    } finally {
        await client.end();
    }
    await waitFor('the re-drive items to end', async () => (await openItems('nd:charge:%')) === 0);
    const tallies = await Promise.all(redrivers.map((r) => r.stop()));
    assert.equal(tallies.reduce((s, t) => s + (t.succeeded ?? 0), 0), n);
    const payments = await admin.query("SELECT order_id, count(*)::int AS n FROM public.payments WHERE order_id LIKE 'o-%' GROUP BY 1");
    assert.equal(payments.rows.length, n);
    assert.ok(payments.rows.every((r) => r.n === 1), JSON.stringify(payments.rows));
    const items = await admin.query("SELECT state, count(*)::int AS n FROM idem.idem_redrive_items WHERE idempotency_key LIKE 'nd:charge:%' GROUP BY 1");
    assert.deepEqual(items.rows, [{ state: 'succeeded', n }]);
    const stored = await admin.query('SELECT request FROM idem.idem_stored_requests WHERE idempotency_key = $1', [keys[3].str()]);
    assert.equal(stored.rows[0].request, requestOf(3).text);
});

it('refuses a request over the operation bound and stores nothing', async () => {
    if (setupError) throw setupError;
    const store = new TaskStore(admin);
    await store.registerRedrivable('nd', 'bounded', 200);
    const key = new TaskKey('nd', 'bounded', 'big');
    const big = canonicalRequest({ order: 'big', note: 'x'.repeat(300) });
    const absent = async () => {
        const r = await admin.query(
            'SELECT (SELECT count(*)::int FROM idem.task_idempotency WHERE idempotency_key = $1) AS rows,' +
                ' (SELECT count(*)::int FROM idem.idem_stored_requests WHERE idempotency_key = $1) AS stored',
            [key.str()],
        );
        assert.deepEqual(r.rows[0], { rows: 0, stored: 0 });
    };
    await assert.rejects(store.claim(key, big), (e: unknown) => e instanceof InvalidArgumentError && /more than the 200 bytes/.test((e as Error).message));
    await absent();
    await assert.rejects(new TaskStore(admin).claim(key, big), InvalidArgumentError); // the database's own check
    await absent();
    await assert.rejects(store.claim(key, requestDigest({ order: 'big' })), /re-drivable/);
    await absent();
    // A claim that stores its request, of an operation nobody registered: the arguments are fine,
    // the state refuses it (ID004), and nothing is claimed or stored.
    const unregistered = new TaskKey('nd', 'unregistered', 'u-1');
    await assert.rejects(
        new TaskStore(admin).claim(unregistered, canonicalRequest({ order: 'u-1' })),
        (e: unknown) =>
            e instanceof RefusedError && !(e instanceof InvalidArgumentError) && e.sqlstate === 'ID004' &&
            /is not registered as re-drivable/.test((e as Error).message),
    );
    const rows = await admin.query('SELECT count(*)::int AS n FROM idem.task_idempotency WHERE idempotency_key = $1', [unregistered.str()]);
    assert.equal(rows.rows[0].n, 0);
});

it('leaves the items of a re-driver killed mid-batch to another, one effect each', async () => {
    if (setupError) throw setupError;
    const n = 10;
    const store = new TaskStore(admin);
    await store.registerRedrivable('nd', 'refund');
    const keys = Array.from({ length: n }, (_, i) => new TaskKey('nd', 'refund', `k-${i}`));
    for (let i = 0; i < n; ++i) {
        await runTask(store, keys[i], canonicalRequest({ order: `k-${i}`, amount_cents: 500 + i }), () => {
            throw new Error('gateway down');
        });
        await requeueReexecute(keys[i]);
    }
    const paid = async () => (await admin.query("SELECT count(*)::int AS n FROM public.payments WHERE order_id LIKE 'k-%'")).rows[0].n as number;
    const child = spawn(process.execPath, [join(__dirname, 'redrive-child.js'), scratch.dsn, 'nd', 'refund', '2000', '400'], { stdio: 'ignore' });
    const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
    try {
        await waitFor("the first re-driver's effects", async () => (await paid()) >= 3);
    } finally {
        child.kill('SIGKILL');
        await exited;
    }
    assert.ok((await paid()) < n, 'the killed re-driver had finished everything: nothing was left mid-batch');
    const running = await admin.query("SELECT count(*)::int AS n FROM idem.idem_redrive_items WHERE idempotency_key LIKE 'nd:refund:%' AND state = 'running'");
    assert.ok(running.rows[0].n > 0, 'the killed re-driver held no items');
    const after = redrive(scratch.dsn, 'nd', 'refund', (tx, ctx) => pay(tx, ctx), { worker: 'nd-after', batch: 20, itemLeaseMs: 2000, storeOptions: { leaseMs: 2000 } });
    try {
        await waitFor('the second re-driver to finish the items', async () => (await openItems('nd:refund:%')) === 0);
    } finally {
        await after.stop();
    }
    const payments = await admin.query("SELECT order_id, count(*)::int AS n FROM public.payments WHERE order_id LIKE 'k-%' GROUP BY 1 ORDER BY 1");
    assert.deepEqual(payments.rows, keys.map((k) => ({ order_id: k.businessId, n: 1 })).sort((a, b) => a.order_id.localeCompare(b.order_id)));
    const items = await admin.query("SELECT state, count(*)::int AS n FROM idem.idem_redrive_items WHERE idempotency_key LIKE 'nd:refund:%' GROUP BY 1");
    assert.deepEqual(items.rows, [{ state: 'succeeded', n }]);
});
