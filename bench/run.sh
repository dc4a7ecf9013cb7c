#!/usr/bin/env bash
# bench/run.sh [idem-bench-claim options...]
#
# Builds idem-bench-claim in Release (build/bench) and runs it against this checkout's private
# cluster (scripts/idem-db: started if it is not running; IDEM_DB_DIR picks another one), or
# against IDEM_BENCH_DSN when that is set (then nothing is started). The benchmark creates its
# own scratch schemas and drops them. Progress goes to stderr, the result tables to stdout and
# to build/bench/results.txt. Example: bench/run.sh --seconds 5 --repeat 2
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$here"

if [ -n "${IDEM_BENCH_DSN:-}" ]; then
    dsn=$IDEM_BENCH_DSN
else
    scripts/idem-db start >&2
    dsn=$(scripts/idem-db dsn)
fi

cmake -S . -B build/bench -G Ninja -DCMAKE_BUILD_TYPE=Release -DIDEM_BUILD_TESTS=OFF >&2
cmake --build build/bench --target idem-bench-claim >&2

echo "machine: $(nproc) cores, $(uname -sr), load average: $(cut -d' ' -f1-3 /proc/loadavg)"
build/bench/bench/idem-bench-claim --dsn "$dsn" "$@" | tee build/bench/results.txt
