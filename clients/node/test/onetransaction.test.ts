// runTask(..., { oneTransaction: true }): claim, the task's writes and the completion in one
// transaction, with the semantics of core/runner.h's RunOptions::oneTransaction
// (tests/db/tst_onetransaction.cpp).
import { strict as assert } from 'assert';
import { after, before, describe, it } from 'node:test';

import { DatabaseUnavailableError, TaskFailure, TaskKey, TaskStore, connect, runTask } from '../src/index';
import type { Queryable, TaskContext } from '../src/index';
import type { Client } from 'pg';
import { Scratch, createScratch } from './scratch';

let scratch: Scratch;
let admin: Client;
let n = 0;

function nextKey(): TaskKey {
    return new TaskKey('shop', 'charge', `onetx-${process.pid}-${++n}`);
}

async function effects(key: TaskKey): Promise<number> {
    const r = await admin.query('SELECT count(*)::int AS n FROM public.effects WHERE k = $1', [key.str()]);
    return r.rows[0].n;
}

async function row(key: TaskKey): Promise<string> {
    const r = await admin.query(
        "SELECT coalesce((SELECT status || ' ' || attempts || ' ' || coalesce(error_class, '-') FROM idem.task_idempotency" +
            ' WHERE idempotency_key = $1), $2) AS r',
        [key.str(), 'absent'],
    );
    return r.rows[0].r;
}

function charge(meanwhile?: () => Promise<void>) {
    return async (tx: Queryable, ctx: TaskContext): Promise<string> => {
        await tx.query('INSERT INTO public.effects (k, note) VALUES ($1, $2)', [ctx.idempotencyKey, ctx.token]);
        if (meanwhile) await meanwhile();
        return '{"charged":1250}';
    };
}

async function retryDue(key: TaskKey, maxAttempts = 5): Promise<void> {
    const c = await connect(scratch.dsn, 'onetx setup');
    try {
        const store = new TaskStore(c, { retry: { maxAttempts, baseDelayMs: 0, maxDelayMs: 0, maxAgeMs: 0 } });
        const claim = await store.claim(key, 'v1:x');
        await store.fail(key, claim.token, claim.attempts, 'retryable', 'bank timeout');
    } finally {
        await c.end();
    }
}

async function withWorker<T>(fn: (store: TaskStore) => Promise<T>): Promise<T> {
    const c = await connect(scratch.dsn, 'onetx worker');
    try {
        return await fn(new TaskStore(c));
    } finally {
        await c.end().catch(() => undefined);
    }
}

function latch(): { wait: Promise<void>; open: () => void } {
    let open = () => undefined as void;
    const wait = new Promise<void>((resolve) => {
        open = resolve;
    });
    return { wait, open };
}

before(async () => {
    scratch = await createScratch();
    admin = await connect(scratch.dsn, 'onetx admin');
    await admin.query('CREATE TABLE public.effects (k text NOT NULL, note text)');
});

after(async () => {
    await admin?.end().catch(() => undefined);
    await scratch?.drop();
});

