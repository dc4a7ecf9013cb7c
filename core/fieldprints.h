#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace idem {

// Schema v32 (docs/workers-guide.md, "Which field differed"): a fingerprint per top-level field
// of the canonical request, so that an operator shown a digest conflict sees which fields
// differed and which matched, without any value reaching the database. The fingerprint of a
// member is the first 8 bytes, as 16 lowercase hex digits, of HMAC-SHA256 keyed by the workers'
// field key over the member's canonical text (canonicalJson of the name, ':', canonicalJson of the
// value). Keyed, so that a reader of the database who lacks the key cannot try every amount or
// currency against a fingerprint. The C++ library, the Python client (idem_client.fieldprints)
// and the TypeScript client (fieldprints.ts) compute it byte for byte alike
// (clients/corpus/fields.json holds the vectors all three check).
namespace fieldprints {
    inline constexpr std::size_t maxFields = 64; // fingerprints kept per request
    inline constexpr std::size_t maxNameBytes = 256; // a longer name is counted, not fingerprinted
    inline constexpr std::size_t minKeyBytes = 16;
    inline constexpr std::size_t maxKeyBytes = 1024;
}

struct FieldPrints {
    // Canonical JSON object: field name -> 16 hex digits, for at most fieldprints::maxFields names
    // of 1 to maxNameBytes UTF-8 bytes (the first ones in UTF-8 byte order of the names); "{}"
    // when the request is not an object.
    std::string json;
    // How many top-level fields the request has (those not fingerprinted included).
    int fields = 0;
};

// The fingerprints of a request given as its canonical JSON text (the text whose v1 digest is
// the request digest). Throws std::invalid_argument for a key outside 16 to 1024 bytes and
// JsonError for text that is not JSON.
FieldPrints fieldFingerprints(std::string_view canonicalRequest, std::string_view key);

} // namespace idem
