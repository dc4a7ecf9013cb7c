#!/usr/bin/env bash
# Configures and builds one CMake preset (default: dev), or only the targets named (and what they
# need). Usage: scripts/build.sh [PRESET [TARGET...]]
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$here"
preset=${1:-dev}
shift || true
# ccache keys on relative paths, so a fresh clone in another folder (as CI makes) still hits.
export CCACHE_BASEDIR=$here
export CCACHE_NOHASHDIR=true
export CCACHE_DIR=${CCACHE_DIR:-${HOME:-/root}/.cache/ccache}
cmake --preset "$preset" >/dev/null
cmake --build --preset "$preset" -j "$(nproc)" ${1:+--target "$@"}
