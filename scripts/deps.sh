#!/usr/bin/env bash
# Installs, from Debian 12's archive, whatever of Idem's build and run dependencies is missing.
# Usage: scripts/deps.sh [run|test]   (test adds what the test suite needs)
set -euo pipefail

packages=(
    cmake ninja-build g++ pkg-config ccache
    libpqxx-dev libpq-dev libssl-dev nlohmann-json3-dev
    prometheus-cpp-dev
    qt6-base-dev qt6-charts-dev libqt6opengl6-dev qt6-tools-dev qt6-tools-dev-tools qt6-l10n-tools
    qt6-qpa-plugins libgl-dev
    postgresql postgresql-client openssl
    # The HTTP example services the demo drives (issue 43, scripts/example-service): FastAPI under
    # uvicorn and Flask with the Python client; Express (and Fastify from the npm registry by
    # lockfile) with the TypeScript client, whose build needs tsc
    python3-psycopg python3-starlette python3-fastapi python3-uvicorn python3-flask node-typescript
)
# Node.js, node-pg and node-express from Debian, unless this machine's nodejs is another build
# (nodesource's conflicts with libnode108, which node-pg needs through node-libpq): then it keeps its
# Node.js (npm included) and the client uses Debian's node-pg and node-express unpacked beside the
# checkout (scripts/debian-node.sh).
installed_node=$(dpkg-query -W -f='${Version}' nodejs 2>/dev/null || true)
if [ -n "$installed_node" ] && ! apt-cache madison nodejs 2>/dev/null | grep -qF "| $installed_node |"; then
    unpack_node_pg=true
else
    packages+=(nodejs npm node-pg node-express)
fi
if [ "${1:-run}" = test ]; then
    # packaging/check-deb.sh: builds (dpkg-shlibdeps), installs and validates the .deb
    packages+=(xvfb xauth dpkg-dev desktop-file-utils appstream man-db)
    # tst_exporter starts a real Prometheus; prometheus_rules runs its promtool. check-deb.sh runs
    # systemd-analyze verify on the units (Debian 12 ships it in systemd; no systemd as PID 1 needed)
    packages+=(prometheus systemd)
    # tst_consoleexport renders report.pdf to look at it; CJK text in reports needs the Noto CJK fonts
    packages+=(poppler-utils fonts-noto-cjk)
    # scripts/fuzz.sh: clang with libFuzzer and the sanitizer runtimes (only recommended by
    # clang, and this script installs without recommends); llvm-symbolizer for readable traces
    packages+=(clang libclang-rt-14-dev llvm)
    # tst_pooler runs a real PgBouncer in transaction mode in front of the test cluster
    # (tst_failover's primaries and standbys need only initdb / pg_ctl / pg_basebackup, above)
    packages+=(pgbouncer)
    # tst_purgecron starts a cluster of its own with pg_cron preloaded and lets it CALL the purge
    packages+=(postgresql-15-cron)
    # scripts/patroni-cluster (the failover tests, issue #29): etcd, Patroni and HAProxy on loopback
    packages+=(patroni etcd-server haproxy curl)
    # tst_latency_clock runs a worker whose wall clock is a day off and jumps (libfaketime)
    packages+=(faketime)
    # The Python and TypeScript clients (clients/, issue 30): tst_python_client, tst_node_client,
    # tst_digest_crosscheck and tst_scenarios_mixed; Debian's packages only (tst_http_conformance adds
    # Fastify, from the npm registry by lockfile: clients/node/http-deps/npm-ci.sh)
    packages+=(python3-pytest)
    # clients/python/tests/test_http_middleware.py: Starlette's TestClient runs on httpx
    packages+=(python3-httpx)
fi

missing=()
for p in "${packages[@]}"; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
        missing+=("$p")
    fi
done
finish() {
    if [ "${unpack_node_pg:-false}" = true ]; then
        "$(dirname "${BASH_SOURCE[0]}")/debian-node.sh"
    fi
    exit 0
}
[ ${#missing[@]} -eq 0 ] && finish

echo "deps: installing ${missing[*]}"
sudo=""
if [ "$(id -u)" != 0 ]; then
    command -v sudo >/dev/null || { echo "deps: missing packages and not root: apt-get install ${missing[*]}" >&2; exit 1; }
    sudo=sudo
fi
export DEBIAN_FRONTEND=noninteractive
# The package lists of a fresh machine are empty or stale: refresh them before the first install.
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
finish
