#!/usr/bin/env bash
# Renders resources/icons/idem.svg to the PNG sizes the package installs into the hicolor
# theme and the console embeds as its window icon. A development step (needs rsvg-convert,
# package librsvg2-bin): run it after changing the SVG and commit the PNGs.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
command -v rsvg-convert >/dev/null || { echo "render-icons: needs rsvg-convert (apt-get install librsvg2-bin)" >&2; exit 1; }
for size in 16 22 24 32 48 64 128 256; do
    rsvg-convert -w "$size" -h "$size" "$here/resources/icons/idem.svg" -o "$here/resources/icons/idem-$size.png"
done
echo "render-icons: wrote resources/icons/idem-{16,22,24,32,48,64,128,256}.png"
