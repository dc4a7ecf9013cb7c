#!/usr/bin/env node
// bench/peer_bench.js: Idem beside a widely used PostgreSQL task system (pg-boss, pinned in
// bench/peer/package-lock.json), on the same cluster and machine, doing the same work in one run.
// Run it through bench/peer_bench.sh, which installs pg-boss with `npm ci`, builds what it needs,
// migrates a scratch database and passes the paths below. Usage (what the script passes):
//
//   node bench/peer_bench.js --dsn DSN --pgboss DIR --idem-client DIR --service CMD
//        [--systems pgboss,pgboss-keyed,idem,http] [--rounds 3] [--seconds 8] [--workers 4]
//        [--batch 100] [--fault 0.1] [--dup 0.2]
//
// The work, the same for every system: a stream of tasks; each task inserts one business row
// (its task id and an amount) and must do so exactly once. Every attempt fails retryably with
// probability --fault, half of them before the row is written and half after it (the handler
// wrote the row, then a later step of the same attempt failed: a timeout after the write, the
// acknowledgement lost); a failed attempt is retried at once, up to 5 retries. --dup of the tasks
// are submitted a second time, half of those while the first is still queued or running, half
// after it finished. Systems, alternated in rounds (each round starts one system later):
//
//   pgboss        pg-boss 10: a producer sends jobs (the task id as the job id, so a duplicate
//                 send is dropped by ON CONFLICT DO NOTHING); --workers work() loops fetch
//                 --batch jobs per fetch; the handler writes the row with a plain INSERT
//                 (autocommit, on a pool of --workers connections); pg-boss completes the batch
//                 in one UPDATE; a failed attempt is failed with boss.fail (retryDelay 0).
//   pgboss-keyed  the same with a unique index on the business row's task id and
//                 INSERT ... ON CONFLICT DO NOTHING: exactly-once made by hand in the handler.
//   idem          Idem's TypeScript client: --workers loops, one connection each, runTask in
//                 its one-transaction form (claim; BEGIN, fence, INSERT, complete, COMMIT);
//                 retry policy baseDelayMs 0.
//   idem-wide     the same with twice --workers connections: as many as pg-boss holds (its
//                 producer's and workers' pool beside the handler's).
//   http          Idem's HTTP middleware: the example order service (Express, node), POST
//                 /orders with an Idempotency-Key per task from --workers keep-alive clients;
//                 a failure before the write is X-Demo-Fail: 503 (the middleware records a
//                 retryable failure), after the write the client drops the 201 and sends the
//                 request again (a replay). The service keeps its own retry delay (200 ms base,
//                 Retry-After of at least 1 s): the client retries when it says.
//
// Each system runs --seconds in a round; tasks per second count the tasks whose business row was
// committed and whose success was recorded inside the window; server CPU is every process of the
// cluster (postmaster and all its children: backends, WAL writer, checkpointer...) read from
// /proc over the window, as bench/cpuclock.cpp reads one backend. After the window the stream
// stops, the system drains (bounded), and the business rows are counted per task id.
'use strict';

const fs = require('fs');
const path = require('path');
const http = require('http');
const crypto = require('crypto');
const { spawn, execFileSync } = require('child_process');

function args() {
    const a = process.argv.slice(2);
    const o = {
        systems: 'pgboss,pgboss-keyed,idem,idem-wide,http', rounds: 3, seconds: 8, workers: 4, batch: 100,
        fault: 0.1, dup: 0.2, drain: 60, crash: 1,
    };
    for (let i = 0; i < a.length; i++) {
        const k = a[i].replace(/^--/, '');
        if (!(k in o) && !['dsn', 'pgboss', 'idem-client', 'service', 'child', 'round', 'tag'].includes(k))
            throw new Error(`peer_bench: unknown option ${a[i]}`);
        o[k] = a[++i];
    }
    for (const k of ['rounds', 'seconds', 'workers', 'batch', 'fault', 'dup', 'drain', 'round', 'crash']) if (k in o) o[k] = Number(o[k]);
    if (!o.dsn || !o.pgboss || !o['idem-client'] || !o.service) throw new Error('peer_bench: --dsn, --pgboss, --idem-client and --service are required (run bench/peer_bench.sh)');
    return o;
}

const MAX_RETRIES = 5;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// ---- the cluster's CPU clock ------------------------------------------------------------------

