#!/usr/bin/env bash
# Usage: clients/verify-mixed.sh IDEMCTL
# `idemctl verify` with C++, Python and Node worker processes on the same keys (scenarios 4 and 5
# start one of each in turn, killing each; the other scenarios run their workers as threads of
# idemctl), against the test cluster in IDEM_TEST_DSN. Every scenario must pass, the ledger of
# acknowledged successes must be clean, and the detail of 4 and 5 must name all three workers.
# PYTHON (default python3) and NODE (default node) name the interpreters. Without the Node
# client's built tool (clients/node/build.sh makes clients/node/dist) this fails.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
idemctl=${1:?usage: clients/verify-mixed.sh IDEMCTL}
python=${PYTHON:-python3}
node=${NODE:-node}
: "${IDEM_TEST_DSN:?IDEM_TEST_DSN is not set: start the test cluster (scripts/idem-db start) and export it}"

node_worker=$here/node/dist/src/scenario-worker.js
if [ ! -f "$node_worker" ]; then
    echo "verify-mixed: $node_worker is missing: build the TypeScript client first (clients/node/build.sh)" >&2
    exit 1
fi
export PYTHONPATH=$here/python${PYTHONPATH:+:$PYTHONPATH}
# The Node worker requires Debian's node-pg, wherever this machine has it (clients/node/share.sh).
NODE_PATH="$("$here/node/share.sh")${NODE_PATH:+:$NODE_PATH}"
export NODE_PATH

out=$("$idemctl" verify --dsn "$IDEM_TEST_DSN" --threads 8 --rounds 10 \
    --worker-command "$python -m idem_client.scenario_worker" \
    --worker-command "$node $node_worker") || { echo "$out"; echo "verify-mixed: idemctl verify failed" >&2; exit 1; }
echo "$out"
grep -q '^7 passed, 0 failed$' <<<"$out" || { echo "verify-mixed: not every scenario passed" >&2; exit 1; }
for n in 4 5; do
    line=$(grep -E "^ $n  " <<<"$out")
    for worker in "idemctl" "$python -m idem_client.scenario_worker" "$node $node_worker"; do
        grep -qF -- "$worker" <<<"$line" || { echo "verify-mixed: scenario $n did not run the worker '$worker'" >&2; exit 1; }
    done
done
grep -q "ledger: all" <<<"$out" || { echo "verify-mixed: no ledger check in the output" >&2; exit 1; }

# The same worker processes in one transaction for local effects (their claim-1tx / write-1tx modes).
out=$("$idemctl" verify --dsn "$IDEM_TEST_DSN" --one-transaction --only 4 --only 5 \
    --worker-command "$python -m idem_client.scenario_worker" \
    --worker-command "$node $node_worker") || { echo "$out"; echo "verify-mixed: idemctl verify --one-transaction failed" >&2; exit 1; }
echo "$out"
grep -q '^2 passed, 0 failed$' <<<"$out" || { echo "verify-mixed: not every one-transaction scenario passed" >&2; exit 1; }
for n in 4 5; do
    grep -E "^ $n  " <<<"$out" | grep -q "in one transaction" \
        || { echo "verify-mixed: scenario $n did not run in one transaction" >&2; exit 1; }
done

out=$("$idemctl" verify --dsn "$IDEM_TEST_DSN" --record-at-commit --only 4 --only 5 \
    --worker-command "$python -m idem_client.scenario_worker" \
    --worker-command "$node $node_worker") || { echo "$out"; echo "verify-mixed: idemctl verify --record-at-commit failed" >&2; exit 1; }
echo "$out"
grep -q '^2 passed, 0 failed$' <<<"$out" || { echo "verify-mixed: not every record-at-commit scenario passed" >&2; exit 1; }
for n in 4 5; do
    grep -E "^ $n  " <<<"$out" | grep -q "recorded the key at commit" \
        || { echo "verify-mixed: scenario $n did not record at commit" >&2; exit 1; }
done
