// A re-driver for redrive.test.ts to kill: node redrive-child.js DSN TENANT OPERATION LEASE_MS SLEEP_MS.
// Each item's task writes its payment, then holds its transaction open for SLEEP_MS (a slow task), so
// a SIGKILL lands mid-batch: some items done, one inside its transaction, the rest taken.
import { redrive } from '../src/index';

const [dsn, tenant, operation, leaseMs, sleepMs] = process.argv.slice(2);
redrive(
    dsn,
    tenant,
    operation,
    async (tx, ctx) => {
        const request = ctx.request as { amount_cents: number };
        await tx.query('INSERT INTO public.payments VALUES ($1, $2)', [ctx.key.businessId, request.amount_cents]);
        await new Promise((r) => setTimeout(r, Number(sleepMs)));
        return JSON.stringify({ order: ctx.key.businessId });
    },
    { worker: `nd-killed-${process.pid}`, batch: 20, itemLeaseMs: Number(leaseMs), storeOptions: { leaseMs: Number(leaseMs) } },
);
