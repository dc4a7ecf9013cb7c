"""examples/demo_worker.py beside `idemctl demo` on the same keys: a mixed-language fleet whose
end-of-run check (one effect and one payment per succeeded key, the ledger) covers both."""

import os
import secrets
import subprocess
import sys
import time

import psycopg
from psycopg.conninfo import conninfo_to_dict

from idem_client import TaskKey, TaskStore

EXAMPLE = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "examples", "demo_worker.py")


def start_fleet(idemctl, dsn, run, rate, demo_seconds, workers, worker_seconds, demo_redrives=True,
                python_redrives=True):
    """`idemctl demo` and the Python demo worker on the same keys (20 per tenant, 2 tenants)."""
    demo = subprocess.Popen([idemctl, "demo", "--dsn", dsn, "--run-id", run, "--keys", "20", "--tenants", "2",
                             "--workers", "2", "--rate", str(rate), "--duration", str(demo_seconds), "--quiet"]
                            + ([] if demo_redrives else ["--no-redrive"]),
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    python = subprocess.Popen([sys.executable, EXAMPLE, "--dsn", dsn, "--run-id", run, "--keys", "20", "--tenants",
                               "2", "--workers", str(workers), "--rate", str(rate), "--duration", str(worker_seconds)]
                              + ([] if python_redrives else ["--no-redrive"]),
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    return demo, python


def test_python_workers_beside_idemctl_demo(dsn, conn, idemctl):
    run = "py" + secrets.token_hex(4)
    demo = subprocess.Popen([idemctl, "demo", "--dsn", dsn, "--run-id", run, "--keys", "20", "--tenants", "2",
                             "--workers", "2", "--rate", "150", "--duration", "3", "--quiet"],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    python = subprocess.run([sys.executable, EXAMPLE, "--dsn", dsn, "--run-id", run, "--keys", "20", "--tenants", "2",
                             "--workers", "2", "--rate", "150", "--duration", "1.5"],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=60)
    report, _ = demo.communicate(timeout=60)
    assert python.returncode == 0, python.stdout
    assert demo.returncode == 0, report  # the demo's own check, over the effects of both
    assert "python demo workers: " in python.stdout and "succeeded" in python.stdout, python.stdout
    rows = conn.execute("SELECT worker >= 1000, count(*), count(DISTINCT idempotency_key) FROM idem.demo_orders_effects"
                        " WHERE run_id = %s GROUP BY 1 ORDER BY 1", (run,)).fetchall()
    by_language = {python_worker: (n, keys) for python_worker, n, keys in rows}
    assert by_language[False][0] > 0 and by_language[True][0] > 0  # both languages executed keys
    assert conn.execute("SELECT count(*) FROM (SELECT idempotency_key FROM idem.demo_orders_effects WHERE run_id = %s"
                        " GROUP BY 1 HAVING count(*) > 1) d", (run,)).fetchone()[0] == 0
    # Python replayed what C++ workers (or it) had done: they share the keys and the digests.
    assert "replayed" in python.stdout and "conflict" not in python.stdout, python.stdout


def wait_for(what, predicate, seconds=30):
    deadline = time.monotonic() + seconds
    while not predicate():
        assert time.monotonic() < deadline, "waited %d s for %s" % (seconds, what)
        time.sleep(0.05)


def test_python_workers_survive_lost_connections(dsn, admin_dsn, conn, idemctl):
    """Both connections of both Python workers terminated and the database closed to new ones for
    a while, as in a switchover: each worker thread connects again and goes on executing keys, and
    the demo's check over the run is clean (no key left processing)."""
    run = "pyl" + secrets.token_hex(4)
    database = conninfo_to_dict(dsn)["dbname"]
    # Re-drivers left out: the connections cut and counted here are the workers'.
    demo, python = start_fleet(idemctl, dsn, run, 100, 12, 2, 10, demo_redrives=False, python_redrives=False)

    def executed_by_both(since):
        return conn.execute("SELECT count(DISTINCT worker) FROM idem.demo_orders_effects WHERE run_id = %s"
                            " AND worker >= 1000 AND created_at > %s", (run, since)).fetchone()[0] == 2

    wait_for("the demo's tables", lambda: conn.execute(
        "SELECT to_regclass('idem.demo_orders_effects') IS NOT NULL").fetchone()[0])
    start = conn.execute("SELECT now() - interval '1 hour'").fetchone()[0]
    wait_for("both Python workers' first effects", lambda: executed_by_both(start))
    with psycopg.connect(admin_dsn, autocommit=True) as admin:
        admin.execute('ALTER DATABASE "%s" ALLOW_CONNECTIONS false' % database)
        try:
            cut = admin.execute("SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE datname = %s"
                                " AND application_name LIKE 'idem python demo%%'", (database,)).fetchone()[0]
            assert cut == 4  # two workers, each with its store's and its payment service's connection
            # Every Python connection is gone before the database opens again: the workers'
            # reconnects meet a server that refuses them for a while.
            wait_for("the terminated backends to end", lambda: admin.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = %s AND application_name LIKE"
                " 'idem python demo%%'", (database,)).fetchone()[0] == 0)
            time.sleep(1)  # the outage, not evidence
            after_cut = admin.execute("SELECT now()").fetchone()[0]
        finally:
            admin.execute('ALTER DATABASE "%s" ALLOW_CONNECTIONS true' % database)
    # A key in flight at the cut is asked again until its lease (5 s) lets it be taken over; new
    # keys follow until the run's 10 s are up.
    wait_for("both Python workers to execute keys again", lambda: executed_by_both(after_cut))
    out, _ = python.communicate(timeout=60)
    report, _ = demo.communicate(timeout=60)
    assert python.returncode == 0, out
    assert "database_errors" in out and "succeeded" in out, out
    assert demo.returncode == 0, report
    assert "clean:" in report and "STUCK KEYS" not in report, report
    assert conn.execute("SELECT count(*) FROM idem.task_idempotency WHERE split_part(idempotency_key, ':', 3) LIKE %s"
                        " AND status = 'processing' AND lease_until <= now()", ("order-%s-%%" % run,)).fetchone()[0] == 0
    assert conn.execute("SELECT count(*) FROM (SELECT idempotency_key FROM idem.demo_orders_effects WHERE run_id = %s"
                        " GROUP BY 1 HAVING count(*) > 1) d", (run,)).fetchone()[0] == 0


def test_demo_check_names_a_key_left_processing_by_another_language(dsn, conn, idemctl):
    """A Python worker that claimed one of the run's keys and vanished: its lease expires and
    nobody asks again. The demo's check names it, though none of its own clients claimed it."""
    run = "pys" + secrets.token_hex(4)
    store = TaskStore(conn, lease_ms=1)
    abandoned = TaskKey("tenant-1", "charge", "order-%s-999" % run)  # outside --keys: no C++ client asks for it
    assert store.claim(abandoned, "v1:abandoned").may_execute
    alive = TaskKey("tenant-1", "charge", "order-%s-998" % run)
    assert TaskStore(conn, lease_ms=600_000).claim(alive, "v1:alive").may_execute  # still held: not stuck
    demo = subprocess.run([idemctl, "demo", "--dsn", dsn, "--run-id", run, "--keys", "20", "--tenants", "2",
                           "--workers", "2", "--rate", "100", "--duration", "1", "--quiet"],
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=60)
    assert demo.returncode == 1, demo.stdout
    assert "check: STUCK KEYS: 1 keys of this run are left processing" in demo.stdout, demo.stdout
    assert "  %s\n" % abandoned in demo.stdout and str(alive) not in demo.stdout, demo.stdout
    assert conn.execute("SELECT status FROM idem.task_idempotency WHERE idempotency_key = %s",
                        (str(abandoned),)).fetchone()[0] == "processing"


def test_python_demo_worker_redrives_a_requeued_key(dsn, conn, idemctl):
    """The demo worker's re-drivers: a failed key of the run, requeued with re-execute, is run
    again (its payment and its effect, worker 1999) while the workers run, and the demo's check
    stays clean."""
    import importlib.util

    from idem_client import Outcome, TaskFailure, canonical_request, run_task
    from test_redrive import requeue_reexecute

    spec = importlib.util.spec_from_file_location("demo_worker", EXAMPLE)
    demo_worker = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(demo_worker)
    run = "pyr" + secrets.token_hex(4)
    # idemctl demo's own re-drivers left out: the Python ones are under test.
    demo, python = start_fleet(idemctl, dsn, run, 30, 12, 1, 10, demo_redrives=False)
    wait_for("the demo's tables", lambda: conn.execute(
        "SELECT to_regclass('idem.demo_orders_effects') IS NOT NULL").fetchone()[0])
    # A key no client of the run asks for (outside --keys), whose first run failed for good.
    key = TaskKey("tenant-2", "refund", "order-%s-999" % run)
    sent = dict(demo_worker.body_for(key), meta={"trace_id": "1", "sent_at": 1})
    store = TaskStore(conn)
    store.register_redrivable("tenant-2", "refund")

    def fail(_tx, _ctx):
        raise TaskFailure("permanent", "card declined by the gateway")

    assert run_task(store, key, canonical_request(sent, demo_worker.IGNORED), fail).kind == Outcome.FAILED
    requeue_reexecute(conn, key)
    wait_for("the re-driven effect", lambda: conn.execute(
        "SELECT count(*) FROM idem.demo_orders_effects WHERE idempotency_key = %s AND worker = 1999",
        (str(key),)).fetchone()[0] == 1)
    out, _ = python.communicate(timeout=60)
    report, _ = demo.communicate(timeout=60)
    assert python.returncode == 0, out
    assert "python demo re-drivers (6): " in out and "succeeded 1" in out.split("re-drivers")[1], out
    assert demo.returncode == 0, report
    assert conn.execute("SELECT status FROM idem.task_idempotency WHERE idempotency_key = %s",
                        (str(key),)).fetchone()[0] == "succeeded"
    assert conn.execute("SELECT amount_cents FROM idem.demo_payments WHERE idempotency_key = %s",
                        (str(key),)).fetchall() == [(demo_worker.body_for(key)["amount_cents"],)]
