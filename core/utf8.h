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

// The bytes made safe to quote in an error message: printable ASCII stays, everything else
// becomes \xNN, and long input is cut (a hostile value must not garble a terminal or a log).
std::string quoteForMessage(std::string_view bytes, std::size_t maxBytes = 80);

} // namespace idem
