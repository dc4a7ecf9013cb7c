import type { Client } from 'pg';

import { clientConfig } from './conninfo';
import { translateError } from './errors';

/**
 * A connected node-pg Client for a libpq connection string (keyword=value or URI), with
 * application_name set when the string does not. A server that cannot be reached is a
 * DatabaseUnavailableError; other connection failures (authentication, TLS) are node-pg's errors.
 */
// Clients made by connect() whose connection has ended or failed: node-pg may leave a statement
// sent after that waiting for an answer that never comes, so the store refuses to send one.
const broken = new WeakSet<object>();

/** Whether a client made by connect() has lost its connection (its 'end' or 'error' came). */
export function connectionBroken(client: object): boolean {
    return broken.has(client);
}

export async function connect(dsn: string, applicationName = 'idem-client'): Promise<Client> {
    // Loaded here, not at import: the digest needs no database driver.
    // eslint-disable-next-line @typescript-eslint/no-var-requires
    const pg = require('pg') as typeof import('pg');
    const client = new pg.Client(clientConfig(dsn, applicationName));
    // An idle connection that breaks emits 'error'; without a listener that would end the process.
    client.on('error', () => broken.add(client));
    client.on('end', () => broken.add(client));
    try {
        await client.connect();
    } catch (e) {
        throw translateError(e);
    }
    return client;
}
