#!/usr/bin/env python3
"""A real PgBouncer in front of the test cluster, for the clients' pooler tests (Python and Node).

    python3 pgbouncer.py --backend DSN [--pool-mode transaction] [--pool-size 2]

Writes its configuration in a temporary directory, starts /usr/sbin/pgbouncer as its child (as
the postgres OS user when run as root: PgBouncer refuses root), prints "port N" once it accepts
connections on 127.0.0.1:N, and runs until SIGTERM or SIGINT, then stops PgBouncer and removes
the directory. PgBouncer dies with it (PR_SET_PDEATHSIG): a killed test leaves none behind.
Clients connect with user=<the backend's user> sslmode=disable and no password (auth_type trust);
PgBouncer logs into the server with the backend's password (from its passfile). Standard
library only, and psycopg's conninfo parser.
"""

import argparse
import ctypes
import os
import pwd
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

from psycopg.conninfo import conninfo_to_dict

PGBOUNCER = "/usr/sbin/pgbouncer"


def password_of(params):
    if params.get("password"):
        return params["password"]
    user = params.get("user", "postgres")
    passfile = params.get("passfile")
    if not passfile or not os.path.exists(passfile):
        return ""
    with open(passfile) as f:
        for line in f:
            fields = line.rstrip("\n").split(":", 4)  # host:port:db:user:password, no escaped colons
            if len(fields) == 5 and fields[3] in (user, "*"):
                return fields[4]
    return ""


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def quote(value):
    return '"%s"' % value.replace('"', '""')


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--backend", required=True, help="a conninfo of the server (its user logs in)")
    parser.add_argument("--pool-mode", default="transaction")
    parser.add_argument("--pool-size", type=int, default=2)
    args = parser.parse_args()
    if not os.access(PGBOUNCER, os.X_OK):
        sys.exit("pgbouncer.py: %s is missing (apt-get install pgbouncer, or scripts/deps.sh test)" % PGBOUNCER)
    backend = conninfo_to_dict(args.backend)
    user = backend.get("user", "postgres")
    port = free_port()
    directory = tempfile.mkdtemp(prefix="idem-client-pgbouncer-")
    ini = ("[databases]\n* = host=%s port=%s\n[pgbouncer]\nlisten_addr = 127.0.0.1\nlisten_port = %d\n"
           "unix_socket_dir =\nauth_type = trust\nauth_file = %s/users.txt\nadmin_users = %s\npool_mode = %s\n"
           "default_pool_size = %d\nmax_client_conn = 500\nserver_tls_sslmode = prefer\nlogfile = %s/pgbouncer.log\n"
           % (backend.get("host", "127.0.0.1"), backend.get("port", "5432"), port, directory, user, args.pool_mode,
              args.pool_size, directory))
    as_user = None
    if os.geteuid() == 0:
        as_user = pwd.getpwnam("postgres")
        os.chown(directory, as_user.pw_uid, as_user.pw_gid)
    for name, text in (("users.txt", "%s %s\n" % (quote(user), quote(password_of(backend)))),
                       ("pgbouncer.ini", ini)):
        path = os.path.join(directory, name)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as f:
            f.write(text)
        if as_user:
            os.chown(path, as_user.pw_uid, as_user.pw_gid)

    def child_setup():
        if as_user:
            os.setgroups([])
            os.setgid(as_user.pw_gid)
            os.setuid(as_user.pw_uid)
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG, after setuid clears it

    child = subprocess.Popen([PGBOUNCER, os.path.join(directory, "pgbouncer.ini")], cwd="/",
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, preexec_fn=child_setup)

    stopping = []

    # Only a signal to PgBouncer here: the main thread's wait() for it holds the Popen's lock,
    # and returns once PgBouncer has gone.
    def stop(*_):
        stopping.append(True)
        if child.poll() is None:
            child.terminate()  # SIGTERM: PgBouncer's immediate shutdown

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    deadline = time.monotonic() + 10
    while child.poll() is None:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            break
        except OSError:
            if time.monotonic() > deadline:
                break
            time.sleep(0.05)
    if child.poll() is not None or time.monotonic() > deadline:
        try:
            with open(os.path.join(directory, "pgbouncer.log")) as f:
                log = f.read()[-2000:]
        except OSError:
            log = "(no log)"
        stop_code = child.poll()
        child.kill()
        shutil.rmtree(directory, ignore_errors=True)
        sys.exit("pgbouncer.py: PgBouncer did not accept connections on 127.0.0.1:%d (exit %s)\n%s"
                 % (port, stop_code, log))
    print("port %d" % port, flush=True)
    child.wait()
    shutil.rmtree(directory, ignore_errors=True)
    if not stopping:
        sys.exit("pgbouncer.py: PgBouncer ended by itself (exit %d)" % child.returncode)


if __name__ == "__main__":
    main()