const TICK_US = 1e6 / Number(execFileSync('getconf', ['CLK_TCK']).toString().trim() || 100);

function statOf(pid) {
    try {
        const s = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
        const f = s.slice(s.lastIndexOf(')') + 2).split(' '); // f[0] is field 3 (state)
        return { ppid: Number(f[1]), cpu: (Number(f[11]) + Number(f[12])) * TICK_US };
    } catch {
        return null;
    }
}

/** User + system CPU (µs) of the postmaster and all its children. */
function clusterCpuUs(postmaster) {
    let sum = statOf(postmaster)?.cpu ?? 0;
    for (const d of fs.readdirSync('/proc')) {
        if (!/^\d+$/.test(d)) continue;
        const s = statOf(d);
        if (s && s.ppid === postmaster) sum += s.cpu;
    }
    return sum;
}

function processCpuUs(pid) {
    return statOf(pid)?.cpu ?? 0;
}

// ---- the work ---------------------------------------------------------------------------------

/** 'before', 'after' or null: whether this attempt fails, and where. */
function fault(o) {
    const r = Math.random();
    if (r < o.fault / 2) return 'before';
    if (r < o.fault) return 'after';
    return null;
}

class Retryable extends Error {}

function uuidOf(taskId) {
    const h = crypto.createHash('sha256').update(taskId).digest('hex');
    return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-8${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

/** The window's bookkeeping, shared by every system. */
class Tally {
    constructor() {
        this.open = false;
        this.t0 = 0;
        this.t1 = 0;
        this.done = 0; // tasks whose success was recorded inside the window
        this.attempts = 0;
        this.faults = 0;
        this.dupSent = 0;
        this.errors = 0;
        this.lastError = '';
    }
    succeeded() {
        if (this.open) this.done++;
    }
    error(e) {
        this.errors++;
        this.lastError = String(e?.message ?? e).slice(0, 200);
    }
}

// A stream of task ids for the driver-style systems (idem, http): new tasks, retries when due,
// duplicates (half right away, so another worker runs one beside the first, half once it finished).
class Stream {
    constructor(o, prefix) {
        this.o = o;
        this.prefix = prefix;
        this.next = 0;
        this.queue = []; // {id, due, dup}
        this.finished = new Set();
        this.counted = new Set();
        this.started = []; // task ids in creation order
        this.stopped = false;
    }
    take() {
        const now = Date.now();
        const i = this.queue.findIndex((x) => x.due <= now);
        if (i >= 0) return this.queue.splice(i, 1)[0];
        if (this.stopped) return null;
        const id = `${this.prefix}-${this.next++}`;
        this.started.push(id);
        if (Math.random() < this.o.dup) {
            if (Math.random() < 0.5) this.queue.push({ id, due: now, dup: true });
            else this.laterDup = (this.laterDup ?? new Set()).add(id);
        }
        return { id, due: now, dup: false };
    }
    retry(item, afterMs) {
        this.queue.push({ ...item, due: Date.now() + afterMs });
    }
    finish(item) {
        if (this.laterDup?.has(item.id) && !item.dup) {
            this.laterDup.delete(item.id);
            this.queue.push({ id: item.id, due: Date.now(), dup: true });
        }
        const first = !this.finished.has(item.id);
        this.finished.add(item.id);
        return first;
    }
    /** True the first time a task's success is seen. */
    count(id) {
        if (this.counted.has(id)) return false;
        this.counted.add(id);
        return true;
    }
    /** Waits for the next due item; null when stopped and nothing is left. */
    async nextItem() {
        for (;;) {
            const it = this.take();
            if (it) return it;
            if (this.stopped && this.queue.length === 0) return null;
            await sleep(5);
        }
    }
}

// ---- Idem: the TypeScript client's runTask ----------------------------------------------------

async function runIdem(o, round, tally, wide) {
    const idem = require(o['idem-client']);
    const table = 'bench_peer.effects';
    const system = wide ? 'idem-wide' : 'idem';
    const prefix = `${system}-${o.tag}-r${round}`;
    const stream = new Stream(o, prefix);
    const conns = [];
    for (let w = 0; w < (wide ? 2 : 1) * o.workers; w++) conns.push(await idem.connect(o.dsn, 'peer bench idem'));
    const worker = async (db) => {
        const store = new idem.TaskStore(db, { schema: 'idem', leaseMs: 30_000, retry: { baseDelayMs: 0, maxDelayMs: 0, maxAttempts: MAX_RETRIES + 1 } });
        for (;;) {
            const item = await stream.nextItem();
            if (!item) return;
            const n = Number(item.id.slice(prefix.length + 1));
            const key = new idem.TaskKey('bench', 'peer', item.id);
            const digest = idem.requestDigest({ task: item.id, amount: n % 1000 });
            try {
                tally.attempts++;
                const out = await idem.runTask(store, key, digest, async (tx) => {
                    const f = fault(o);
                    if (f === 'before') throw new idem.TaskFailure('retryable', 'injected before the write');
                    await tx.query(`INSERT INTO ${table} (system, task_id, amount) VALUES ($1, $2, $3)`, [system, item.id, n % 1000]);
                    if (f === 'after') throw new idem.TaskFailure('retryable', 'injected after the write');
                    return '{"ok":true}';
                });
                switch (out.kind) {
                    case 'succeeded':
                    case 'replayed':
                        if (out.kind === 'succeeded' && stream.count(item.id)) tally.succeeded();
                        stream.finish(item);
                        break;
                    case 'will_retry':
                    case 'in_progress':
                    case 'retry_later':
                        if (out.kind === 'will_retry') tally.faults++;
                        stream.retry(item, Math.min(out.claim?.retryAfterMs ?? 0, 1000));
                        break;
                    default:
                        tally.error(`${item.id}: ${out.kind} ${out.error ?? ''}`);
                }
            } catch (e) {
                tally.error(e);
                stream.retry(item, 10);
            }
        }
    };
    const running = conns.map(worker);
    return {
        stop: () => { stream.stopped = true; },
        drained: () => Promise.all(running),
        close: async () => { for (const c of conns) await c.end(); },
        pids: [],
        backends: conns.length,
        expected: () => stream.started,
    };
}

// ---- Idem's HTTP middleware: the example order service ----------------------------------------

function freePort() {
    return new Promise((resolve) => {
        const s = require('net').createServer();
        s.listen(0, '127.0.0.1', () => {
            const p = s.address().port;
            s.close(() => resolve(p));
        });
    });
}

function post(agent, port, key, body, headers) {
    return new Promise((resolve, reject) => {
        const req = http.request({
            host: '127.0.0.1', port, path: '/orders', method: 'POST', agent,
            headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), 'idempotency-key': key, ...headers },
        }, (res) => {
            const chunks = [];
            res.on('data', (c) => chunks.push(c));
            res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, body: Buffer.concat(chunks).toString() }));
        });
        req.setTimeout(30_000, () => req.destroy(new Error('timeout')));
        req.on('error', reject);
        req.end(body);
    });
}

