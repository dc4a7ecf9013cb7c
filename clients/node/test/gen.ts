// Random JSON documents (as raw bytes) for comparing this digest with the C++ one: valid ones
// with the corners a digest depends on, and hostile ones made by damaging valid ones.

/** mulberry32: a small seeded generator, so a failing document can be made again. */
export function rng(seed: number): () => number {
    let a = seed >>> 0;
    return () => {
        a = (a + 0x6d2b79f5) >>> 0;
        let t = a;
        t = Math.imul(t ^ (t >>> 15), t | 1);
        t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
        return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    };
}

const numberTexts = [
    '0', '-0', '0.0', '-0.0', '1', '-1', '1.0', '1e0', '1E+2', '1.50e-0003', '9007199254740991', '9007199254740992',
    '9007199254740993', '-9007199254740993', '18446744073709551615', '18446744073709551616', '-9223372036854775808',
    '-9223372036854775809', '9223372036854775807', '1e308', '1.7976931348623157e308', '1.7976931348623158e308',
    '1.7976931348623159e308', '5e-324', '4.9e-324', '2.5e-324', '2.4703282292062327e-324', '2.4703282292062328e-324',
    '1e-400', '1e21', '1e20', '123456789012345678901', '1e-7', '1e-6', '0.000001', '0.0000001', '1e23',
    '9.999999999999997e22', '333333333.33333329', '1424953923781206.25', '0.1', '0.2', '0.30000000000000004',
    '123456789012345678901234567890', '1.00000000000000011102230246251565404236316680908203125',
    '1.00000000000000011102230246251565404236316680908203124', '2.2250738585072011e-308', '2.2250738585072012e-308',
    '100000000000000000000000000000000000000000000000000000000000e-50', '-1e-7', '1e400', '-1e400', '1e999999',
    '0.000000000000000000000000000000000000000000000000000000000000000000000000001e380',
];

export function randomNumberText(r: () => number): string {
    const k = r();
    if (k < 0.35) return numberTexts[Math.floor(r() * numberTexts.length)];
    if (k < 0.55) {
        // A random double from its bits, written by JavaScript (shortest form).
        const buf = Buffer.alloc(8);
        buf.writeUInt32LE(Math.floor(r() * 4294967296), 0);
        buf.writeUInt32LE(Math.floor(r() * 4294967296), 4);
        const d = buf.readDoubleLE(0);
        return Number.isFinite(d) ? String(d) : '1';
    }
    if (k < 0.75) {
        // Random digits with a random exponent: readings that need correct rounding.
        let s = r() < 0.3 ? '-' : '';
        const intDigits = 1 + Math.floor(r() * 25);
        s += String(1 + Math.floor(r() * 9));
        for (let i = 1; i < intDigits; ++i) s += String(Math.floor(r() * 10));
        if (r() < 0.6) {
            s += '.';
            const frac = 1 + Math.floor(r() * 25);
            for (let i = 0; i < frac; ++i) s += String(Math.floor(r() * 10));
        }
        if (r() < 0.6) s += (r() < 0.5 ? 'e' : 'E') + ['', '+', '-'][Math.floor(r() * 3)] + Math.floor(r() * 330);
        return s;
    }
    return String(Math.floor((r() - 0.5) * 2 ** (1 + Math.floor(r() * 60))));
}

const specials = [0x0, 0x1, 0x8, 0x9, 0xa, 0xc, 0xd, 0x1f, 0x20, 0x22, 0x2f, 0x5c, 0x7f, 0x80, 0xe9, 0x7ff, 0x800,
    0x2028, 0x2029, 0xd7ff, 0xe000, 0xfeff, 0xfffd, 0xffff, 0x10000, 0x1f600, 0x10ffff];

function randomCodePoint(r: () => number): number {
    const k = r();
    if (k < 0.5) return 0x20 + Math.floor(r() * 0x5f);
    if (k < 0.75) return specials[Math.floor(r() * specials.length)];
    if (k < 0.9) return 0x80 + Math.floor(r() * 0xd780);
    return 0x10000 + Math.floor(r() * 0xfffff);
}

/** A JSON string literal, spelling each character in one of the ways JSON allows. */
export function randomStringText(r: () => number, maxLen = 12): string {
    let s = '"';
    const n = Math.floor(r() * maxLen);
    for (let i = 0; i < n; ++i) {
        const cp = randomCodePoint(r);
        const escape = cp < 0x20 || cp === 0x22 || cp === 0x5c || r() < 0.15;
        if (!escape) {
            s += String.fromCodePoint(cp);
            continue;
        }
        const short: Record<number, string> = { 0x22: '\\"', 0x5c: '\\\\', 0x2f: '\\/', 0x8: '\\b', 0xc: '\\f', 0xa: '\\n', 0xd: '\\r', 0x9: '\\t' };
        if (short[cp] !== undefined && r() < 0.7) {
            s += short[cp];
            continue;
        }
        const hex = (u: number) => {
            const h = u.toString(16).padStart(4, '0');
            return '\\u' + (r() < 0.5 ? h : h.toUpperCase());
        };
        if (cp >= 0x10000) {
            const v = cp - 0x10000;
            s += hex(0xd800 + (v >> 10)) + hex(0xdc00 + (v & 0x3ff));
        } else {
            s += hex(cp);
        }
    }
    return s + '"';
}

