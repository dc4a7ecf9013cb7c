#!/usr/bin/env node
// The example order service of docs/http-idempotency.md in TypeScript: POST /orders (requires
// Idempotency-Key) inserts one row into shop.orders in the atomic phase and answers 201 with
// Location; GET /orders/:id reads it back. X-Demo-Fail: <status> answers that status before
// writing; X-Demo-Sleep-Ms: N waits N ms before writing.
//
//     node dist/src/http/example-orders.js --dsn DSN --listen 127.0.0.1:8002 [--framework express|fastify] [--bare]
//         [--one-transaction]
//
// --bare serves the same handler without the middleware (bench/); --one-transaction (or
// IDEM_HTTP_ONE_TRANSACTION=1) claims, inserts and stores the response in one transaction;
// --record-at-commit (or IDEM_HTTP_RECORD_AT_COMMIT=1) inserts, then records the key with the response in
// one statement, one commit. --redrive
// (schema v25) makes POST /orders re-drivable: its requests are stored and a re-driver calls the same
// handler again with the stored body when an operator requeues one with "re-execute".
import * as fs from 'fs';
import * as path from 'path';
import type { PoolClient } from 'pg';

import { HttpIdempotency, operationOf } from './core';
import type { HttpRequest, HttpResponse, IdemContext, RouteOptions } from './core';
import { expressIdempotency } from './express';
import { fastifyIdempotency } from './fastify';

// The table's definition, shared with the Python example (clients/shop-orders.sql, from
// dist/src/http). The schema is created only when missing: CREATE SCHEMA IF NOT EXISTS needs CREATE
// on the database even when the schema exists (scripts/run.sh creates it for the demo's login).
const schemaFile = path.join(__dirname, '..', '..', '..', '..', 'shop-orders.sql');

interface Order {
    order_id: string;
    amount_cents: number;
    currency: string;
}

export function parseOrder(body: unknown): Order | string {
    let doc = body;
    if (Buffer.isBuffer(doc)) {
        try {
            doc = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(doc));
        } catch {
            return 'the body is not JSON';
        }
    }
    if (!doc || typeof doc !== 'object' || Array.isArray(doc)) return 'the body is not a JSON object';
    const { order_id, amount_cents, currency } = doc as Record<string, unknown>;
    if (typeof order_id !== 'string' || order_id.length < 1 || order_id.length > 200) return 'order_id must be a string of 1 to 200 characters';
    if (typeof amount_cents !== 'number' || !Number.isSafeInteger(amount_cents) || amount_cents <= 0 || amount_cents >= 1e12)
        return 'amount_cents must be a positive integer';
    if (typeof currency !== 'string' || !/^[A-Za-z]{3}$/.test(currency)) return 'currency must be three letters';
    return { order_id, amount_cents, currency: currency.toUpperCase() };
}

type Header = (name: string) => string | undefined;
export interface Answer {
    status: number;
    headers: Record<string, string>;
    body: unknown;
}

/** The handler, framework-free. */
export async function createOrder(
    pool: import('pg').Pool,
    ctx: IdemContext | undefined,
    body: unknown,
    header: Header,
): Promise<Answer> {
    const order = parseOrder(body);
    if (typeof order === 'string') return { status: 400, headers: {}, body: { error: order } };
    const sleepMs = header('x-demo-sleep-ms');
    if (sleepMs && /^\d+$/.test(sleepMs)) await new Promise((r) => setTimeout(r, Math.min(Number(sleepMs), 120_000)));
    const fail = header('x-demo-fail');
    if (fail && /^\d{3}$/.test(fail) && Number(fail) >= 100 && Number(fail) <= 599)
        return { status: Number(fail), headers: {}, body: { error: `X-Demo-Fail asked for ${fail}` } };
    const insert = async (tx: PoolClient, key: string | null) => {
        const { rows } = await tx.query(
            'INSERT INTO shop.orders (order_id, amount_cents, currency, idempotency_key) VALUES ($1, $2, $3, $4) RETURNING id::text AS id',
            [order.order_id, order.amount_cents, order.currency, key],
        );
        return Number(rows[0].id);
    };
    let id: number;
    if (ctx && ctx.tx) {
        id = await insert(ctx.tx, ctx.idempotencyKey);
    } else {
        const c = await pool.connect();
        try {
            await c.query('BEGIN');
            id = await insert(c, null);
            await c.query('COMMIT');
        } finally {
            c.release();
        }
    }
    return { status: 201, headers: { Location: `/orders/${id}` }, body: { ...order, id } };
}

