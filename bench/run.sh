#!/usr/bin/env bash
# bench/run.sh [idem-bench-claim options...]
#
# Builds idem-bench-claim in Release (build/bench) and runs it against this checkout's private
# cluster (scripts/idem-db: started if it is not running; IDEM_DB_DIR picks another one), or
# against IDEM_BENCH_DSN when that is set (then nothing is started). The benchmark creates its
# own scratch schemas and drops them. Progress goes to stderr, the result tables to stdout and
# to build/bench/results.txt. Example: bench/run.sh --seconds 5 --repeat 2
# bench/run.sh stats [idem-bench-stats options...] runs idem-bench-stats instead (the dashboard
# snapshot against the naive scan, and the load of polling consoles; results in
# build/bench/stats-results.txt). Example: bench/run.sh stats --rows 100000,1000000 --pollers 0
# bench/run.sh exporter [idem-bench-exporter options...]: the claim benchmark beside one idemctl
# exporter, not scraped and scraped 20 times a second (build/bench/exporter-results.txt).
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
target=idem-bench-claim results=build/bench/results.txt
if [ "${1:-}" = stats ]; then
    shift
    target=idem-bench-stats results=build/bench/stats-results.txt
elif [ "${1:-}" = exporter ]; then
    shift
    target=idem-bench-exporter results=build/bench/exporter-results.txt
fi
cmake --build build/bench --target "$target" >&2

echo "machine: $(nproc) cores, $(uname -sr), load average: $(cut -d' ' -f1-3 /proc/loadavg)"
"build/bench/bench/$target" --dsn "$dsn" "$@" | tee "$results"
