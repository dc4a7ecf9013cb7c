// Field fingerprints (schema v32): a short keyed hash per top-level field of the canonical request.
// The same as core/fieldprints.h's fieldFingerprints and the Python client's field_fingerprints,
// byte for byte (clients/corpus/fields.json holds the vectors all three check): for each
// top-level member, the first 8 bytes as 16 lowercase hex digits of HMAC-SHA256, keyed by the
// workers' field key, over the member's canonical text (canonical JSON of the name, ':', canonical
// JSON of the value). At most 64 names of 1 to 256 UTF-8 bytes are fingerprinted, the first in
// UTF-8 byte order of the names; the rest are counted. A reader of the database who lacks the key
// cannot try every value against a fingerprint.
import { KeyObject, createHmac, createSecretKey } from 'crypto';

import { JsonValue, canonicalJsonOfParsed, parseJsonStrict } from './canonicaljson';

export const maxFingerprintFields = 64;
export const maxFingerprintNameBytes = 256;

export interface FieldPrints {
    /** The canonical JSON object: field name -> fingerprint. */
    readonly json: string;
    /** How many top-level fields the request has (those not fingerprinted included). */
    readonly fields: number;
}

/** The key as bytes (a string is taken as UTF-8); RangeError outside 16 to 1024 bytes. */
export function fieldKeyBytes(key: string | Uint8Array): Buffer {
    const bytes = typeof key === 'string' ? Buffer.from(key, 'utf8') : Buffer.from(key);
    if (bytes.length < 16 || bytes.length > 1024) throw new RangeError('the field key must be 16 to 1024 bytes');
    return bytes;
}

/** The key as a KeyObject, made once (TaskStore keeps it): HMAC then skips importing the key per field. */
export function fieldKeyObject(key: string | Uint8Array): KeyObject {
    return createSecretKey(fieldKeyBytes(key));
}

function membersOf(request: { [name: string]: JsonValue }): Map<string, string> {
    const members = new Map<string, string>();
    for (const name of Object.keys(request)) members.set(name, canonicalJsonOfParsed(name) + ':' + canonicalJsonOfParsed(request[name]));
    return members;
}

const isObject = (v: JsonValue): v is { [name: string]: JsonValue } => v !== null && typeof v === 'object' && !Array.isArray(v);

/** The fingerprints of a request given as its canonical JSON text. */
export function fieldFingerprints(canonicalRequest: string, key: string | Uint8Array | KeyObject): FieldPrints {
    const k = key instanceof KeyObject ? key : fieldKeyObject(key);
    // Canonical text (what canonicalRequest made) is read by JSON.parse, several times faster than
    // the strict reader, and checked by joining the members written again: canonical text is a
    // fixed point. Anything else (other text, duplicate names) is read strictly, and refused as the
    // C++ library refuses it.
    let request: JsonValue | undefined;
    let members: Map<string, string> | undefined;
    try {
        const parsed = JSON.parse(canonicalRequest) as JsonValue;
        if (isObject(parsed)) {
            members = membersOf(parsed);
            // Object.keys' order is not UTF-16 order for integer-like names: sort as canonicalJson does.
            const joined = '{' + [...members.keys()].sort().map((n) => members!.get(n)).join(',') + '}';
            if (joined === canonicalRequest) request = parsed;
        } else if (canonicalJsonOfParsed(parsed) === canonicalRequest) {
            request = parsed;
        }
    } catch {
        request = undefined;
    }
    if (request === undefined) {
        request = parseJsonStrict(canonicalRequest);
        members = isObject(request) ? membersOf(request) : undefined;
    }
    if (!isObject(request) || members === undefined) return { json: '{}', fields: 0 };
    const names = Object.keys(request).sort((a, b) => Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8')));
    // No prototype: a field named __proto__ is a field like any other.
    const prints = Object.create(null) as Record<string, JsonValue>;
    let kept = 0;
    for (const name of names) {
        if (kept >= maxFingerprintFields) break;
        const size = Buffer.byteLength(name, 'utf8');
        if (size < 1 || size > maxFingerprintNameBytes) continue;
        prints[name] = createHmac('sha256', k).update(members.get(name) as string, 'utf8').digest('hex').slice(0, 16);
        kept++;
    }
    return { json: canonicalJsonOfParsed(prints), fields: names.length };
}
