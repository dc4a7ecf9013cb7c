#!/usr/bin/env bash
# Builds the libFuzzer targets (clang, ASan + UBSan, preset `fuzz`, build/fuzz) and runs each
# for its share of SECONDS_TOTAL (default 30) on its seed corpus fuzz/corpus/<target>. New
# inputs go to build/fuzz/run/<target>/corpus, never into the repository. A crash, leak,
# sanitizer report, timeout or broken property fails the run; the input that caused it is in
# build/fuzz/run/<target>/artifacts/ (add it to fuzz/corpus/<target>/ with the fix).
# Prints executions per second and coverage (cov: edges, ft: features) per target.
# Usage: scripts/fuzz.sh [SECONDS_TOTAL]        FUZZ_TARGETS="fuzz_key ..." picks targets.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$here"
total=${1:-30}
# The same ccache settings as scripts/build.sh: the clang build caches like the gcc one.
export CCACHE_BASEDIR=$here
export CCACHE_NOHASHDIR=true
export CCACHE_DIR=${CCACHE_DIR:-${HOME:-/root}/.cache/ccache}

command -v clang++ >/dev/null || { echo "fuzz: clang++ is missing (scripts/deps.sh test installs it)" >&2; exit 1; }
cmake --preset fuzz >/dev/null
cmake --build --preset fuzz -j "$(nproc)" >build/fuzz/build.log 2>&1 || {
    tail -40 build/fuzz/build.log >&2
    exit 1
}

targets=(${FUZZ_TARGETS:-$(cd fuzz/corpus && ls)})
share=$((total / ${#targets[@]}))
[ "$share" -ge 1 ] || share=1

# UBSan reports are fatal (-fno-sanitize-recover in the preset); leaks are real: nothing
# here talks to libpq.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:strict_string_checks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

status=0
summary=()
for t in "${targets[@]}"; do
    run=build/fuzz/run/$t
    rm -rf "$run"
    mkdir -p "$run/corpus" "$run/artifacts"
    dict=()
    case $t in fuzz_canonicaljson | fuzz_snapshot) dict=(-dict=fuzz/json.dict) ;; esac
    echo "fuzz: $t for ${share}s"
    rc=0
    "build/fuzz/fuzz/$t" -max_total_time="$share" -print_final_stats=1 -timeout=10 -rss_limit_mb=2048 \
        -artifact_prefix="$run/artifacts/" "${dict[@]}" "$run/corpus" "fuzz/corpus/$t" >"$run/log" 2>&1 || rc=$?
    # A crash on a seed leaves no statistics: none of these may end the script (set -e).
    execs=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$run/log" | tail -1)
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$run/log" | tail -1)
    cov=$(grep -Eo 'cov: [0-9]+ ft: [0-9]+' "$run/log" | tail -1 || true)
    edges=$(sed -n 's/^INFO: Loaded [0-9]* modules *(\([0-9]*\) inline 8-bit counters).*/\1/p' "$run/log" | head -1)
    if [ "$rc" -ne 0 ] || [ -n "$(ls -A "$run/artifacts")" ]; then
        status=1
        echo "fuzz: $t FAILED (exit $rc); input kept in $run/artifacts/, log $run/log:" >&2
        grep -E 'ERROR|SUMMARY|fuzz property|runtime error|#[0-9]+ 0x' "$run/log" | head -30 >&2 || true
        summary+=("$(printf '%-22s FAILED  %s' "$t" "$run/artifacts/")")
    else
        summary+=("$(printf '%-22s ok  %8s runs  %7s execs/s  %s (of %s edges)' "$t" "${runs:-?}" "${execs:-?}" \
            "${cov:-?}" "${edges:-?}")")
    fi
done
printf 'fuzz: %s\n' "${summary[@]}"
exit "$status"
