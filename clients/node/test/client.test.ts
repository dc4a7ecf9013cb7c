import { strict as assert } from 'assert';
import { ChildProcess, spawn } from 'child_process';
import { join } from 'path';
import { after, before, describe, it } from 'node:test';

import {
    CounterFlusher, DatabaseUnavailableError, InvalidArgumentError, LostOwnershipError, NoRecordError, NotPrimaryError,
    OutcomeCounters, TaskFailure, TaskKey, TaskStore, connect, connectionBroken, requestDigest, runTask,
} from '../src/index';
import type { Client } from 'pg';
import { Scratch, createScratch } from './scratch';

let scratch: Scratch;
let db: Client; // the worker's connection
let admin: Client; // to look at rows and to pause
const schema = 'idem';

async function row(key: TaskKey): Promise<Record<string, any> | undefined> {
    const r = await admin.query(
        'SELECT status, attempts, error_class, error_message, result_json::text AS result, owner_token::text AS owner_token FROM idem.task_idempotency WHERE idempotency_key = $1',
        [key.str()],
    );
    return r.rows[0];
}

async function effects(key: TaskKey): Promise<number> {
    const r = await admin.query('SELECT count(*)::int AS n FROM public.effects WHERE k = $1', [key.str()]);
    return r.rows[0].n;
}

let setupError: unknown;

before(async () => {
    try {
        await setUp();
    } catch (e) {
        setupError = e; // reported as a failing test below, so the run counts it as a failure
    }
});

it('reaches the test database (IDEM_TEST_DSN) and migrates a scratch database (IDEMCTL_PATH)', () => {
    if (setupError) throw setupError;
});

async function setUp(): Promise<void> {
    scratch = await createScratch();
    db = await connect(scratch.dsn, 'idem-client test worker');
    admin = await connect(scratch.dsn, 'idem-client test admin');
    await admin.query('CREATE TABLE public.effects (k text NOT NULL, note text)');
    await admin.query(
        'CREATE TABLE idem.verify_effects (id bigserial PRIMARY KEY, idempotency_key text NOT NULL, note text, at timestamptz DEFAULT now())',
    );
}

after(async () => {
    await db?.end().catch(() => undefined);
    await admin?.end().catch(() => undefined);
    await scratch?.drop();
});

describe('TaskKey', () => {
    it('builds and parses tenant:operation:business_id', () => {
        const k = TaskKey.parse('t-7:charge:order:123');
        assert.equal(k.tenant, 't-7');
        assert.equal(k.operation, 'charge');
        assert.equal(k.businessId, 'order:123');
        assert.equal(k.str(), 't-7:charge:order:123');
        assert.ok(k.equals(new TaskKey('t-7', 'charge', 'order:123')));
    });
    it('refuses what core/key.cpp refuses', () => {
        for (const bad of [
            () => TaskKey.parse('nocolon'),
            () => TaskKey.parse('a:b'),
            () => new TaskKey('', 'op', 'id'),
            () => new TaskKey('a b', 'op', 'id'),
            () => new TaskKey('tén', 'op', 'id'),
            () => new TaskKey('t', 'o:p', 'id'),
            () => new TaskKey('t'.repeat(65), 'op', 'id'),
            () => new TaskKey('t', 'op', ''),
            () => new TaskKey('t', 'op', 'x'.repeat(513)),
            () => new TaskKey('t', 'op', 'é'.repeat(257)), // 514 bytes
            () => new TaskKey('t', 'op', 'a\0b'),
            () => new TaskKey('t', 'op', 'a\ud800'),
        ])
            assert.throws(bad, InvalidArgumentError);
        assert.equal(new TaskKey('t'.repeat(64), 'op', 'é'.repeat(256)).businessId.length, 256);
    });
});

