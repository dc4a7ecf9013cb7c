// libpq connection strings for node-pg. node-pg reads URIs (postgres://...) but not libpq's
// keyword=value form ("host=127.0.0.1 port=5432 dbname=idem sslmode=verify-full ..."), which is
// what idemctl, psql and IDEM_DSN use; this turns either into node-pg's client configuration.
import { readFileSync } from 'fs';
import { homedir } from 'os';
import { join } from 'path';
import type { ClientConfig } from 'pg';

import { InvalidArgumentError } from './errors';

const known = new Set([
    'host', 'hostaddr', 'port', 'dbname', 'user', 'password', 'passfile', 'sslmode', 'sslrootcert', 'sslcert',
    'sslkey', 'application_name', 'fallback_application_name', 'connect_timeout', 'options',
    'target_session_attrs', 'keepalives', 'keepalives_idle', 'keepalives_interval', 'keepalives_count',
    'sslcompression', 'gssencmode', 'channel_binding', 'client_encoding',
]);

/** The keyword=value pairs of a libpq connection string (values may be single-quoted). */
export function parseKeywordValue(dsn: string): Map<string, string> {
    const out = new Map<string, string>();
    let i = 0;
    const n = dsn.length;
    const skipWs = () => {
        while (i < n && /\s/.test(dsn[i])) i++;
    };
    for (;;) {
        skipWs();
        if (i >= n) return out;
        const eq = dsn.indexOf('=', i);
        if (eq < 0) throw new InvalidArgumentError(`missing "=" after "${dsn.slice(i)}" in the connection string`);
        const keyword = dsn.slice(i, eq).trim();
        if (!known.has(keyword)) throw new InvalidArgumentError(`invalid connection option "${keyword}"`);
        i = eq + 1;
        skipWs();
        let value = '';
        if (dsn[i] === "'") {
            i++;
            for (;;) {
                if (i >= n) throw new InvalidArgumentError('unterminated quoted string in the connection string');
                const c = dsn[i++];
                if (c === "'") break;
                if (c === '\\' && i < n) value += dsn[i++];
                else value += c;
            }
        } else {
            while (i < n && !/\s/.test(dsn[i])) {
                const c = dsn[i++];
                if (c === '\\' && i < n) value += dsn[i++];
                else value += c;
            }
        }
        out.set(keyword, value);
    }
}

// One line of a password file: host:port:database:user:password, '*' matching anything.
function passwordFromFile(file: string, host: string, port: string, database: string, user: string): string | undefined {
    let text: string;
    try {
        text = readFileSync(file, 'utf8');
    } catch {
        return undefined;
    }
    for (const line of text.split(/\r?\n/)) {
        if (line === '' || line.startsWith('#')) continue;
        const fields: string[] = [];
        let cur = '';
        for (let k = 0; k < line.length; ++k) {
            if (line[k] === '\\' && k + 1 < line.length) cur += line[++k];
            else if (line[k] === ':' && fields.length < 4) {
                fields.push(cur);
                cur = '';
            } else cur += line[k];
        }
        fields.push(cur);
        if (fields.length < 5) continue;
        const want = [host, port, database, user];
        if (want.every((w, k) => fields[k] === '*' || fields[k] === w)) return fields[4];
    }
    return undefined;
}

/**
 * node-pg's configuration for a libpq connection string: a URI (postgres:// or postgresql://) is
 * handed to node-pg as it is; keyword=value is translated: host, port, dbname, user, password,
 * passfile, sslmode (disable, allow and prefer connect without TLS, since node-pg cannot fall back;
 * require, verify-ca and verify-full as libpq means them, require with a root certificate being
 * verify-ca), sslrootcert, sslcert, sslkey, application_name, connect_timeout, options. Missing
 * values come from the PG* environment variables as node-pg reads them.
 */
export function clientConfig(dsn: string, applicationName?: string): ClientConfig {
    const trimmed = dsn.trim();
    if (/^postgres(ql)?:\/\//.test(trimmed)) {
        const config: ClientConfig = { connectionString: trimmed };
        if (applicationName && !/[?&]application_name=/.test(trimmed)) config.application_name = applicationName;
        return config;
    }
    const kv = parseKeywordValue(trimmed);
    const env = process.env;
    const get = (k: string, envName?: string) => kv.get(k) ?? (envName ? env[envName] : undefined);
    const config: ClientConfig = {};
    const host = get('host', 'PGHOST') ?? get('hostaddr', 'PGHOSTADDR');
    if (host !== undefined) config.host = host;
    const port = get('port', 'PGPORT');
    if (port !== undefined) {
        if (!/^\d+$/.test(port)) throw new InvalidArgumentError(`invalid port "${port}" in the connection string`);
        config.port = Number(port);
    }
    const database = get('dbname', 'PGDATABASE');
    if (database !== undefined) config.database = database;
    const user = get('user', 'PGUSER');
    if (user !== undefined) config.user = user;
    const password = get('password', 'PGPASSWORD');
    if (password !== undefined) config.password = password;
    else {
        const passfile = get('passfile', 'PGPASSFILE') ?? join(homedir(), '.pgpass');
        const found = passwordFromFile(
            passfile,
            host ?? 'localhost',
            port ?? '5432',
            database ?? user ?? env.USER ?? '',
            user ?? env.USER ?? '',
        );
        if (found !== undefined) config.password = found;
    }
    const app = get('application_name', 'PGAPPNAME') ?? applicationName ?? get('fallback_application_name');
    if (app !== undefined) config.application_name = app;
    const timeout = get('connect_timeout', 'PGCONNECT_TIMEOUT');
    if (timeout !== undefined && Number(timeout) > 0) config.connectionTimeoutMillis = Number(timeout) * 1000;
    const options = get('options', 'PGOPTIONS');
    if (options !== undefined) config.options = options;

    let mode = get('sslmode', 'PGSSLMODE') ?? 'prefer';
    const rootcert = get('sslrootcert', 'PGSSLROOTCERT');
    const cert = get('sslcert', 'PGSSLCERT');
    const key = get('sslkey', 'PGSSLKEY');
    if (!['disable', 'allow', 'prefer', 'require', 'verify-ca', 'verify-full'].includes(mode))
        throw new InvalidArgumentError(`invalid sslmode value: "${mode}"`);
    if (mode === 'require' && rootcert !== undefined) mode = 'verify-ca';
    if (mode === 'disable' || mode === 'allow' || mode === 'prefer') {
        config.ssl = false;
    } else {
        const read = (file: string, what: string) => {
            try {
                return readFileSync(file);
            } catch (e) {
                throw new InvalidArgumentError(`cannot read the ${what} ${file}: ${(e as Error).message}`);
            }
        };
        const ssl: NonNullable<Exclude<ClientConfig['ssl'], boolean>> = { rejectUnauthorized: mode !== 'require' };
        if (mode !== 'require') {
            const ca = rootcert ?? join(homedir(), '.postgresql', 'root.crt');
            ssl.ca = read(ca, 'root certificate (sslrootcert)');
        }
        if (mode === 'verify-ca') ssl.checkServerIdentity = () => undefined;
        if (cert !== undefined) ssl.cert = read(cert, 'client certificate (sslcert)');
        if (key !== undefined) ssl.key = read(key, 'client key (sslkey)');
        config.ssl = ssl;
    }
    return config;
}
