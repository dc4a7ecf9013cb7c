// RFC 8785 (JSON Canonicalization Scheme) for the v1 request digest, agreeing byte for byte with
// the C++ library (core/canonicaljson.cpp): the same strict reader and the same canonical writer.
//
// JSON.parse cannot be the reader: it keeps the last of two equal keys, accepts lone surrogate
// escapes, and takes text rather than bytes (so invalid UTF-8 is already replaced before it looks).
// This reader works on the raw bytes and refuses, in the order the bytes are read, exactly what the
// C++ reader refuses, naming the same kind of error.

/** What a JSON text was refused for; the same names as `idemctl digest --batch` prints. */
export type JsonErrorKind =
    | 'syntax'
    | 'duplicate_key'
    | 'invalid_utf8'
    | 'lone_surrogate'
    | 'number_range'
    | 'depth'
    | 'trailing_data'
    | 'empty';

/** A request that cannot be canonicalised: bad JSON text, a duplicate key, a value JSON cannot carry. */
export class JsonError extends Error {
    readonly kind: JsonErrorKind;
    /** Byte offset in the text where the problem was seen, when there is one. */
    readonly offset?: number;
    constructor(kind: JsonErrorKind, message: string, offset?: number) {
        super(message);
        this.name = 'JsonError';
        this.kind = kind;
        if (offset !== undefined) this.offset = offset;
    }
}

/** A JSON value as the strict reader returns it (objects have no prototype). */
export type JsonValue = null | boolean | number | string | JsonValue[] | { [name: string]: JsonValue };

/** Containers nested deeper than this are refused (as core/canonicaljson.h's maxJsonDepth). */
export const maxJsonDepth = 512;

const enum Tok {
    BeginArray,
    EndArray,
    BeginObject,
    EndObject,
    NameSeparator,
    ValueSeparator,
    Literal,
    String,
    Number,
    End,
}

function isWs(c: number): boolean {
    return c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d;
}

function hexByte(c: number): string {
    const h = 'byte 0x' + c.toString(16).padStart(2, '0');
    return c > 0x20 && c < 0x7f ? `${h} ('${String.fromCharCode(c)}')` : h;
}

