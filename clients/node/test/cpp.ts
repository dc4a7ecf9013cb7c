// The C++ implementation's answer for a document, in the batch protocol's form, from the idemctl
// that IDEMCTL_PATH names: `idemctl digest --batch` when it has it, else one `idemctl digest
// --canonical` per document, its refusal mapped to a kind from the message.
import { spawnSync } from 'child_process';
import { createHash } from 'crypto';

export function idemctlPath(): string {
    const p = process.env.IDEMCTL_PATH;
    if (!p) throw new Error('IDEMCTL_PATH is not set: the tests compare with the C++ idemctl and migrate with it');
    return p;
}

export function hasBatch(idemctl: string): boolean {
    const help = spawnSync(idemctl, ['digest', '--help'], { encoding: 'utf8' });
    return help.status === 0 && help.stdout.includes('--batch');
}

function onlyWhitespace(b: Buffer): boolean {
    const start = b[0] === 0xef && b[1] === 0xbb && b[2] === 0xbf ? 3 : 0;
    for (let i = start; i < b.length; ++i) if (![0x20, 0x09, 0x0a, 0x0d].includes(b[i])) return false;
    return true;
}

// The C++ messages (core/canonicaljson.cpp and nlohmann's lexer) by kind.
export function kindOfMessage(message: string, input: Buffer): string {
    if (onlyWhitespace(input)) return 'empty';
    if (/duplicate key/.test(message)) return 'duplicate_key';
    if (/ill-formed UTF-8/.test(message)) return 'invalid_utf8';
    if (/surrogate/.test(message)) return 'lone_surrogate';
    if (/number overflow|is not a double's value|rounds to 0 as a double/.test(message)) return 'number_range';
    if (/nested deeper/.test(message)) return 'depth';
    if (/after the JSON document/.test(message)) return 'trailing_data';
    return 'syntax';
}

export function cppLines(idemctl: string, docs: Buffer[]): string[] {
    if (hasBatch(idemctl)) {
        const input = docs.map((d) => d.toString('base64')).join('\n') + '\n';
        const p = spawnSync(idemctl, ['digest', '--batch'], { input, maxBuffer: 1 << 30, encoding: 'utf8' });
        if (p.status !== 0) throw new Error(`idemctl digest --batch exited ${p.status}: ${p.stderr}`);
        return p.stdout.split('\n').slice(0, docs.length);
    }
    return docs.map((doc) => {
        const p = spawnSync(idemctl, ['digest', '--canonical', '-'], { input: doc, maxBuffer: 1 << 28 });
        if (p.status === 0) {
            const c = p.stdout;
            return `ok ${c.toString('base64')} v1:${createHash('sha256').update(c).digest('hex')}`;
        }
        if (p.status !== 1) throw new Error(`idemctl digest exited ${p.status}: ${p.stderr}`);
        return `err ${kindOfMessage(p.stderr.toString('utf8'), doc)}`;
    });
}
