#!/usr/bin/env node
// The digest batch protocol shared by the C++, Python and TypeScript implementations
// (clients/crosscheck.sh): one line per document on standard input, the base64 of its raw
// bytes; one line per document on standard output, in the same order:
//   ok <base64 of the canonical UTF-8 bytes> <v1:digest>
//   err <kind>
import { createInterface } from 'readline';

import { JsonError, canonicalJsonFromText } from './canonicaljson';
import { digestOfCanonical } from './digest';

export function digestBatchLine(line: string): string {
    const raw = Buffer.from(line.trim(), 'base64');
    try {
        const canonical = Buffer.from(canonicalJsonFromText(raw), 'utf8');
        return `ok ${canonical.toString('base64')} ${digestOfCanonical(canonical)}`;
    } catch (e) {
        if (e instanceof JsonError) return `err ${e.kind}`;
        throw e;
    }
}

async function main(): Promise<void> {
    const lines = createInterface({ input: process.stdin, crlfDelay: Infinity });
    const out: string[] = [];
    for await (const line of lines) {
        out.push(digestBatchLine(line));
        if (out.length >= 1000) {
            if (!process.stdout.write(out.join('\n') + '\n'))
                await new Promise((resolve) => process.stdout.once('drain', resolve));
            out.length = 0;
        }
    }
    if (out.length) process.stdout.write(out.join('\n') + '\n');
}

if (require.main === module) {
    main().catch((e) => {
        process.stderr.write(`digest-batch: ${e instanceof Error ? e.message : String(e)}\n`);
        process.exitCode = 1;
    });
}
