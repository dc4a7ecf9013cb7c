// A scratch database per test run: created from IDEM_TEST_DSN (a superuser DSN of the test
// cluster), migrated with `idemctl migrate`, dropped at the end. No database is a failure.
import { spawnSync } from 'child_process';
import { randomBytes } from 'crypto';
import type { Client } from 'pg';

import { connect } from '../src/index';
import { idemctlPath } from './cpp';

export function testDsn(): string {
    const dsn = process.env.IDEM_TEST_DSN;
    if (!dsn) throw new Error('IDEM_TEST_DSN is not set: the client tests need the test cluster (scripts/test.sh sets it)');
    return dsn;
}

/** The same DSN naming another database (a later keyword wins in libpq's form). */
export function withDatabase(dsn: string, db: string): string {
    if (/^postgres(ql)?:\/\//.test(dsn)) {
        const u = new URL(dsn);
        u.pathname = '/' + encodeURIComponent(db);
        return u.toString();
    }
    return `${dsn} dbname=${db}`;
}

export interface Scratch {
    name: string;
    dsn: string;
    drop(): Promise<void>;
}

export async function createScratch(): Promise<Scratch> {
    const admin = testDsn();
    const name = `idem_node_${randomBytes(6).toString('hex')}`;
    const c = await connect(admin, 'idem-client tests');
    try {
        await c.query(`CREATE DATABASE ${name}`);
    } finally {
        await c.end();
    }
    const dsn = withDatabase(admin, name);
    const m = spawnSync(idemctlPath(), ['migrate', '--dsn', dsn, '--no-roles'], { encoding: 'utf8' });
    if (m.status !== 0) throw new Error(`idemctl migrate failed (${m.status}): ${m.stderr}${m.stdout}`);
    return {
        name,
        dsn,
        async drop() {
            const d = await connect(admin, 'idem-client tests');
            try {
                await d.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
            } finally {
                await d.end();
            }
        },
    };
}

/** An operator's requeue with re-execute (schema v25) of a key as it stands now; asserts it applied. */
export async function requeueReexecute(admin: Client, key: string): Promise<void> {
    const seen = await admin.query(
        'SELECT status, (extract(epoch FROM updated_at) * 1000000)::bigint::text AS us FROM idem.task_idempotency WHERE idempotency_key = $1',
        [key],
    );
    const r = await admin.query('SELECT outcome FROM idem.idem_requeue_reexecute($1, $2, $3, 3, $4, $5)', [
        key, seen.rows[0].status, seen.rows[0].us, 're-execute after the outage', 'node test',
    ]);
    if (r.rows[0].outcome !== 'applied') throw new Error(`requeue with re-execute of ${key}: ${r.rows[0].outcome}`);
}

export type { Client };