describe('one transaction for local effects', () => {
    it('claims, writes and completes in one commit, then replays and records a conflict', async () => {
        const key = nextKey();
        let taskNow = '';
        const out = await withWorker((s) =>
            runTask(
                s,
                key,
                'v1:x',
                async (tx, ctx) => {
                    taskNow = (await tx.query('SELECT now()::text AS now')).rows[0].now;
                    return charge()(tx, ctx);
                },
                { oneTransaction: true },
            ),
        );
        assert.equal(out.kind, 'succeeded');
        // The claim's now() is the task's: one transaction (two steps claim in one of their own, earlier).
        const same = await admin.query(
            'SELECT t.xmin::text = (SELECT e.xmin::text FROM public.effects e WHERE e.k = t.idempotency_key) AS one,' +
                ' t.created_at = $2::timestamptz AS at FROM idem.task_idempotency t WHERE t.idempotency_key = $1',
            [key.str(), taskNow],
        );
        assert.deepEqual(same.rows[0], { one: true, at: true });
        const again = await withWorker((s) => runTask(s, key, 'v1:x', charge(), { oneTransaction: true }));
        assert.equal(again.kind, 'replayed');
        assert.equal(again.resultJson, '{"charged": 1250}');
        const conflict = await withWorker((s) => runTask(s, key, 'v1:y', charge(), { oneTransaction: true }));
        assert.equal(conflict.kind, 'conflict');
        const c = await admin.query('SELECT n FROM idem.task_idempotency_conflicts WHERE idempotency_key = $1', [key.str()]);
        assert.equal(Number(c.rows[0].n), 1);
        assert.equal(await effects(key), 1);
    });

    for (const takeover of [false, true]) {
        it(`rolls a failure back and records it after (${takeover ? 'takeover' : 'new key'})`, async () => {
            const key = nextKey();
            if (takeover) await retryDue(key, 2);
            const c = await connect(scratch.dsn, 'onetx worker');
            try {
                const store = new TaskStore(c, { retry: { maxAttempts: 2, baseDelayMs: 0, maxDelayMs: 0, maxAgeMs: 0 } });
                const out = await runTask(
                    store,
                    key,
                    'v1:x',
                    charge(async () => {
                        throw new TaskFailure('retryable', 'ledger refused');
                    }),
                    { oneTransaction: true },
                );
                assert.equal(out.error, 'ledger refused');
                assert.equal(out.kind, takeover ? 'failed' : 'will_retry');
            } finally {
                await c.end();
            }
            assert.equal(await effects(key), 0);
            assert.equal(await row(key), takeover ? 'failed 2 retryable' : 'retryable_failed 1 retryable');
        });

        it(`shows nothing in flight; a duplicate waits, then replays (${takeover ? 'takeover' : 'new key'})`, async () => {
            const key = nextKey();
            if (takeover) await retryDue(key);
            const before = await row(key);
            const inTask = latch();
            const release = latch();
            const first = withWorker((s) =>
                runTask(
                    s,
                    key,
                    'v1:x',
                    charge(async () => {
                        inTask.open();
                        await release.wait;
                    }),
                    { oneTransaction: true },
                ),
            );
            await inTask.wait;
            assert.equal(await row(key), before);
            assert.equal(await effects(key), 0);
            let secondDone = false;
            const second = withWorker((s) =>
                runTask(s, key, 'v1:x', charge(), { oneTransaction: true, duplicateWaitMs: 20000 }),
            ).finally(() => {
                secondDone = true;
            });
            await new Promise((r) => setTimeout(r, 300));
            assert.equal(secondDone, false, 'the duplicate waits for the first to commit');
            release.open();
            assert.equal((await first).kind, 'succeeded');
            const b = await second;
            assert.equal(b.kind, 'replayed');
            assert.equal(b.resultJson, '{"charged": 1250}');
            assert.equal(await effects(key), 1);
        });

        it(`runs one of 8 concurrent duplicates (${takeover ? 'takeover' : 'new key'})`, async () => {
            const key = nextKey();
            if (takeover) await retryDue(key);
            const conns = await Promise.all(Array.from({ length: 8 }, () => connect(scratch.dsn, 'onetx racer')));
            try {
                // The barrier: every connection is open before any run starts.
                const outs = await Promise.all(
                    conns.map((c) =>
                        runTask(
                            new TaskStore(c),
                            key,
                            'v1:x',
                            charge(() => new Promise((r) => setTimeout(r, 50))),
                            { oneTransaction: true, duplicateWaitMs: 20000 },
                        ),
                    ),
                );
                assert.deepEqual(outs.map((o) => o.kind).sort(), [...Array(7).fill('replayed'), 'succeeded']);
            } finally {
                await Promise.all(conns.map((c) => c.end()));
            }
            assert.equal(await effects(key), 1);
        });

        it(`leaves nothing when killed mid-transaction (${takeover ? 'takeover' : 'new key'})`, async () => {
            const key = nextKey();
            if (takeover) await retryDue(key);
            const before = await row(key);
            const victim = await connect(scratch.dsn, 'onetx victim');
            victim.on('error', () => undefined);
            const pid = (await victim.query('SELECT pg_backend_pid() AS pid')).rows[0].pid;
            await assert.rejects(
                runTask(
                    new TaskStore(victim, { leaseMs: 60000 }),
                    key,
                    'v1:x',
                    charge(async () => {
                        await admin.query('SELECT pg_terminate_backend($1)', [pid]);
                        await new Promise((r) => setTimeout(r, 100));
                    }),
                    { oneTransaction: true },
                ),
                DatabaseUnavailableError,
            );
            // Its connection is gone: end() on it would wait for an 'end' event that has passed.
            assert.equal(await row(key), before);
            assert.equal(await effects(key), 0);
            const next = await withWorker((s) => runTask(s, key, 'v1:x', charge(), { oneTransaction: true }));
            assert.equal(next.kind, 'succeeded');
            assert.equal(await effects(key), 1);
        });
    }

    it('answers in progress when the wait runs out', async () => {
        const key = nextKey();
        const inTask = latch();
        const release = latch();
        const first = withWorker((s) =>
            runTask(
                s,
                key,
                'v1:x',
                charge(async () => {
                    inTask.open();
                    await release.wait;
                }),
                { oneTransaction: true },
            ),
        );
        await inTask.wait;
        const c = await connect(scratch.dsn, 'onetx worker');
        try {
            const started = Date.now();
            const out = await runTask(new TaskStore(c), key, 'v1:x', charge(), { oneTransaction: true, duplicateWaitMs: 200 });
            const waited = Date.now() - started;
            assert.equal(out.kind, 'in_progress');
            assert.equal(out.claim.detail, 'wait_timeout');
            assert.ok(waited >= 150 && waited < 10000, String(waited));
            assert.equal((await c.query('SELECT 1 AS one')).rows[0].one, 1); // usable again
        } finally {
            await c.end();
        }
        release.open();
        assert.equal((await first).kind, 'succeeded');
        assert.equal(await effects(key), 1);
    });
});

