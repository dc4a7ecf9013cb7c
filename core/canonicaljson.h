#pragma once

#include <cstddef>
#include <stdexcept>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace idem {

// A request that cannot be canonicalised: bad JSON text, a duplicate key, a number or string
// JSON cannot carry. Deliberately not std::invalid_argument: idemctl reports that as a usage
// error, while this is about the data.
class JsonError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// Containers nested deeper than this are refused rather than risking the stack.
inline constexpr std::size_t maxJsonDepth = 512;

// Parses JSON text strictly for canonicalisation: one value, no comments, well-formed UTF-8,
// no lone surrogate escapes, finite numbers, and no object with the same key twice (RFC 8785
// section 3.1: which duplicate wins differs between parsers, so two parties could hash
// different requests). After the value only JSON whitespace (space, tab, LF, CR) may follow:
// any other byte, NUL included, is refused with its offset ("unexpected byte 0x00 at offset 7
// after the JSON document"), so "{}\0{...}" is not the same request as "{}". A UTF-8 byte
// order mark at the very start is skipped. Throws JsonError naming the position or the path.
// No size limit: the caller already holds the text (idemctl digest caps what it reads).
nlohmann::json parseJsonStrict(std::string_view text);

// The RFC 8785 (JSON Canonicalization Scheme) form of a value: no whitespace, object members
// sorted by the UTF-16 code units of their names, strings escaped as ECMAScript's
// JSON.stringify does, numbers written as ECMAScript's Number.prototype.toString writes the
// IEEE-754 double (integers included: 9007199254740993 becomes 9007199254740992).
// Throws JsonError for NaN/Infinity, ill-formed UTF-8, binary values or excessive depth.
std::string canonicalJson(const nlohmann::json& value);

// parseJsonStrict then canonicalJson.
std::string canonicalJsonFromText(std::string_view text);

// ECMAScript Number.prototype.toString(x) for a finite double (RFC 8785 section 3.2.2.3).
// Throws JsonError for NaN and infinities.
std::string esNumberToString(double x);

} // namespace idem