describe('the protocol', () => {
    it('claim, fence, complete, then replay and conflict', async () => {
        const store = new TaskStore(db, { schema });
        const key = new TaskKey('shop', 'charge', 'order-1');
        const digest = requestDigest({ order: 'order-1', amount_cents: 1250 });
        const c = await store.claim(key, digest);
        assert.equal(c.decision, 'acquired');
        assert.equal(c.detail, 'new');
        assert.ok(c.mayExecute);
        assert.equal(c.attempts, 1);
        await db.query('BEGIN');
        await store.fence(db, key, c.token);
        await db.query('INSERT INTO public.effects VALUES ($1, $2)', [key.str(), 'charged']);
        await store.complete(db, key, c.token, '{"receipt":"r-1"}');
        await db.query('COMMIT');
        assert.deepEqual(await row(key), {
            status: 'succeeded', attempts: 1, error_class: null, error_message: null, result: '{"receipt": "r-1"}', owner_token: null,
        });
        const again = await store.claim(key, digest);
        assert.equal(again.decision, 'replay');
        assert.equal(again.resultJson, '{"receipt": "r-1"}');
        assert.equal(again.token, '');
        const other = await store.claim(key, requestDigest({ order: 'order-1', amount_cents: 999 }));
        assert.equal(other.decision, 'conflict');
        assert.equal(await effects(key), 1);
    });

    it('typed errors: ID001, ID002, ID003, and refusals before any I/O', async () => {
        const store = new TaskStore(db, { schema });
        const key = new TaskKey('shop', 'charge', 'order-2');
        const c = await store.claim(key, 'v1:abc');
        await db.query('BEGIN');
        await assert.rejects(store.fence(db, key, TaskStore.newToken()), (e: any) => e instanceof LostOwnershipError && e.sqlstate === 'ID001');
        await db.query('ROLLBACK');
        await assert.rejects(store.heartbeat(key, TaskStore.newToken()), LostOwnershipError);
        await db.query('BEGIN');
        await assert.rejects(
            store.fence(db, new TaskKey('shop', 'charge', 'never-claimed'), c.token),
            (e: any) => e instanceof NoRecordError && e instanceof LostOwnershipError && e.sqlstate === 'ID002',
        );
        await db.query('ROLLBACK');
        // ID003 from the server: a lease the function refuses (sent past the store's own check).
        await assert.rejects(
            new TaskStore(db, { schema, maxResultBytes: 10 }).complete(db, key, c.token, '{"long":"result"}'),
            (e: any) => e instanceof InvalidArgumentError && e.sqlstate === undefined,
        );
        const raw = db.query(`SELECT * FROM idem.claim($1, $2, $3::uuid, 0)`, [key.str(), 'v1:x', TaskStore.newToken()]);
        await assert.rejects(raw.catch((e) => { throw require('../src/errors').translateError(e); }), (e: any) => e instanceof InvalidArgumentError && e.sqlstate === 'ID003');
        await assert.rejects(store.claim(key, 'has space'), InvalidArgumentError);
        await assert.rejects(store.claim(key, ''), InvalidArgumentError);
        await assert.rejects(store.complete(db, key, '', '{}'), InvalidArgumentError);
        await assert.rejects(store.complete(db, key, c.token, '{"a":'), InvalidArgumentError);
        await assert.rejects(store.fail(key, c.token, 1, 'sometimes' as any, 'x'), InvalidArgumentError);
        assert.throws(() => new TaskStore(db, { leaseMs: 0 }), InvalidArgumentError);
        assert.throws(() => new TaskStore(db, { schema: 'Bad' }), InvalidArgumentError);
        assert.throws(() => new TaskStore(db, { retry: { maxAttempts: 1001 } }), InvalidArgumentError);
        // The row is still the claim's: nothing above changed it.
        assert.equal((await row(key))?.owner_token, c.token);
        const hb = await store.heartbeat(key, c.token);
        assert.ok(hb.getTime() > Date.now() - 60_000);
    });

    it('a claim outside READ COMMITTED is InvalidArgumentError (schema v24)', async () => {
        // Under REPEATABLE READ the claim would read the pauses with a snapshot older than a pause.
        const rr = await connect(scratch.dsn, 'idem-client repeatable read');
        try {
            await rr.query("SET default_transaction_isolation = 'repeatable read'");
            const store = new TaskStore(rr, { schema });
            await assert.rejects(store.claim(new TaskKey('shop', 'charge', 'rr-1'), 'v1:rr'), (e: any) =>
                e instanceof InvalidArgumentError && e.sqlstate === 'ID003' && /claim runs at READ COMMITTED, not REPEATABLE READ/.test(e.message));
        } finally {
            await rr.end();
        }
        assert.equal(await row(new TaskKey('shop', 'charge', 'rr-1')), undefined);
    });

    it('a read-only server is NotPrimaryError', async () => {
        const ro = await connect(scratch.dsn, 'idem-client read-only');
        try {
            await ro.query('SET default_transaction_read_only = on');
            const store = new TaskStore(ro, { schema });
            await assert.rejects(store.claim(new TaskKey('shop', 'charge', 'ro-1'), 'v1:ro'), (e: any) => e instanceof NotPrimaryError && e.sqlstate === '25006');
        } finally {
            await ro.end();
        }
        assert.equal(await row(new TaskKey('shop', 'charge', 'ro-1')), undefined);
    });

    it('a broken connection is DatabaseUnavailableError', async () => {
        const doomed = await connect(scratch.dsn, 'idem-client doomed');
        const pid = (await doomed.query('SELECT pg_backend_pid() AS pid')).rows[0].pid;
        await admin.query('SELECT pg_terminate_backend($1)', [pid]);
        // Once the client has seen its connection go: a statement sent before that is node-pg's to fail.
        for (let i = 0; i < 1000 && !connectionBroken(doomed); ++i) await new Promise((r) => setTimeout(r, 10));
        assert.ok(connectionBroken(doomed), 'the client never saw its connection end');
        const store = new TaskStore(doomed, { schema });
        await assert.rejects(store.claim(new TaskKey('shop', 'charge', 'gone-1'), 'v1:gone'), DatabaseUnavailableError);
        // Not awaited: node-pg's end() of a client whose connection has already ended never settles.
        void doomed.end().catch(() => undefined);
    });
});

