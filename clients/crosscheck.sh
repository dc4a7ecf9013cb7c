#!/usr/bin/env bash
# Usage: clients/crosscheck.sh IDEMCTL
# The request digest, byte for byte, from the C++ library (IDEMCTL digest --batch), the Python
# client and the TypeScript client: over the RFC 8785 vectors (corpus/rfc8785.json), the hostile
# documents (corpus/hostile.json, whose checked-in answers are the C++ library's) and 10,000
# generated ones (fixed seed). Fails on the first document whose answers differ, printing it.
# The TypeScript client's tool is clients/node/dist/src/digest-batch.js (clients/node/build.sh makes
# it); without it the check fails: it never passes on two implementations out of three.
# PYTHON (default python3) and NODE (default node) name the interpreters.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
idemctl=${1:?usage: clients/crosscheck.sh IDEMCTL}
python=${PYTHON:-python3}
node=${NODE:-node}
seed=${IDEM_CROSSCHECK_SEED:-30}
count=${IDEM_CROSSCHECK_COUNT:-10000}

node_tool=$here/node/dist/src/digest-batch.js
if [ ! -f "$node_tool" ]; then
    echo "crosscheck: $node_tool is missing: build the TypeScript client first (clients/node/build.sh)" >&2
    exit 1
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
{
    "$python" "$here/corpus/generate.py" --corpus
    "$python" "$here/corpus/generate.py" --seed "$seed" --count "$count"
} >"$work/input"

"$idemctl" digest --batch <"$work/input" >"$work/cpp"
PYTHONPATH=$here/python "$python" -m idem_client.digest_batch <"$work/input" >"$work/python"
"$node" "$node_tool" <"$work/input" >"$work/node"

"$python" "$here/corpus/compare.py" "$work/input" "c++=$work/cpp" "python=$work/python" "node=$work/node" \
    --expect "$here/corpus/hostile.json"