// Record at commit ({ recordAtCommit: true }): the task's writes, then one Idem statement, one
// commit (tests/db/tst_onetransaction.cpp's record* tests).
describe('record at commit', () => {
    it('records in one commit; the read before the task answers replays and conflicts', async () => {
        const key = nextKey();
        let calls = 0;
        const counting = charge(async () => {
            ++calls;
        });
        const out = await withWorker((s) => runTask(s, key, 'v1:x', counting, { recordAtCommit: true }));
        assert.equal(out.kind, 'succeeded');
        assert.equal(out.claim.detail, 'new');
        assert.equal(out.claim.token, '');
        assert.equal(await row(key), 'succeeded 1 -');
        const again = await withWorker((s) => runTask(s, key, 'v1:x', counting, { recordAtCommit: true }));
        assert.equal(again.kind, 'replayed');
        assert.equal(again.resultJson, '{"charged": 1250}');
        const conflict = await withWorker((s) => runTask(s, key, 'v1:y', counting, { recordAtCommit: true }));
        assert.equal(conflict.kind, 'conflict');
        const n = await admin.query('SELECT n::int AS n FROM idem.task_idempotency_conflicts WHERE idempotency_key = $1', [key.str()]);
        assert.equal(n.rows[0].n, 1);
        assert.equal(calls, 1);
        // Without the read the replay runs the task, learns at the record, and rolls its writes back.
        const late = await withWorker((s) => runTask(s, key, 'v1:x', counting, { recordAtCommit: true, checkFirst: false }));
        assert.equal(late.kind, 'replayed');
        assert.equal(calls, 2);
        assert.equal(await effects(key), 1);
    });

    for (const takeover of [false, true]) {
        it(`rolls a failure back and records it after (${takeover ? 'takeover' : 'new key'})`, async () => {
            const key = nextKey();
            if (takeover) await retryDue(key, 2);
            const out = await withWorker(async (s) => {
                const store = new TaskStore(s.client, { retry: { maxAttempts: 2, baseDelayMs: 0, maxDelayMs: 0, maxAgeMs: 0 } });
                return runTask(store, key, 'v1:x', charge(async () => {
                    throw new TaskFailure('retryable', 'ledger refused');
                }), { recordAtCommit: true });
            });
            assert.equal(out.error, 'ledger refused');
            assert.equal(await effects(key), 0);
            assert.equal(await row(key), takeover ? 'failed 2 retryable' : 'retryable_failed 1 retryable');
        });

        for (const checkFirst of [true, false])
            it(`runs one of 8 concurrent duplicates (${takeover ? 'takeover' : 'new key'}${checkFirst ? '' : ', no check first'})`, async () => {
                const key = nextKey();
                if (takeover) await retryDue(key);
                const conns = await Promise.all(Array.from({ length: 8 }, () => connect(scratch.dsn, 'record racer')));
                try {
                    const outs = await Promise.all(
                        conns.map((c) =>
                            runTask(new TaskStore(c), key, 'v1:x', charge(() => new Promise((r) => setTimeout(r, 50))), {
                                recordAtCommit: true,
                                checkFirst,
                                duplicateWaitMs: 20000,
                            }),
                        ),
                    );
                    assert.deepEqual(outs.map((o) => o.kind).sort(), [...Array(7).fill('replayed'), 'succeeded']);
                } finally {
                    await Promise.all(conns.map((c) => c.end()));
                }
                assert.equal(await effects(key), 1);
                assert.equal(await row(key), takeover ? 'succeeded 2 retryable' : 'succeeded 1 -');
            });
    }

    it('replays when its own write meets a duplicate\'s uncommitted unique row', async () => {
        await admin.query('CREATE TABLE IF NOT EXISTS public.orders (order_id text PRIMARY KEY)');
        const key = nextKey();
        const order = (meanwhile?: () => Promise<void>) => async (tx: Queryable): Promise<string> => {
            await tx.query('INSERT INTO public.orders (order_id) VALUES ($1)', [key.str()]);
            if (meanwhile) await meanwhile();
            return '{"order":1}';
        };
        const inTask = latch();
        const release = latch();
        const first = withWorker((s) => runTask(s, key, 'v1:x', order(async () => {
            inTask.open();
            await release.wait;
        }), { recordAtCommit: true }));
        await inTask.wait;
        const second = withWorker((s) => runTask(s, key, 'v1:x', order(), { recordAtCommit: true }));
        for (let i = 0; ; ++i) {
            const w = await admin.query(
                "SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE 'INSERT INTO public.orders%'",
            );
            if (w.rows[0].n === 1) break;
            assert.ok(i < 500, 'the second task never waited on the first one\'s order row');
            await new Promise((r) => setTimeout(r, 20));
        }
        release.open();
        assert.equal((await first).kind, 'succeeded');
        const b = await second;
        assert.equal(b.kind, 'replayed');
        assert.equal(b.resultJson, '{"order": 1}');
        const n = await admin.query('SELECT count(*)::int AS n FROM public.orders WHERE order_id = $1', [key.str()]);
        assert.equal(n.rows[0].n, 1);
    });

    it('rolls back when a pause is committed while the task runs', async () => {
        const key = new TaskKey('tstenant', 'charge', `rec-${process.pid}-${++n}`);
        let out;
        try {
            out = await withWorker((s) =>
                runTask(s, key, 'v1:x', charge(async () => {
                    await admin.query("SELECT * FROM idem.idem_pause('tstenant', 'charge', 'ledger maintenance', 'test')");
                }), { recordAtCommit: true }),
            );
        } finally {
            await admin.query("SELECT * FROM idem.idem_resume('tstenant', 'charge', 'done', 'test')");
        }
        assert.equal(out.kind, 'paused');
        assert.equal(out.claim.detail, 'tstenant:charge');
        assert.equal(await effects(key), 0);
        assert.equal(await row(key), 'absent');
    });
});
