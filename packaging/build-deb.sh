#!/usr/bin/env bash
# Builds the Debian package idem_VERSION_ARCH.deb with CPack.
#   packaging/build-deb.sh            Release build in build/release (tests off), then package
#   packaging/build-deb.sh BUILD_DIR  package an already configured build (e.g. build/ci, which
#                                     the test command builds: binaries are stripped either way)
# Prints the path of the package on the last line. The package lands in BUILD_DIR/package/.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$here"

# dpkg-shlibdeps (dpkg-dev) computes the Depends line from the binaries' libraries.
command -v dpkg-shlibdeps >/dev/null || scripts/deps.sh test

if [ $# -eq 0 ]; then
    scripts/build.sh release >&2
    build=build/release
else
    build=${1%/}
    [ -f "$build/CPackConfig.cmake" ] || { echo "build-deb: $build is not a configured build directory" >&2; exit 2; }
    export CCACHE_BASEDIR=$here CCACHE_NOHASHDIR=true
    cmake --build "$build" -j "$(nproc)" >&2
fi

out=$build/package
rm -f "$out"/idem_*.deb
cpack -G DEB --config "$build/CPackConfig.cmake" -B "$out" >&2
debs=("$out"/idem_*.deb)
[ ${#debs[@]} -eq 1 ] && [ -f "${debs[0]}" ] || { echo "build-deb: cpack made no single idem_*.deb in $out" >&2; exit 1; }
echo "${debs[0]}"
