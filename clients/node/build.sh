#!/bin/sh
# Compiles src/ and test/ to dist/ with Debian's tsc (node-typescript). Exits non-zero on any
# error. The types come from Debian's packages under /usr/share/nodejs (@types/node from nodejs,
# @types/pg from node-pg); IDEM_NODE_SHARE names another directory laid out the same way.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
share=$("$here/share.sh")
command -v tsc >/dev/null 2>&1 || { echo "build.sh: tsc not found (apt-get install node-typescript)" >&2; exit 1; }
[ -d "$share/@types/node" ] || { echo "build.sh: no $share/@types/node (Debian's nodejs package ships it)" >&2; exit 1; }
[ -d "$share/@types/pg" ] || { echo "build.sh: no $share/@types/pg (apt-get install node-pg)" >&2; exit 1; }
cd "$here"
rm -rf dist
config=tsconfig.json
if [ "$share" != /usr/share/nodejs ]; then
    # The same options with the type directories moved (tsc takes "paths" only from a file).
    config=$here/.tsconfig.local.json
    trap 'rm -f "$config"' EXIT
    cat >"$config" <<JSON
{
    "extends": "./tsconfig.json",
    "compilerOptions": {
        "typeRoots": ["$share/@types"],
        "paths": { "*": ["$share/@types/*", "$share/*"] }
    }
}
JSON
fi
tsc -p "$config"
chmod +x dist/src/digest-batch.js dist/src/scenario-worker.js 2>/dev/null || true
