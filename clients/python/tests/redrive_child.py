#!/usr/bin/env python3
"""A re-driver for test_redrive.py to kill: redrive_child.py DSN TENANT OPERATION LEASE_MS SLEEP_S.
Each item's task writes its payment, then holds its transaction open for SLEEP_S seconds (a slow
task), so a SIGKILL lands mid-batch: some items done, one inside its transaction, the rest taken."""

import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import idem_client as idem  # noqa: E402


def main():
    dsn, tenant, operation, lease_ms, sleep_s = sys.argv[1:6]

    def pay(tx, ctx):
        tx.execute("INSERT INTO payments (order_id, amount_cents) VALUES (%s, %s)",
                   (ctx.key.business_id, ctx.request["amount_cents"]))
        time.sleep(float(sleep_s))
        return {"order": ctx.key.business_id}

    idem.redrive(dsn, tenant, operation, pay, worker="rd-killed-%d" % os.getpid(), batch=20,
                 item_lease_ms=int(lease_ms), store_options={"lease_ms": int(lease_ms)})


if __name__ == "__main__":
    main()
