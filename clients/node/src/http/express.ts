// The contract as Express middleware, put on the routes that opt in (Express knows the route
// template, req.route.path, only there):
//
//     const idem = new HttpIdempotency(dsn);
//     app.post('/orders', expressIdempotency(idem), async (req, res) => {
//         await req.idem.tx.query('INSERT ...');          // the atomic phase: commits with the stored response
//         res.status(201).location(`/orders/${id}`).json(order);
//     });
//
// It reads the body itself (before any body parser; req.body is then the parsed JSON or the
// bytes) or takes what a parser already read. No Express types are needed: Node's own
// IncomingMessage and ServerResponse are what it touches.
import type { IncomingMessage, ServerResponse } from 'http';

import { Claimed, HttpIdempotency, HttpRequest, HttpResponse, RouteOptions, errorResponse, headerMap } from './core';

export interface ExpressOptions extends RouteOptions {
    /** The tenant of a request (typically the authenticated principal); default "default". */
    tenant?: (req: any) => string;
}

type Req = IncomingMessage & { route?: { path?: unknown }; body?: unknown; _body?: boolean; idem?: unknown; baseUrl?: string };
type Next = (err?: unknown) => void;

/** Reads the body up to limit + 1 bytes (null when the client went away first). */
export function readBody(req: IncomingMessage, limit: number): Promise<Buffer | null> {
    return new Promise((resolve) => {
        const chunks: Buffer[] = [];
        let size = 0;
        let done = false;
        const finish = (v: Buffer | null) => {
            if (done) return;
            done = true;
            req.removeListener('data', onData);
            resolve(v);
        };
        const onData = (chunk: Buffer) => {
            chunks.push(chunk);
            size += chunk.length;
            if (size > limit) {
                req.pause();
                finish(Buffer.concat(chunks));
            }
        };
        req.on('data', onData);
        req.on('end', () => finish(Buffer.concat(chunks)));
        req.on('error', () => finish(null));
        req.on('aborted', () => finish(null));
    });
}

/** Sends one of the core's answers on a response that has not started. */
export function sendResponse(res: ServerResponse, r: HttpResponse, end = res.end.bind(res)): void {
    res.statusCode = r.status;
    for (const [n, v] of r.headers) res.setHeader(n, v);
    end(r.body);
}

export function expressIdempotency(idem: HttpIdempotency, options: ExpressOptions = {}) {
    return (req: Req, res: ServerResponse, next: Next): void => {
        void handle(idem, options, req, res, next).catch(next);
    };
}

async function handle(idem: HttpIdempotency, options: ExpressOptions, req: Req, res: ServerResponse, next: Next): Promise<void> {
    const method = (req.method ?? 'GET').toUpperCase();
    const path = req.route?.path;
    if (!idem.methods.has(method) || typeof path !== 'string') return next();
    const template = (req.baseUrl ?? '') + path;
    let body: Buffer;
    let parsedBody: unknown;
    if (req._body) {
        parsedBody = req.body;
        body = Buffer.isBuffer(req.body) ? req.body : typeof req.body === 'string' ? Buffer.from(req.body, 'utf8') : Buffer.alloc(0);
    } else {
        const read = await readBody(req, idem.maxRequestBytes);
        if (read === null) return; // the client went away before the handler started: nothing ran
        body = read;
    }
    const request: HttpRequest = {
        method, template, headers: headerMap(req.rawHeaders), body, tenant: options.tenant ? options.tenant(req) : 'default', parsedBody,
    };
    let begun: HttpResponse | Claimed | null;
    try {
        begun = await idem.begin(request, options);
    } catch (e) {
        return sendResponse(res, errorResponse(e));
    }
    if (!req._body) {
        // Body parsers after this one see the body as read (body-parser skips a request marked _body).
        req._body = true;
        req.body = body;
        if (/json/i.test(String(req.headers['content-type'] ?? ''))) {
            try {
                req.body = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(body));
            } catch {
                req.body = body;
            }
        }
    }
    if (begun === null) return next();
    if (!(begun instanceof Claimed)) return sendResponse(res, begun);
    const claimed = begun;
    req.idem = claimed.context;
    capture(res, async (response, send) => {
        let out: HttpResponse = response;
        try {
            out = await claimed.finish(response);
        } catch (e) {
            out = errorResponse(e);
            return send(out, true);
        }
        send(out, false);
    });
    next();
}

/**
 * Holds the handler's response back until it ends, then hands it to onEnd, whose send() writes
 * it (replace: the answer is another one, headers and all).
 */
export function capture(
    res: ServerResponse,
    onEnd: (r: HttpResponse, send: (r: HttpResponse, replace: boolean) => void) => Promise<void>,
): void {
    const origEnd = res.end.bind(res);
    const origWriteHead = res.writeHead.bind(res);
    const chunks: Buffer[] = [];
    const toBuffer = (chunk: unknown, encoding?: unknown) =>
        Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk), typeof encoding === 'string' ? (encoding as BufferEncoding) : 'utf8');
    (res as any).writeHead = (status: number, ...rest: unknown[]) => {
        res.statusCode = status;
        const headers = rest.find((r) => r && typeof r === 'object') as Record<string, string> | undefined;
        if (headers) for (const [n, v] of Object.entries(headers)) res.setHeader(n, v);
        return res;
    };
    (res as any).write = (chunk: unknown, encoding?: unknown, cb?: unknown) => {
        if (chunk !== undefined && chunk !== null) chunks.push(toBuffer(chunk, encoding));
        if (typeof encoding === 'function') (encoding as () => void)();
        else if (typeof cb === 'function') (cb as () => void)();
        return true;
    };
    let ended = false;
    (res as any).end = (chunk?: unknown, encoding?: unknown) => {
        if (ended) return res;
        ended = true;
        if (chunk !== undefined && chunk !== null && typeof chunk !== 'function') chunks.push(toBuffer(chunk, encoding));
        const body = Buffer.concat(chunks);
        const headers: [string, string][] = [];
        for (const [n, v] of Object.entries(res.getHeaders()))
            if (v !== undefined) for (const one of Array.isArray(v) ? v : [String(v)]) headers.push([n, one]);
        void onEnd({ status: res.statusCode, headers, body }, (out, replace) => {
            res.writeHead = origWriteHead;
            if (replace) {
                for (const n of res.getHeaderNames()) res.removeHeader(n);
                sendResponse(res, out, origEnd);
            } else {
                res.setHeader('content-length', String(out.body.length));
                origEnd(out.body);
            }
        });
        return res;
    };
}