async function runHttp(o, round, tally) {
    const port = await freePort();
    const [cmd, ...rest] = o.service.split(' ');
    const svc = spawn(cmd, [...rest, 'node', '--dsn', o.dsn, '--listen', `127.0.0.1:${port}`, '--tenant', 'bench-peer'],
        { stdio: ['ignore', 'ignore', 'inherit'], detached: true });
    const deadline = Date.now() + 60_000;
    for (;;) {
        try {
            await new Promise((resolve, reject) => {
                http.get({ host: '127.0.0.1', port, path: '/orders/0' }, (r) => { r.resume(); r.on('end', resolve); }).on('error', reject);
            });
            break;
        } catch {
            if (svc.exitCode !== null || Date.now() > deadline) throw new Error('peer_bench: the example service did not start');
            await sleep(100);
        }
    }
    const prefix = `http-${o.tag}-r${round}`;
    const stream = new Stream(o, prefix);
    const worker = async () => {
        const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
        for (;;) {
            const item = await stream.nextItem();
            if (!item) break;
            const n = Number(item.id.slice(prefix.length + 1));
            const body = JSON.stringify({ order_id: item.id, amount_cents: 1000 + (n % 1000), currency: 'EUR' });
            const f = fault(o);
            tally.attempts++;
            try {
                const r = await post(agent, port, item.id, body, f === 'before' ? { 'x-demo-fail': '503' } : {});
                if (r.status === 201) {
                    // The first 201 of a task: its row and its success were committed.
                    if (stream.count(item.id)) tally.succeeded();
                    if (f === 'after') {
                        // The row is written and the success recorded; the answer is lost: send it again.
                        tally.faults++;
                        stream.retry(item, 0);
                        continue;
                    }
                    stream.finish(item);
                } else if (r.status === 503 || r.status === 409) {
                    if (f === 'before') tally.faults++;
                    stream.retry(item, 1000 * Number(r.headers['retry-after'] ?? 1));
                } else {
                    tally.error(`${item.id}: HTTP ${r.status} ${r.body.slice(0, 200)}`);
                }
            } catch (e) {
                tally.error(e);
                stream.retry(item, 100);
            }
        }
        agent.destroy();
    };
    const running = [];
    for (let w = 0; w < o.workers; w++) running.push(worker());
    return {
        stop: () => { stream.stopped = true; },
        drained: () => Promise.all(running),
        close: async () => {
            try { process.kill(-svc.pid, 'SIGTERM'); } catch { /* gone */ }
        },
        pids: [svc.pid],
        expected: () => stream.started,
    };
}