export async function readOrder(pool: import('pg').Pool, id: string): Promise<Answer> {
    if (!/^\d{1,18}$/.test(id)) return { status: 404, headers: {}, body: { error: 'no such order' } };
    const { rows } = await pool.query(
        'SELECT id::text AS id, order_id, amount_cents::text AS amount_cents, currency FROM shop.orders WHERE id = $1',
        [id],
    );
    if (rows.length === 0) return { status: 404, headers: {}, body: { error: 'no such order' } };
    const r = rows[0];
    return { status: 200, headers: {}, body: { id: Number(r.id), order_id: r.order_id, amount_cents: Number(r.amount_cents), currency: r.currency } };
}

/** The handler as a re-driver calls it: the stored request in, the response out. */
export function redriveOrder(pool: import('pg').Pool) {
    return async (request: HttpRequest, ctx: IdemContext): Promise<HttpResponse> => {
        const a = await createOrder(pool, ctx, request.body, (n) => request.headers.get(n.toLowerCase())?.[0]);
        const body = Buffer.from(JSON.stringify(a.body), 'utf8');
        const headers: [string, string][] = [['content-type', 'application/json; charset=utf-8'], ...Object.entries(a.headers)];
        return { status: a.status, headers, body };
    };
}

function expressApp(idem: HttpIdempotency | null, pool: import('pg').Pool, tenant: string, route: RouteOptions): any {
    // eslint-disable-next-line @typescript-eslint/no-var-requires
    const express = require('express');
    const app = express();
    const send = (res: any, a: Answer) => res.status(a.status).set(a.headers).json(a.body);
    const raw = express.raw({ type: () => true, limit: '1mb' });
    const guard = idem ? [expressIdempotency(idem, { ...route, tenant: () => tenant })] : [];
    app.post('/orders', ...guard, raw, async (req: any, res: any) => {
        try {
            send(res, await createOrder(pool, req.idem, req.body, (n) => req.get(n)));
        } catch (e) {
            res.status(500).json({ error: String((e as Error).message) });
        }
    });
    app.get('/orders/:id', async (req: any, res: any) => {
        try {
            send(res, await readOrder(pool, req.params.id));
        } catch (e) {
            res.status(500).json({ error: String((e as Error).message) });
        }
    });
    return app;
}

// Fastify from the npm registry (clients/node/http-deps, installed by its npm-ci.sh).
function fastifyApp(idem: HttpIdempotency | null, pool: import('pg').Pool, tenant: string, route: RouteOptions): any {
    // eslint-disable-next-line @typescript-eslint/no-var-requires
    const fastify = require('fastify');
    const app = fastify({ bodyLimit: 16 << 20 });
    // Any body reaches the handler as bytes (the handler parses it, as the other examples do).
    app.removeAllContentTypeParsers();
    app.addContentTypeParser('*', { parseAs: 'buffer' }, (_req: unknown, body: Buffer, done: (e: null, b: Buffer) => void) =>
        done(null, body),
    );
    if (idem) app.register(fastifyIdempotency(idem, { tenant: () => tenant }));
    // Returned, not reply.send(): the reply is sent once, by Fastify, after the onSend hooks.
    const send = (reply: any, a: Answer) => {
        reply.code(a.status).headers(a.headers);
        return a.body;
    };
    app.post('/orders', { config: { idempotency: idem ? route : undefined } }, async (request: any, reply: any) =>
        send(reply, await createOrder(pool, request.idem ?? undefined, request.body ?? Buffer.alloc(0), (n) => request.headers[n])),
    );
    app.get('/orders/:id', async (request: any, reply: any) => send(reply, await readOrder(pool, request.params.id)));
    return app;
}

