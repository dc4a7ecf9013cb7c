// The v1 request digest, as core/digest.cpp computes it: "v1:" + lowercase hex SHA-256 of the
// RFC 8785 canonical JSON of the request without the fields its caller names as irrelevant.
import { createHash } from 'crypto';

import { JsonValue, canonicalJson, canonicalJsonOfParsed, parseJsonStrict } from './canonicaljson';

/** Prefix of every digest this version computes: a stored digest names its rule. */
export const requestDigestPrefix = 'v1:';

function splitPath(field: string): string[] {
    if (typeof field !== 'string' || field.length === 0) throw new RangeError('an ignored field name is empty');
    const segments = field.split('.');
    if (segments.some((s) => s.length === 0))
        throw new RangeError(
            `ignored field '${field}' has an empty path segment (a leading, trailing or doubled '.')`,
        );
    return segments;
}

function isObject(v: unknown): v is Record<string, unknown> {
    return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function has(o: Record<string, unknown>, name: string): boolean {
    return Object.prototype.hasOwnProperty.call(o, name);
}

function copyWithout(o: Record<string, unknown>, name: string): Record<string, unknown> {
    const out: Record<string, unknown> = Object.create(null);
    for (const k of Object.keys(o))
        if (k !== name) Object.defineProperty(out, k, { value: o[k], enumerable: true, writable: true, configurable: true });
    return out;
}

/**
 * The request without the named fields. A name is a top-level key; a dotted name such as
 * "meta.trace_id" reaches into nested objects. A top-level key spelled exactly like the whole name
 * (dots included) is the one removed when it exists; otherwise the dotted path is followed. Names
 * that match nothing change nothing. Every name is checked (RangeError for an empty name or path
 * segment) even when the request is not an object. The request itself is not modified.
 */
export function withoutFields(request: unknown, ignoreFields: readonly string[] = []): unknown {
    const paths = ignoreFields.map(splitPath);
    if (!isObject(request)) return request;
    let out: Record<string, unknown> = request;
    ignoreFields.forEach((field, i) => {
        if (has(out, field)) {
            out = copyWithout(out, field);
            return;
        }
        const segments = paths[i];
        if (segments.length < 2) return;
        // Follow the path; copy only the objects on it, and only if something is removed.
        const chain: Record<string, unknown>[] = [out];
        for (let k = 0; k + 1 < segments.length; ++k) {
            const here = chain[chain.length - 1];
            if (!has(here, segments[k])) return;
            const next = here[segments[k]];
            if (!isObject(next)) return;
            chain.push(next);
        }
        const last = segments[segments.length - 1];
        if (!has(chain[chain.length - 1], last)) return;
        let replacement = copyWithout(chain[chain.length - 1], last);
        for (let k = chain.length - 2; k >= 0; --k) {
            const copy = copyWithout(chain[k], segments[k]);
            Object.defineProperty(copy, segments[k], {
                value: replacement,
                enumerable: true,
                writable: true,
                configurable: true,
            });
            replacement = copy;
        }
        out = replacement;
    });
    return out;
}

/** The canonical UTF-8 bytes that the digest hashes. */
export function canonicalBytes(request: unknown, ignoreFields: readonly string[] = []): Buffer {
    return Buffer.from(canonicalJson(withoutFields(request, ignoreFields)), 'utf8');
}

/** "v1:" + lowercase hex SHA-256 of the given canonical bytes. */
export function digestOfCanonical(canonical: Uint8Array | string): string {
    return requestDigestPrefix + createHash('sha256').update(canonical).digest('hex');
}

/**
 * The v1 digest of a request given as a JavaScript value (plain objects, arrays, strings, finite
 * numbers, bigints, booleans, null). An integral number past 2^53 - 1 is refused (number_range):
 * JSON.parse has already rounded it, so it may stand for several integers; pass the request's JSON
 * text to requestDigestFromText instead, whose reader sees every digit. Key order and number spelling do not change it; any value does.
 * Throws JsonError (or TypeError for a value with no JSON form).
 */
export function requestDigest(request: unknown, ignoreFields: readonly string[] = []): string {
    return digestOfCanonical(canonicalBytes(request, ignoreFields));
}

/**
 * The v1 digest of a request given as JSON text: raw bytes (Buffer / Uint8Array), or a string
 * taken as its UTF-8. Parsed strictly (parseJsonStrict), so duplicate keys, lone surrogates,
 * invalid UTF-8, numbers past the double range, an integer literal whose double names another
 * integer (9007199254740993), a non-zero literal that rounds to 0 (1e-400), nesting past 512 and
 * any byte after the value
 * but JSON whitespace are a JsonError.
 */
export function requestDigestFromText(text: Uint8Array | string, ignoreFields: readonly string[] = []): string {
    const paths = ignoreFields.map(splitPath); // a bad name is reported before bad input
    void paths;
    const parsed = withoutFields(parseJsonStrict(text), ignoreFields) as JsonValue;
    return digestOfCanonical(Buffer.from(canonicalJsonOfParsed(parsed), 'utf8'));
}

/**
 * A request as a re-drivable operation's claim stores it (schema v25): its canonical JSON text
 * (ignored fields left out) and that text's v1 digest. TaskStore.claim and runTask take it where a
 * digest goes; the database checks that the digest is the text's before storing anything.
 */
export interface CanonicalRequest {
    readonly text: string;
    readonly digest: string;
}

/** The CanonicalRequest of a request given as a JavaScript value: the text C++ and Python store for the same input. */
export function canonicalRequest(request: unknown, ignoreFields: readonly string[] = []): CanonicalRequest {
    const bytes = canonicalBytes(request, ignoreFields);
    return Object.freeze({ text: bytes.toString('utf8'), digest: digestOfCanonical(bytes) });
}

/** The CanonicalRequest of a request given as JSON text, read strictly as requestDigestFromText reads it. */
export function canonicalRequestFromText(text: Uint8Array | string, ignoreFields: readonly string[] = []): CanonicalRequest {
    ignoreFields.forEach(splitPath); // a bad name is reported before bad input
    const parsed = withoutFields(parseJsonStrict(text), ignoreFields) as JsonValue;
    const canonical = canonicalJsonOfParsed(parsed);
    return Object.freeze({ text: canonical, digest: digestOfCanonical(Buffer.from(canonical, 'utf8')) });
}
