#pragma once

#include <string>
#include <string_view>

namespace idem::cli {

// Text from the database made safe for a terminal: UTF-8 stays, control characters and
// backslashes become \xNN / \\ (a hostile key or reason must not move the cursor or forge a
// line), and long text is cut with an ellipsis. --json output carries the exact value.
inline std::string printable(std::string_view s, std::size_t maxBytes = 200)
{
    static constexpr char hex[] = "0123456789abcdef";
    std::string out;
    std::size_t n = s.size() > maxBytes ? maxBytes : s.size();
    while (n > 0 && n < s.size() && (static_cast<unsigned char>(s[n]) & 0xC0) == 0x80)
        --n; // never cut inside a UTF-8 sequence
    for (std::size_t i = 0; i < n; ++i) {
        const auto c = static_cast<unsigned char>(s[i]);
        if (c == '\\') {
            out += "\\\\";
        } else if (c < 0x20 || c == 0x7F) {
            out += "\\x";
            out.push_back(hex[c >> 4]);
            out.push_back(hex[c & 0x0F]);
        } else {
            out.push_back(static_cast<char>(c));
        }
    }
    if (n < s.size())
        out += "...";
    return out;
}

} // namespace idem::cli
