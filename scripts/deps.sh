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
)
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
    # The Python and TypeScript clients (clients/, issue 30): tst_python_client, tst_node_client,
    # tst_digest_crosscheck and tst_scenarios_mixed; Debian's packages only, no registry at test time
    packages+=(python3-psycopg python3-pytest node-pg node-typescript nodejs)
fi

missing=()
for p in "${packages[@]}"; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
        missing+=("$p")
    fi
done
[ ${#missing[@]} -eq 0 ] && exit 0

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
