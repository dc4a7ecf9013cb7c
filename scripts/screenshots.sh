#!/usr/bin/env bash
# Screenshots of the console for README.md and docs/, from a live demo database:
#   docs/console-dashboard.png, docs/console-dashboard-zh_CN.png (Chinese UI), docs/console-dashboard-dark.png,
#   docs/console-storage.png,
#   docs/console-tasks.png and docs/console-audit.png (with IDEM_SCREENSHOT_PAGES=1), docs/console-snapshot.png (snapshot viewer,
#   when this idem-console has --snapshot).
# Starts (or reuses) the cluster in $IDEM_DB_DIR (default .idem-db), migrates it, runs
# `idemctl demo` with faults for a while so every tile and chart has something to show, and
# takes each picture with `idem-console --screenshot` under QT_QPA_PLATFORM=offscreen.
# Usage: scripts/screenshots.sh [BUILD_DIR]     (default: build/dev, what scripts/build.sh makes)
# Env: IDEM_DEMO_SECONDS (default 45) how long the demo runs before the first picture.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
build=${1:-build/dev}
console="$build/app/idem-console"
idemctl="$build/cli/idemctl"
for b in "$console" "$idemctl"; do
    [ -x "$b" ] || { echo "screenshots: $b not built (scripts/build.sh, or pass the build dir)" >&2; exit 1; }
done

export IDEM_DB_DIR=${IDEM_DB_DIR:-$root/.idem-db}
scripts/idem-db start >/dev/null
dsn=$(scripts/idem-db dsn)
"$idemctl" migrate --dsn "$dsn" >/dev/null

# A private settings file: the pictures show the defaults (System theme, thresholds), whatever
# the person running this has chosen in their own console.
settings=$(mktemp -d)
demo_pid=""
cleanup() {
    [ -n "$demo_pid" ] && kill "$demo_pid" 2>/dev/null && wait "$demo_pid" 2>/dev/null
    rm -rf "$settings"
    if [ "${IDEM_SCREENSHOT_PAUSE:-0}" = 1 ]; then
        "$idemctl" resume --dsn "$dsn" --tenant tenant-2 --operation charge --reason "screenshots taken" >/dev/null 2>&1 || true
    fi
}
trap cleanup EXIT
export XDG_CONFIG_HOME=$settings QT_QPA_PLATFORM=offscreen
# Noto CJK for the Chinese picture (Debian: fonts-noto-cjk); DejaVu for the rest.
export QT_QPA_FONTDIR=${QT_QPA_FONTDIR:-/usr/share/fonts}

demo_seconds=${IDEM_DEMO_SECONDS:-45}
echo "screenshots: running idemctl demo for ${demo_seconds} s (with faults) before the first picture"
"$idemctl" demo --dsn "$dsn" --duration "$((demo_seconds + 120))" >"$settings/demo.log" 2>&1 &
demo_pid=$!
sleep "$demo_seconds"
kill -0 "$demo_pid" 2>/dev/null || { echo "screenshots: idemctl demo stopped early:" >&2; cat "$settings/demo.log" >&2; exit 1; }

# IDEM_SCREENSHOT_PAUSE=1: a pause of intake in force (issue #26) for the pictures: the banner above
# every page and the charts' band; lifted again when the script ends.
if [ "${IDEM_SCREENSHOT_PAUSE:-0}" = 1 ]; then
    "$idemctl" pause --dsn "$dsn" --tenant tenant-2 --operation charge --for 1h \
        --reason "INC-4801: card processor answers 502; hold tenant-2's charges until they confirm" >/dev/null
fi

mkdir -p docs
shot() { # FILE ARGS...
    local file=$1
    shift
    "$console" --dsn "$dsn" --screenshot "$file" "$@"
    echo "screenshots: $file"
}
shot docs/console-dashboard.png --page dashboard --language en
# docs/console-tasks.png and docs/console-audit.png come from tests/console/tst_taskbrowser_screens
# (a selected task with its error history, an audit entry's diff: states a command line cannot
# set up). IDEM_SCREENSHOT_PAGES=1 takes them from the live demo instead.
pages=${IDEM_SCREENSHOT_PAGES:-0}
[ "$pages" = 1 ] && shot docs/console-tasks.png --page tasks --language en
# The audit page shows recovery actions: requeue a few failed tasks and release one stuck lease,
# as an operator would during an incident (audited, with a reason).
keys_with() { "$idemctl" tasks --dsn "$dsn" --status "$1" --limit "$2" | awk -v s="$1" '$1 == s { print $NF }'; }
[ "$pages" = 1 ] && keys_with failed 3 | "$idemctl" requeue --dsn "$dsn" --keys-from - \
    --reason "INC-4711: card processor outage is over; the customer support desk asked for a retry" >/dev/null || true
[ "$pages" = 1 ] && keys_with processing 1 | "$idemctl" release --dsn "$dsn" --keys-from - \
    --reason "INC-4712: worker host payments-7 was powered off; hand the task to another worker" >/dev/null || true
[ "$pages" = 1 ] && shot docs/console-audit.png --page audit --language en
shot docs/console-dashboard-zh_CN.png --page dashboard --language zh_CN
shot docs/console-dashboard-dark.png --page dashboard --language en --theme dark
shot docs/console-storage.png --page storage --language en
# IDEM_SCREENSHOT_REVIEW=DIR: every page in both languages and both themes into DIR, to look at.
if [ -n "${IDEM_SCREENSHOT_REVIEW:-}" ]; then
    mkdir -p "$IDEM_SCREENSHOT_REVIEW"
    for p in dashboard tasks audit storage connection; do
        for l in en zh_CN; do
            for t in light dark; do
                shot "$IDEM_SCREENSHOT_REVIEW/$p-$l-$t.png" --page "$p" --language "$l" --theme "$t"
            done
        done
    done
fi

# The snapshot viewer: only once idem-console can open a bundle (--snapshot DIR).
if "$console" --help | grep -q -- '--snapshot'; then
    bundle="$settings/incident"
    "$idemctl" snapshot export --dsn "$dsn" --out "$bundle" >/dev/null
    "$console" --snapshot "$bundle" --screenshot docs/console-snapshot.png --language en
    echo "screenshots: docs/console-snapshot.png"
else
    echo "screenshots: this idem-console has no --snapshot yet; docs/console-snapshot.png not taken"
fi
