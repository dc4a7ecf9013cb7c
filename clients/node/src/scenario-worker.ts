#!/usr/bin/env node
// The worker process of `idemctl verify` scenarios 4 and 5, in TypeScript, with the command line,
// output lines and exit codes of `idemctl scenario-worker` (operations/scenarios_faults.cpp):
//
//   scenario-worker.js [scenario-worker] [--dsn DSN] [--schema S] --key K --digest D [--lease-ms N] [--mode claim|write]
//
// The DSN comes from --dsn or IDEM_DSN (the scenarios pass it in the environment, never in argv).
// It claims the key; if the claim may not execute it prints "not-claimed <decision>" and exits 1.
// --mode claim: prints "claimed <token>" and waits to be killed. --mode write: opens a transaction,
// fences, inserts a row into <schema>.verify_effects, prints "written <token>" and waits to be
// killed before committing. Usage errors exit 2, other errors 1.
import { connect } from './connect';
import { InvalidArgumentError } from './errors';
import { TaskKey } from './key';
import { TaskStore, quoteSchema } from './store';

class UsageError extends Error {}

function parseArgs(argv: string[]): Map<string, string> {
    const valued = new Set(['dsn', 'schema', 'key', 'digest', 'lease-ms', 'mode']);
    const out = new Map<string, string>();
    let i = 0;
    if (argv[0] === 'scenario-worker') i = 1; // started as idemctl would start itself
    for (; i < argv.length; ++i) {
        const a = argv[i];
        if (!a.startsWith('--')) throw new UsageError(`unexpected argument '${a}'`);
        let name = a.slice(2);
        let value: string | undefined;
        const eq = name.indexOf('=');
        if (eq >= 0) {
            value = name.slice(eq + 1);
            name = name.slice(0, eq);
        }
        if (!valued.has(name)) throw new UsageError(`unknown option --${name}`);
        if (value === undefined) {
            if (i + 1 >= argv.length) throw new UsageError(`--${name} needs a value`);
            value = argv[++i];
        }
        out.set(name, value);
    }
    return out;
}

function intValue(args: Map<string, string>, name: string, fallback: number, min: number, max: number): number {
    const v = args.get(name);
    if (v === undefined) return fallback;
    if (!/^[+-]?\d+$/.test(v.trim()) || v.trim() !== v) throw new UsageError(`--${name} takes a whole number, not '${v}'`);
    const n = Number(v);
    if (n < min || n > max) throw new UsageError(`--${name} must be ${min} to ${max}, not ${v}`);
    return n;
}

function writeLine(line: string): Promise<void> {
    return new Promise((resolve) => process.stdout.write(line + '\n', () => resolve()));
}

async function main(argv: string[]): Promise<number> {
    const args = parseArgs(argv);
    const mode = args.get('mode') ?? 'claim';
    if (!['claim', 'write', 'claim-1tx', 'write-1tx', 'claim-rec', 'write-rec'].includes(mode))
        throw new UsageError('--mode is claim, write, claim-1tx, write-1tx, claim-rec or write-rec');
    const schema = args.get('schema') ?? 'idem';
    const leaseMs = intValue(args, 'lease-ms', 1500, 1, 3_600_000);
    const dsn = args.get('dsn') ?? process.env.IDEM_DSN ?? '';
    const key = TaskKey.parse(args.get('key') ?? '');
    const digest = args.get('digest') ?? '';
    quoteSchema(schema);

    const client = await connect(dsn, 'idem scenario worker');
    const store = new TaskStore(client, { schema, leaseMs });
    if (mode.endsWith('-rec')) {
        // Record at commit: the write (write-rec) and the record in one transaction, killed before
        // its commit. It has no token: a fresh one stands for it (nothing holds it).
        await client.query('BEGIN');
        if (mode === 'write-rec')
            await client.query(`INSERT INTO ${quoteSchema(schema)}.verify_effects (idempotency_key, note) VALUES ($1, $2)`, [
                key.str(),
                'written by the worker that is about to die',
            ]);
        const recorded = await store.recordInTransaction(client, key, digest, '{"worker":"killed"}', 20_000);
        if (!recorded.mayExecute) {
            await writeLine(`not-claimed ${recorded.decision}`);
            await client.end();
            return 1;
        }
        await writeLine(`${mode === 'claim-rec' ? 'claimed' : 'written'} ${TaskStore.newToken()}`);
        for (;;) await new Promise((resolve) => setTimeout(resolve, 1000));
    }
    const oneTransaction = mode.endsWith('-1tx');
    // One transaction for local effects: the claim (and the write) inside it, killed before its commit.
    if (oneTransaction) await client.query('BEGIN');
    const claim = oneTransaction ? await store.claimInTransaction(client, key, digest, 20_000) : await store.claim(key, digest);
    if (!claim.mayExecute) {
        await writeLine(`not-claimed ${claim.decision}`);
        await client.end();
        return 1;
    }
    if (mode === 'write-1tx') {
        await client.query(`INSERT INTO ${quoteSchema(schema)}.verify_effects (idempotency_key, note) VALUES ($1, $2)`, [
            key.str(),
            'written by the worker that is about to die',
        ]);
        await writeLine(`written ${claim.token}`);
    } else if (mode === 'write') {
        await client.query('BEGIN');
        await store.fence(client, key, claim.token);
        await client.query(`INSERT INTO ${quoteSchema(schema)}.verify_effects (idempotency_key, note) VALUES ($1, $2)`, [
            key.str(),
            'written by the worker that is about to die',
        ]);
        await writeLine(`written ${claim.token}`);
    } else {
        await writeLine(`claimed ${claim.token}`);
    }
    // Killed here (after the claim, or after the business write and before the commit).
    for (;;) await new Promise((resolve) => setTimeout(resolve, 1000));
}

main(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (e: unknown) => {
        const message = e instanceof Error ? e.message : String(e);
        if (e instanceof UsageError) {
            process.stderr.write(`scenario-worker: ${message}\n`);
            process.exit(2);
        }
        if (e instanceof InvalidArgumentError && e.sqlstate === undefined) {
            process.stderr.write(`scenario-worker: ${message}\n`);
            process.exit(2);
        }
        process.stderr.write(`scenario-worker: ${message}\n`);
        process.exit(1);
    },
);
