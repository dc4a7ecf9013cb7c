#!/usr/bin/env python3
"""The HTTP middleware's cost (issue 43): requests per second of the example order service's
POST /orders with fresh keys and with replays, against the same handler without the middleware
(--bare), in one run, for each adapter asked for.

    bench/http_bench.py --dsn DSN [--adapters python,node] [--seconds 5] [--clients 8] [--repeat 3]
                        [--one-transaction] [--record-at-commit]

DSN names a migrated database (idemctl migrate); the services create shop.orders there. Each
client is a thread with one keep-alive connection; every request is a new order. Modes, per
adapter, interleaved per repeat:
  bare   the handler alone: BEGIN, INSERT, COMMIT on its own pooled connection
  fresh  with the middleware, a new Idempotency-Key per request: claim, BEGIN, fence, INSERT,
         complete, COMMIT
  replay with the middleware, keys the fresh run completed, each sent again: one claim, the
         stored response
  with --one-transaction, also (issue 45 item 1):
  fresh-1tx  the middleware in one transaction for local effects (--one-transaction): BEGIN and
         the claim in one round trip, INSERT, complete and COMMIT: one commit
  replay-1tx its replays: BEGIN and the claim, COMMIT
  with --record-at-commit, also (issue 45 item 1, record at commit):
  fresh-rec  BEGIN, the key's read and advisory lock (idem_peek_local), INSERT, the key recorded
         with the response (idem_record_local), COMMIT: one commit, one write of the key's row
  replay-rec its replays: BEGIN, the key's read, COMMIT
Prints medians over the repeats and the ratios fresh/bare and replay/fresh, and where the CPU went:
the service's processes (the example service and its children) and the cluster's (its postmaster and
every child of it, when the cluster runs on this machine and the role may read data_directory), in
microseconds per request.
"""

import argparse
import http.client
import json
import os
import secrets
import signal
import socket
import statistics
import subprocess
import sys
import threading
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Service:
    def __init__(self, kind, dsn, bare, one_transaction=False, record_at_commit=False):
        self.port = free_port()
        args = [os.path.join(ROOT, "scripts", "example-service"), kind, "--dsn", dsn, "--listen",
                "127.0.0.1:%d" % self.port, "--tenant", "bench-" + kind]
        extra = (["--bare"] if bare else []) + (["--one-transaction"] if one_transaction else []) + \
            (["--record-at-commit"] if record_at_commit else [])
        self.proc = subprocess.Popen(args + extra, start_new_session=True, stdout=subprocess.DEVNULL)
        deadline = time.monotonic() + 60
        while True:
            try:
                c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=2)
                c.request("GET", "/orders/0")
                c.getresponse().read()
                return
            except OSError:
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    raise SystemExit("http_bench: the %s service did not start" % kind)
                time.sleep(0.1)

    def stop(self):
        os.killpg(self.proc.pid, signal.SIGTERM)
        self.proc.wait(10)


TICK = os.sysconf("SC_CLK_TCK")


def _cpu_of(stat):
    f = stat.rsplit(")", 1)[1].split()
    return (int(f[11]) + int(f[12])) / TICK


def service_cpu(pid):
    """CPU seconds of the service's process and its children (scripts/example-service execs it)."""
    total = 0.0
    try:
        kids = open("/proc/%d/task/%d/children" % (pid, pid)).read().split()
    except OSError:
        kids = []
    for p in [pid] + [int(k) for k in kids]:
        try:
            total += _cpu_of(open("/proc/%d/stat" % p).read())
        except OSError:
            pass
    return total


def cluster_pids(dsn):
    """The pids of the cluster DSN names (its postmaster and the postmaster's children), when it runs
    on this machine and the role may read data_directory; else []."""
    try:
        import psycopg

        with psycopg.connect(dsn, autocommit=True) as c:
            data = c.execute("SHOW data_directory").fetchone()[0]
        postmaster = int(open(os.path.join(data, "postmaster.pid")).readline())
        return [postmaster] + [int(k) for k in open("/proc/%d/task/%d/children" % (postmaster, postmaster)).read().split()]
    except Exception:  # noqa: BLE001 - another machine, or no right to read it: no figure
        return []


def cluster_cpu(pids):
    """{pid: CPU seconds} of those processes (the backends, WAL writer, ...) that are there."""
    seconds = {}
    for p in pids:
        try:
            seconds[p] = _cpu_of(open("/proc/%d/stat" % p).read())
        except OSError:
            pass
    return seconds


CLUSTER_DSN = None


def run(port, seconds, clients, keys_per_client=None, cpu=None):
    """cpu: the service's pid, to add (service µs, cluster µs) per request to what is returned. The
    cluster's processes are taken after the warm-up, when the service's pool is open, and counted
    only while they live through the window."""
    if not cpu:
        return _run(port, seconds, clients, keys_per_client)
    pids = cluster_pids(CLUSTER_DSN) if CLUSTER_DSN else []
    c0 = (service_cpu(cpu), cluster_cpu(pids))
    out = _run(port, seconds, clients, keys_per_client)
    n = max(1.0, out[0] * seconds)
    c1 = cluster_cpu(pids)
    cluster = sum(c1[p] - c0[1][p] for p in c1 if p in c0[1]) / n * 1e6 if pids else float("nan")
    return out + (((service_cpu(cpu) - c0[0]) / n * 1e6, cluster),)


