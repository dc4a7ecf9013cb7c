"""`python3 -m idem_client.scenario_worker`: the worker process that `idemctl verify` starts in
scenarios 4 and 5 and SIGKILLs, with the interface of `idemctl scenario-worker`:

  --dsn DSN (default $IDEM_DSN)  --schema S (default idem)  --key K  --digest D
  --lease-ms N (1..3600000, default 1500)  --mode claim|write (default claim)

It claims the key; if it may not execute it prints "not-claimed <decision>" and exits 1. In
mode claim it prints "claimed <token>"; in mode write it opens the business transaction, fences,
inserts into S.verify_effects and prints "written <token>". Then it waits to be killed. Exit
codes: 1 not claimed or a database error, 2 usage (bad arguments, key or digest), 3 refused
(SQLSTATE 42501).
"""

import argparse
import os
import sys
import time

import psycopg
from psycopg import sql

from .errors import InvalidArgument
from .key import TaskKey
from .store import TaskStore, check_schema_name, connect, new_token

EXIT_FAILURE, EXIT_USAGE, EXIT_REFUSED = 1, 2, 3


class _Parser(argparse.ArgumentParser):
    def error(self, message):
        sys.stderr.write("scenario-worker: %s\n" % message)
        sys.exit(EXIT_USAGE)


def lease(text):
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError("--lease-ms takes a whole number, not '%s'" % text) from None
    if not 1 <= n <= 3_600_000:
        raise argparse.ArgumentTypeError("--lease-ms must be between 1 and 3600000")
    return n


def main(argv=None):
    parser = _Parser(prog="scenario-worker", add_help=False)
    parser.add_argument("--dsn", default=os.environ.get("IDEM_DSN", ""))
    parser.add_argument("--schema", default="idem")
    parser.add_argument("--key", default="")
    parser.add_argument("--digest", default="")
    parser.add_argument("--lease-ms", type=lease, default=1500)
    parser.add_argument("--mode", default="claim")
    args = parser.parse_args(argv)
    if args.mode not in ("claim", "write", "claim-1tx", "write-1tx", "claim-rec", "write-rec"):
        parser.error("--mode is claim, write, claim-1tx, write-1tx, claim-rec or write-rec")
    try:
        schema = check_schema_name(args.schema)
        key = TaskKey.parse(args.key)
    except ValueError as e:
        sys.stderr.write("scenario-worker: %s\n" % e)
        return EXIT_USAGE
    try:
        conn = connect(args.dsn, application_name="idem scenario worker (python)")
        store = TaskStore(conn, schema=schema, lease_ms=args.lease_ms)
        if args.mode.endswith("-rec"):
            # Record at commit: the write (write-rec) and the record in one transaction, killed
            # before its commit. It has no token: a fresh one stands for it (nothing holds it).
            tx = conn.transaction()
            tx.__enter__()
            if args.mode == "write-rec":
                conn.execute(sql.SQL("INSERT INTO {}.verify_effects (idempotency_key, note) VALUES (%s, %s)").format(
                    sql.Identifier(schema)), (str(key), "written by the worker that is about to die"))
            recorded = store.record_in_transaction(conn, key, args.digest, '{"worker":"killed"}', 20000)
            if not recorded.may_execute:
                print("not-claimed", recorded.decision.value, flush=True)
                return EXIT_FAILURE
            print("claimed" if args.mode == "claim-rec" else "written", new_token(), flush=True)
            while True:
                time.sleep(1)
        one_transaction = args.mode.endswith("-1tx")
        if one_transaction:
            # One transaction for local effects: the claim (and the write) inside it, killed before its commit.
            tx = conn.transaction()
            tx.__enter__()
            claim = store.claim_in_transaction(conn, key, args.digest, 20000)
        else:
            claim = store.claim(key, args.digest)
        if not claim.may_execute:
            print("not-claimed", claim.decision.value, flush=True)
            return EXIT_FAILURE
        if args.mode in ("claim", "claim-1tx"):
            print("claimed", claim.token, flush=True)
        elif one_transaction:
            conn.execute(sql.SQL("INSERT INTO {}.verify_effects (idempotency_key, note) VALUES (%s, %s)").format(
                sql.Identifier(schema)), (str(key), "written by the worker that is about to die"))
            print("written", claim.token, flush=True)
        else:
            # Killed inside this transaction: after the business write, before the commit.
            tx = conn.transaction()
            tx.__enter__()
            store.fence(conn, key, claim.token)
            conn.execute(sql.SQL("INSERT INTO {}.verify_effects (idempotency_key, note) VALUES (%s, %s)").format(
                sql.Identifier(schema)), (str(key), "written by the worker that is about to die"))
            print("written", claim.token, flush=True)
        while True:
            time.sleep(1)
    except InvalidArgument as e:
        sys.stderr.write("scenario-worker: %s\n" % e)
        return EXIT_USAGE
    except psycopg.errors.InsufficientPrivilege as e:
        sys.stderr.write("scenario-worker: refused by the database (SQLSTATE 42501): %s\n" % e)
        return EXIT_REFUSED
    except Exception as e:  # noqa: BLE001 - reported, like idemctl's last resort
        sys.stderr.write("scenario-worker: %s\n" % e)
        return EXIT_FAILURE


if __name__ == "__main__":
    sys.exit(main())
