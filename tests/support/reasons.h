#pragma once

// Reasons with and without a visible character, as UTF-8: one table for the SQL functions, the
// C++ check and the console's Run button, which must all draw the line in the same place.

#include <string>
#include <vector>

namespace idem::test {

struct ReasonCase {
    const char* tag;
    std::string utf8;
    bool refused; // no visible character
};

inline std::vector<ReasonCase> reasonCases()
{
    return {
        { "U+00A0 no-break space", "\u00A0", true },
        { "U+00A0 x3", "\u00A0\u00A0\u00A0", true },
        { "U+200B zero width space", "\u200B", true },
        { "U+200C U+200D joiners", "\u200C\u200D", true },
        { "U+2060 word joiner", "\u2060", true },
        { "U+FEFF byte order mark", "\uFEFF", true },
        { "U+00AD soft hyphen", "\u00AD", true },
        { "U+180E Mongolian vowel separator", "\u180E", true },
        { "U+2061..U+2064 invisible operators", "\u2061\u2062\u2063\u2064", true },
        { "U+0085 next line", "\u0085", true },
        { "U+1680 ogham space", "\u1680", true },
        { "U+2000..U+200A spaces", "\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200A", true },
        { "U+2028 U+2029 separators", "\u2028\u2029", true },
        { "U+202F U+205F U+3000", "\u202F\u205F\u3000", true },
        { "bidi marks and isolates", "\u200E\u200F\u202A\u202B\u202C\u202D\u202E\u2066\u2067\u2068\u2069\u061C",
            true },
        { "U+FE0F variation selector", "\uFE0F", true },
        { "U+3164 Hangul filler", "\u3164", true },
        { "U+2800 braille blank", "\u2800", true },
        { "U+034F combining grapheme joiner", "\u034F", true },
        { "tag characters (plane 14)", "\U000E0001\U000E0020\U000E007F", true },
        { "ASCII controls", "\x01\x07\x1b\x7f", true },
        { "all of it mixed", " \t\u00A0\u200B\r\n\u3000\uFEFF\u2060 ", true },
        { "ASCII whitespace", " \t\r\n\v\f", true },
        { "visible then U+200B", "ok\u200B", false },
        { "U+200B then visible", "\u200Bok", false },
        { "Chinese", "修复", false },
        { "one dot between spaces", "\u00A0.\u00A0", false },
        { "emoji", "\U0001F680", false },
        // Issue #31 item 9: no visible character either (schema v13's positive list)
        { "U+0301 lone combining accent", "\u0301", true },
        { "U+0301 U+0308 U+20DD combining marks only", "\u0301\u0308\u20DD", true },
        { "U+13430 Egyptian hieroglyph format control", "\U00013430", true },
        { "U+E000 private use", "\uE000", true },
        { "U+F0000 supplementary private use", "\U000F0000", true },
        { "U+0378 unassigned", "\u0378", true },
        { "U+E0080 unassigned in plane 14", "\U000E0080", true },
        { "U+2FFFE noncharacter", "\U0002FFFE", true },
        { "accented letter (e U+0301)", "e\u0301", false },
        { "Devanagari with marks", "\u0915\u094D\u0937", false },
        { "emoji with skin tone and VS16", "\U0001F44D\U0001F3FD\uFE0F", false },
        { "digit", "7", false },
        { "letter amid invisibles", "\u200B\u00A0x\u2060", false },
    };
}

} // namespace idem::test