def _run(port, seconds, clients, keys_per_client=None):
    """(requests per second, keys completed per client). keys_per_client: replay those keys."""
    done = [0] * clients
    errors = [0] * clients
    completed = [[] for _ in range(clients)]
    start = threading.Barrier(clients + 1)
    stop = threading.Event()

    def client(i):
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        replay = keys_per_client[i] if keys_per_client else None
        n = 0
        start.wait()
        while not stop.is_set():
            if replay:
                key, body = replay[n % len(replay)]
            else:
                key = secrets.token_hex(12)
                body = json.dumps({"order_id": "b-" + key[:8], "amount_cents": 1000 + n, "currency": "EUR"}).encode()
            n += 1
            try:
                conn.request("POST", "/orders", body, {"Content-Type": "application/json", "Idempotency-Key": key})
                r = conn.getresponse()
                r.read()
            except (OSError, http.client.HTTPException):
                errors[i] += 1
                conn.close()
                conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
                continue
            if r.status == 201:
                done[i] += 1
                if not replay:
                    completed[i].append((key, body))
            else:
                errors[i] += 1
        conn.close()

    threads = [threading.Thread(target=client, args=(i,)) for i in range(clients)]
    for t in threads:
        t.start()
    start.wait()
    t0 = time.monotonic()
    time.sleep(seconds)
    stop.set()
    for t in threads:
        t.join()
    elapsed = time.monotonic() - t0
    if sum(errors):
        print("  (%d requests failed)" % sum(errors), file=sys.stderr)
    return sum(done) / elapsed, completed


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--dsn", required=True)
    p.add_argument("--adapters", default="python,node")
    p.add_argument("--seconds", type=float, default=5)
    p.add_argument("--clients", type=int, default=8)
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--one-transaction", action="store_true",
                   help="also the middleware in one transaction for local effects (fresh-1tx, replay-1tx)")
    p.add_argument("--record-at-commit", action="store_true",
                   help="also the middleware recording at commit (fresh-rec, replay-rec)")
    args = p.parse_args()
    global CLUSTER_DSN
    CLUSTER_DSN = args.dsn
    results = {}
    cpus = {}
    for kind in args.adapters.split(","):
        figures = {"bare": [], "fresh": [], "replay": [], "fresh-1tx": [], "replay-1tx": [], "fresh-rec": [],
                   "replay-rec": []}
        cpu = {m: [] for m in figures}
        for r in range(args.repeat):
            s = Service(kind, args.dsn, bare=True)
            try:
                run(s.port, 1, args.clients)  # warm-up
                rate, _, used = run(s.port, args.seconds, args.clients, cpu=s.proc.pid)
                figures["bare"].append(rate)
                cpu["bare"].append(used)
            finally:
                s.stop()
            s = Service(kind, args.dsn, bare=False)
            try:
                run(s.port, 1, args.clients)
                rate, completed, used = run(s.port, args.seconds, args.clients, cpu=s.proc.pid)
                figures["fresh"].append(rate)
                cpu["fresh"].append(used)
                rate, _, used = run(s.port, args.seconds, args.clients, completed, cpu=s.proc.pid)
                figures["replay"].append(rate)
                cpu["replay"].append(used)
            finally:
                s.stop()
            for on, mode, flags in ((args.one_transaction, "1tx", {"one_transaction": True}),
                                    (args.record_at_commit, "rec", {"record_at_commit": True})):
                if not on:
                    continue
                s = Service(kind, args.dsn, bare=False, **flags)
                try:
                    run(s.port, 1, args.clients)
                    rate, completed, used = run(s.port, args.seconds, args.clients, cpu=s.proc.pid)
                    figures["fresh-" + mode].append(rate)
                    cpu["fresh-" + mode].append(used)
                    rate, _, used = run(s.port, args.seconds, args.clients, completed, cpu=s.proc.pid)
                    figures["replay-" + mode].append(rate)
                    cpu["replay-" + mode].append(used)
                finally:
                    s.stop()
            print("%s repeat %d: %s req/s" % (kind, r + 1, ", ".join(
                "%s %.0f" % (m, v[-1]) for m, v in figures.items() if v)), file=sys.stderr)
        results[kind] = {m: statistics.median(v) if v else 0.0 for m, v in figures.items()}
        cpus[kind] = {m: (statistics.median(u[0] for u in v), statistics.median(u[1] for u in v))
                      for m, v in cpu.items() if v}
    print("| adapter | bare handler (req/s) | middleware, fresh keys | middleware, replays | fresh / bare | replay / fresh |")
    print("|---|---|---|---|---|---|")
    for kind, f in results.items():
        print("| %s | %.0f | %.0f | %.0f | %.2f | %.2f |" % (kind, f["bare"], f["fresh"], f["replay"],
                                                           f["fresh"] / f["bare"], f["replay"] / f["fresh"]))
    for on, mode, name in ((args.one_transaction, "1tx", "one transaction"),
                           (args.record_at_commit, "rec", "record at commit")):
        if not on:
            continue
        print()
        print("| adapter | bare handler (req/s) | %s, fresh keys | %s, replays | fresh / bare (target >= 0.8) |"
              " replay / fresh | %s / two steps, fresh |" % (name, name, name))
        print("|---|---|---|---|---|---|---|")
        for kind, f in results.items():
            print("| %s | %.0f | %.0f | %.0f | %.2f | %.2f | %.2f |" % (
                kind, f["bare"], f["fresh-" + mode], f["replay-" + mode], f["fresh-" + mode] / f["bare"],
                f["replay-" + mode] / f["fresh-" + mode], f["fresh-" + mode] / f["fresh"]))
    print_cpu(cpus)


def print_cpu(cpus):
    print()
    print("| adapter | mode | service µs/request | cluster µs/request |")
    print("|---|---|---:|---:|")
    for kind, per_mode in cpus.items():
        for m, (service, cluster) in per_mode.items():
            print("| %s | %s | %.0f | %.0f |" % (kind, m, service, cluster))


if __name__ == "__main__":
    main()
