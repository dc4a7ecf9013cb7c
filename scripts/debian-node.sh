#!/usr/bin/env bash
# Unpacks Debian 12's node-pg and node-express, the pure-JavaScript packages it needs and @types/node (from Debian's
# nodejs package) into .cache/debian-node/usr/share/nodejs, for a machine whose Node.js is not
# Debian's: there apt cannot install node-pg (through node-libpq it needs libnode108, which
# conflicts with e.g. nodesource's nodejs). Only Debian's archive is used; nothing is installed
# system-wide. clients/node/build.sh and test.sh use this directory when /usr/share/nodejs has no
# node-pg. Idempotent: does nothing once the directory is complete. Usage: scripts/debian-node.sh
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
dest=$here/.cache/debian-node
# express (issue 43: the HTTP middleware) came later: a directory unpacked before it is redone.
[ -f "$dest/complete" ] && [ -d "$dest/usr/share/nodejs/express" ] && exit 0

# The node-* packages node-pg and node-express depend on (node-libpq only serves pg-native, which is not used).
closure() {
    apt-cache depends --recurse --no-recommends --no-suggests --no-conflicts --no-breaks --no-replaces \
        --no-enhances node-pg node-express 2>/dev/null | grep -E '^node-' | grep -vx 'node-libpq' | sort -u
}
mapfile -t pkgs < <(closure)
if [ ${#pkgs[@]} -eq 0 ]; then
    apt-get update -qq
    mapfile -t pkgs < <(closure)
fi
[ ${#pkgs[@]} -gt 0 ] || { echo "debian-node: apt knows no node-pg (is Debian's archive configured?)" >&2; exit 1; }
# Debian's own nodejs, for @types/node: the installed one may be another build with a newer version.
debian_nodejs=$(apt-cache madison nodejs | awk -F'|' '$3 ~ /debian/ { gsub(/ /, "", $2); print $2; exit }')
[ -n "$debian_nodejs" ] || { echo "debian-node: no Debian nodejs in apt's lists" >&2; exit 1; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$tmp" && apt-get download -qq "${pkgs[@]}" "nodejs=$debian_nodejs" 2>&1 | grep -v 'unsandboxed' >&2 || true)
ls "$tmp"/node-pg_*.deb "$tmp"/nodejs_*.deb >/dev/null || { echo "debian-node: download failed" >&2; exit 1; }
for deb in "$tmp"/*.deb; do
    dpkg-deb -x "$deb" "$tmp/root"
done
[ -d "$tmp/root/usr/share/nodejs/pg" ] && [ -d "$tmp/root/usr/share/nodejs/@types/node" ] \
    || { echo "debian-node: the packages did not hold pg and @types/node" >&2; exit 1; }
rm -rf "$dest"
mkdir -p "$dest/usr/share"
mv "$tmp/root/usr/share/nodejs" "$dest/usr/share/nodejs"
printf '%s\n' "${pkgs[@]}" "nodejs=$debian_nodejs" >"$dest/complete"
echo "debian-node: unpacked ${#pkgs[@]} node packages and @types/node into $dest"
