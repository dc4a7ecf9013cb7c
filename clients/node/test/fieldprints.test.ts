// Which field differed (schema v32): a TypeScript worker opts an operation in to field
// fingerprints; a second request with the same key and one field changed conflicts, and the
// database holds the fingerprints the C++ and Python libraries would compute, never a value.
import { strict as assert } from 'assert';
import { after, before, it } from 'node:test';

import { InvalidArgumentError, TaskKey, TaskStore, canonicalRequest, connect, fieldFingerprints, requestDigest } from '../src/index';
import type { Client } from 'pg';
import { Scratch, createScratch } from './scratch';

const fieldKey = 'node-test-field-key-0123456789ab';
let scratch: Scratch;
let admin: Client;
let setupError: unknown;

before(async () => {
    try {
        scratch = await createScratch();
        admin = await connect(scratch.dsn, 'idem-client fields test admin');
    } catch (e) {
        setupError = e;
    }
});

after(async () => {
    await admin?.end().catch(() => undefined);
    await scratch?.drop();
});

it('keeps the fingerprints of a new key and of a conflicting request, and no value', async () => {
    if (setupError) throw setupError;
    const store = new TaskStore(admin, { fingerprintFieldsOf: ['charge'], fieldKey });
    const key = new TaskKey('fpn', 'charge', 'order-n1');
    const first = canonicalRequest({ order_id: 'order-n1', amount_cents: 1250, currency: 'EUR' });
    const c = await store.claim(key, first);
    assert.equal(c.decision, 'acquired');
    await store.complete(admin, key, c.token, '{"ok":true}');
    const changed = canonicalRequest({ order_id: 'order-n1', amount_cents: 1250, currency: 'USD' });
    assert.equal((await store.claim(key, changed)).decision, 'conflict');
    const kept = await admin.query('SELECT fields, field_count FROM idem.idem_request_fields WHERE idempotency_key = $1', [key.str()]);
    assert.deepEqual(kept.rows[0].fields, JSON.parse(fieldFingerprints(first.text, fieldKey).json));
    assert.equal(kept.rows[0].field_count, 3);
    const conflict = await admin.query(
        'SELECT last_fields, last_field_count, last_fields::text AS t FROM idem.task_idempotency_conflicts WHERE idempotency_key = $1',
        [key.str()],
    );
    assert.deepEqual(conflict.rows[0].last_fields, JSON.parse(fieldFingerprints(changed.text, fieldKey).json));
    for (const value of ['1250', 'EUR', 'USD', 'order-n1']) assert.ok(!conflict.rows[0].t.includes(value), value);
});

it('stores nothing for an operation that did not opt in', async () => {
    if (setupError) throw setupError;
    const store = new TaskStore(admin, { fingerprintFieldsOf: ['charge'], fieldKey });
    const key = new TaskKey('fpn', 'refund', 'order-n2');
    const c = await store.claim(key, requestDigest({ amount_cents: 1 }));
    assert.equal(c.decision, 'acquired');
    const kept = await admin.query('SELECT count(*)::int AS n FROM idem.idem_request_fields WHERE idempotency_key = $1', [key.str()]);
    assert.equal(kept.rows[0].n, 0);
    assert.throws(() => new TaskStore(admin, { fingerprintFieldsOf: ['charge'] }), InvalidArgumentError);
    await assert.rejects(store.claim(new TaskKey('fpn', 'charge', 'order-n3'), requestDigest({ a: 1 })), InvalidArgumentError);
});
