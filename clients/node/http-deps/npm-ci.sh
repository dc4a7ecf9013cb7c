#!/bin/sh
# Installs Fastify (the one npm-registry dependency: the HTTP middleware's Fastify example and the
# conformance test's Fastify adapter) from package-lock.json with `npm ci` into
# .cache/http-deps/node_modules beside the checkout, and prints that node_modules directory.
# Does nothing when the installed lockfile is the committed one. Usage: npm-ci.sh
set -eu
here=$(cd "$(dirname "$0")" && pwd)
dest=$here/../../../.cache/http-deps
mkdir -p "$dest"
dest=$(cd "$dest" && pwd)
if ! cmp -s "$here/package-lock.json" "$dest/package-lock.json" || [ ! -d "$dest/node_modules/fastify" ]; then
    command -v npm >/dev/null 2>&1 || { echo "npm-ci.sh: npm not found (apt-get install npm)" >&2; exit 1; }
    cp "$here/package.json" "$here/package-lock.json" "$dest/"
    (cd "$dest" && npm ci --no-audit --no-fund --loglevel=error >&2) \
        || { echo "npm-ci.sh: npm ci failed (is the npm registry reachable?)" >&2; rm -f "$dest/package-lock.json"; exit 1; }
fi
echo "$dest/node_modules"