// ---- pg-boss ----------------------------------------------------------------------------------

async function runPgboss(o, round, tally, keyed) {
    const PgBoss = require(path.join(o.pgboss, 'pg-boss'));
    const pg = require(path.join(o.pgboss, 'pg'));
    const { clientConfig } = require(path.join(o['idem-client'], 'conninfo'));
    const cfg = clientConfig(o.dsn, 'peer bench pg-boss');
    const boss = new PgBoss({ ...cfg, schema: 'pgboss', max: o.workers, schedule: false });
    boss.on('error', (e) => tally.error(e));
    await boss.start();
    const pool = new pg.Pool({ ...cfg, application_name: 'peer bench pg-boss handler', max: o.workers });
    const system = keyed ? 'pgboss-keyed' : 'pgboss';
    const table = keyed ? 'bench_peer.effects_keyed' : 'bench_peer.effects';
    const insert = keyed
        ? `INSERT INTO ${table} (system, task_id, amount) VALUES ($1, $2, $3) ON CONFLICT (task_id) DO NOTHING`
        : `INSERT INTO ${table} (system, task_id, amount) VALUES ($1, $2, $3)`;
    const queue = `bench_${system.replace('-', '_')}_r${round}_${process.pid}`;
    await boss.createQueue(queue, { retryLimit: MAX_RETRIES, retryDelay: 0, retryBackoff: false, expireInSeconds: 300 });
    const started = [];
    let finished = 0;
    let stopped = false;
    const laterDup = [];
    const handler = async (jobs) => {
        await Promise.all(jobs.map(async (job) => {
            tally.attempts++;
            const f = fault(o);
            try {
                if (f === 'before') throw new Retryable('injected before the write');
                await pool.query(insert, [system, job.data.task, job.data.amount]);
                if (f === 'after') throw new Retryable('injected after the write');
            } catch (e) {
                if (e instanceof Retryable) tally.faults++;
                else tally.error(e);
                await boss.fail(queue, job.id, { message: e.message });
                return;
            }
            // pg-boss completes the batch's active jobs in one UPDATE once this handler returns.
            tally.succeeded();
            finished++;
        }));
    };
    for (let w = 0; w < o.workers; w++) await boss.work(queue, { batchSize: o.batch, pollingIntervalSeconds: 0.5 }, handler);
    // The producer: as many sends in flight as workers, the backlog kept under two fetches' worth
    // per worker so the queue does not grow without end.
    const backlog = 2 * o.batch * o.workers;
    const produce = async () => {
        while (!stopped) {
            if (started.length - finished > backlog) {
                await sleep(5);
                continue;
            }
            let id, dup = false;
            if (laterDup.length && Math.random() < 0.5) {
                id = laterDup.shift();
                dup = true;
            } else {
                id = `${system}-${o.tag}-r${round}-${started.length}`;
                started.push(id);
                if (Math.random() < o.dup) {
                    if (Math.random() < 0.5) {
                        try { await boss.send(queue, { task: id, amount: started.length % 1000 }, { id: uuidOf(id) }); } catch (e) { tally.error(e); }
                        tally.dupSent++;
                    } else laterDup.push(id);
                }
            }
            try {
                await boss.send(queue, { task: id, amount: Number(id.slice(id.lastIndexOf('-') + 1)) % 1000 }, { id: uuidOf(id) });
            } catch (e) {
                tally.error(e);
            }
            if (dup) tally.dupSent++;
        }
    };
    const producers = [];
    for (let w = 0; w < o.workers; w++) producers.push(produce());
    return {
        stop: () => { stopped = true; },
        drained: async () => {
            await Promise.all(producers);
            // Late duplicates not yet sent: send them now (the first ran long ago).
            for (const id of laterDup.splice(0)) {
                await boss.send(queue, { task: id, amount: Number(id.slice(id.lastIndexOf('-') + 1)) % 1000 }, { id: uuidOf(id) });
                tally.dupSent++;
            }
            const deadline = Date.now() + o.drain * 1000;
            for (;;) {
                const { rows } = await pool.query(`SELECT count(*) FILTER (WHERE state < 'completed')::int AS open,
                    count(*) FILTER (WHERE state = 'failed')::int AS failed FROM pgboss.job WHERE name = $1`, [queue]);
                if (rows[0].open === 0 || Date.now() > deadline) {
                    if (rows[0].failed) tally.error(`${rows[0].failed} jobs failed for good`);
                    if (rows[0].open) tally.error(`${rows[0].open} jobs still open after the drain`);
                    break;
                }
                await sleep(100);
            }
        },
        close: async () => {
            // A job completed without its row: the batch's completion (by job id, not by attempt)
            // met a job another worker had fetched again for its retry (see bench/README.md).
            const { rows: [c] } = await pool.query(`SELECT count(*)::int AS n FROM pgboss.job j WHERE j.name = $1 AND j.state = 'completed'
                AND NOT EXISTS (SELECT 1 FROM ${table} e WHERE e.task_id = j.data->>'task')`, [queue]);
            tally.completedWithoutRow = c.n;
            await boss.offWork(queue).catch(() => undefined);
            await boss.deleteQueue(queue).catch(() => undefined);
            await boss.stop({ graceful: true, wait: true, timeout: 5000 }).catch(() => undefined);
            await pool.end();
        },
        pids: [],
        expected: () => started,
    };
}

