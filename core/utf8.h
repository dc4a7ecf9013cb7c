#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace idem {

// Why the bytes are not well-formed UTF-8 (RFC 3629: no overlong forms, no surrogates, nothing
// past U+10FFFF), naming the byte offset; nullopt when they are. Keys and canonical JSON both
// refuse such bytes up front: PostgreSQL would refuse them later, and two parties can disagree
// about what they mean.
std::optional<std::string> utf8Problem(std::string_view bytes);

// The UTF-16 code units of well-formed UTF-8; throws std::invalid_argument otherwise.
std::u16string utf8ToUtf16(std::string_view bytes);

// The code points of well-formed UTF-8; throws std::invalid_argument otherwise.
std::u32string utf8ToCodePoints(std::string_view bytes);

// True for a code point that controls or hides what a terminal, spreadsheet or browser shows
// instead of being a character: C0, DEL and C1 controls (U+009B is the 8-bit CSI), line and
// paragraph separators, and format characters (Unicode category Cf: bidi embeddings, overrides
// and isolates U+202A-U+202E / U+2066-U+2069, U+200B-U+200F, U+2060-U+2064, U+FEFF, tags...).
bool isDisplayControl(char32_t cp);

struct DisplayOptions {
    std::size_t maxBytes = std::string_view::npos; // cut (at a character boundary) with "..." past this
    // Terminal text escapes '\' as "\\", so an escape in the output always means an escape;
    // a report or CSV keeps it (JSON text shown there stays JSON).
    bool escapeBackslash = true;
    bool keepLineBreaks = false; // LF and TAB stay (multi-line error messages)
};

// For error messages (which may quote database text): line breaks stay, backslashes too.
inline constexpr DisplayOptions messageDisplay { std::string_view::npos, false, true };

// For reports and CSV cells: line breaks stay, backslashes too (JSON text stays JSON).
inline constexpr DisplayOptions reportDisplay { std::string_view::npos, false, true };

// The one way Idem shows text that came from the database or another party (keys, reasons,
// roles, error messages) on a terminal, in a CSV cell or in a report: well-formed UTF-8 stays,
// a display control becomes \xNN (C0 and DEL) or \uXXXX (\uD83D\uDE00 past U+FFFF, the JSON
// spelling, so JSON text stays valid JSON), and each byte of ill-formed UTF-8 becomes \xNN.
// Machine formats (--json, snapshot.json) carry the exact value instead.
std::string displaySafe(std::string_view text, const DisplayOptions& options = {});
inline std::string displaySafe(std::string_view text, std::size_t maxBytes)
{
    DisplayOptions o;
    o.maxBytes = maxBytes;
    return displaySafe(text, o);
}

// The bytes made safe to quote in an error message: printable ASCII stays, everything else
// becomes \xNN, and long input is cut (a hostile value must not garble a terminal or a log).
std::string quoteForMessage(std::string_view bytes, std::size_t maxBytes = 80);

} // namespace idem