async function main(): Promise<void> {
    const args = process.argv.slice(2);
    const opt = (name: string, def?: string) => {
        const i = args.indexOf(name);
        return i >= 0 && i + 1 < args.length ? args[i + 1] : def;
    };
    const dsn = opt('--dsn');
    if (!dsn) {
        console.error('usage: example-orders --dsn DSN --listen HOST:PORT [--framework express|fastify] [--tenant T] [--bare] [--one-transaction] [--record-at-commit] [--redrive]');
        process.exit(2);
    }
    const listen = opt('--listen', '127.0.0.1:8002')!;
    const framework = opt('--framework', 'express');
    const bare = args.includes('--bare');
    const oneTransaction = args.includes('--one-transaction') || process.env.IDEM_HTTP_ONE_TRANSACTION === '1';
    const duplicateWaitMs = Number(process.env.IDEM_HTTP_DUPLICATE_WAIT_MS ?? 2000);
    const recordAtCommit = args.includes('--record-at-commit') || process.env.IDEM_HTTP_RECORD_AT_COMMIT === '1';
    const route: RouteOptions = { redrive: args.includes('--redrive') };
    // A real service resolves the tenant from the authenticated principal.
    const tenant = opt('--tenant', 'default')!;
    const host = listen.slice(0, listen.lastIndexOf(':'));
    const port = Number(listen.slice(listen.lastIndexOf(':') + 1));
    // eslint-disable-next-line @typescript-eslint/no-var-requires
    const pg = require('pg') as typeof import('pg');
    const { clientConfig } = await import('../conninfo');
    const pool = new pg.Pool({ ...clientConfig(dsn, 'idem example orders'), max: 20 });
    pool.on('error', () => undefined);
    const c = await pool.connect();
    try {
        await c.query('BEGIN');
        // Two services starting together would race on CREATE ... IF NOT EXISTS.
        await c.query("SELECT pg_advisory_xact_lock(hashtext('idem example shop.orders'))");
        const { rows } = await c.query("SELECT to_regnamespace('shop') IS NULL AS missing");
        if (rows[0].missing) await c.query('CREATE SCHEMA shop');
        await c.query(fs.readFileSync(schemaFile, 'utf8'));
        await c.query('COMMIT');
    } finally {
        c.release();
    }
    const leaseMs = Number(process.env.IDEM_HTTP_LEASE_MS ?? 30_000);
    const maxResponseBytes = Number(process.env.IDEM_HTTP_MAX_RESPONSE_BYTES ?? 1 << 20);
    const idem = bare ? null : new HttpIdempotency(dsn, {
              leaseMs,
              maxResponseBytes,
              retry: { baseDelayMs: 200, maxDelayMs: 2000 },
              oneTransaction,
              duplicateWaitMs,
              recordAtCommit,
          });
    // The re-driver of POST /orders: what an operator requeues with re-execute runs again here.
    const redriver = idem && route.redrive ? idem.redriver(tenant, operationOf('POST', '/orders'), redriveOrder(pool), route) : null;
    void redriver?.start().catch((e) => console.error(`example-orders: re-driver stopped: ${(e as Error).message}`));
    if (framework === 'fastify') {
        await fastifyApp(idem, pool, tenant, route).listen({ host, port });
    } else if (framework !== 'express') {
        throw new Error(`unknown --framework ${framework}`);
    } else {
        const server = expressApp(idem, pool, tenant, route).listen(port, host);
        await new Promise<void>((resolve, reject) => {
            server.once('listening', resolve);
            server.once('error', reject);
        });
    }
    const stop = () => process.exit(0);
    process.on('SIGTERM', stop);
    process.on('SIGINT', stop);
}

if (require.main === module) {
    main().catch((e) => {
        console.error(`example-orders: ${(e as Error).message}`);
        process.exit(1);
    });
}