function ws(r: () => number): string {
    if (r() < 0.8) return '';
    return [' ', '\t', '\n', '\r', '  \n '][Math.floor(r() * 5)];
}

export function randomValueText(r: () => number, depth = 0): string {
    const k = r();
    const leaf = depth >= 6 || k < 0.45;
    if (leaf) {
        const j = r();
        if (j < 0.45) return randomNumberText(r);
        if (j < 0.85) return randomStringText(r);
        return ['true', 'false', 'null'][Math.floor(r() * 3)];
    }
    if (k < 0.7) {
        const n = Math.floor(r() * 6);
        const items: string[] = [];
        for (let i = 0; i < n; ++i) items.push(ws(r) + randomValueText(r, depth + 1) + ws(r));
        return '[' + items.join(',') + ']';
    }
    const n = Math.floor(r() * 7);
    const used = new Set<string>();
    const members: string[] = [];
    for (let i = 0; i < n; ++i) {
        const name = randomStringText(r, 4);
        let decoded: string;
        try {
            decoded = JSON.parse(name);
        } catch {
            continue;
        }
        if (used.has(decoded)) continue;
        used.add(decoded);
        members.push(ws(r) + name + ws(r) + ':' + ws(r) + randomValueText(r, depth + 1) + ws(r));
    }
    return '{' + members.join(',') + '}';
}

function nested(depth: number, open: string, close: string, inner: string): string {
    return open.repeat(depth) + inner + close.repeat(depth);
}

const hostileBytes = [
    [0x00], [0xff], [0xc0, 0x80], [0xc3], [0xed, 0xa0, 0x80], [0xf4, 0x90, 0x80, 0x80], [0xf5, 0x80, 0x80, 0x80],
    [0xe0, 0x80, 0x80], [0xf0, 0x80, 0x80, 0x80], [0x80], [0xef, 0xbb, 0xbf], [0x22], [0x5c], [0x2c], [0x7b], [0x5d],
];
const hostileTexts = ['\\ud800', '\\udc00', '\\ud800\\u0041', '\\ud800x', '\\udbff\\udfff', '\\u12', '\\x', '\\uD834\\uDD1E'];

/** One document as raw bytes: valid most of the time, otherwise damaged in one of many ways. */
export function randomDocument(r: () => number): Buffer {
    const k = r();
    if (k < 0.02) return Buffer.from(nested(505 + Math.floor(r() * 12), '[', ']', randomValueText(r, 6)));
    if (k < 0.03) return Buffer.from(nested(505 + Math.floor(r() * 12), '{"a":', '}', '1'));
    let text = ws(r) + randomValueText(r) + ws(r);
    if (r() < 0.05) text = '\ufeff' + text;
    let bytes = Buffer.from(text, 'utf8');
    if (k < 0.6) return bytes;
    const at = Math.floor(r() * (bytes.length + 1));
    const j = r();
    if (j < 0.3) {
        const ins = Buffer.from(hostileBytes[Math.floor(r() * hostileBytes.length)]);
        bytes = Buffer.concat([bytes.subarray(0, at), ins, bytes.subarray(at)]);
    } else if (j < 0.45) {
        const ins = Buffer.from(hostileTexts[Math.floor(r() * hostileTexts.length)]);
        // Inside a string when one is there: after the first quote past `at`.
        const q = bytes.indexOf(0x22, at);
        const p = q >= 0 ? q + 1 : at;
        bytes = Buffer.concat([bytes.subarray(0, p), ins, bytes.subarray(p)]);
    } else if (j < 0.55) {
        bytes = bytes.subarray(0, at);
    } else if (j < 0.7) {
        const tail = ['\u0000', '\u0000{"b":2}', ' x', '\n\r\t ', '{}', ']', ',1', '\u00a0'][Math.floor(r() * 8)];
        bytes = Buffer.concat([bytes, Buffer.from(tail, 'utf8')]);
    } else if (j < 0.85) {
        // A duplicate key: repeat the first member of an object.
        const m = /\{\s*("(?:[^"\\]|\\.)*"\s*:\s*[^,{}[\]]+)/.exec(text);
        if (m) bytes = Buffer.from(text.replace(m[0], `${m[0]},${m[1]}`), 'utf8');
        else bytes = Buffer.from('{"a":1,"a":1}');
    } else {
        const nums = ['1e400', '-1e999', '1.', '-', '01', '1e', '.5', '1.5e+', '0x10', 'NaN', 'Infinity', '+1', '-01.5'];
        bytes = Buffer.from(`[${ws(r)}${nums[Math.floor(r() * nums.length)]}${ws(r)}]`);
        if (r() < 0.5) bytes = Buffer.from(nums[Math.floor(r() * nums.length)]);
    }
    return bytes;
}
