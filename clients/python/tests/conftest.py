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
from psycopg.conninfo import make_conninfo

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