describe('runTask', () => {
    it('transaction form: succeeded, then replayed; a task error is retried, a permanent one fails', async () => {
        const store = new TaskStore(db, { schema, retry: { baseDelayMs: 10, maxDelayMs: 10 } });
        const key = new TaskKey('shop', 'charge', 'run-1');
        const digest = requestDigest({ order: 'run-1' });
        let attempts = 0;
        const task = async (tx: any, ctx: any) => {
            attempts++;
            await tx.query('INSERT INTO public.effects VALUES ($1, $2)', [key.str(), `attempt ${ctx.attempt}`]);
            if (ctx.attempt === 1) throw new Error('transient trouble');
            return JSON.stringify({ ok: true, attempt: ctx.attempt });
        };
        const first = await runTask(store, key, digest, task);
        assert.equal(first.kind, 'will_retry');
        assert.equal(first.error, 'transient trouble');
        assert.equal(first.failure?.status, 'retryable_failed');
        assert.equal(await effects(key), 0, 'the failed attempt\'s write was rolled back');
        let second = await runTask(store, key, digest, task);
        for (let i = 0; second.kind === 'retry_later' && i < 100; ++i) {
            await new Promise((r) => setTimeout(r, second.claim.retryAfterMs + 2));
            second = await runTask(store, key, digest, task);
        }
        assert.equal(second.kind, 'succeeded');
        assert.equal(second.resultJson, '{"ok":true,"attempt":2}');
        const third = await runTask(store, key, digest, task);
        assert.equal(third.kind, 'replayed');
        assert.equal(third.resultJson, '{"ok": true, "attempt": 2}');
        assert.equal(attempts, 2);
        assert.equal(await effects(key), 1);

        const pkey = new TaskKey('shop', 'charge', 'run-permanent');
        const perm = await runTask(store, pkey, digest, () => {
            throw new TaskFailure('permanent', 'card declined');
        });
        assert.equal(perm.kind, 'failed');
        assert.equal(perm.error, 'card declined');
        const after = await runTask(store, pkey, digest, () => '{}');
        assert.equal(after.kind, 'failed');
        assert.equal(after.error, 'card declined');
        assert.equal((await row(pkey))?.status, 'failed');

        const big = await runTask(new TaskStore(db, { schema, maxResultBytes: 8 }), new TaskKey('shop', 'charge', 'run-big'), digest, () => '"0123456789"');
        assert.equal(big.kind, 'failed', 'an oversize result is permanent');
    });

    it('call-then-record form: unknown outcome retried with the same key, told the last outcome was unknown', async () => {
        const store = new TaskStore(db, { schema, retry: { baseDelayMs: 10, maxDelayMs: 10 } });
        const key = new TaskKey('shop', 'pay', 'payment-1');
        const digest = requestDigest({ pay: 1 });
        const sent: string[] = [];
        let inTransactionDuringCall: boolean | undefined;
        const call = async (ctx: any) => {
            sent.push(ctx.idempotencyKey);
            const s = await admin.query("SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = 'idem-client test worker' AND state LIKE 'idle in transaction%'");
            inTransactionDuringCall = s.rows[0].n > 0;
            if (ctx.attempt === 1) throw new TaskFailure('unknown', 'timeout after the request was sent');
            assert.ok(ctx.previousOutcomeUnknown);
            return 'receipt-' + ctx.idempotencyKey;
        };
        const record = async (tx: any, _ctx: any, answer: string) => {
            await tx.query('INSERT INTO public.effects VALUES ($1, $2)', [key.str(), answer]);
            return JSON.stringify({ receipt: answer });
        };
        const first = await runTask(store, key, digest, call, record);
        assert.equal(first.kind, 'will_retry');
        assert.equal((await row(key))?.error_class, 'unknown');
        let second = await runTask(store, key, digest, call, record);
        for (let i = 0; second.kind === 'retry_later' && i < 100; ++i) {
            await new Promise((r) => setTimeout(r, second.claim.retryAfterMs + 2));
            second = await runTask(store, key, digest, call, record);
        }
        assert.equal(second.kind, 'succeeded');
        assert.deepEqual(sent, [key.str(), key.str()]);
        assert.equal(inTransactionDuringCall, false, 'the call ran with no transaction open');
        assert.equal(await effects(key), 1);
    });

    it('lost ownership: the lease ran out during the call and another executor took over', async () => {
        const store = new TaskStore(db, { schema, leaseMs: 50 });
        const other = new TaskStore(admin, { schema });
        const key = new TaskKey('shop', 'charge', 'slow-1');
        const digest = requestDigest({ slow: 1 });
        let recorded = false;
        const out = await runTask(
            store,
            key,
            digest,
            async () => {
                await new Promise((r) => setTimeout(r, 150));
                const taken = await other.claim(key, digest);
                assert.equal(taken.decision, 'reacquired');
                assert.equal(taken.detail, 'lease_expired');
                return 'answer';
            },
            async (tx) => {
                recorded = true;
                await tx.query('INSERT INTO public.effects VALUES ($1, $2)', [key.str(), 'late']);
                return '{}';
            },
        );
        assert.equal(out.kind, 'lost_ownership');
        assert.ok(out.error.length > 0);
        assert.equal(recorded, false, 'the fence refused before record ran');
        assert.equal(await effects(key), 0);
        assert.equal((await row(key))?.status, 'processing');
        assert.equal((await row(key))?.attempts, 2);
    });

    it('fenceInComplete: no fence, so an expired lease is taken over mid-task; complete refuses the stale token and its write rolls back', async () => {
        // Issue 45 item 2: with the fence the claim below answers in_progress [locked].
        const store = new TaskStore(db, { schema, leaseMs: 50 });
        const other = new TaskStore(admin, { schema });
        const key = new TaskKey('shop', 'charge', 'fence-in-complete-1');
        const digest = requestDigest({ fic: 1 });
        let taken: any;
        const out = await runTask(
            store,
            key,
            digest,
            async (tx: any) => {
                await tx.query('INSERT INTO public.effects VALUES ($1, $2)', [key.str(), 'stale']);
                await new Promise((r) => setTimeout(r, 150));
                taken = await other.claim(key, digest);
                if (taken.mayExecute) {
                    await admin.query('BEGIN');
                    await admin.query('INSERT INTO public.effects VALUES ($1, $2)', [key.str(), 'other']);
                    await other.complete(admin, key, taken.token, '{"by":"other"}');
                    await admin.query('COMMIT');
                }
                return '{"by":"stale"}';
            },
            { fenceInComplete: true },
        );
        assert.equal(taken.decision, 'reacquired');
        assert.equal(taken.detail, 'lease_expired');
        assert.equal(out.kind, 'lost_ownership');
        const notes = await admin.query('SELECT note FROM public.effects WHERE k = $1', [key.str()]);
        assert.deepEqual(notes.rows.map((r: any) => r.note), ['other']);
        assert.equal((await row(key))?.status, 'succeeded');
        assert.equal((await row(key))?.result, '{"by": "other"}');
        assert.equal((await row(key))?.attempts, 2);
    });

    it("paused: backs off per retry_after_ms, counts no try, and runs once resumed", async () => {
        const counters = new OutcomeCounters();
        const store = new TaskStore(db, { schema }, counters);
        const key = new TaskKey('paused-tenant', 'charge', 'p-1');
        const digest = requestDigest({ p: 1 });
        await admin.query("SELECT * FROM idem.idem_pause('paused-tenant', '*', 'maintenance window')");
        const out = await runTask(store, key, digest, () => '{"ran":true}');
        assert.equal(out.kind, 'paused');
        assert.equal(out.claim.decision, 'paused');
        assert.equal(out.claim.detail, 'paused-tenant:*');
        assert.equal(out.error, 'paused (paused-tenant:*): maintenance window');
        assert.ok(out.claim.retryAfterMs > 0 && out.claim.retryAfterMs <= 5000);
        assert.equal(out.claim.pausedForMs, 0, 'paused until resumed');
        assert.equal(await row(key), undefined, 'no record, no attempt counted');
        await admin.query("SELECT * FROM idem.idem_resume('paused-tenant', '*', 'done')");
        const later = await runTask(store, key, digest, () => '{"ran":true}');
        assert.equal(later.kind, 'succeeded');
        assert.equal((await row(key))?.attempts, 1);
        assert.equal(counters.pendingRows(), 3); // paused, acquired, succeeded
    });
});

