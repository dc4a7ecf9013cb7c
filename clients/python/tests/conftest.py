"""Fixtures: a scratch database per test run, migrated by the real idemctl.

IDEM_TEST_DSN names a superuser connection to the test cluster (scripts/test.sh sets it; ctest's
tst_python_client passes it on) and IDEMCTL_PATH the idemctl binary. Without either, every test
that needs them fails, saying how to provide them: none is skipped.
"""

import os
import secrets
import subprocess
import sys

import psycopg
import pytest
from psycopg.conninfo import conninfo_to_dict, make_conninfo

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))  # the package, without installing it
CORPUS = os.path.join(HERE, "..", "..", "corpus")

HOW_TO = ("Run the suite with scripts/test.sh (or ctest -R tst_python_client), or start a cluster by hand "
          "(scripts/idem-db start) and export IDEM_TEST_DSN=\"$(IDEM_DB_NAME=postgres scripts/idem-db dsn)\" "
          "and IDEMCTL_PATH=build/ci/cli/idemctl.")


def corpus_path(name):
    return os.path.join(CORPUS, name)


@pytest.fixture(scope="session")
def idemctl():
    path = os.environ.get("IDEMCTL_PATH")
    if not path or not os.access(path, os.X_OK):
        pytest.fail("IDEMCTL_PATH does not name the idemctl binary. " + HOW_TO, pytrace=False)
    return path


@pytest.fixture(scope="session")
def admin_dsn():
    dsn = os.environ.get("IDEM_TEST_DSN")
    if not dsn:
        pytest.fail("IDEM_TEST_DSN is not set: these tests need a real PostgreSQL. " + HOW_TO, pytrace=False)
    try:
        psycopg.connect(dsn).close()
    except psycopg.Error as e:
        pytest.fail("The test database in IDEM_TEST_DSN is not reachable: %s. %s" % (e, HOW_TO), pytrace=False)
    return dsn


@pytest.fixture(scope="session")
def dsn(admin_dsn, idemctl):
    """A scratch database for this run, migrated with `idemctl migrate`, dropped at the end."""
    name = "idem_py_%d_%s" % (os.getpid(), secrets.token_hex(4))
    with psycopg.connect(admin_dsn, autocommit=True) as admin:
        admin.execute('CREATE DATABASE "%s"' % name)
    scratch = make_conninfo(admin_dsn, dbname=name)
    try:
        subprocess.run([idemctl, "migrate", "--dsn", scratch], check=True, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE)
        with psycopg.connect(scratch, autocommit=True) as c:
            c.execute("CREATE TABLE public.payments (order_id text NOT NULL, amount_cents bigint NOT NULL)")
        yield scratch
    finally:
        with psycopg.connect(admin_dsn, autocommit=True) as admin:
            admin.execute('DROP DATABASE IF EXISTS "%s" WITH (FORCE)' % name)


@pytest.fixture
def conn(dsn):
    c = psycopg.connect(dsn, autocommit=True, application_name="idem python test")
    yield c
    c.close()


@pytest.fixture
def other(dsn):
    """A second connection, for a second worker."""
    c = psycopg.connect(dsn, autocommit=True, application_name="idem python test (other)")
    yield c
    c.close()


@pytest.fixture
def unique():
    """A business id no other test uses."""
    return "order-" + secrets.token_hex(6)


class Bouncer:
    """A PgBouncer in transaction mode in front of the test cluster (pgbouncer.py), 2 server
    connections per database and user, so that several clients' transactions share backends."""

    POOL_SIZE = 2

    def __init__(self, admin_dsn):
        self._admin = conninfo_to_dict(admin_dsn)
        self._process = subprocess.Popen([sys.executable, os.path.join(HERE, "pgbouncer.py"), "--backend", admin_dsn,
                                          "--pool-mode", "transaction", "--pool-size", str(self.POOL_SIZE)],
                                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        line = self._process.stdout.readline()
        if not line.startswith("port "):
            self._process.kill()
            pytest.fail("PgBouncer did not start: %s" % self._process.stderr.read(), pytrace=False)
        self.port = int(line.split()[1])

    def dsn(self, dsn):
        """The database and user of dsn, through the pool (no password, no TLS: trust on loopback)."""
        params = conninfo_to_dict(dsn)
        return make_conninfo(host="127.0.0.1", port=str(self.port), dbname=params.get("dbname", "postgres"),
                             user=params.get("user", self._admin.get("user", "postgres")), sslmode="disable",
                             connect_timeout="10")

    def prepared_statements(self, dsn):
        """The prepared statements every pooled backend of dsn's database keeps, by backend pid:
        POOL_SIZE transactions held open at once through the pool, one per server connection."""
        found, conns = {}, []
        try:
            for _ in range(self.POOL_SIZE):
                c = psycopg.connect(self.dsn(dsn), prepare_threshold=None)
                conns.append(c)
                pid, names = c.execute("SELECT pg_backend_pid(), coalesce(array_agg(name ORDER BY name), '{}')"
                                       " FROM pg_prepared_statements").fetchone()
                found[pid] = names
        finally:
            for c in conns:
                c.close()
        assert len(found) == self.POOL_SIZE, "%d held transactions shared backends: %s" % (self.POOL_SIZE, found)
        return found

    def close(self):
        self._process.terminate()
        self._process.wait(20)


@pytest.fixture(scope="session")
def bouncer(admin_dsn):
    b = Bouncer(admin_dsn)
    yield b
    b.close()