/** The cluster's commits, WAL bytes written, and WAL syncs (the fsyncs
 * a commit waits for) so far. The statistics counters reach the shared view within about a second of a
 * transaction's end: read over a window of several seconds. */
async function dbCounters(admin) {
    const { rows: [r] } = await admin.query(`SELECT (SELECT sum(xact_commit) FROM pg_stat_database)::float8 AS commits,
        pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')::float8 AS wal, (SELECT wal_sync FROM pg_stat_wal)::float8 AS syncs`);
    return r;
}

// ---- a crash mid-handler ----------------------------------------------------------------------
// Stage 1 (a process of its own): the handler writes the business row, then the process is killed
// (SIGKILL) before the task's success is recorded. Stage 2 (another process): the system recovers
// the task as it does by itself (pg-boss: the job expires after expireInSeconds and its supervisor
// fails it for a retry; Idem: the lease expires and the next claim reacquires) and runs it to the
// end. Then the business rows of that one task are counted.

async function crash(o) {
    const [system, stage] = o.child.slice('crash-'.length).split(':');
    const idem = require(o['idem-client']);
    const task = `crash-${system}-${o.tag}`;
    const insert = `INSERT INTO bench_peer.effects (system, task_id, amount) VALUES ('crash-${system}', $1, 1)`;
    if (system === 'pgboss') {
        const PgBoss = require(path.join(o.pgboss, 'pg-boss'));
        const { clientConfig } = require(path.join(o['idem-client'], 'conninfo'));
        const cfg = clientConfig(o.dsn, 'peer bench crash');
        const queue = `bench_crash_${o.tag}`;
        // The shortest expiry and supervision pg-boss allows, so stage 2 takes seconds, not 15 minutes.
        const boss = new PgBoss({ ...cfg, schema: 'pgboss', max: 2, schedule: false, supervise: stage === '2', maintenanceIntervalSeconds: 1 });
        boss.on('error', () => undefined);
        await boss.start();
        const pool = new (require(path.join(o.pgboss, 'pg')).Pool)({ ...cfg, max: 1 });
        if (stage === '1') {
            await boss.createQueue(queue, { retryLimit: MAX_RETRIES, retryDelay: 0, expireInSeconds: 1 });
            await boss.send(queue, { task }, { id: uuidOf(task) });
            await boss.work(queue, { pollingIntervalSeconds: 0.5 }, async () => {
                await pool.query(insert, [task]);
                process.kill(process.pid, 'SIGKILL');
            });
            await sleep(30_000);
            throw new Error('stage 1 was not killed');
        }
        let ran = 0;
        await boss.work(queue, { pollingIntervalSeconds: 0.5 }, async () => {
            ran++;
            await pool.query(insert, [task]);
        });
        const deadline = Date.now() + 60_000;
        let state = '';
        while (Date.now() < deadline) {
            const { rows } = await pool.query('SELECT state FROM pgboss.job WHERE name = $1 AND id = $2', [queue, uuidOf(task)]);
            state = rows[0]?.state ?? 'gone';
            if (state === 'completed') break;
            await sleep(200);
        }
        await boss.offWork(queue);
        await boss.deleteQueue(queue).catch(() => undefined);
        await boss.stop({ graceful: true, wait: true, timeout: 5000 }).catch(() => undefined);
        const { rows: [r] } = await pool.query('SELECT count(*)::int AS n FROM bench_peer.effects WHERE task_id = $1', [task]);
        await pool.end();
        process.stdout.write(JSON.stringify({ system, rows: r.n, recovered: state, reruns: ran }) + '\n');
        return;
    }
    const db = await idem.connect(o.dsn, 'peer bench crash');
    const store = new idem.TaskStore(db, { schema: 'idem', leaseMs: 1000, retry: { baseDelayMs: 0, maxDelayMs: 0 } });
    const key = new idem.TaskKey('bench', 'peer-crash', task);
    const digest = idem.requestDigest({ task });
    if (stage === '1') {
        await idem.runTask(store, key, digest, async (tx) => {
            await tx.query(insert, [task]);
            process.kill(process.pid, 'SIGKILL');
            return '{}';
        });
        throw new Error('stage 1 was not killed');
    }
    let out, ran = 0;
    const deadline = Date.now() + 60_000;
    do {
        out = await idem.runTask(store, key, digest, async (tx) => {
            ran++;
            await tx.query(insert, [task]);
            return '{}';
        });
        if (out.kind !== 'succeeded') await sleep(100);
    } while (out.kind !== 'succeeded' && out.kind !== 'replayed' && Date.now() < deadline);
    const { rows: [r] } = await db.query('SELECT count(*)::int AS n FROM bench_peer.effects WHERE task_id = $1', [task]);
    await db.end();
    process.stdout.write(JSON.stringify({ system, rows: r.n, recovered: out.kind, reruns: ran }) + '\n');
}

