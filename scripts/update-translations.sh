#!/usr/bin/env bash
# Refreshes translations/*.ts from the console's sources (app/, views/, models/): new strings are
# added as unfinished, strings gone from the code are dropped, existing translations are kept.
# Idempotent: running it twice changes nothing the second time. The build compiles the .ts into
# .qm (app/CMakeLists.txt); tst_desktop fails while a Chinese string is left untranslated.
# Usage: scripts/update-translations.sh
set -euo pipefail
cd "$(dirname "$0")/.."

lupdate=""
for candidate in /usr/lib/qt6/bin/lupdate "$(command -v lupdate6 || true)" "$(command -v lupdate || true)"; do
    if [ -n "$candidate" ] && [ -x "$candidate" ]; then
        lupdate=$candidate
        break
    fi
done
[ -n "$lupdate" ] || { echo "update-translations: lupdate not found (apt-get install qt6-l10n-tools)" >&2; exit 1; }

# -locations none: line numbers would churn the .ts on every edit of the sources.
# -no-obsolete: a string removed from the code leaves no dead entry behind.
# English is the source language: its file holds only the plural forms ("%n record(s)").
common=(-silent -locations none -no-obsolete -source-language en -I . -extensions cpp,h,ui app views models operations/outcomeseries.cpp operations/wording.cpp operations/duration.cpp)
"$lupdate" "${common[@]}" -pluralonly -target-language en -ts translations/idem_console_en.ts
"$lupdate" "${common[@]}" -target-language zh_CN -ts translations/idem_console_zh_CN.ts

unfinished=$(grep -c 'type="unfinished"' translations/idem_console_zh_CN.ts || true)
echo "update-translations: translations/idem_console_zh_CN.ts has $unfinished untranslated message(s)"
