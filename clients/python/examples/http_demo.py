"""The run command's HTTP demo: starts the example order service in FastAPI and in Express
(scripts/example-service) and drives both with clients that behave as real ones do: they time out
and retry with the same key, retry after a 5xx, reuse a key with a changed body, and send
concurrent duplicates. The console shows the traffic as tenants http-demo-python and
http-demo-node. Both services run with --redrive: POST /orders is re-drivable, so an operator's
requeue with re-execute of one of its keys runs the handler again at once. Runs until SIGTERM (then stops its services); prints a summary every 30 s.

    python3 http_demo.py --dsn DSN [--rate 8]
"""

import argparse
import collections
import http.client
import json
import os
import random
import secrets
import signal
import socket
import subprocess
import sys
import threading
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", ".."))
stop = threading.Event()
tally = collections.Counter()
tally_lock = threading.Lock()


def count(what):
    with tally_lock:
        tally[what] += 1


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def post(port, key, doc, headers=(), timeout=5.0):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        body = json.dumps(doc).encode()
        conn.request("POST", "/orders", body, dict([("Content-Type", "application/json"), ("Idempotency-Key", key)]
                                                    + list(headers)))
        r = conn.getresponse()
        r.read()
        return r.status, r.getheader("Retry-After"), r.getheader("Idempotent-Replayed") == "true"
    finally:
        conn.close()


def send_until_final(port, name, key, doc, first_headers=(), first_timeout=5.0):
    """A client that retries with the same key: after a timeout, a 409 or a 503 (honouring
    Retry-After), until a final answer or 20 tries."""
    headers, timeout = first_headers, first_timeout
    for _ in range(20):
        if stop.is_set():
            return
        try:
            status, retry_after, replayed = post(port, key, doc, headers, timeout)
        except (socket.timeout, OSError):
            count("%s timeout, retried" % name)
            headers, timeout = (), 5.0
            time.sleep(0.3)
            continue
        count("%s %d%s" % (name, status, " replayed" if replayed else ""))
        if status in (409, 503) or status >= 500:
            headers = ()
            time.sleep(min(2.0, float(retry_after or 1)) * random.uniform(0.5, 1.0))
            continue
        return


def order():
    return {"order_id": "demo-" + secrets.token_hex(4), "amount_cents": random.randint(100, 99_999),
            "currency": random.choice(["EUR", "USD", "CNY"])}


def drive(port, name, rate):
    while not stop.is_set():
        key, doc = secrets.token_hex(12), order()
        r = random.random()
        if r < 0.45:  # a plain request, sometimes retried after it succeeded (a lost answer)
            send_until_final(port, name, key, doc)
            if random.random() < 0.3:
                send_until_final(port, name, key, doc)
        elif r < 0.6:  # a slow handler and an impatient client: timeout, then retries with the same key
            send_until_final(port, name, key, doc, [("X-Demo-Sleep-Ms", "1500")], 0.5)
        elif r < 0.72:  # a 503 from the handler: recorded as retryable, the retry waits out the backoff
            send_until_final(port, name, key, doc, [("X-Demo-Fail", "503")])
        elif r < 0.82:  # the same key reused with another body: 422
            send_until_final(port, name, key, doc)
            changed = dict(doc, amount_cents=doc["amount_cents"] + 1)
            send_until_final(port, name, key, changed)
        else:  # concurrent duplicates of one request
            threads = [threading.Thread(target=send_until_final, args=(port, name, key, doc, [("X-Demo-Sleep-Ms", "300")]))
                       for _ in range(5)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
        stop.wait(random.expovariate(rate))


def wait_up(port, proc, name):
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and not stop.is_set():
        if proc.poll() is not None:
            raise SystemExit("http demo: the %s service ended at start (exit %s)" % (name, proc.returncode))
        try:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
            conn.request("GET", "/orders/0")
            conn.getresponse().read()
            return
        except OSError:
            time.sleep(0.2)
    raise SystemExit("http demo: the %s service did not answer within 120 s" % name)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dsn", required=True)
    parser.add_argument("--rate", type=float, default=4.0, help="new keys per second per client thread")
    args = parser.parse_args()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    services = []
    for kind, name in (("python", "fastapi"), ("node", "express")):
        port = free_port()
        proc = subprocess.Popen([os.path.join(ROOT, "scripts", "example-service"), kind, "--dsn", args.dsn,
                                 "--listen", "127.0.0.1:%d" % port, "--tenant", "http-demo-" + kind, "--redrive"],
                                start_new_session=True)
        services.append((kind, name, port, proc))
    try:
        for kind, name, port, proc in services:
            wait_up(port, proc, name)
            print("http demo: %s example service on http://127.0.0.1:%d (tenant http-demo-%s)" % (name, port, kind),
                  flush=True)
        threads = [threading.Thread(target=drive, args=(port, name, args.rate), daemon=True)
                   for _, name, port, _ in services for _ in range(2)]
        for t in threads:
            t.start()
        last = time.monotonic()
        while not stop.wait(1.0):
            if any(p.poll() is not None for *_, p in services):
                print("http demo: a service ended; stopping", flush=True)
                break
            if time.monotonic() - last >= 30:
                last = time.monotonic()
                with tally_lock:
                    print("http demo: " + ", ".join("%s: %d" % kv for kv in sorted(tally.items())), flush=True)
    finally:
        stop.set()
        for *_, proc in services:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGTERM)
        for *_, proc in services:
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
        with tally_lock:
            print("http demo: stopped; " + ", ".join("%s: %d" % kv for kv in sorted(tally.items())), flush=True)


if __name__ == "__main__":
    sys.exit(main())
