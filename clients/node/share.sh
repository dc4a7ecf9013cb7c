#!/bin/sh
# Prints the directory that holds Debian's node packages for the TypeScript client (pg and
# @types/node): IDEM_NODE_SHARE when set; /usr/share/nodejs when Debian's node-pg is installed;
# otherwise what scripts/debian-node.sh unpacked beside the checkout (a machine whose Node.js is
# not Debian's). build.sh, test.sh and the scripts that run the client's tools use it.
here=$(cd "$(dirname "$0")" && pwd)
unpacked=$here/../../.cache/debian-node/usr/share/nodejs
if [ -n "${IDEM_NODE_SHARE:-}" ]; then
    echo "$IDEM_NODE_SHARE"
elif [ ! -d /usr/share/nodejs/pg ] && [ -d "$unpacked/pg" ]; then
    (cd "$unpacked" && pwd)
else
    echo /usr/share/nodejs
fi
