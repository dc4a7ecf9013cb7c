#!/usr/bin/env bash
# Issue 41 item 12: `scripts/run.sh --stop` signals the demo it started and nothing else. The pid
# in .idem-db/demo.pid may belong to another program by now (pids wrap): run.sh must check that it
# is still its demo (the start time it recorded, and an idemctl demo by its command line).
# Runs run.sh --stop for real against a state directory of its own (no cluster there: it says so).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
work=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]}"; do kill -KILL "$p" 2>/dev/null || true; done; rm -rf "$work"; }
trap cleanup EXIT
export IDEM_DB_DIR=$work/state
mkdir -p "$IDEM_DB_DIR"
state=$IDEM_DB_DIR
. "$here/scripts/demo-pid.sh"
failed=0 passed=0
check() { # WHAT CONDITION...
    local what=$1; shift
    if "$@"; then passed=$((passed + 1)); else echo "FAIL: $what" >&2; failed=$((failed + 1)); fi
}
alive() { kill -0 "$1" 2>/dev/null && [ "$(ps -o stat= -p "$1" | cut -c1)" != Z ]; }
gone() { local i; for i in $(seq 1 100); do alive "$1" || return 0; sleep 0.05; done; return 1; }

# A stand-in for `idemctl demo`: a program called idemctl, run with the demo's arguments.
cat >"$work/idemctl" <<'SH'
trap 'exit 0' TERM
while :; do sleep 0.1; done
SH
start_fake_demo() { bash "$work/idemctl" demo --workers 4 --duration 0 & pids+=($!); }

# 1. Another program now holds the recorded pid (its start time differs): left alone.
sleep 300 & other=$!; disown; pids+=("$other")
printf '%s %s\n' "$other" "$(( $(process_start "$other") - 1 ))" >"$state/demo.pid"
out=$("$here/scripts/run.sh" --stop 2>&1)
check "another program holding the pid is not signalled" alive "$other"
check "says the recorded demo no longer runs ($out)" grep -q "no longer running" <<<"$out"
check "the stale demo.pid is removed" test ! -e "$state/demo.pid"

# 2. The recorded pid and start time are right but the program is not an idemctl demo: left alone.
printf '%s %s\n' "$other" "$(process_start "$other")" >"$state/demo.pid"
"$here/scripts/run.sh" --stop >/dev/null 2>&1
check "a program that is not the demo is not signalled" alive "$other"

# 3. The old form (a pid alone, as run.sh wrote before): not trusted.
start_fake_demo; demo=$!
printf '%s\n' "$demo" >"$state/demo.pid"
"$here/scripts/run.sh" --stop >/dev/null 2>&1
check "a bare pid is not signalled" alive "$demo"

# 4. Its own demo: stopped.
printf '%s %s\n' "$demo" "$(process_start "$demo")" >"$state/demo.pid"
out=$("$here/scripts/run.sh" --stop 2>&1)
check "the demo is stopped" gone "$demo"
check "says the demo stopped ($out)" grep -q "demo stopped" <<<"$out"

echo "run-stop: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
