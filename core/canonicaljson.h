#pragma once

#include <cstddef>
#include <stdexcept>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace idem {

// Why a text or value was refused, for programs that compare refusals (`idemctl digest --batch`
// and the Python and TypeScript clients agree on these; clients/corpus/README.md). When text has
// several faults, the kind is that of the first one a reader meets going left to right.
enum class JsonErrorKind {
    Syntax, // not JSON (a raw control character in a string, a bad escape, a truncated value, ...)
    DuplicateKey,
    InvalidUtf8, // ill-formed UTF-8 inside a string (outside one any such byte is a syntax error)
    LoneSurrogate, // a \u escape of a surrogate without its partner
    NumberRange, // a number beyond the double range, an integer a double does not name, a non-zero
                 // number that rounds to 0 (or NaN / Infinity in a built value)
    Depth, // containers nested deeper than maxJsonDepth
    TrailingData, // a byte other than JSON whitespace after the value
    Empty, // nothing but an optional byte order mark and whitespace
    Unsupported, // a built value JSON cannot carry (binary, discarded)
};

// The kind's name as `idemctl digest --batch` prints it: syntax, duplicate_key, invalid_utf8, ...
const char* jsonErrorKindName(JsonErrorKind kind);

// A request that cannot be canonicalised: bad JSON text, a duplicate key, a number or string
// JSON cannot carry. Deliberately not std::invalid_argument: idemctl reports that as a usage
// error, while this is about the data.
class JsonError : public std::runtime_error {
public:
    JsonError(JsonErrorKind kind, const std::string& message)
        : std::runtime_error(message)
        , m_kind(kind)
    {
    }
    JsonErrorKind kind() const { return m_kind; }

private:
    JsonErrorKind m_kind;
};

// Containers nested deeper than this are refused rather than risking the stack.
inline constexpr std::size_t maxJsonDepth = 512;

// What parseJsonStrict accepts of finite numbers. Digest: only those canonicalJson writes
// without refusing (an integer its double names as written, no non-zero number that rounds to
// 0), refused where they stand in the text as NumberRange. Any: every finite number, integers
// kept exact as int64 / uint64 where they fit (a snapshot's figures).
enum class JsonNumbers { Digest, Any };

// Parses JSON text strictly for canonicalisation: one value, no comments, well-formed UTF-8,
// no lone surrogate escapes, finite numbers (see JsonNumbers), and no object with the same
// key twice (RFC 8785
// section 3.1: which duplicate wins differs between parsers, so two parties could hash
// different requests). After the value only JSON whitespace (space, tab, LF, CR) may follow:
// any other byte, NUL included, is refused with its offset ("unexpected byte 0x00 at offset 7
// after the JSON document"), so "{}\0{...}" is not the same request as "{}". A UTF-8 byte
// order mark at the very start is skipped. Throws JsonError naming the position or the path.
// No size limit: the caller already holds the text (idemctl digest caps what it reads).
nlohmann::json parseJsonStrict(std::string_view text, JsonNumbers numbers = JsonNumbers::Digest);

// The RFC 8785 (JSON Canonicalization Scheme) form of a value: no whitespace, object members
// sorted by the UTF-16 code units of their names, strings escaped as ECMAScript's
// JSON.stringify does, numbers written as ECMAScript's Number.prototype.toString writes the
// IEEE-754 double (-0 as 0). Refused as NumberRange, so that two different numbers never share
// a digest: an integer (a literal without fraction or exponent, an int64 / uint64) whose
// double's form names another integer (9007199254740993 would be written 9007199254740992; so
// would 9223372036854775807), and a literal with a fraction or exponent that is not zero but
// rounds to 0 (1e-400). Other decimal literals are rounded to the nearest double, as RFC 8785
// does (0.10000000000000001 is 0.1). Also throws JsonError for NaN/Infinity, ill-formed UTF-8,
// binary values or excessive depth.
std::string canonicalJson(const nlohmann::json& value);

// parseJsonStrict then canonicalJson.
std::string canonicalJsonFromText(std::string_view text);

// ECMAScript Number.prototype.toString(x) for a finite double (RFC 8785 section 3.2.2.3).
// Throws JsonError for NaN and infinities.
std::string esNumberToString(double x);

} // namespace idem