function pointerSegment(s: string): string {
    return '/' + s.replace(/~/g, '~0').replace(/\//g, '~1');
}

/**
 * The lexer and parser. Each token is read whole before the parser looks at it, as nlohmann's
 * lexer does, so that when a text has several problems the first one by position is reported
 * with the same kind as the C++ reader reports it.
 */
class StrictReader {
    private pos = 0;
    private tokStart = 0;
    private tokValue: JsonValue = null;
    private readonly path: string[] = [];
    private depth = 0;

    constructor(private readonly b: Uint8Array) {}

    parse(): JsonValue {
        const b = this.b;
        if (b.length > 0 && b[0] === 0xef) {
            if (b.length < 3 || b[1] !== 0xbb || b[2] !== 0xbf)
                throw new JsonError('syntax', 'invalid JSON: invalid BOM; must be 0xEF 0xBB 0xBF if given', 0);
            this.pos = 3;
        }
        let allWs = true;
        for (let i = this.pos; i < b.length; ++i)
            if (!isWs(b[i])) {
                allWs = false;
                break;
            }
        if (allWs) throw new JsonError('empty', 'invalid JSON: the text holds no value (empty or only whitespace)');
        const value = this.value(this.next());
        for (let i = this.pos; i < b.length; ++i)
            if (!isWs(b[i]))
                throw new JsonError(
                    'trailing_data',
                    `invalid JSON: unexpected ${hexByte(b[i])} at offset ${i} after the JSON document ` +
                        '(only spaces, tabs and line breaks may follow it)',
                    i,
                );
        return value;
    }

    private where(): string {
        return this.path.length === 0 ? 'the top level' : `'${this.path.map(pointerSegment).join('')}'`;
    }

    private syntax(message: string, at = this.tokStart): never {
        throw new JsonError('syntax', `invalid JSON: ${message} at offset ${at}`, at);
    }

    private value(t: Tok): JsonValue {
        switch (t) {
            case Tok.Literal:
            case Tok.String:
                return this.tokValue;
            case Tok.Number: {
                const n = this.tokValue as number;
                // The C++ lexer has read the byte after the number; when that is a NUL, its
                // error is reported as the NUL (core/canonicaljson.cpp, StrictBuilder::parse_error).
                if (!Number.isFinite(n) && this.b[this.pos] === 0x00) this.nulRead(this.pos);
                if (!Number.isFinite(n))
                    throw new JsonError(
                        'number_range',
                        `invalid JSON: number overflow parsing '${this.tokenText()}' at offset ${this.tokStart}`,
                        this.tokStart,
                    );
                const problem = literalProblem(this.tokenText(), n);
                if (problem) throw new JsonError('number_range', `invalid JSON: ${problem}, at offset ${this.tokStart}`, this.tokStart);
                return n;
            }
            case Tok.BeginArray: {
                this.open();
                const out: JsonValue[] = [];
                let t2 = this.next();
                if (t2 === Tok.EndArray) {
                    this.depth--;
                    return out;
                }
                for (;;) {
                    this.path.push(String(out.length));
                    out.push(this.value(t2));
                    this.path.pop();
                    const sep = this.next();
                    if (sep === Tok.EndArray) break;
                    if (sep !== Tok.ValueSeparator) this.syntax("expected ']' or ','");
                    t2 = this.next();
                }
                this.depth--;
                return out;
            }
            case Tok.BeginObject: {
                this.open();
                const out: { [name: string]: JsonValue } = Object.create(null);
                const seen = new Set<string>();
                let t2 = this.next();
                if (t2 === Tok.EndObject) {
                    this.depth--;
                    return out;
                }
                for (;;) {
                    if (t2 !== Tok.String) this.syntax('expected a member name (a string)');
                    const name = this.tokValue as string;
                    if (seen.has(name))
                        throw new JsonError(
                            'duplicate_key',
                            `invalid JSON: duplicate key ${JSON.stringify(name)} in the object at ${this.where()} ` +
                                '(RFC 8785 requires unique keys; parsers disagree on which one wins)',
                            this.tokStart,
                        );
                    seen.add(name);
                    if (this.next() !== Tok.NameSeparator) this.syntax("expected ':'");
                    this.path.push(name);
                    const v = this.value(this.next());
                    this.path.pop();
                    Object.defineProperty(out, name, { value: v, enumerable: true, writable: true, configurable: true });
                    const sep = this.next();
                    if (sep === Tok.EndObject) break;
                    if (sep !== Tok.ValueSeparator) this.syntax("expected '}' or ','");
                    t2 = this.next();
                }
                this.depth--;
                return out;
            }
            case Tok.End:
                return this.syntax('unexpected end of input; expected a value');
            default:
                return this.syntax('unexpected token; expected a value');
        }
    }

    private open(): void {
        if (this.depth >= maxJsonDepth)
            throw new JsonError(
                'depth',
                `invalid JSON: nested deeper than ${maxJsonDepth} levels at ${this.where()}`,
                this.tokStart,
            );
        this.depth++;
    }

    private tokenText(): string {
        return Buffer.from(this.b.subarray(this.tokStart, this.pos)).toString('latin1');
    }

    /** Reads the next token whole (strings validated and decoded, numbers converted). */
    private next(): Tok {
        const b = this.b;
        while (this.pos < b.length && isWs(b[this.pos])) this.pos++;
        this.tokStart = this.pos;
        if (this.pos >= b.length) return Tok.End;
        const c = b[this.pos];
        switch (c) {
            case 0x5b:
                this.pos++;
                return Tok.BeginArray;
            case 0x5d:
                this.pos++;
                return Tok.EndArray;
            case 0x7b:
                this.pos++;
                return Tok.BeginObject;
            case 0x7d:
                this.pos++;
                return Tok.EndObject;
            case 0x3a:
                this.pos++;
                return Tok.NameSeparator;
            case 0x2c:
                this.pos++;
                return Tok.ValueSeparator;
            case 0x74:
                return this.literal('true', true);
            case 0x66:
                return this.literal('false', false);
            case 0x6e:
                return this.literal('null', null);
            case 0x22:
                return this.string();
            case 0x00:
                return this.syntax(`unexpected ${hexByte(0)} (JSON text cannot hold a NUL byte outside a string escape)`);
            default:
                if (c === 0x2d || (c >= 0x30 && c <= 0x39)) return this.number();
                return this.syntax(`invalid literal: unexpected ${hexByte(c)}`);
        }
    }

    private literal(word: string, value: JsonValue): Tok {
        for (let k = 0; k < word.length; ++k)
            if (this.b[this.pos + k] !== word.charCodeAt(k)) this.syntax('invalid literal');
        this.pos += word.length;
        this.tokValue = value;
        return Tok.Literal;
    }

    private digit(at: number): boolean {
        return at < this.b.length && this.b[at] >= 0x30 && this.b[at] <= 0x39;
    }

    private number(): Tok {
        const b = this.b;
        let i = this.pos;
        if (b[i] === 0x2d) {
            i++;
            if (!this.digit(i)) this.syntax("invalid number; expected digit after '-'");
        }
        if (b[i] === 0x30) i++;
        else while (this.digit(i)) i++;
        if (i < b.length && b[i] === 0x2e) {
            i++;
            if (!this.digit(i)) this.syntax("invalid number; expected digit after '.'");
            while (this.digit(i)) i++;
        }
        if (i < b.length && (b[i] === 0x65 || b[i] === 0x45)) {
            i++;
            if (i < b.length && (b[i] === 0x2b || b[i] === 0x2d)) i++;
            if (!this.digit(i)) this.syntax("invalid number; expected digit after exponent sign or 'e'");
            while (this.digit(i)) i++;
        }
        this.pos = i;
        // The text matches RFC 8259's grammar, which Number() reads as the nearest double, as
        // strtod does (and as converting an exact 64-bit integer to double does).
        this.tokValue = Number(this.tokenText());
        return Tok.Number;
    }

    private hex4(at: number): number {
        const b = this.b;
        if (at + 4 > b.length) return -1;
        let v = 0;
        for (let k = 0; k < 4; ++k) {
            const c = b[at + k];
            let d: number;
            if (c >= 0x30 && c <= 0x39) d = c - 0x30;
            else if (c >= 0x41 && c <= 0x46) d = c - 0x37;
            else if (c >= 0x61 && c <= 0x66) d = c - 0x57;
            else return -1;
            v = v * 16 + d;
        }
        return v;
    }

    // The C++ reader reports an error whose last byte read is a NUL as that NUL byte unless
    // nlohmann's message already shows it (it does for errors inside strings, whose "last read"
    // text includes <U+0000>): that leaves a number past the double range directly followed by a
    // NUL, which the lexer read to end the number. Its kind is still the first fault met: the
    // number's range (clients/corpus/README.md).
    private nulRead(at: number): never {
        throw new JsonError(
            'number_range',
            `invalid JSON: unexpected byte 0x00 at offset ${at} (JSON text cannot hold a NUL byte outside a string escape)`,
            at,
        );
    }

    // A multi-byte sequence starting at `start` whose byte at `at` is out of range (or missing).
    private badUtf8(start: number, at: number = start): never {
        throw new JsonError('invalid_utf8', `invalid JSON: ill-formed UTF-8 byte at offset ${at} in a string`, start);
    }

    // The first byte of b[from..] outside the ranges (pairs of lo, hi), or -1 when all are inside.
    private firstOutOfRange(from: number, ranges: number[]): number {
        for (let k = 0; k < ranges.length; k += 2) {
            const at = from + k / 2;
            if (at >= this.b.length || this.b[at] < ranges[k] || this.b[at] > ranges[k + 1]) return at;
        }
        return -1;
    }

    private string(): Tok {
        const b = this.b;
        let i = this.pos + 1;
        let out = '';
        let runStart = i; // a run of plain ASCII, appended in one go
        const flush = (end: number) => {
            if (end > runStart) out += Buffer.from(b.subarray(runStart, end)).toString('latin1');
        };
        for (;;) {
            if (i >= b.length) this.syntax('invalid string: missing closing quote');
            const c = b[i];
            if (c >= 0x20 && c < 0x80 && c !== 0x22 && c !== 0x5c) {
                i++;
                continue;
            }
            flush(i);
            if (c === 0x22) {
                i++;
                break;
            }
            if (c < 0x20)
                this.syntax(
                    `invalid string: control character U+${c.toString(16).toUpperCase().padStart(4, '0')} must be escaped`,
                    i,
                );
            if (c === 0x5c) {
                const e = i + 1 < b.length ? b[i + 1] : -1;
                switch (e) {
                    case 0x22:
                        out += '"';
                        break;
                    case 0x5c:
                        out += '\\';
                        break;
                    case 0x2f:
                        out += '/';
                        break;
                    case 0x62:
                        out += '\b';
                        break;
                    case 0x66:
                        out += '\f';
                        break;
                    case 0x6e:
                        out += '\n';
                        break;
                    case 0x72:
                        out += '\r';
                        break;
                    case 0x74:
                        out += '\t';
                        break;
                    case 0x75: {
                        const cp = this.hex4(i + 2);
                        if (cp < 0) this.syntax("invalid string: '\\u' must be followed by 4 hex digits", i);
                        if (cp >= 0xd800 && cp <= 0xdbff) {
                            // The low half must follow at once as another \u escape.
                            if (b[i + 6] === 0x5c && b[i + 7] === 0x75) {
                                const lo = this.hex4(i + 8);
                                if (lo < 0) this.syntax("invalid string: '\\u' must be followed by 4 hex digits", i + 6);
                                if (lo < 0xdc00 || lo > 0xdfff) this.loneSurrogate(i, cp);
                                out += String.fromCharCode(cp, lo);
                                i += 12;
                            } else {
                                this.loneSurrogate(i, cp);
                            }
                            runStart = i;
                            continue;
                        }
                        if (cp >= 0xdc00 && cp <= 0xdfff) this.loneSurrogate(i, cp);
                        out += String.fromCharCode(cp);
                        i += 6;
                        runStart = i;
                        continue;
                    }
                    default:
                        this.syntax('invalid string: forbidden character after backslash', i);
                }
                i += 2;
                runStart = i;
                continue;
            }
            // Multi-byte UTF-8 (RFC 3629 table 3-7, as nlohmann's lexer checks it).
            let n: number;
            let cp: number;
            let bad: number;
            if (c >= 0xc2 && c <= 0xdf) {
                bad = this.firstOutOfRange(i + 1, [0x80, 0xbf]);
                if (bad >= 0) this.badUtf8(i, bad);
                cp = ((c & 0x1f) << 6) | (b[i + 1] & 0x3f);
                n = 2;
            } else if (c >= 0xe0 && c <= 0xef) {
                const lo = c === 0xe0 ? 0xa0 : 0x80;
                const hi = c === 0xed ? 0x9f : 0xbf;
                bad = this.firstOutOfRange(i + 1, [lo, hi, 0x80, 0xbf]);
                if (bad >= 0) this.badUtf8(i, bad);
                cp = ((c & 0x0f) << 12) | ((b[i + 1] & 0x3f) << 6) | (b[i + 2] & 0x3f);
                n = 3;
            } else if (c >= 0xf0 && c <= 0xf4) {
                const lo = c === 0xf0 ? 0x90 : 0x80;
                const hi = c === 0xf4 ? 0x8f : 0xbf;
                bad = this.firstOutOfRange(i + 1, [lo, hi, 0x80, 0xbf, 0x80, 0xbf]);
                if (bad >= 0) this.badUtf8(i, bad);
                cp = ((c & 0x07) << 18) | ((b[i + 1] & 0x3f) << 12) | ((b[i + 2] & 0x3f) << 6) | (b[i + 3] & 0x3f);
                n = 4;
            } else {
                this.badUtf8(i);
            }
            out += String.fromCodePoint(cp);
            i += n;
            runStart = i;
        }
        this.pos = i;
        this.tokValue = out;
        return Tok.String;
    }

    private loneSurrogate(at: number, cp: number): never {
        const hex = cp.toString(16).toUpperCase();
        const why =
            cp <= 0xdbff
                ? `high surrogate U+${hex} is not followed by a \\u escape of a low surrogate (U+DC00..U+DFFF)`
                : `low surrogate U+${hex} does not follow a high surrogate (U+D800..U+DBFF)`;
        throw new JsonError('lone_surrogate', `invalid JSON: ${why}, at offset ${at}`, at);
    }
}

function toBytes(text: Uint8Array | string): Uint8Array {
    if (typeof text !== 'string') return text;
    const lone = findLoneSurrogate(text);
    if (lone >= 0)
        throw new JsonError(
            'invalid_utf8',
            `the text holds a lone surrogate (U+${text.charCodeAt(lone).toString(16).toUpperCase()}) at ` +
                `UTF-16 index ${lone}: it has no UTF-8 form`,
        );
    return Buffer.from(text, 'utf8');
}

function findLoneSurrogate(s: string): number {
    for (let i = 0; i < s.length; ++i) {
        const c = s.charCodeAt(i);
        if (c >= 0xd800 && c <= 0xdbff) {
            const d = i + 1 < s.length ? s.charCodeAt(i + 1) : 0;
            if (d >= 0xdc00 && d <= 0xdfff) {
                ++i;
                continue;
            }
            return i;
        }
        if (c >= 0xdc00 && c <= 0xdfff) return i;
    }
    return -1;
}

/**
 * Parses JSON text strictly for canonicalisation: one value, well-formed UTF-8, no lone surrogate
 * escapes, finite numbers, no object with the same key twice, nesting at most 512 deep, and after
 * the value nothing but JSON whitespace (a NUL byte included: "{}\0{...}" is refused). A UTF-8
 * byte order mark at the very start is skipped. Takes the raw bytes (a Buffer or Uint8Array); a
 * string is taken as its UTF-8 encoding. Throws JsonError.
 */
export function parseJsonStrict(text: Uint8Array | string): JsonValue {
    return new StrictReader(toBytes(text)).parse();
}

function shortened(text: string): string {
    return text.length <= 64 ? text : text.slice(0, 61) + '...';
}

/**
 * Why an integer (its decimal text) cannot be a request's number, or ''. RFC 8785 writes every
 * number as its double: an integer whose double's form names another integer (9007199254740993
 * would be written 9007199254740992) would share a digest with that one.
 */
function integerProblem(written: string, d: number): string {
    if (d === 0) return ''; // "0" and "-0" are zero (RFC 8785 writes -0 as 0)
    const canonical = String(d);
    // The integer the form names: "1e+21" is 10^21; below 10^21 the form has no exponent.
    const m = /^(-?)(\d)(?:\.(\d+))?e\+(\d+)$/.exec(canonical);
    const named = m ? m[1] + m[2] + (m[3] ?? '') + '0'.repeat(Number(m[4]) - (m[3] ?? '').length) : canonical;
    if (BigInt(named) === BigInt(written)) return '';
    return `integer ${shortened(written)} is not a double's value: RFC 8785 would write it as ${canonical}, as another integer (send integers past 2^53 as strings)`;
}

// As core/canonicaljson.cpp judges a finite number literal: an integer literal (no fraction, no
// exponent) as integerProblem; any other is rounded to the nearest double, as RFC 8785 does,
// unless it is not zero but rounds to 0 (1e-400).
function literalProblem(text: string, d: number): string {
    if (!/[.eE]/.test(text)) return integerProblem(text, d);
    if (d === 0 && /[1-9]/.test(text.split(/[eE]/)[0]))
        return `number ${shortened(text)} is not zero but rounds to 0 as a double (below 2.5e-324)`;
    return '';
}

/** ECMAScript Number.prototype.toString for a finite number (RFC 8785 section 3.2.2.3). */
export function esNumberToString(x: number): string {
    if (!Number.isFinite(x))
        throw new JsonError('number_range', 'NaN and Infinity have no JSON form (RFC 8785 section 3.2.2.3)');
    return String(x); // -0 gives "0"
}

function isPlainObject(v: object): boolean {
    const proto = Object.getPrototypeOf(v);
    return proto === null || proto === Object.prototype;
}

// fromText: the value is parseJsonStrict's, whose numbers were judged on their text already; a
// number built in JavaScript has no text, and one that is integral and past 2^53 - 1 is refused:
// it may be what JSON.parse or arithmetic made of another integer (9007199254740993 parses as
// 9007199254740992).
function writeCanonical(v: unknown, path: string[], depth: number, out: string[], fromText: boolean): void {
    const where = () => (path.length === 0 ? 'the top level' : `'${path.map(pointerSegment).join('')}'`);
    if (v === null) {
        out.push('null');
        return;
    }
    switch (typeof v) {
        case 'boolean':
            out.push(v ? 'true' : 'false');
            return;
        case 'number':
            if (!Number.isFinite(v))
                throw new JsonError(
                    'number_range',
                    `NaN and Infinity have no JSON form (RFC 8785 section 3.2.2.3), at ${where()}`,
                );
            if (!fromText && Number.isInteger(v) && !Number.isSafeInteger(v))
                throw new JsonError(
                    'number_range',
                    `the integral number ${String(v)} is past 2^53 - 1, where a JavaScript number may stand for several integers (pass the request's JSON text to requestDigestFromText, a bigint, or the number as a string), at ${where()}`,
                );
            out.push(String(v));
            return;
        case 'bigint': {
            // An integer with all its digits: refused as in C++ and Python when its double names another.
            const d = Number(v);
            const problem = Number.isFinite(d) ? integerProblem(v.toString(), d) : `integer ${shortened(v.toString())} is beyond the double range`;
            if (problem) throw new JsonError('number_range', `${problem}, at ${where()}`);
            out.push(String(d));
            return;
        }
        case 'string':
            out.push(quote(v, 'string', where));
            return;
        case 'object':
            break;
        default:
            throw new TypeError(`a ${typeof v} has no JSON form, at ${where()}`);
    }
    const o = v as object;
    if (Array.isArray(o)) {
        if (depth >= maxJsonDepth)
            throw new JsonError('depth', `nested deeper than ${maxJsonDepth} levels at ${where()}`);
        out.push('[');
        for (let i = 0; i < o.length; ++i) {
            if (i) out.push(',');
            path.push(String(i));
            writeCanonical(o[i], path, depth + 1, out, fromText);
            path.pop();
        }
        out.push(']');
        return;
    }
    if (!isPlainObject(o))
        throw new TypeError(`a ${o.constructor?.name ?? 'non-plain object'} has no JSON form, at ${where()}`);
    if (depth >= maxJsonDepth) throw new JsonError('depth', `nested deeper than ${maxJsonDepth} levels at ${where()}`);
    // RFC 8785 section 3.2.3: member names sorted by their UTF-16 code units, which is how
    // JavaScript compares strings.
    const names = Object.keys(o).sort();
    out.push('{');
    let first = true;
    for (const name of names) {
        const member = (o as Record<string, unknown>)[name];
        if (member === undefined) continue; // as JSON.stringify: an absent member
        if (!first) out.push(',');
        first = false;
        path.push(name);
        out.push(quote(name, 'member name', where));
        out.push(':');
        writeCanonical(member, path, depth + 1, out, fromText);
        path.pop();
    }
    out.push('}');
}

function quote(s: string, what: string, where: () => string): string {
    const lone = findLoneSurrogate(s);
    if (lone >= 0)
        throw new JsonError(
            'lone_surrogate',
            `${what} holds a lone surrogate U+${s.charCodeAt(lone).toString(16).toUpperCase()}, at ${where()}`,
        );
    // JSON.stringify escapes exactly as RFC 8785 asks: \" \\ \b \f \n \r \t, \u00xx (lowercase)
    // for the other C0 controls, every other character verbatim.
    return JSON.stringify(s);
}

/**
 * The RFC 8785 canonical form of a value as a string: no whitespace, members sorted by UTF-16 code
 * units, strings escaped as JSON.stringify does, numbers as Number.prototype.toString writes them.
 * Accepts what parseJsonStrict returns and plain JavaScript values (plain objects, arrays, strings,
 * finite numbers, bigints, booleans, null; a member whose value is undefined is left out, as
 * JSON.stringify does). Throws JsonError for NaN/Infinity, an integral number past 2^53 - 1 (a
 * JavaScript number there may stand for several integers: JSON.parse('9007199254740993') is
 * 9007199254740992), a bigint whose double is another integer, lone surrogates and nesting past
 * 512 (all number_range but the last two), TypeError for values with no JSON form (undefined,
 * functions, Date, Map, ...).
 */
export function canonicalJson(value: unknown): string {
    const out: string[] = [];
    writeCanonical(value, [], 0, out, false);
    return out.join('');
}

/**
 * The canonical form of what parseJsonStrict returned: its numbers were judged on their text (an
 * integer literal whose double names another integer and a non-zero literal that rounds to 0
 * are refused there), so an integral number past 2^53 - 1 is written as the double it is.
 */
export function canonicalJsonOfParsed(value: JsonValue): string {
    const out: string[] = [];
    writeCanonical(value, [], 0, out, true);
    return out.join('');
}

/** parseJsonStrict then canonicalJsonOfParsed. */
export function canonicalJsonFromText(text: Uint8Array | string): string {
    return canonicalJsonOfParsed(parseJsonStrict(text));
}
