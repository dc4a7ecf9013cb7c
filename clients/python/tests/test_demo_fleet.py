"""examples/demo_worker.py beside `idemctl demo` on the same keys: a mixed-language fleet whose
end-of-run check (one effect and one payment per succeeded key, the ledger) covers both."""

import os
import secrets
import subprocess
import sys

EXAMPLE = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "examples", "demo_worker.py")


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