describe('counters', () => {
    it('aggregates in process and flushes one add_counters batch', async () => {
        const counters = new OutcomeCounters();
        const store = new TaskStore(db, { schema }, counters);
        const digest = requestDigest({ c: 1 });
        for (let i = 0; i < 3; ++i) await runTask(store, new TaskKey('count-t', 'op', `k-${i}`), digest, () => '1');
        await runTask(store, new TaskKey('count-t', 'op', 'k-0'), digest, () => '1');
        counters.add('count-t', 'op', 'conflict', 5);
        assert.throws(() => counters.add('count-t', 'op', 'nonsense'), InvalidArgumentError);
        assert.throws(() => counters.add('', 'op', 'conflict'), InvalidArgumentError);
        assert.throws(() => counters.add('t', 'op', 'conflict', -1), InvalidArgumentError);
        assert.equal(counters.pendingRows(), 4); // acquired, succeeded, replayed, conflict
        const flusher = new CounterFlusher(() => connect(scratch.dsn, 'idem counters'), counters, schema, 60_000);
        assert.equal(await flusher.stop(), true);
        assert.equal(counters.pendingRows(), 0);
        const r = await admin.query(
            "SELECT outcome, sum(n)::int AS n FROM idem.idem_counters WHERE tenant = 'count-t' GROUP BY outcome ORDER BY outcome",
        );
        assert.deepEqual(r.rows, [
            { outcome: 'acquired', n: 3 }, { outcome: 'conflict', n: 5 }, { outcome: 'replayed', n: 1 }, { outcome: 'succeeded', n: 3 },
        ]);
    });
});

