#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace idem {

// Prefix of every digest this version computes. A stored digest names its rule, so the rule
// can change later (a v2) without every stored request suddenly looking like a conflict.
inline constexpr const char* requestDigestPrefix = "v1:";

// The request without the fields its caller names as irrelevant metadata (trace ids, client
// timestamps). A name is a top-level key; a dotted name such as "meta.trace_id" reaches into
// nested objects. A top-level key spelled exactly like the whole name (dots included) is the
// one removed when it exists; otherwise the dotted path is followed. Names that match nothing
// change nothing. Throws std::invalid_argument for an empty name or an empty path segment.
nlohmann::json withoutFields(nlohmann::json request, const std::vector<std::string>& ignoreFields);

// "v1:" + lowercase hex SHA-256 of the RFC 8785 canonical JSON of the request without the
// ignored fields. Key order, whitespace and number spelling (1.0 vs 1) do not change it; any
// value does. Throws JsonError for what canonicalJson refuses.
std::string requestDigest(const nlohmann::json& request, const std::vector<std::string>& ignoreFields = {});

// The same from JSON text, parsed strictly (parseJsonStrict: duplicate keys refused, and any
// byte after the value but JSON whitespace, a NUL included, is a JsonError naming its offset).
// A separate name rather than an overload: nlohmann::json converts implicitly from strings, so
// requestDigest("...") would be ambiguous, or worse, digest a JSON string value.
std::string requestDigestFromText(std::string_view text, const std::vector<std::string>& ignoreFields = {});

} // namespace idem
