#include "core/utf8.h"

#include <algorithm>
#include <stdexcept>

namespace idem {

namespace {
    constexpr bool isContinuation(unsigned char c) { return (c & 0xC0) == 0x80; }

    // Decodes the sequence starting at s[i] and advances i past it; nullopt (i untouched) when
    // the sequence is ill-formed. The second-byte ranges are where overlong forms (E0, F0),
    // UTF-16 surrogates (ED) and code points past U+10FFFF (F4) are excluded.
    std::optional<char32_t> decodeNext(std::string_view s, std::size_t& i)
    {
        const auto at = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
        const unsigned char b0 = at(i);
        if (b0 < 0x80) {
            ++i;
            return b0;
        }
        std::size_t length = 0;
        unsigned char lo = 0x80, hi = 0xBF;
        char32_t cp = 0;
        if (b0 >= 0xC2 && b0 <= 0xDF) {
            length = 2;
            cp = b0 & 0x1F;
        } else if (b0 >= 0xE0 && b0 <= 0xEF) {
            length = 3;
            cp = b0 & 0x0F;
            if (b0 == 0xE0)
                lo = 0xA0;
            else if (b0 == 0xED)
                hi = 0x9F;
        } else if (b0 >= 0xF0 && b0 <= 0xF4) {
            length = 4;
            cp = b0 & 0x07;
            if (b0 == 0xF0)
                lo = 0x90;
            else if (b0 == 0xF4)
                hi = 0x8F;
        } else {
            return std::nullopt;
        }
        if (i + length > s.size())
            return std::nullopt;
        const unsigned char b1 = at(i + 1);
        if (b1 < lo || b1 > hi)
            return std::nullopt;
        cp = (cp << 6) | (b1 & 0x3F);
        for (std::size_t k = 2; k < length; ++k) {
            if (!isContinuation(at(i + k)))
                return std::nullopt;
            cp = (cp << 6) | (at(i + k) & 0x3F);
        }
        i += length;
        return cp;
    }
} // namespace

std::optional<std::string> utf8Problem(std::string_view bytes)
{
    std::size_t i = 0;
    while (i < bytes.size()) {
        if (!decodeNext(bytes, i)) {
            const std::size_t end = std::min(bytes.size(), i + 4);
            return "ill-formed UTF-8 at byte " + std::to_string(i) + " (" + quoteForMessage(bytes.substr(i, end - i))
                + ")";
        }
    }
    return std::nullopt;
}

std::u16string utf8ToUtf16(std::string_view bytes)
{
    std::u16string out;
    out.reserve(bytes.size());
    std::size_t i = 0;
    while (i < bytes.size()) {
        const auto cp = decodeNext(bytes, i);
        if (!cp)
            throw std::invalid_argument(*utf8Problem(bytes));
        if (*cp >= 0x10000) {
            const char32_t v = *cp - 0x10000;
            out.push_back(static_cast<char16_t>(0xD800 + (v >> 10)));
            out.push_back(static_cast<char16_t>(0xDC00 + (v & 0x3FF)));
        } else {
            out.push_back(static_cast<char16_t>(*cp));
        }
    }
    return out;
}

std::u32string utf8ToCodePoints(std::string_view bytes)
{
    std::u32string out;
    out.reserve(bytes.size());
    std::size_t i = 0;
    while (i < bytes.size()) {
        const auto cp = decodeNext(bytes, i);
        if (!cp)
            throw std::invalid_argument(*utf8Problem(bytes));
        out.push_back(*cp);
    }
    return out;
}

bool isDisplayControl(char32_t cp)
{
    if (cp < 0x20 || (cp >= 0x7F && cp <= 0x9F))
        return true;
    if (cp < 0xAD)
        return false;
    // Category Cf (Unicode 15) plus Zl / Zp (U+2028, U+2029), as ranges.
    static constexpr char32_t ranges[][2] = { { 0x00AD, 0x00AD }, { 0x0600, 0x0605 }, { 0x061C, 0x061C },
        { 0x06DD, 0x06DD }, { 0x070F, 0x070F }, { 0x0890, 0x0891 }, { 0x08E2, 0x08E2 }, { 0x180E, 0x180E },
        { 0x200B, 0x200F }, { 0x2028, 0x202E }, { 0x2060, 0x2064 }, { 0x2066, 0x206F }, { 0xFEFF, 0xFEFF },
        { 0xFFF9, 0xFFFB }, { 0x110BD, 0x110BD }, { 0x110CD, 0x110CD }, { 0x13430, 0x1343F }, { 0x1BCA0, 0x1BCA3 },
        { 0x1D173, 0x1D17A }, { 0xE0001, 0xE0001 }, { 0xE0020, 0xE007F } };
    for (const auto& r : ranges)
        if (cp >= r[0] && cp <= r[1])
            return true;
    return false;
}

std::string displaySafe(std::string_view s, const DisplayOptions& o)
{
    static constexpr char hex[] = "0123456789abcdef";
    const auto byteEscape = [](std::string& out, unsigned char c) {
        out += "\\x";
        out.push_back(hex[c >> 4]);
        out.push_back(hex[c & 0x0F]);
    };
    const auto unit = [](std::string& out, unsigned v) {
        out += "\\u";
        for (int shift = 12; shift >= 0; shift -= 4)
            out.push_back(hex[(v >> shift) & 0x0F]);
    };
    std::string out;
    std::size_t n = std::min(s.size(), o.maxBytes);
    for (int back = 0; back < 3 && n > 0 && n < s.size() && isContinuation(static_cast<unsigned char>(s[n])); ++back)
        --n; // never cut inside a UTF-8 sequence (at most 3 back: ill-formed input may be all continuations)
    std::size_t i = 0;
    while (i < n) {
        const std::size_t start = i;
        const auto cp = decodeNext(s.substr(0, n), i);
        if (!cp) {
            byteEscape(out, static_cast<unsigned char>(s[i++]));
            continue;
        }
        if (*cp == '\\' && o.escapeBackslash) {
            out += "\\\\";
        } else if (o.keepLineBreaks && (*cp == '\n' || *cp == '\t')) {
            out.push_back(static_cast<char>(*cp));
        } else if (*cp < 0x20 || *cp == 0x7F) {
            byteEscape(out, static_cast<unsigned char>(*cp));
        } else if (isDisplayControl(*cp)) {
            if (*cp >= 0x10000) {
                unit(out, 0xD800 + ((*cp - 0x10000) >> 10));
                unit(out, 0xDC00 + ((*cp - 0x10000) & 0x3FF));
            } else {
                unit(out, *cp);
            }
        } else {
            out.append(s.substr(start, i - start));
        }
    }
    if (n < s.size())
        out += "...";
    return out;
}

std::string quoteForMessage(std::string_view bytes, std::size_t maxBytes)
{
    static constexpr char hex[] = "0123456789abcdef";
    std::string out;
    const std::size_t n = std::min(bytes.size(), maxBytes);
    for (std::size_t i = 0; i < n; ++i) {
        const auto c = static_cast<unsigned char>(bytes[i]);
        if (c >= 0x20 && c < 0x7F) {
            out.push_back(static_cast<char>(c));
        } else {
            out += "\\x";
            out.push_back(hex[c >> 4]);
            out.push_back(hex[c & 0x0F]);
        }
    }
    if (bytes.size() > n)
        out += "... (" + std::to_string(bytes.size()) + " bytes)";
    return out;
}

} // namespace idem
