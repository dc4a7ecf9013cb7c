#!/usr/bin/env bash
# The test command: installs what is missing, builds with warnings as errors, starts a
# throwaway PostgreSQL cluster, runs every test with ctest, runs the fuzz targets for 30 s
# (scripts/fuzz.sh), stops and removes the cluster, then builds the .deb and checks it installs and removes cleanly (packaging/check-deb.sh).
# Exits non-zero on any failure. .ci/run calls exactly this.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$here"

scripts/deps.sh test
scripts/build.sh ci

export IDEM_DB_DIR=$here/.idem-db-test
export IDEM_DB_FAST=1
scripts/idem-db destroy >/dev/null 2>&1 || true
cleanup() { scripts/idem-db destroy >/dev/null 2>&1 || true; }
trap cleanup EXIT
scripts/idem-db start
# As on a cluster made before PostgreSQL 15 (and kept by pg_upgrade): anyone may create objects in
# schema public, which is on every role's default search_path. The suite must pass there too:
# nothing Idem runs as an operator may resolve a function or operator planted in it (issue #31).
for db in template1 postgres idem; do
    psql "$(IDEM_DB_NAME=$db scripts/idem-db dsn)" -qX -v ON_ERROR_STOP=1 -c 'GRANT CREATE ON SCHEMA public TO PUBLIC'
done
export IDEM_TEST_DSN
IDEM_TEST_DSN=$(IDEM_DB_NAME=postgres scripts/idem-db dsn)
export IDEM_TEST_TLS_DIR=$IDEM_DB_DIR/tls

ctest --test-dir build/ci --output-on-failure --timeout 600 -j 2 "$@"

# libFuzzer targets under ASan + UBSan, 30 s in all on the seed corpora (scripts/fuzz.sh).
scripts/fuzz.sh 30

# The Debian package of what was just tested: installed, checked and removed again.
deb=$(packaging/build-deb.sh build/ci)
packaging/check-deb.sh "$deb"
