// The contract as a Fastify plugin; routes opt in with their config:
//
//     await app.register(fastifyIdempotency(new HttpIdempotency(dsn)));
//     app.post('/orders', { config: { idempotency: {} } }, async (request, reply) => {
//         await request.idem.tx.query('INSERT ...');      // the atomic phase
//         reply.code(201).header('location', `/orders/${id}`);
//         return order;
//     });
//
// The body's bytes are kept as they arrive (preParsing) for the fingerprint; the claim runs in
// preHandler (the route template is request.routeOptions.url / routerPath); the response is
// recorded in onSend, after serialisation, before a byte is sent. Written against Fastify 4's
// hooks without its types, so the client builds without Fastify installed.
import { Readable } from 'stream';

import { Claimed, HttpIdempotency, HttpResponse, RouteOptions, errorResponse, headerMap } from './core';
import { readBody } from './express';

export interface FastifyOptions {
    /** The tenant of a request (typically the authenticated principal); default "default". */
    tenant?: (request: any) => string;
}

interface State {
    raw?: Buffer;
    claimed?: Claimed;
    error?: unknown;
}

const state = Symbol('idem');

function routeOptions(request: any): { template: string; opts: RouteOptions } | null {
    const config = request.routeOptions?.config ?? request.routeConfig ?? request.context?.config;
    const opts = config?.idempotency;
    if (!opts) return null;
    const template = request.routeOptions?.url ?? request.routerPath;
    if (typeof template !== 'string') return null;
    return { template, opts: opts === true ? {} : (opts as RouteOptions) };
}

function send(reply: any, r: HttpResponse): unknown {
    reply.code(r.status);
    for (const [n, v] of r.headers) if (n !== 'content-length') reply.header(n, v);
    return reply.send(r.body);
}

export function fastifyIdempotency(idem: HttpIdempotency, options: FastifyOptions = {}) {
    const plugin = (fastify: any, _opts: unknown, done: (err?: Error) => void) => {
        fastify.decorateRequest('idem', null);
        fastify.addHook('preParsing', async (request: any, reply: any, payload: any) => {
            if (!idem.methods.has(String(request.method).toUpperCase()) || !routeOptions(request)) return payload;
            const raw = (await readBody(payload as never, idem.maxRequestBytes)) ?? Buffer.alloc(0);
            const tooLarge = idem.tooLarge(raw.length);
            if (tooLarge) {
                send(reply, tooLarge);
                return reply;
            }
            request[state] = { raw } as State;
            const out = Readable.from(raw.length ? [raw] : []);
            (out as any).receivedEncodedLength = raw.length;
            return out;
        });
        fastify.addHook('preHandler', async (request: any, reply: any) => {
            const route = routeOptions(request);
            if (!idem.methods.has(String(request.method).toUpperCase()) || !route) return;
            const st: State = request[state] ?? (request[state] = {});
            let begun: HttpResponse | Claimed | null;
            try {
                begun = await idem.begin(
                    {
                        method: String(request.method).toUpperCase(),
                        template: route.template,
                        headers: headerMap(request.raw.rawHeaders),
                        body: st.raw ?? Buffer.alloc(0),
                        tenant: options.tenant ? options.tenant(request) : 'default',
                        parsedBody: st.raw === undefined ? request.body : undefined,
                    },
                    route.opts,
                );
            } catch (e) {
                return send(reply, errorResponse(e));
            }
            if (begun === null) return;
            if (!(begun instanceof Claimed)) return send(reply, begun);
            st.claimed = begun;
            request.idem = begun.context;
        });
        fastify.addHook('onError', async (request: any, _reply: any, error: unknown) => {
            const st: State | undefined = request[state];
            if (st) st.error = error;
        });
        fastify.addHook('onSend', async (request: any, reply: any, payload: unknown) => {
            const st: State | undefined = request[state];
            const claimed = st?.claimed;
            if (!st || !claimed) return payload;
            st.claimed = undefined;
            if (st.error !== undefined) {
                const e = st.error as Error;
                const replay = await claimed.abandon(`handler raised ${e?.name ?? 'Error'}: ${String(e?.message ?? e).slice(0, 200)}`);
                if (replay === undefined) return payload;
                // Another run of the key succeeded meanwhile: its answer, not the error.
                reply.code(replay.status);
                for (const [n, v] of replay.headers) if (n !== 'content-length') reply.header(n, v);
                return replay.body;
            }
            const body = Buffer.isBuffer(payload) ? payload : typeof payload === 'string' ? Buffer.from(payload, 'utf8') : Buffer.alloc(0);
            const headers: [string, string][] = [];
            for (const [n, v] of Object.entries(reply.getHeaders() as Record<string, unknown>))
                if (v !== undefined) for (const one of Array.isArray(v) ? v : [String(v)]) headers.push([n, String(one)]);
            try {
                await claimed.finish({ status: reply.statusCode, headers, body });
            } catch (e) {
                const r = errorResponse(e);
                reply.code(r.status);
                for (const [n, v] of r.headers) if (n !== 'content-length') reply.header(n, v);
                return r.body;
            }
            return payload;
        });
        done();
    };
    // Hooks for the whole application, not an encapsulated child (what fastify-plugin does).
    (plugin as any)[Symbol.for('skip-override')] = true;
    (plugin as any)[Symbol.for('fastify.display-name')] = 'idem-idempotency';
    return plugin;
}
