#!/usr/bin/env bash
# Configures and builds one CMake preset (default: dev). Usage: scripts/build.sh [PRESET]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
preset=${1:-dev}
export CCACHE_DIR=${CCACHE_DIR:-$HOME/.cache/ccache}
cmake --preset "$preset" >/dev/null
cmake --build --preset "$preset" -j "$(nproc)"
