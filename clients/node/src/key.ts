// One business intent: tenant:operation:business_id, with core/key.cpp's rules.
import { InvalidArgumentError } from './errors';

export const maxNameBytes = 64;
export const maxBusinessIdBytes = 512;

function quote(s: string): string {
    return JSON.stringify(s.length > 80 ? s.slice(0, 80) + '...' : s).slice(1, -1);
}

// Tenant and operation: visible ASCII only (no look-alike or invisible characters), no ':'.
function checkName(what: string, value: string): void {
    if (typeof value !== 'string') throw new InvalidArgumentError(`task key ${what} is not a string`);
    if (value.length === 0) throw new InvalidArgumentError(`task key ${what} is empty`);
    const bytes = Buffer.byteLength(value, 'utf8');
    if (bytes > maxNameBytes)
        throw new InvalidArgumentError(
            `task key ${what} is ${bytes} bytes, longer than the limit of ${maxNameBytes}: '${quote(value)}'`,
        );
    for (let i = 0; i < value.length; ++i) {
        const c = value.charCodeAt(i);
        if (c === 0x3a)
            throw new InvalidArgumentError(
                `task key ${what} must not contain ':' (it separates the key's parts): '${quote(value)}'`,
            );
        if (c <= 0x20 || c >= 0x7f)
            throw new InvalidArgumentError(
                `task key ${what} may hold only visible ASCII characters (no spaces, control or non-ASCII ` +
                    `bytes); byte ${i} is not: '${quote(value)}'`,
            );
    }
}

function checkBusinessId(value: string): void {
    if (typeof value !== 'string') throw new InvalidArgumentError('task key business id is not a string');
    if (value.length === 0) throw new InvalidArgumentError('task key business id is empty');
    // A lone surrogate has no UTF-8 form (Buffer.byteLength would count a replacement character).
    for (let i = 0; i < value.length; ++i) {
        const c = value.charCodeAt(i);
        if (c >= 0xd800 && c <= 0xdbff) {
            const d = value.charCodeAt(i + 1);
            if (d >= 0xdc00 && d <= 0xdfff) {
                ++i;
                continue;
            }
        }
        if (c >= 0xd800 && c <= 0xdfff)
            throw new InvalidArgumentError(
                `task key business id is not valid UTF-8: a lone surrogate U+${c.toString(16).toUpperCase()} at index ${i}`,
            );
    }
    const bytes = Buffer.from(value, 'utf8');
    if (bytes.length > maxBusinessIdBytes)
        throw new InvalidArgumentError(
            `task key business id is ${bytes.length} bytes, longer than the limit of ${maxBusinessIdBytes}`,
        );
    const nul = bytes.indexOf(0);
    if (nul >= 0) throw new InvalidArgumentError(`task key business id contains a NUL byte at offset ${nul}`);
}

/**
 * One business intent: tenant:operation:business_id (e.g. tenant-7:charge:order-123). Never a retry
 * count, a timestamp or a random part: a retry must produce the same key. Every rule is checked in
 * the constructor, before any I/O; a breach throws InvalidArgumentError saying which part is wrong.
 */
export class TaskKey {
    readonly tenant: string;
    readonly operation: string;
    readonly businessId: string;

    constructor(tenant: string, operation: string, businessId: string) {
        checkName('tenant', tenant);
        checkName('operation', operation);
        checkBusinessId(businessId);
        this.tenant = tenant;
        this.operation = operation;
        this.businessId = businessId;
        Object.freeze(this);
    }

    /** Splits at the first two ':' and validates the parts as the constructor does. */
    static parse(key: string): TaskKey {
        const first = typeof key === 'string' ? key.indexOf(':') : -1;
        const second = first < 0 ? -1 : key.indexOf(':', first + 1);
        if (second < 0)
            throw new InvalidArgumentError(
                `task key must have the form tenant:operation:business_id, got '${quote(String(key))}'`,
            );
        return new TaskKey(key.slice(0, first), key.slice(first + 1, second), key.slice(second + 1));
    }

    /** The idempotency_key as stored: tenant:operation:business_id. */
    str(): string {
        return `${this.tenant}:${this.operation}:${this.businessId}`;
    }

    toString(): string {
        return this.str();
    }

    equals(other: TaskKey): boolean {
        return this.tenant === other.tenant && this.operation === other.operation && this.businessId === other.businessId;
    }
}