async function crashCheck(o) {
    const lines = [];
    for (const system of ['pgboss', 'idem']) {
        const res = {};
        for (const stage of ['1', '2']) {
            const argv = process.argv.slice(1).concat(['--child', `crash-${system}:${stage}`, '--tag', o.tag]);
            Object.assign(res, await new Promise((resolve, reject) => {
                const c = spawn(process.execPath, argv, { stdio: ['ignore', 'pipe', 'inherit'] });
                const guard = setTimeout(() => c.kill('SIGKILL'), 120_000);
                let out = '';
                c.stdout.on('data', (d) => { out += d; });
                c.on('exit', (code, signal) => {
                    clearTimeout(guard);
                    if (stage === '1') return signal === 'SIGKILL' ? resolve({}) : reject(new Error(`peer_bench: crash stage 1 of ${system} ended without the kill`));
                    return code === 0 ? resolve(JSON.parse(out.trim().split('\n').pop())) : reject(new Error(`peer_bench: crash stage 2 of ${system} exited ${code}`));
                });
            }));
        }
        lines.push(res);
    }
    return lines;
}

// ---- one system, one round (a child process) --------------------------------------------------

async function child(o) {
    const idem = require(o['idem-client']);
    const admin = await idem.connect(o.dsn, 'peer bench check');
    const { rows: [{ pid }] } = await admin.query('SELECT pg_backend_pid() AS pid');
    const postmaster = statOf(pid).ppid;
    const tally = new Tally();
    const system = o.child;
    const run = system.startsWith('idem') ? await runIdem(o, o.round, tally, system === 'idem-wide')
        : system === 'http' ? await runHttp(o, o.round, tally)
        : await runPgboss(o, o.round, tally, system === 'pgboss-keyed');
    await sleep(1000); // warm-up: connections open, plans cached, the stream flowing
    const db0 = await dbCounters(admin);
    const srv0 = clusterCpuUs(postmaster), cli0 = process.cpuUsage(), svc0 = run.pids.map(processCpuUs);
    tally.t0 = Date.now();
    tally.open = true;
    await sleep(o.seconds * 1000);
    tally.open = false;
    tally.t1 = Date.now();
    const db1 = await dbCounters(admin);
    const srv1 = clusterCpuUs(postmaster), cli1 = process.cpuUsage(cli0), svc1 = run.pids.map(processCpuUs);
    run.stop();
    const drainDeadline = sleep(o.drain * 1000).then(() => 'timeout');
    if ((await Promise.race([run.drained(), drainDeadline])) === 'timeout') tally.error('the drain did not end');
    const ids = run.expected();
    await run.close();
    // Exactly once: the business rows per task id, for every task the run started.
    const table = system === 'pgboss-keyed' ? 'bench_peer.effects_keyed' : system === 'http' ? 'shop.orders' : 'bench_peer.effects';
    const col = system === 'http' ? 'order_id' : 'task_id';
    const { rows: [chk] } = await admin.query(`SELECT count(*) FILTER (WHERE n = 1)::int AS once, count(*) FILTER (WHERE n > 1)::int AS more,
            coalesce(sum(n - 1) FILTER (WHERE n > 1), 0)::int AS extra, coalesce(sum(n), 0)::int AS total_rows
        FROM (SELECT t.id, count(e.${col}) AS n FROM unnest($1::text[]) AS t(id) LEFT JOIN ${table} e ON e.${col} = t.id GROUP BY t.id) c`, [ids]);
    await admin.end();
    const secs = (tally.t1 - tally.t0) / 1000;
    const cliUs = (cli1.user + cli1.system) + svc1.reduce((a, v, i) => a + v - svc0[i], 0);
    const out = {
        system, round: o.round, seconds: secs, tasks: tally.done, rate: tally.done / secs,
        srvUsPerTask: tally.done ? (srv1 - srv0) / tally.done : -1, cliUsPerTask: tally.done ? cliUs / tally.done : -1,
        commitsPerTask: (db1.commits - db0.commits) / tally.done, walBytesPerTask: (db1.wal - db0.wal) / tally.done,
        walSyncsPerTask: (db1.syncs - db0.syncs) / tally.done,
        attempts: tally.attempts, faults: tally.faults, errors: tally.errors, lastError: tally.lastError,
        completedWithoutRow: tally.completedWithoutRow ?? 0,
        started: ids.length, once: chk.once, more: chk.more, extra: chk.extra, missing: ids.length - chk.once - chk.more,
    };
    process.stdout.write(JSON.stringify(out) + '\n');
}