describe('scenario-worker.js', () => {
    const worker = join(__dirname, '..', 'src', 'scenario-worker.js');
    function start(key: TaskKey, digest: string, mode: string): { child: ChildProcess; line: Promise<string>; exit: Promise<number | null> } {
        const child = spawn(worker, ['scenario-worker', '--schema', schema, '--key', key.str(), '--digest', digest, '--lease-ms', '1500', '--mode', mode], {
            env: { ...process.env, IDEM_DSN: scratch.dsn },
            stdio: ['ignore', 'pipe', 'inherit'],
        });
        const line = new Promise<string>((resolve, reject) => {
            let buf = '';
            child.stdout!.on('data', (d) => {
                buf += d;
                const nl = buf.indexOf('\n');
                if (nl >= 0) resolve(buf.slice(0, nl));
            });
            child.on('exit', (code) => reject(new Error(`the worker exited (${code}) before reporting`)));
        });
        const exit = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
        return { child, line, exit };
    }
    async function kill(w: { child: ChildProcess; exit: Promise<number | null> }) {
        w.child.kill('SIGKILL');
        await w.exit;
    }
    async function claimAfterExpiry(store: TaskStore, key: TaskKey, digest: string) {
        for (let i = 0; i < 300; ++i) {
            const c = await store.claim(key, digest);
            if (c.decision !== 'in_progress') return c;
            await new Promise((r) => setTimeout(r, Math.min(c.retryAfterMs, 100) + 5));
        }
        throw new Error('the dead worker\'s lease never expired');
    }

    it('scenario 4: killed after claiming; taken over at attempt 2; the dead token is refused', async () => {
        const key = new TaskKey('verify', 's4', 'order-1');
        const digest = 'v1:s4';
        const w = start(key, digest, 'claim');
        const line = await w.line;
        assert.match(line, /^claimed [0-9a-f-]{36}$/);
        const deadToken = line.slice('claimed '.length);
        await kill(w);
        const store = new TaskStore(admin, { schema });
        const early = await store.claim(key, digest);
        assert.equal(early.decision, 'in_progress');
        const taken = await claimAfterExpiry(store, key, digest);
        assert.equal(taken.decision, 'reacquired');
        assert.equal(taken.detail, 'lease_expired');
        assert.equal(taken.attempts, 2);
        assert.notEqual(taken.token, deadToken);
        await admin.query('BEGIN');
        await assert.rejects(store.fence(admin, key, deadToken), LostOwnershipError);
        await admin.query('ROLLBACK');
    });

    it('scenario 5: killed after its business write, before commit: nothing lands', async () => {
        const key = new TaskKey('verify', 's5', 'order-1');
        const digest = 'v1:s5';
        const w = start(key, digest, 'write');
        assert.match(await w.line, /^written [0-9a-f-]{36}$/);
        const store = new TaskStore(admin, { schema });
        assert.equal((await store.claim(key, digest)).decision, 'in_progress');
        await kill(w);
        const n = await admin.query('SELECT count(*)::int AS n FROM idem.verify_effects WHERE idempotency_key = $1', [key.str()]);
        assert.equal(n.rows[0].n, 0);
        assert.equal((await row(key))?.status, 'processing');
    });

    it('prints not-claimed and exits 1 when the key is not claimable; usage errors exit 2', async () => {
        const key = new TaskKey('verify', 's4', 'order-1'); // held by the takeover above
        const w = start(key, 'v1:s4', 'claim');
        assert.equal(await w.line, 'not-claimed in_progress');
        assert.equal(await w.exit, 1);
        const bad = spawn(worker, ['--mode', 'sleep', '--key', 'a:b:c', '--digest', 'x'], { stdio: 'ignore', env: { ...process.env, IDEM_DSN: scratch.dsn } });
        assert.equal(await new Promise((r) => bad.once('exit', r)), 2);
    });
});
