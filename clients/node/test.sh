#!/bin/sh
# Builds the package (build.sh), then runs its tests with node's test runner against the real
# database: IDEM_TEST_DSN (a superuser DSN of the test cluster) for a scratch database per run,
# IDEMCTL_PATH (the C++ idemctl) to migrate it and to compare digests with. Without either the
# tests fail; nothing is skipped.
#
# Debian's nodejs finds Debian's node-pg in /usr/share/nodejs by itself; another Node.js does not,
# so that directory (or IDEM_NODE_SHARE) is put on NODE_PATH.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
share=$("$here/share.sh")
[ -n "${IDEM_TEST_DSN:-}" ] || { echo "test.sh: IDEM_TEST_DSN is not set (the tests need the test cluster)" >&2; exit 1; }
[ -n "${IDEMCTL_PATH:-}" ] && [ -x "$IDEMCTL_PATH" ] || { echo "test.sh: IDEMCTL_PATH does not name an idemctl" >&2; exit 1; }
# Under ctest the node_client_build fixture has built dist/ already, and other tests use it at the
# same time: rebuilding here (build.sh starts by removing dist/) would pull it from under them.
[ "${IDEM_NODE_PREBUILT:-}" = 1 ] || "$here/build.sh"
NODE_PATH="$share${NODE_PATH:+:$NODE_PATH}"
export NODE_PATH
cd "$here"

exec node --test dist/test/*.test.js