// ---- the parent: rounds, medians, the table ---------------------------------------------------

function median(v) {
    const s = [...v].sort((a, b) => a - b);
    return s.length ? (s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2) : NaN;
}

function loadavg() {
    return fs.readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
}

async function parent(o) {
    const systems = o.systems.split(',');
    o.tag = Date.now().toString(36); // task ids of this invocation: a second run meets none of the first's keys
    const results = Object.fromEntries(systems.map((s) => [s, []]));
    const loads = [loadavg()];
    for (let r = 0; r < o.rounds; r++) {
        for (let k = 0; k < systems.length; k++) {
            const system = systems[(k + r) % systems.length];
            const argv = process.argv.slice(1).concat(['--child', system, '--round', String(r), '--tag', o.tag]);
            const res = await new Promise((resolve, reject) => {
                const c = spawn(process.execPath, argv, { stdio: ['ignore', 'pipe', 'inherit'] });
                // A child that hangs is killed: start-up, the window, the drain and the check, bounded.
                const guard = setTimeout(() => c.kill('SIGKILL'), (o.seconds + o.drain + 120) * 1000);
                c.on('exit', () => clearTimeout(guard));
                let out = '';
                c.stdout.on('data', (d) => { out += d; });
                c.on('exit', (code) => (code === 0 ? resolve(JSON.parse(out.trim().split('\n').pop())) : reject(new Error(`peer_bench: ${system} round ${r + 1} exited ${code}`))));
            });
            results[system].push(res);
            loads.push(loadavg());
            console.error(`round ${r + 1} ${system}: ${res.rate.toFixed(0)} tasks/s, server ${res.srvUsPerTask.toFixed(0)} µs/task, ` +
                `client ${res.cliUsPerTask.toFixed(0)} µs/task, ${res.commitsPerTask.toFixed(2)} commits, ${res.walSyncsPerTask.toFixed(2)} WAL syncs, ` +
                `${res.walBytesPerTask.toFixed(0)} WAL bytes per task; ${res.started} tasks: ${res.once} once, ${res.more} more than once (+${res.extra} rows), ` +
                `${res.missing} missing${res.completedWithoutRow ? ` (${res.completedWithoutRow} jobs completed without a row)` : ''}; ${res.faults} injected faults, ${res.errors} errors${res.errors ? ' (' + res.lastError + ')' : ''}; load ${loadavg()}`);
        }
    }
    const m = {};
    let bad = false;
    console.log(`\n${o.rounds} rounds of ${o.seconds} s, systems alternated; ${o.workers} workers; pg-boss batch ${o.batch}; ` +
        `fault ${o.fault * 100}% of attempts (half before, half after the write); ${o.dup * 100}% of tasks submitted twice`);
    console.log(`load average before and after each run: ${loads.join(' | ')}\n`);
    console.log('| system | tasks/s | server µs/task | client µs/task | commits/task | WAL syncs/task | WAL bytes/task | each run (tasks/s) | tasks checked | exactly one row | more than one | extra rows | no row |');
    console.log('|---|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|---:|---:|');
    for (const s of systems) {
        const rs = results[s];
        const med = (f) => median(rs.map((x) => x[f]));
        m[s] = { rate: med('rate'), srv: med('srvUsPerTask'), cli: med('cliUsPerTask') };
        const sum = (f) => rs.reduce((a, x) => a + x[f], 0);
        console.log(`| ${s} | ${m[s].rate.toFixed(0)} | ${m[s].srv.toFixed(0)} | ${m[s].cli.toFixed(0)} | ${med('commitsPerTask').toFixed(2)} | ${med('walSyncsPerTask').toFixed(2)} | ${med('walBytesPerTask').toFixed(0)} | ${rs.map((x) => x.rate.toFixed(0)).join(' ')} | ` +
            `${sum('started')} | ${sum('once')} | ${sum('more')} | ${sum('extra')} | ${sum('missing')} |`);
        // The exactly-once check must hold for Idem's systems; what pg-boss does (duplicates, a job
        // completed without its row) is the finding, printed, not a failure of the run.
        if (!s.startsWith('pgboss') && (sum('more') || sum('missing') || sum('errors'))) bad = true;
    }
    const ratio = (a, b) => (m[a] && m[b] ? (m[a].rate / m[b].rate).toFixed(2) : '-');
    const cpu = (a, b) => (m[a] && m[b] ? (m[a].srv / m[b].srv).toFixed(2) : '-');
    const pairs = [['idem', 'pgboss'], ['idem', 'pgboss-keyed'], ['idem-wide', 'pgboss'], ['http', 'pgboss'], ['http', 'idem']].filter(([a, b]) => m[a] && m[b]);
    if (pairs.length) console.log('\n| ratio | tasks/s | server CPU per task |\n|---|---:|---:|');
    for (const [a, b] of pairs)
        console.log(`| ${a} / ${b} | ${ratio(a, b)} | ${cpu(a, b)} |`);
    if (o.crash) {
        console.log('\n| crash mid-handler: the row written, the process SIGKILLed before the success was recorded | business rows for the task | recovered as | handler runs after the crash |\n|---|---:|---|---:|');
        for (const c of await crashCheck(o)) {
            console.log(`| ${c.system === 'idem' ? 'idem (one transaction: the row rolled back with the crash; lease 1 s)' : 'pgboss (the job expired after 1 s, failed by the supervisor, retried)'} | ${c.rows} | ${c.recovered} | ${c.reruns} |`);
            if (c.system === 'idem' && c.rows !== 1) bad = true;
        }
    }
    console.log(`\nexactly once: ${bad ? 'FAILED for Idem (see the table)' : 'held for every Idem system (idem, idem-wide, http)'}`);
    process.exitCode = bad ? 1 : 0;
}

const o = args();
(o.child?.startsWith('crash-') ? crash(o) : o.child ? child(o) : parent(o)).catch((e) => {
    console.error(e?.stack ?? String(e));
    process.exit(1);
});
