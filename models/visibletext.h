#pragma once

#include <QString>

#include <string>

namespace idem::console {

// Text from the database (keys, reasons, error messages) as an operator must see it: every
// character kept, in order, but the ones that would hide or rearrange it shown as escapes:
// control characters (\x0a, \x09, \x01), bidi embeddings, overrides, isolates and marks (\u202e),
// zero-width and other format characters (\u200b, \ufeff), line and paragraph separators, spelled
// as idemctl spells them (idem::displaySafe), so a key reads the same in both. An
// RTL override in a key would otherwise display "abc" as "cba" and a newline would make one
// key look like two. What is copied (Copy key, Copy as JSON) stays the raw bytes.
QString visibleText(const QString& text);
QString visibleText(const std::string& utf8);
// The same, HTML-escaped, for rich text (the action plan, the audit entry's heading).
QString visibleHtml(const std::string& utf8);
// For a multi-line box (a reason, an error message): line breaks stay line breaks, everything
// else as visibleText() shows it.
QString visibleLines(const QString& text);
// A message of several lines (libpq's "… failed: Connection refused" then "Is the server
// running …?") on one line, its lines still read as sentences: a line that ends without a
// stop gets one before the next ("refused. Is the server"), white space collapsed.
QString oneLine(const QString& text);
// Whether visibleText() would change anything.
bool hasInvisible(const QString& text);

} // namespace idem::console
