"""python3 -m idem_client.scenario_worker: the interface of `idemctl scenario-worker`."""

import os
import subprocess
import sys

from idem_client import Decision, TaskKey, TaskStore

PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def start(dsn, *args):
    env = dict(os.environ, IDEM_DSN=dsn, PYTHONPATH=PACKAGE_DIR)
    return subprocess.Popen([sys.executable, "-m", "idem_client.scenario_worker", *args], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def test_claim_mode_reports_the_token_and_holds_the_lease(dsn, conn, unique):
    key = TaskKey("verify", "s4", unique)
    worker = start(dsn, "--key", str(key), "--digest", "v1:x", "--lease-ms", "60000", "--mode", "claim")
    try:
        line = worker.stdout.readline().strip()
        what, token = line.split(" ")
        assert what == "claimed" and len(token) == 36
        busy = TaskStore(conn).claim(key, "v1:x")
        assert busy.decision == Decision.IN_PROGRESS
    finally:
        worker.kill()
        worker.wait()


def test_write_mode_writes_inside_an_open_transaction(dsn, conn, unique):
    conn.execute("CREATE TABLE IF NOT EXISTS idem.verify_effects (id bigserial PRIMARY KEY,"
                 " idempotency_key text NOT NULL, note text, at timestamptz DEFAULT now())")
    key = TaskKey("verify", "s5", unique)
    worker = start(dsn, "--schema", "idem", "--key", str(key), "--digest", "v1:x", "--mode", "write")
    try:
        assert worker.stdout.readline().startswith("written ")
        # Written but not committed: nobody sees the row while the worker lives.
        assert conn.execute("SELECT count(*) FROM idem.verify_effects WHERE idempotency_key = %s",
                            (str(key),)).fetchone()[0] == 0
    finally:
        worker.kill()
        worker.wait()
    assert conn.execute("SELECT count(*) FROM idem.verify_effects WHERE idempotency_key = %s",
                        (str(key),)).fetchone()[0] == 0


def test_not_claimed_and_usage_exit_codes(dsn, conn, unique):
    key = TaskKey("verify", "s4", unique)
    store = TaskStore(conn)
    c = store.claim(key, "v1:x")
    with conn.transaction():
        store.fence(conn, key, c.token)
        store.complete(conn, key, c.token, "{}")
    replay = start(dsn, "--key", str(key), "--digest", "v1:x")
    out, _ = replay.communicate(timeout=30)
    assert (replay.returncode, out) == (1, "not-claimed replay\n")
    for bad in (["--key", str(key), "--mode", "sleep"], ["--key", "no-colons"], ["--key", str(key), "--lease-ms", "0"]):
        p = start(dsn, *bad)
        _, err = p.communicate(timeout=30)
        assert p.returncode == 2 and err.startswith("scenario-worker: ")
